"""``mascot doctor``: what a user or a bug report needs to know about this install, offline."""

from __future__ import annotations

import os
import platform
import shutil
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from engine.cipher import is_encrypted, sqlcipher_version
from engine.llm import check as llama_check
from engine.models.registry import ModelRegistry, bundled_model_path
from engine.models.voices import ensure_voices, shipped_adapter
from engine.paths import db_path, user_dir
from engine.storage import Store

# CPU flags worth naming in a report (the kernels llama.cpp may use).
CPU_FLAGS = (
    "sse4_2",
    "avx",
    "f16c",
    "fma",
    "bmi2",
    "avx2",
    "avx_vnni",
    "avx512f",
    "avx512vbmi",
    "avx512_vnni",
    "avx512_bf16",
    "amx_tile",
    "amx_int8",
    "amx_bf16",
    "neon",
    "asimd",
)


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _size(num: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if num < 1024 or unit == "TB":
            return f"{num:.0f} {unit}" if unit == "B" else f"{num:.1f} {unit}"
        num /= 1024
    return f"{num:.1f} TB"


def _folder_size(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total


def _memory() -> tuple[int, int] | None:
    """(total, available) bytes from /proc/meminfo, or None where it is not readable."""
    try:
        rows = dict(
            line.split(":", 1)
            for line in Path("/proc/meminfo").read_text().splitlines()
            if ":" in line
        )
        return int(rows["MemTotal"].split()[0]) * 1024, int(rows["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return None


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def report(*, verify_models: bool = True, probe: bool = True) -> list[tuple[str, str]]:
    """(label, value) rows; every row is filled even when a part is broken."""
    rows: list[tuple[str, str]] = []
    add = lambda k, v: rows.append((k, v))  # noqa: E731
    add("Mascot", _version("mascot"))
    add("Python", f"{platform.python_version()} ({sys.executable})")
    add("OS", f"{platform.system()} {platform.release()} {platform.machine()}")
    add(
        "Qt (PySide6)",
        _version("PySide6-Essentials")
        if _version("PySide6-Essentials") != "not installed"
        else _version("PySide6"),
    )
    add("llama-cpp-python", _version("llama_cpp_python"))
    feats = llama_check.build_features()
    on = [k for k, v in feats.items() if v]
    add(
        "llama.cpp build", ", ".join(on) if on else ("unknown" if not feats else "no SIMD features")
    )
    add("CPU", f"{cpu_name()}, {os.cpu_count()} threads")
    flags = llama_check.cpu_flags()
    add("CPU flags", " ".join(f for f in CPU_FLAGS if f in flags) or "unknown")
    if probe:
        try:
            result = llama_check.check(bundled_model_path())
            state = {True: "passed", False: "FAILED", None: "undecided"}[result["ok"]]
            when = "cached" if result["cached"] else "run now"
            add("llama.cpp probe", f"{state}: {result['message']} ({when})")
        except Exception as e:  # noqa: BLE001 - a report row, never a crash
            add("llama.cpp probe", f"not run ({e})")
    try:
        home = user_dir()
        add("Data folder", f"{home} ({_size(_folder_size(home))})")
        disk = shutil.disk_usage(home)
        add("Free disk", f"{_size(disk.free)} of {_size(disk.total)}")
    except Exception as e:  # noqa: BLE001
        add("Data folder", f"unavailable ({e})")
    add("History", history_state())
    mem = _memory()
    add("RAM", f"{_size(mem[1])} available of {_size(mem[0])}" if mem else "unknown")
    try:
        store = Store()  # one open for both rows: an encrypted history stretches its key each time
    except Exception as e:  # noqa: BLE001 - report rows, never a crash
        add("Voices model", f"unavailable ({e})")
        add("Models", f"unavailable ({e})")
        return rows
    try:
        try:
            add("Voices model", voices_row(store))
        except Exception as e:  # noqa: BLE001 - a report row, never a crash
            add("Voices model", f"unavailable ({e})")
        try:
            reg = ModelRegistry(store)
            for m in reg.list():
                line = f"{m.path} ({_size(m.size or 0)}, {m.quantization or '?'})"
                if verify_models:
                    ok, msg = reg.verify(m.name)
                    line += "; sha256 OK" if ok else f"; PROBLEM: {msg}"
                add(f"Model {m.name}", line)
        except Exception as e:  # noqa: BLE001
            add("Models", f"unavailable ({e})")
    finally:
        store.close()
    return rows


def voices_row(store: Any) -> str:
    """What companions run on by default: the voices model's state, in one line."""
    v = ensure_voices(store, build=False)
    if v.status == "ready" and v.path is not None:
        return f"ready: {v.path} ({_size(v.path.stat().st_size)}), used by companions by default"
    if v.status == "absent":
        return (
            f"not available: the shipped adapter {shipped_adapter()} is missing, so companions "
            "run on the plain model (reinstall Mascot to get it back)"
        )
    if v.status == "stale":
        return "not built yet: it is built from the shipped adapter when the app or `mascot chat` starts"
    return v.message or v.status


def render(rows: list[tuple[str, str]]) -> str:
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)


def text(**kwargs: Any) -> str:
    return render(report(**kwargs))


def history_state() -> str:
    """Whether the history is encrypted, and the SQLCipher this install would use."""
    try:
        state = "encrypted" if is_encrypted(db_path()) else "plain SQLite"
    except OSError as e:
        state = f"unreadable ({e})"
    return f"{state}; SQLCipher {sqlcipher_version() or 'missing: no encryption'}"
