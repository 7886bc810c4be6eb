"""Check, in a subprocess, that the installed llama.cpp runs on this CPU before loading a model.

A llama.cpp built for another CPU dies with SIGILL (an illegal instruction, e.g. AMX on a VM
that advertises it but refuses it), which no Python code can catch. So before the first model
load the engine runs a tiny decode in a child process, once per installed library: the result
is cached by the library files' hash, outside the user data folder (it describes the machine).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from engine.errors import ModelError
from engine.models.registry import bundled_model_path

PROBE_TIMEOUT_S = 120
REBUILD_HINT = "Rebuild it portably: make rebuild-llama (or reinstall Mascot's desktop build)."

_lock = threading.Lock()
_checked: set[str] = set()


class LlamaUnusable(ModelError):
    """The installed llama.cpp cannot run on this computer (the message says why and what to do)."""


def library_dir() -> Path | None:
    """The folder holding llama.cpp's shared libraries inside the llama_cpp package."""
    import importlib.util

    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        return None
    lib = Path(list(spec.submodule_search_locations)[0]) / "lib"
    return lib if lib.is_dir() else None


def library_files() -> list[Path]:
    lib = library_dir()
    if lib is None:
        return []
    return sorted(
        p
        for p in lib.iterdir()
        if p.is_file() and (".so" in p.name or p.suffix in (".dll", ".dylib"))
    )


PROBE_VERSION = 2  # part of the cache key: a changed probe asks again


@functools.lru_cache(maxsize=1)  # the installed library does not change while Mascot runs
def library_hash() -> str:
    h = hashlib.sha256(f"probe-v{PROBE_VERSION}".encode())
    for p in library_files():
        h.update(p.name.encode())
        with open(p, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()[:32]


def cache_file() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mascot" / "llama-probe.json"


def build_features() -> dict[str, bool]:
    """The CPU features llama.cpp was compiled for (llama_print_system_info; runs no kernels)."""
    try:
        import llama_cpp

        info = llama_cpp.llama_print_system_info().decode("utf-8", "replace")
    except Exception:  # noqa: BLE001 - a report, never a failure
        return {}
    feats: dict[str, bool] = {}
    for chunk in info.split("|"):
        if "=" in chunk:
            k, _, v = chunk.rpartition("=")
            k = k.strip().split(":")[-1].strip()
            if k and v.strip() in ("0", "1"):
                feats[k] = v.strip() == "1"
    return feats


def cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith(("flags", "Features")):
            return set(line.split(":", 1)[1].split())
    return set()


# The build's feature names as /proc/cpuinfo spells them.
_FLAG_NAMES = {
    "SSE3": "pni",
    "SSSE3": "ssse3",
    "AVX": "avx",
    "AVX2": "avx2",
    "F16C": "f16c",
    "FMA": "fma",
    "BMI2": "bmi2",
    "AVX_VNNI": "avx_vnni",
    "AVX512": "avx512f",
    "AVX512_VBMI": "avx512vbmi",
    "AVX512_VNNI": "avx512_vnni",
    "AVX512_BF16": "avx512_bf16",
    "AMX_INT8": "amx_int8",
}


def probe_model(model_path: str | Path) -> Path:
    """The smallest model to probe with: the bundled one when installed, else the one being loaded."""
    try:
        return bundled_model_path()
    except ModelError:
        return Path(model_path)


def probe_command(model_path: str | Path) -> list[str]:
    """The child process that loads the model and decodes a few tokens."""
    if getattr(sys, "frozen", False):  # the one-folder app: its own entry point runs the probe
        return [sys.executable, "--llama-probe", str(model_path)]
    return [sys.executable, "-m", "engine.llm.check", str(model_path)]


def explain_failure(returncode: int, stderr: str) -> str:
    """One line for the user: what went wrong and what to do."""
    if returncode == -signal.SIGILL or returncode == 128 + signal.SIGILL:
        feats = build_features()
        flags = cpu_flags()
        used = [k for k, on in feats.items() if on and k in _FLAG_NAMES]
        missing = [k for k in used if flags and _FLAG_NAMES[k] not in flags]
        if feats.get("AMX_INT8"):
            cause = "AMX"
        elif missing:
            cause = ", ".join(missing)
        else:
            cause = "an instruction set it was compiled for"
        return (
            f"llama.cpp in this install uses CPU instructions this computer refuses ({cause}). "
            + REBUILD_HINT
        )
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"llama.cpp crashed on this computer while testing it ({name}). " + REBUILD_HINT
    last = (stderr.strip().splitlines() or ["no message"])[-1][:200]
    return f"llama.cpp failed its start-up test on this computer ({last}). " + REBUILD_HINT


def run_probe(model_path: str | Path) -> tuple[bool | None, str]:
    """Run the probe now (no cache): (ok, one-line message); ok is None when it could not tell."""
    try:
        done = subprocess.run(
            probe_command(model_path),
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            env={**os.environ, "PYTHONFAULTHANDLER": ""},
        )
    except subprocess.TimeoutExpired:
        return None, f"the llama.cpp probe took over {PROBE_TIMEOUT_S} s"
    except OSError as e:
        return None, f"the llama.cpp probe could not start ({e})"
    if done.returncode == 0:
        return True, done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "ok"
    return False, explain_failure(done.returncode, done.stderr)


def _read_cache() -> dict:
    try:
        return json.loads(cache_file().read_text())
    except (OSError, ValueError):
        return {}


def _write_cache(data: dict) -> None:
    path = cache_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1))
        tmp.replace(path)
    except OSError:
        pass  # a cache that cannot be written costs one probe per process, nothing else


