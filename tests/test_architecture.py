"""The layers' import rules (.importlinter): engine/ never imports Qt, the app, training,
evaluation or the terminal front ends; inside engine/, chat > director > reply > llm, and the
side modules never import engine.chat; app/ and mascot_cli/ talk to engine/ only;
training/evaluation never import a front end; nothing in the product imports the lab (scripts/)."""

import ast
import configparser
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT = [
    sys.executable,
    "-c",
    "import sys; from importlinter.cli import lint_imports_command; "
    "sys.exit(lint_imports_command())",
]


def lint(cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run(LINT, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_layers_keep_their_import_rules():
    r = lint(ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "7 kept, 0 broken" in r.stdout


def test_a_qt_import_in_the_engine_breaks_the_contract(tmp_path):
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    for pkg in (
        "engine",
        "app",
        "training",
        "evaluation",
        "mascot_cli",
        "engine/chat",
        "engine/director",
        "engine/reply",
        "engine/llm",
    ):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text("")
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    for module in config["importlinter:contract:engine-side-modules"]["source_modules"].split():
        (tmp_path / (module.replace(".", "/") + ".py")).write_text("")
    (tmp_path / "engine" / "view.py").write_text("from PySide6 import QtWidgets\n")
    (tmp_path / "app" / "train_button.py").write_text("import training\n")
    (tmp_path / "engine" / "llm" / "runtime.py").write_text(
        "from engine.chat import group\n"
    )  # upwards
    (tmp_path / "engine" / "chat" / "group.py").write_text("")
    (tmp_path / "engine" / "memory.py").write_text(
        "from engine.chat import group\n"
    )  # a side module
    r = lint(tmp_path)
    assert r.returncode != 0
    assert (
        "engine/ is the core: no Qt, no app, no training, no evaluation, no front end BROKEN"
        in r.stdout
    )
    assert "app/ talks to engine/ only: no training, no evaluation BROKEN" in r.stdout
    assert "llama.cpp BROKEN" in r.stdout  # the layers contract: llm must not import chat
    assert "engine's side modules never import engine.chat BROKEN" in r.stdout


PRODUCT = ("engine", "app", "training", "evaluation", "mascot_cli")


def lab_imports(root: Path) -> list[str]:
    """Every import of the lab (``scripts``, the crisis screen's ``scripts.safety``) in the
    product's modules under ``root``, at the top or inside a function."""
    found = []
    for pkg in PRODUCT:
        for path in sorted((root / pkg).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    names = [node.module or ""]
                else:
                    continue
                found += [
                    f"{path.relative_to(root)}:{node.lineno} {name}"
                    for name in names
                    if name == "scripts" or name.startswith("scripts.")
                ]
    return found


def test_nothing_in_the_product_imports_the_lab(tmp_path):
    (tmp_path / "engine" / "safety").mkdir(parents=True)
    (tmp_path / "engine" / "safety" / "screen.py").write_text(
        "def fit():\n    from scripts.safety import exemplars\n"
    )
    assert lab_imports(tmp_path) == ["engine/safety/screen.py:2 scripts.safety"]
    assert lab_imports(ROOT) == []


def deferred_own_imports(root: Path) -> list[str]:
    """Imports of Mascot's own modules inside a function body, under ``root``, that carry no
    comment giving the reason beside them (the one accepted reason: a dependency too heavy or
    too early to load with the module, e.g. Qt before the display check)."""
    found = []
    for pkg in PRODUCT:
        for path in sorted((root / pkg).rglob("*.py")):
            lines = path.read_text(encoding="utf-8").splitlines()
            tree = ast.parse("\n".join(lines), str(path))
            for fn in ast.walk(tree):
                if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for node in ast.walk(fn):
                    if isinstance(node, ast.Import):
                        names = [a.name for a in node.names]
                    elif isinstance(node, ast.ImportFrom):
                        names = ["engine" if node.level else node.module or ""]
                    else:
                        continue
                    own = [n for n in names if n.split(".")[0] in PRODUCT]
                    if own and "#" not in lines[node.end_lineno - 1]:
                        found.append(f"{path.relative_to(root)}:{node.lineno} {own[0]}")
    return sorted(set(found))


def test_own_modules_are_imported_at_the_top(tmp_path):
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "chat.py").write_text(
        "def send():\n    from engine import storage\n\n"
        "def warm():\n    from . import safety  # numpy: loaded at the first use\n"
    )
    assert deferred_own_imports(tmp_path) == ["engine/chat.py:2 engine"]
    assert deferred_own_imports(ROOT) == []
