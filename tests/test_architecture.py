"""The layers' import rules (.importlinter): engine/ never imports Qt, the app, training,
evaluation or the terminal front ends; inside engine/, chat > director > reply > llm, and the
side modules never import engine.chat; app/ and mascot_cli/ talk to engine/ only;
training/evaluation never import a front end."""
import configparser
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
        "sys.exit(lint_imports_command())"]


def lint(cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run(LINT, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_layers_keep_their_import_rules():
    r = lint(ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "6 kept, 0 broken" in r.stdout


def test_a_qt_import_in_the_engine_breaks_the_contract(tmp_path):
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    for pkg in ("engine", "app", "training", "evaluation", "mascot_cli",
                "engine/chat", "engine/director", "engine/reply", "engine/llm"):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text("")
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    for module in config["importlinter:contract:engine-side-modules"]["source_modules"].split():
        (tmp_path / (module.replace(".", "/") + ".py")).write_text("")
    (tmp_path / "engine" / "view.py").write_text("from PySide6 import QtWidgets\n")
    (tmp_path / "app" / "train_button.py").write_text("import training\n")
    (tmp_path / "engine" / "llm" / "runtime.py").write_text("from engine.chat import group\n")  # upwards
    (tmp_path / "engine" / "chat" / "group.py").write_text("")
    (tmp_path / "engine" / "memory.py").write_text("from engine.chat import group\n")  # a side module
    r = lint(tmp_path)
    assert r.returncode != 0
    assert "engine/ is the core: no Qt, no app, no training, no evaluation, no front end BROKEN" in r.stdout
    assert "app/ talks to engine/ only: no training, no evaluation BROKEN" in r.stdout
    assert "llama.cpp BROKEN" in r.stdout  # the layers contract: llm must not import chat
    assert "engine's side modules never import engine.chat BROKEN" in r.stdout
