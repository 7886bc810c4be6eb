"""Start-up checks that turn a crash into one line: the llama.cpp probe (a build this CPU
refuses dies with SIGILL, which no Python code can catch), Qt's window libraries, and
`mascot doctor` / Help → Diagnostics."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.llm import check as llama_check
from engine.llm.check import LlamaUnusable

ROOT = Path(__file__).resolve().parent.parent
SIGILL_SELF = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGILL)"]


@pytest.fixture
def probe_cache(tmp_path, monkeypatch):
    """A fresh probe cache and memo for this test (the real ones describe this machine)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    llama_check.forget()
    yield tmp_path / "cache" / "mascot" / "llama-probe.json"
    llama_check.forget()


@pytest.fixture
def refusing_cpu(probe_cache, monkeypatch):
    """The probe child dies as it would on a CPU that refuses the build's instructions."""
    calls = []

    def command(model_path):
        calls.append(model_path)
        return SIGILL_SELF

    monkeypatch.setattr(llama_check, "probe_command", command)
    return calls


@pytest.mark.model
def test_the_probe_passes_on_this_install_and_is_cached(probe_cache, bundled_path):
    first = llama_check.check(bundled_path)
    assert first["ok"] is True and first["cached"] is False, first
    assert "decoded" in first["message"]
    again = llama_check.check(bundled_path)
    assert again["ok"] is True and again["cached"] is True
    assert probe_cache.is_file()
    llama_check.ensure_llama_works(bundled_path)  # no error


def test_a_refused_instruction_is_one_line_naming_cause_and_fix(
    refusing_cpu, bundled_path, monkeypatch
):
    monkeypatch.setattr(llama_check, "build_features", lambda: {"AVX2": True, "AMX_INT8": True})
    with pytest.raises(LlamaUnusable) as err:
        llama_check.ensure_llama_works(bundled_path)
    msg = str(err.value)
    assert "\n" not in msg
    assert "refuses (AMX)" in msg and "make rebuild-llama" in msg
    # the verdict is remembered for this library: the next start does not run the probe again
    llama_check.forget()
    with pytest.raises(LlamaUnusable):
        llama_check.ensure_llama_works(bundled_path)
    assert len(refusing_cpu) == 1


def test_a_missing_instruction_set_is_named(refusing_cpu, bundled_path, monkeypatch):
    monkeypatch.setattr(
        llama_check, "build_features", lambda: {"AVX": True, "AVX2": True, "AMX_INT8": False}
    )
    monkeypatch.setattr(llama_check, "cpu_flags", lambda: {"sse4_2", "avx"})
    msg = llama_check.run_probe(bundled_path)[1]
    assert "refuses (AVX2)" in msg


def test_other_crashes_and_errors_are_one_line(probe_cache, bundled_path, monkeypatch):
    monkeypatch.setattr(
        llama_check,
        "probe_command",
        lambda m: [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"],
    )
    ok, msg = llama_check.run_probe(bundled_path)
    assert ok is False and "SIGSEGV" in msg and "\n" not in msg
    monkeypatch.setattr(
        llama_check,
        "probe_command",
        lambda m: [sys.executable, "-c", "raise SystemExit('no backend found')"],
    )
    ok, msg = llama_check.run_probe(bundled_path)
    assert ok is False and "no backend found" in msg


def test_loading_a_model_reports_the_probe_instead_of_crashing(refusing_cpu, bundled_path):
    from engine.llm.runtime import LlamaRuntime

    with pytest.raises(LlamaUnusable):
        LlamaRuntime(bundled_path, n_ctx=256, n_threads=1)


def test_the_cli_shows_one_line(refusing_cpu, capsys):
    from mascot_cli.main import main

    code = main(["chat", "--say", "hello", "--no-save", "--no-color"])
    err = capsys.readouterr().err.strip()
    assert code == 1
    assert err.startswith(
        "Error: llama.cpp in this install uses CPU instructions this computer refuses"
    )
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_the_app_shows_a_dialog_and_exits(refusing_cpu, qapp, monkeypatch, capsys):
    from PySide6.QtWidgets import QMessageBox

    import app.main

    shown = []
    monkeypatch.setattr(
        QMessageBox, "critical", lambda parent, title, text: shown.append((title, text))
    )
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert app.main.main([]) == 1
    assert shown and "refuses" in shown[0][1] and "make rebuild-llama" in shown[0][1]
    assert "mascot-app: llama.cpp in this install" in capsys.readouterr().err


def test_missing_window_libraries_are_named_with_the_install_command(monkeypatch):
    from app import platform_check

    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("DISPLAY", ":99")
    libs = {
        "libc.so.6": ("libc6", "glibc"),  # present everywhere: not named
        "libmascot-gone-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor"),
    }
    line = platform_check.check_display(libs)
    assert line is not None and "\n" not in line
    assert "libmascot-gone-cursor.so.0" in line
    assert (
        "sudo apt install libxcb-cursor0'" in line and "sudo dnf install xcb-util-cursor'" in line
    )
    assert "libc" not in line
    # offscreen rendering (tests, screenshots) needs none of them
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert platform_check.check_display(libs) is None


