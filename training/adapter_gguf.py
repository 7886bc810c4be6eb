"""A PEFT LoRA adapter folder -> a llama.cpp LoRA adapter GGUF (Llama, Mistral, Qwen2, Gemma 3).

    from training.adapter_gguf import write_lora_gguf
    write_lora_gguf("runs/mia/policy/Mia/adapter", "mia-lora.gguf", base="base.gguf")

The file follows llama.cpp's ``convert_lora_to_gguf.py``: ``general.type = adapter``,
``adapter.type = lora``, ``adapter.lora.alpha``, ``general.architecture`` (the base model's) and, per adapted
weight, ``blk.N.<name>.weight.lora_a`` (PEFT ``lora_A``, shape ``(r, in)``) and ``.lora_b``
(PEFT ``lora_B``, shape ``(out, r)``). llama.cpp computes ``W x + alpha / r * B (A x)``.

Two details that decide whether the adapter does what it did in PyTorch:

* **Q/K row order.** For Llama and Mistral, llama.cpp's HF converter permutes the rows of
  ``q_proj``/``k_proj`` (``LlamaModel.permute``: heads interleaved for its RoPE layout). The adapter's update
  ``B @ A`` must be permuted the same way; only rows move, so permuting ``B`` is exact and ``A``
  stays as it is (what ``convert_lora_to_gguf.py`` does through ``LoraTorchTensor``). This needs
  the base model's head counts: from ``base`` (an HF folder with ``config.json`` or the base
  ``.gguf``) or from the adapter's ``base_model_name_or_path`` when that is a local folder.
  Qwen2 and Gemma 3 keep Hugging Face's row order (their converters do not permute), so their
  matrices are written as they are; the base still names the architecture.
* **Scale.** llama.cpp uses one ``alpha`` and each tensor's rank. rsLoRA and per-module
  ``alpha_pattern``/``rank_pattern`` scales are folded into ``B``, so the product is the same.

DoRA, LoRA biases, trained embeddings/heads (``modules_to_save``) and modules other than the
seven attention and MLP projections have no llama.cpp adapter equivalent and are refused (one line).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from engine.errors import ModelError
from engine.models.registry import gguf_fields
from training.common import TrainError

# HF Llama module -> llama.cpp tensor (gguf MODEL_TENSOR names for MODEL_ARCH.LLAMA)
MODULES = {
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
}
LLAMA_HF_TYPES = (
    "llama",
    "mistral",
)  # HF model types llama.cpp converts to arch "llama" (permuted q/k)
# HF model type -> llama.cpp architecture, for the families whose adapters convert
HF_ARCHS = {
    "llama": "llama",
    "mistral": "llama",
    "qwen2": "qwen2",
    "gemma3": "gemma3",
    "gemma3_text": "gemma3",
}
PERMUTED = {"llama"}  # architectures whose converter reorders q/k rows
# Gemma 3's multimodal checkpoints nest the text model: model.language_model.layers.N...
_KEY = re.compile(
    r"^(?:base_model\.model\.)?(?P<prefix>(?:model\.)?(?:language_model\.)?(?:model\.)?"
    r"layers\.(?P<layer>\d+)\.(?P<module>[\w.]+?))"
    r"\.lora_(?P<ab>[AB])(?:\.default)?\.weight$"
)


def _permute(w: Any, n_head: int, n_head_kv: int | None) -> Any:
    """llama.cpp's row permutation of Q/K weights for Llama RoPE (conversion/llama.py
    ``LlamaModel.permute``), on a numpy array of shape (out, ...)."""
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return (
        w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
        .swapaxes(1, 2)
        .reshape(w.shape)
    )


def _read_config(adapter_dir: Path) -> dict[str, Any]:
    if not adapter_dir.is_dir():
        raise TrainError(
            f"{adapter_dir}: no such adapter folder (expected adapter_config.json and "
            "adapter_model.safetensors)."
        )
    f = adapter_dir / "adapter_config.json"
    if not f.is_file():
        raise TrainError(
            f"{adapter_dir}: no adapter_config.json; is this a PEFT LoRA adapter folder?"
        )
    try:
        cfg = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise TrainError(f"{f}: unreadable adapter config ({type(e).__name__}).") from None
    if not isinstance(cfg, dict):
        raise TrainError(f"{f}: the adapter config is not a JSON object.")
    kind = str(cfg.get("peft_type") or "LORA").upper()
    if kind != "LORA":
        raise TrainError(
            f"{adapter_dir}: a {kind} adapter; only plain LoRA converts to a llama.cpp adapter."
        )
    if cfg.get("use_dora"):
        raise TrainError(
            f"{adapter_dir}: DoRA adapters have no llama.cpp equivalent; train without use_dora."
        )
    if cfg.get("fan_in_fan_out"):
        raise TrainError(
            f"{adapter_dir}: fan_in_fan_out adapters (GPT-2 style Conv1D) are not Llama adapters."
        )
    if cfg.get("modules_to_save"):
        raise TrainError(
            f"{adapter_dir}: the adapter also saves full modules ({', '.join(cfg['modules_to_save'])}); "
            "llama.cpp adapters hold LoRA matrices only."
        )
    try:
        cfg["r"], cfg["lora_alpha"] = int(cfg["r"]), float(cfg["lora_alpha"])
    except (KeyError, TypeError, ValueError):
        raise TrainError(f"{f}: 'r' and 'lora_alpha' must be numbers.") from None
    if cfg["r"] <= 0 or not math.isfinite(cfg["lora_alpha"]) or cfg["lora_alpha"] <= 0:
        raise TrainError(f"{f}: 'r' and 'lora_alpha' must be positive.")
    return cfg


def _read_tensors(adapter_dir: Path) -> dict[str, Any]:
    """Tensor name -> float32 numpy array (bf16 files need torch to read)."""
    st, pt = adapter_dir / "adapter_model.safetensors", adapter_dir / "adapter_model.bin"
    try:
        import torch

        if st.is_file():
            from safetensors.torch import load_file

            raw = load_file(str(st), device="cpu")
        elif pt.is_file():
            raw = torch.load(str(pt), map_location="cpu", weights_only=True)
        else:
            raise TrainError(f"{adapter_dir}: no adapter_model.safetensors in the adapter folder.")
        return {k: v.detach().to(torch.float32).numpy() for k, v in raw.items()}
    except TrainError:
        raise
    except Exception as e:  # noqa: BLE001 - damaged file, wrong format
        detail = (str(e).splitlines() or [type(e).__name__])[0][:120]
        raise TrainError(f"{adapter_dir}: cannot read the adapter weights ({detail}).") from None


def _pattern(patterns: dict[str, Any] | None, key: str, default: Any) -> Any:
    """PEFT's rank_pattern/alpha_pattern lookup (peft.utils.other.get_pattern_key)."""
    for p in patterns or {}:
        if re.match(rf"(.*\.)?({p})$", key):
            return patterns[p]  # type: ignore[index]
    return default


