"""`mascot-app` from the command line: screenshot mode and one-line errors."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

ROOT = Path(__file__).resolve().parent.parent


def run_app(args, home, timeout=600):
    env = {**os.environ, "MASCOT_HOME": str(home), "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run(
        [sys.executable, "-m", "app.main", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def check_png(path, size=(1280, 820)):
    img = QImage(str(path))
    assert not img.isNull() and (img.width(), img.height()) == size
    colours = {
        img.pixel(x, y) for x in range(0, img.width(), 37) for y in range(0, img.height(), 29)
    }
    assert len(colours) > 20  # a drawn window, not a blank image


def fast_settings(home):
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(
        json.dumps({"override_sampling": True, "max_tokens": 12, "threads": 1})
    )


def test_screenshot_without_a_message(tmp_path, mascot_home):
    out = tmp_path / "window.png"
    r = run_app(["--screenshot", str(out)], mascot_home)
    assert r.returncode == 0, r.stderr
    check_png(out)


@pytest.mark.model
def test_screenshot_waits_for_the_round(tmp_path, mascot_home):
    fast_settings(mascot_home)
    out = tmp_path / "round.png"
    r = run_app(
        [
            "--screenshot",
            str(out),
            "--say",
            "Hello, team!",
            "--group",
            "workplace",
            "--size",
            "1100x760",
        ],
        mascot_home,
    )
    assert r.returncode == 0, r.stderr
    check_png(out, (1100, 760))
    from engine.storage import Store

    store = Store()
    conv = next(c for c in store.conversations() if c["group_name"] == "workplace")
    roles = [m["role"] for m in store.messages(conv["id"])]
    store.close()
    assert roles[0] == "user" and "companion" in roles


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--group", "no-such-group", "--screenshot", "x.png"], "No persona set 'no-such-group'"),
        (["--screenshot", "x.png", "--size", "big"], "--size must look like 1280x820"),
    ],
)
def test_errors_are_one_line_without_a_traceback(args, needle, mascot_home):
    r = run_app(args, mascot_home, timeout=120)
    assert r.returncode == 1
    lines = [ln for ln in r.stderr.splitlines() if ln.strip() and "propagateSizeHints" not in ln]
    assert len(lines) == 1 and lines[0].startswith("mascot-app: ") and needle in lines[0]
    assert "Traceback" not in r.stderr


def test_safety_probe_reports_the_screen_this_build_runs(mascot_home):
    """What build.spec's test asks the frozen app: a goodbye only the learned layer knows."""
    r = run_app(
        [
            "--safety-probe",
            "gave my xbox and my guitar to my cousins. wont need them where im going",
        ],
        mascot_home,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {
        "level": "urgent",
        "source": "learned",
        "learned_available": True,
    }
    r = run_app(["--safety-probe", "the pasta was great tonight"], mascot_home, timeout=120)
    assert json.loads(r.stdout)["level"] == "none"


def test_the_engine_never_imports_qt():
    code = (
        "import sys, engine.chat, engine.models.hub, engine.models.registry, engine.storage, engine.cards, "
        "engine.personas, engine.safety, engine.llm.runtime, engine.director.policies; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'app')); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stdout + r.stderr
