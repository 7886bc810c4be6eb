"""The PyInstaller bundle: build it with build.spec and run the frozen app's screenshot mode."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_app_main import check_png, fast_settings

from engine.storage import Store, forget_passphrases

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.model
@pytest.mark.timeout(2400)  # PyInstaller takes minutes on two shared cores
def test_frozen_app_builds_and_takes_a_screenshot(tmp_path, mascot_home):
    if importlib_missing("PyInstaller"):
        pytest.fail("PyInstaller is not installed; run `.venv/bin/pip install pyinstaller`.")
    work, dist = tmp_path / "build", tmp_path / "dist"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "PyInstaller",
            "build.spec",
            "--noconfirm",
            "--workpath",
            str(work),
            "--distpath",
            str(dist),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    app_dir = dist / "mascot"
    exe = app_dir / ("mascot.exe" if os.name == "nt" else "mascot")
    assert exe.is_file()
    internal = app_dir / "_internal"
    assert (internal / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf").is_file()
    assert (internal / "assets" / "personas" / "support.json").is_file()
    assert list((internal / "llama_cpp" / "lib").glob("*llama*"))
    assert (internal / "minilm" / "model.safetensors").is_file()  # the crisis screen's encoder

    fast_settings(mascot_home)
    out = tmp_path / "frozen.png"
    env = {**os.environ, "MASCOT_HOME": str(mascot_home), "QT_QPA_PLATFORM": "offscreen"}
    env.pop("MASCOT_BUNDLED_MODEL", None)
    env.pop("MASCOT_ASSETS", None)
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")  # no probe result yet: the bundle runs its own
    r = subprocess.run(
        [str(exe), "--screenshot", str(out), "--say", "Hello!"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    check_png(out)
    # the start-up probe ran through the bundle's own entry point and its verdict was stored
    probe = json.loads((tmp_path / "cache" / "mascot" / "llama-probe.json").read_text())
    assert [v["ok"] for v in probe.values()] == [True] and "decoded" in list(probe.values())[0][
        "message"
    ]
    # the frozen app screens with its learned layer too: this goodbye has no word the rules know
    r = subprocess.run(
        [str(exe), "--safety-probe", LEARNED_ONLY],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert json.loads(r.stdout.strip().splitlines()[-1]) == {
        "level": "urgent",
        "source": "learned",
        "learned_available": True,
    }
    # the bundle carries SQLCipher: an encrypted history opens with its passphrase, and
    # without it the frozen app says in one line how to give it
    store = Store(mascot_home / "mascot.db")
    store.encrypt("bundle passphrase")
    store.close()
    forget_passphrases()
    locked = subprocess.run(
        [str(exe), "--screenshot", str(tmp_path / "locked.png")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert locked.returncode == 1 and "MASCOT_PASSPHRASE" in locked.stderr
    assert locked.stderr.count("\n") == 1
    out = tmp_path / "encrypted.png"
    r = subprocess.run(
        [str(exe), "--screenshot", str(out)],
        cwd=tmp_path,
        env={**env, "MASCOT_PASSPHRASE": "bundle passphrase"},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    check_png(out)
    shutil.rmtree(work, ignore_errors=True)


LEARNED_ONLY = "gave my xbox and my guitar to my cousins. wont need them where im going"


def importlib_missing(name):
    import importlib.util

    return importlib.util.find_spec(name) is None