def _heads_from(base: Path) -> tuple[str, int, int]:
    """(architecture, n_head, n_head_kv) of the base model (HF folder or GGUF file)."""
    if base.is_dir():
        f = base / "config.json"
        if not f.is_file():
            raise TrainError(f"{base}: not an HF model folder (no config.json).")
        try:
            c = json.loads(f.read_text(encoding="utf-8"))
            if c.get("model_type") == "gemma3" and isinstance(c.get("text_config"), dict):
                c = {
                    **c["text_config"],
                    "model_type": "gemma3",
                }  # the multimodal checkpoint's text model
            arch = HF_ARCHS.get(str(c.get("model_type")), str(c.get("model_type")))
            n_head = int(c["num_attention_heads"])
            return arch, n_head, int(c.get("num_key_value_heads") or n_head)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise TrainError(f"{f}: unreadable model config ({type(e).__name__}).") from None
    if base.is_file():
        try:
            head = gguf_fields(base, ("general.architecture", "general.type"))
            arch = str(head["general.architecture"] or "")
            f = gguf_fields(
                base, (f"{arch}.attention.head_count", f"{arch}.attention.head_count_kv")
            )
        except ModelError as e:
            raise TrainError(str(e)) from None
        if head["general.type"] == "adapter":
            raise TrainError(f"{base}: is itself an adapter; give the base model.")
        n_head, n_kv = f[f"{arch}.attention.head_count"], f[f"{arch}.attention.head_count_kv"]
        if arch in PERMUTED and not n_head:
            raise TrainError(f"{base}: the GGUF file names no attention head count.")
        n_head = int(max(n_head) if isinstance(n_head, list) else n_head or 0)
        n_kv = int(max(n_kv) if isinstance(n_kv, list) else n_kv or n_head)
        return arch, n_head, n_kv
    raise TrainError(f"{base}: no such base model (give an HF folder or the base .gguf file).")