def check(model_path: str | Path) -> dict:
    """The probe result for the installed library: {"ok", "message", "cached"}; probes once and
    stores a decided result (ok None means the probe could not tell, e.g. it timed out)."""
    key = library_hash()
    cache = _read_cache()
    hit = cache.get(key)
    if hit is not None:
        return {**hit, "cached": True}
    ok, message = run_probe(model_path)
    result = {"ok": ok, "message": message}
    if ok is not None:
        cache[key] = result
        _write_cache(cache)
    return {**result, "cached": False}


def ensure_llama_works(model_path: str | Path) -> None:
    """Raise LlamaUnusable if llama.cpp cannot run here; probe at most once per installed library."""
    if os.environ.get("MASCOT_SKIP_LLAMA_PROBE") == "1":  # set inside the probe child itself
        return
    with _lock:
        key = library_hash()
        if key in _checked:
            return
        result = check(model_path)
        if result["ok"] is False:
            raise LlamaUnusable(result["message"] or REBUILD_HINT)
        _checked.add(key)  # passed, or undecided (load anyway; probe again next run)


def forget() -> None:
    """Drop the in-process memo (the on-disk cache stays): for `mascot doctor` and tests."""
    with _lock:
        _checked.clear()


def probe_main(model_path: str) -> int:
    """The child: load the model, decode a few tokens, print a one-line summary."""
    os.environ["MASCOT_SKIP_LLAMA_PROBE"] = "1"
    import time

    import llama_cpp

    t0 = time.perf_counter()
    # A prompt of ~100 tokens read in one batch, then single-token decodes: some kernels (AMX
    # tiles) run only for batches of 32+ tokens, which a short prompt would never reach.
    llm = llama_cpp.Llama(
        model_path=model_path,
        n_ctx=512,
        n_batch=256,
        n_ubatch=256,
        n_threads=min(4, os.cpu_count() or 1),
        verbose=False,
    )
    prompt = " ".join(f"Line {i}: the tide came in and the gulls were loud." for i in range(8))
    out = llm(prompt, max_tokens=4, temperature=0.0)
    n = out.get("usage", {}).get("completion_tokens", 0)
    print(f"ok: decoded {n} tokens in {time.perf_counter() - t0:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(probe_main(sys.argv[1]))
