"""Stage ``base``: HF weights to train, plus GGUF files of them for llama.cpp sampling.

    mascot-train base --out runs/mia                       # dequantize the bundled SmolLM2-135M
    mascot-train base --out runs/x --source ~/models/Qwen2.5-0.5B-Instruct   # an HF folder
    mascot-train base --out runs/x --source some/hub-id    # downloads (needs internet)
    mascot-train base --out runs/t --tiny                  # tiny random Llama, bundled tokenizer

Output ``OUT/base/``: ``hf/`` (model + tokenizer, safetensors), ``base-f16.gguf`` (converted with
llama.cpp's converter, used to sample replies and as the "before" model), ``config.json``, ``DONE``.

The bundled model is Q4_1, so its dequantized weights carry the quantization error of that file
(the trained model starts from exactly what the app runs, which is what we want to improve).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from engine.models.registry import bundled_model_path
from training.common import TrainError, convert_to_gguf, progress
from training.config import BaseConfig, save_config
from training.layout import base_dir, base_gguf, hf_dir, is_done, mark_done


def _bundled_tokenizer(tmp: Path) -> Any:
    from transformers import AutoTokenizer

    gguf = bundled_model_path()
    return AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)


def dequantize_gguf(path: Path, dest: Path) -> None:
    """GGUF -> plain HF model folder (transformers dequantizes; we rebuild a clean model from
    its config and load the state dict, so nothing GGUF-specific leaks into the saved folder)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    loaded = AutoModelForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, dtype=torch.float32
    )
    tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    config = AutoConfig.for_model(
        **{
            k: v
            for k, v in loaded.config.to_dict().items()
            if k not in ("_name_or_path", "transformers_version", "quantization_config")
        }
    )
    config.dtype = "float32"
    model = AutoModelForCausalLM.from_config(config)
    missing, unexpected = model.load_state_dict(loaded.state_dict(), strict=False)
    if unexpected or [m for m in missing if "lm_head" not in m]:
        raise TrainError(
            f"{path}: dequantized weights do not match the model ({missing[:3]} {unexpected[:3]})."
        )
    if getattr(config, "tie_word_embeddings", False):
        model.tie_weights()
    model.generation_config.pad_token_id = tok.pad_token_id
    model.save_pretrained(str(dest))
    tok.save_pretrained(str(dest))


def build_tiny(cfg: BaseConfig, dest: Path, seed: int = 0) -> None:
    """A tiny random Llama with the bundled (SmolLM2) tokenizer, so GGUF conversion and llama.cpp
    work exactly as for a real model. With the usual small init (0.02) and tied embeddings the
    next-token logits have clear winners, so the f16 fidelity check is meaningful (a wider init
    leaves near-ties that f16 rounding flips; docs/training.md, "Log")."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    tok = _bundled_tokenizer(dest)
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=cfg.tiny_hidden,
        intermediate_size=cfg.tiny_hidden * 2,
        num_hidden_layers=cfg.tiny_layers,
        num_attention_heads=cfg.tiny_heads,
        num_key_value_heads=max(1, cfg.tiny_heads // 2),
        max_position_embeddings=2048,
        rms_norm_eps=1e-5,
        rope_theta=10000.0,
        tie_word_embeddings=True,
        initializer_range=0.02,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    model = LlamaForCausalLM(config)
    model.save_pretrained(str(dest))
    tok.save_pretrained(str(dest))


def fetch_source(source: str, dest: Path) -> str:
    """Fill ``dest`` with an HF model folder from ``source``; returns a description of it."""
    if source in ("bundled", "default", ""):
        gguf = bundled_model_path()
        dequantize_gguf(gguf, dest)
        return f"bundled:{gguf.name}"
    p = Path(source).expanduser()
    if p.suffix.lower() == ".gguf":
        if not p.is_file():
            raise TrainError(f"{p}: no such GGUF file.")
        dequantize_gguf(p, dest)
        return f"gguf:{p.resolve()}"
    if p.is_dir():
        if not (p / "config.json").is_file():
            raise TrainError(f"{p}: not an HF model folder (no config.json).")
        shutil.copytree(p, dest, dirs_exist_ok=True)
        return f"hf:{p.resolve()}"
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        model = AutoModelForCausalLM.from_pretrained(source)
        tok = AutoTokenizer.from_pretrained(source)
    except Exception as e:  # noqa: BLE001 - offline, unknown id, gated repo ...
        raise TrainError(
            f"Could not get '{source}' from the Hugging Face Hub ({type(e).__name__}); give "
            "'bundled', a .gguf path or a local HF folder when offline."
        ) from None
    model.save_pretrained(str(dest))
    tok.save_pretrained(str(dest))
    return f"hub:{source}"


def run(cfg: BaseConfig, out: Path, seed: int = 0) -> Path:
    """Run the stage (skipped when already finished). Returns the stage folder."""
    folder = base_dir(out)
    if is_done(folder):
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    dest = hf_dir(out)
    if dest.exists():
        shutil.rmtree(dest)
    with progress(total=2, desc="base", unit="step") as bar:
        described = "tiny-random-llama" if cfg.tiny else None
        if cfg.tiny:
            build_tiny(cfg, dest, seed)
        else:
            described = fetch_source(cfg.source, dest)
        bar.update(1)
        convert_to_gguf(dest, base_gguf(out), "f16")
        bar.update(1)
    save_config(
        folder, cfg, {"resolved_source": described, "hf": str(dest), "gguf": str(base_gguf(out))}
    )
    mark_done(folder, {"source": described})
    return folder