def write_lora_gguf(
    adapter_dir: str | Path,
    out_path: str | Path,
    *,
    base: str | Path | None = None,
    dtype: str = "f16",
) -> Path:
    """Convert the PEFT LoRA folder ``adapter_dir`` to a llama.cpp adapter GGUF at ``out_path``.

    ``base`` (an HF folder or the base model's GGUF) supplies the head counts needed to reorder
    Q/K; without it the adapter config's ``base_model_name_or_path`` is tried. ``dtype`` is
    ``f16`` (default) or ``f32``. Raises TrainError (one line) on anything it cannot convert."""
    import numpy as np

    adapter_dir, out_path = Path(adapter_dir).expanduser(), Path(out_path).expanduser()
    if dtype not in ("f16", "f32"):
        raise TrainError(f"Unknown adapter type '{dtype}'; use f16 or f32.")
    cfg = _read_config(adapter_dir)
    tensors = _read_tensors(adapter_dir)
    pairs: dict[tuple[int, str], dict[str, Any]] = {}
    for key, value in tensors.items():
        m = _KEY.match(key)
        if not m:
            raise TrainError(
                f"{adapter_dir}: unsupported tensor '{key}' (only LoRA A/B of the "
                "attention and MLP projections convert)."
            )
        if m["module"] not in MODULES:
            raise TrainError(
                f"{adapter_dir}: LoRA on '{m['module']}' has no llama.cpp adapter tensor; "
                f"target only {', '.join(k.split('.')[1] for k in MODULES)}."
            )
        entry = pairs.setdefault((int(m["layer"]), m["module"]), {"prefix": m["prefix"]})
        entry[m["ab"]] = value
    if not pairs:
        raise TrainError(f"{adapter_dir}: the adapter holds no LoRA tensors.")

    base_path = Path(base).expanduser() if base else None
    if base_path is None:
        named = str(cfg.get("base_model_name_or_path") or "")
        p = Path(named).expanduser() if named else None
        if p is not None and (
            (p / "config.json").is_file() or (p.is_file() and p.suffix == ".gguf")
        ):
            base_path = p
    heads = _heads_from(base_path) if base_path is not None else None
    supported = sorted(set(HF_ARCHS.values()))
    if heads is not None and heads[0] not in supported:
        raise TrainError(
            f"{base_path}: a '{heads[0]}' model; LoRA GGUF export supports "
            f"{', '.join(supported)} (use the merged GGUF instead)."
        )
    arch = heads[0] if heads is not None else "llama"
    if heads is None and any(mod in ("self_attn.q_proj", "self_attn.k_proj") for _, mod in pairs):
        raise TrainError(
            f"{adapter_dir}: the base model is needed to reorder q_proj/k_proj for llama.cpp; "
            "give base= (its HF folder or .gguf file)."
        )

    alpha = cfg["lora_alpha"]
    np_type = np.float16 if dtype == "f16" else np.float32
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_name(out_path.name + ".part")
    out: list[tuple[str, Any]] = []
    for (layer, module), entry in sorted(pairs.items()):
        if "A" not in entry or "B" not in entry:
            missing = "A" if "A" not in entry else "B"
            raise TrainError(f"{adapter_dir}: layer {layer} {module} has no lora_{missing} tensor.")
        a, b = entry["A"], entry["B"]
        if a.ndim != 2 or b.ndim != 2 or a.shape[0] != b.shape[1]:
            raise TrainError(
                f"{adapter_dir}: layer {layer} {module}: lora_A {tuple(a.shape)} and lora_B "
                f"{tuple(b.shape)} do not multiply."
            )
        if not (np.isfinite(a).all() and np.isfinite(b).all()):
            raise TrainError(f"{adapter_dir}: layer {layer} {module} holds NaN or infinite values.")
        rank = a.shape[0]
        key = entry["prefix"]
        r_peft = int(_pattern(cfg.get("rank_pattern"), key, cfg["r"]))
        if r_peft != rank:
            raise TrainError(
                f"{adapter_dir}: layer {layer} {module} has rank {rank}, the config says {r_peft}."
            )
        a_peft = float(_pattern(cfg.get("alpha_pattern"), key, alpha))
        scale = a_peft / (math.sqrt(rank) if cfg.get("use_rslora") else rank)
        b = b * np.float32(
            scale / (alpha / rank)
        )  # llama.cpp applies alpha / rank; 1.0 for plain LoRA
        if module in ("self_attn.q_proj", "self_attn.k_proj") and arch in PERMUTED:
            assert heads is not None
            _, n_head, n_kv = heads
            groups = n_head if module == "self_attn.q_proj" else n_kv
            if b.shape[0] % (2 * groups):
                raise TrainError(
                    f"{adapter_dir}: layer {layer} {module} has {b.shape[0]} rows, not a multiple "
                    f"of 2 x {groups} heads; wrong base model?"
                )
            b = _permute(b, n_head, n_head if module == "self_attn.q_proj" else n_kv)
        name = f"blk.{layer}.{MODULES[module]}.weight"
        for suffix, t in ((".lora_a", a), (".lora_b", b)):
            t = np.ascontiguousarray(t.astype(np_type))
            if not np.isfinite(t).all():
                raise TrainError(
                    f"{adapter_dir}: layer {layer} {module} overflows f16; write with dtype='f32'."
                )
            out.append((name + suffix, t))

    import gguf

    writer = gguf.GGUFWriter(str(tmp), arch)
    try:
        writer.add_type(gguf.GGUFType.ADAPTER)
        writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
        writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, float(alpha))
        writer.add_name(f"{adapter_dir.name} LoRA")
        writer.add_file_type(
            gguf.LlamaFileType.MOSTLY_F16 if dtype == "f16" else gguf.LlamaFileType.ALL_F32
        )
        for name, t in out:
            writer.add_tensor(name, t)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
    except OSError as e:
        writer.close()
        tmp.unlink(missing_ok=True)
        raise TrainError(f"{out_path}: cannot write the adapter ({e.strerror or e}).") from None
    writer.close()
    tmp.replace(out_path)
    return out_path
