"""Where every training stage writes: its folder under a run's ``OUT``, its files, its DONE marker.

A stage reads the output of the stages before it through these helpers, never through the
other stage's module::

    OUT/base/               hf/ (HF model + tokenizer), base-f16.gguf
    OUT/samples/            samples.jsonl
    OUT/prefs/              train.jsonl, eval.jsonl, stats.json
    OUT/reward/             model/ (LoRA merged, ready to score), metrics.json
    OUT/policy/<persona>/   adapter/ (PEFT LoRA), metrics.json
    OUT/export/<persona>/   hf/, the GGUF files, manifest.json
    OUT/evaluate/           results.json, replies.jsonl

``mascot-train director`` uses ``base/`` and ``export/`` as above (one export, no persona level)
and adds ``states/`` (states.json, rollouts.json), ``director/`` (adapter/, metrics.json) and
``eval/`` (metrics.json). Every stage folder also holds its resolved ``config.json`` and, once
finished, a ``DONE`` marker.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CONFIG = "config.json"
METRICS = "metrics.json"
MANIFEST = "manifest.json"
DONE = "DONE"


# -- the DONE marker -------------------------------------------------------------------------------


def done_marker(folder: Path) -> Path:
    return folder / DONE


def is_done(folder: Path) -> bool:
    return done_marker(folder).is_file()


def mark_done(folder: Path, info: dict[str, Any] | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    done_marker(folder).write_text(json.dumps(info or {}, indent=2) + "\n", encoding="utf-8")


# -- the persona stages, in order ------------------------------------------------------------------


def base_dir(out: Path) -> Path:
    return Path(out) / "base"


def hf_dir(out: Path) -> Path:
    return base_dir(out) / "hf"


def base_gguf(out: Path) -> Path:
    return base_dir(out) / "base-f16.gguf"


def samples_dir(out: Path) -> Path:
    return Path(out) / "samples"


def samples_file(out: Path) -> Path:
    return samples_dir(out) / "samples.jsonl"


def trained_personas(out: Path) -> list[str]:
    """The personas of the run: the ones the ``sample`` stage resolved (its ``config.json``)."""
    config = json.loads((samples_dir(out) / CONFIG).read_text(encoding="utf-8"))
    return list(config["resolved_personas"])


def prefs_dir(out: Path) -> Path:
    return Path(out) / "prefs"


def prefs_file(out: Path, split: str) -> Path:
    """``train`` or ``eval`` preference pairs."""
    return prefs_dir(out) / f"{split}.jsonl"


def reward_dir(out: Path) -> Path:
    return Path(out) / "reward"


def reward_model_dir(out: Path) -> Path:
    return reward_dir(out) / "model"


def policy_dir(out: Path, persona: str | None = None) -> Path:
    base = Path(out) / "policy"
    return base / persona if persona else base


def export_dir(out: Path, persona: str | None = None) -> Path:
    base = Path(out) / "export"
    return base / persona if persona else base


def eval_dir(out: Path) -> Path:
    return Path(out) / "evaluate"


# -- mascot-train director -------------------------------------------------------------------------


def states_dir(out: Path) -> Path:
    return Path(out) / "states"


def director_dir(out: Path) -> Path:
    return Path(out) / "director"


def director_eval_dir(out: Path) -> Path:
    return Path(out) / "eval"