def test_mascot_app_prints_the_line_instead_of_aborting(monkeypatch, capsys):
    import app.main
    from app import platform_check

    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.setattr(
        platform_check,
        "XCB_LIBRARIES",
        {"libmascot-gone-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm")},
    )
    assert app.main.main([]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("mascot-app: The window cannot open") and "libxcb-icccm4" in err
    assert len(err.splitlines()) == 1


def test_without_a_display_the_app_exits_with_one_line(tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")
    }
    env["MASCOT_HOME"] = str(tmp_path / "home")
    r = subprocess.run(
        [sys.executable, "-m", "app.main"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 1, (r.returncode, r.stderr)  # not 134 (Qt's abort)
    assert r.stderr.strip().splitlines() == [
        "mascot-app: No display to open a window on (DISPLAY is not set). Run Mascot in a desktop "
        "session, or use the terminal chat: mascot chat"
    ]


@pytest.mark.model
def test_doctor_reports_build_cpu_probe_data_and_models(
    probe_cache, bundled_path, tmp_path, capsys
):
    from mascot_cli.main import main

    damaged = tmp_path / "damaged.gguf"
    shutil.copyfile(bundled_path, damaged)
    assert main(["models", "add", str(damaged), "--name", "damaged"]) == 0
    with open(damaged, "r+b") as f:  # flip bytes in the tensor data: size and header unchanged
        f.seek(damaged.stat().st_size - 4096)
        f.write(b"\xff" * 64)
    capsys.readouterr()
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    rows = dict(
        line.split(None, 1)
        if "  " not in line
        else (line.split("  ", 1)[0].strip(), line.split("  ", 1)[1].strip())
        for line in out.splitlines()
    )
    assert rows["llama-cpp-python"] == "0.3.36"
    assert "AVX2" in rows["llama.cpp build"] or "NEON" in rows["llama.cpp build"]
    assert rows["llama.cpp probe"].startswith("passed")
    assert "mascot-home" in rows["Data folder"] and "available of" in rows["RAM"]
    assert rows["Model smollm2-135m-instruct-q4_1"].endswith("sha256 OK")
    assert "PROBLEM" in rows["Model damaged"] and "sha256 changed" in rows["Model damaged"]


@pytest.mark.model
def test_help_diagnostics_shows_the_report_and_copies_it(qtbot, qapp, probe_cache):
    from PySide6.QtGui import QGuiApplication

    from app.diagnostics_dialog import DiagnosticsDialog

    dialog = DiagnosticsDialog()
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.job.finished, timeout=120_000):
        dialog.show()
    assert dialog.copy_button.isEnabled()
    text = dialog.view.toPlainText()
    assert "llama.cpp probe" in text and "passed" in text and "Model smollm2" in text
    dialog.copy_button.click()
    assert QGuiApplication.clipboard().text() == text
