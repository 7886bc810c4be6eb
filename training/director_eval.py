"""The trained Director: export to GGUF (registered for the app) and evaluation on held-out states
against the untrained Director and round-robin."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from engine.director.policies import Director, RoundRobin
from engine.llm.runtime import LlamaRuntime
from training.common import TrainError, convert_to_gguf, read_json, sha256_file, write_json
from training.config import save_config, to_dict
from training.director_config import DirectorConfig, reward_weights
from training.director_policy import decision_choices, table_summary
from training.director_rewards import COMPONENTS, total
from training.director_rollouts import director_prompt
from training.export import argmax_agreement, merge_adapter, quantize, register
from training.layout import (
    CONFIG,
    MANIFEST,
    METRICS,
    base_dir,
    base_gguf,
    director_dir,
    director_eval_dir,
    export_dir,
    hf_dir,
    mark_done,
    states_dir,
)


def model_name(cfg: DirectorConfig) -> str:
    return re.sub(
        r"[^a-z0-9._-]+", "-", f"{cfg.name_prefix}-{Path(cfg.group).stem}-grpo".lower()
    ).strip("-")


def export(cfg: DirectorConfig, out: Path, held_states: list[Any], fmt: Any, mode: str) -> Path:
    """Reuses training/export.py: merge, convert, quantize, next-token fidelity; then the manifest
    (``"role": "director"``) and registration."""
    import shutil

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = export_dir(out)
    folder.mkdir(parents=True, exist_ok=True)
    name = model_name(cfg)
    merged = folder / "hf"
    if merged.exists():
        shutil.rmtree(merged)
    merge_adapter(hf_dir(out), director_dir(out) / "adapter", merged)
    files = {"f16": convert_to_gguf(merged, folder / f"{name}-f16.gguf", "f16")}
    for q in cfg.quantize:
        files[q.lower()] = quantize(files["f16"], folder / f"{name}-{q.lower()}.gguf", q)
    tok = AutoTokenizer.from_pretrained(str(merged))
    model = AutoModelForCausalLM.from_pretrained(str(merged), dtype=torch.float32).eval()
    tokens = [
        tok(director_prompt(s, fmt), add_special_tokens=False)["input_ids"] for s in held_states[:4]
    ]
    metrics: dict[str, Any] = {
        "fidelity": argmax_agreement(model, files["f16"], tokens),
        "fidelity_positions": sum(len(t) for t in tokens),
    }
    if "q8_0" in files:
        metrics["fidelity_q8_0"] = argmax_agreement(model, files["q8_0"], tokens)
    if metrics["fidelity"] < cfg.min_fidelity:
        raise TrainError(
            f"Export fidelity {metrics['fidelity']:.4f} is below {cfg.min_fidelity}; see {folder}."
        )
    tm = read_json(director_dir(out) / METRICS)
    metrics["training"] = {k: v for k, v in tm.items() if k != "history"}
    registered = register(files, name) if cfg.register else None
    base_cfg = read_json(base_dir(out) / CONFIG)
    manifest = {
        "name": name,
        "role": "director",
        "group": cfg.group,
        "directive_mode": mode,
        "base_model": base_cfg.get("resolved_source"),
        "base_gguf_sha256": sha256_file(base_gguf(out)),
        "states_sha256": sha256_file(states_dir(out) / "states.json"),
        "metrics": metrics,
        "files": {
            k: {"path": p.name, "sha256": sha256_file(p), "bytes": p.stat().st_size}
            for k, p in files.items()
        },
        "registered": registered,
        "config": to_dict(cfg),
    }
    write_json(folder / MANIFEST, manifest)
    mark_done(folder, {"fidelity": metrics["fidelity"], "registered": registered})
    return folder


# -- evaluation ---------------------------------------------------------------------------------------


def evaluate(cfg: DirectorConfig, out: Path, states: list[Any], rewarder: Any) -> Path:
    """Held-out states: the app's Director (grammar, greedy) on the base and on the trained GGUF,
    and round-robin, scored with the same components and weights."""
    folder = director_eval_dir(out)
    manifest = read_json(export_dir(out) / MANIFEST)
    files = manifest["files"]
    trained = (
        export_dir(out) / next(v["path"] for k, v in files.items() if k != "f16")
        if len(files) > 1
        else export_dir(out) / files["f16"]["path"]
    )
    weights = reward_weights(cfg)
    policies: dict[str, Any] = {"round-robin": RoundRobin()}
    runtimes = []
    for label, path in (("untrained", base_gguf(out)), ("trained", trained)):
        rt = LlamaRuntime(path, n_ctx=2048, n_threads=cfg.threads or None)
        runtimes.append(rt)
        policies[label] = Director(
            rt,
            directive_mode=manifest.get("directive_mode", "auto"),
            balance_prior=cfg.balance_prior,
        )
    samples = cfg.eval_samples or rewarder.samples
    scorer = rewarder.with_samples(samples) if samples != rewarder.samples else rewarder
    result: dict[str, Any] = {
        "states": len(states),
        "weights": weights,
        "samples": samples,
        "policies": {},
    }
    by_k: dict[str, float] = {}
    for label, policy in policies.items():
        rows = []
        decisions = [policy.next(s.round_state(), s.transcript()) for s in states]
        scorer.prefetch([(s, d.speaker, d.directive) for s, d in zip(states, decisions)])
        if scorer is not rewarder:  # the same decisions at the training's samples, for comparison
            by_k[label] = round(
                sum(
                    total(
                        {
                            **rewarder.decision_components(s, d.speaker, d.directive),
                            "format": 1.0 if d.valid else 0.0,
                        },
                        weights,
                    )
                    for s, d in zip(states, decisions)
                )
                / max(1, len(states)),
                4,
            )
        for s, d in zip(states, decisions):
            comps = scorer.decision_components(s, d.speaker, d.directive)
            comps["format"] = 1.0 if d.valid else 0.0
            rows.append(
                {
                    "state": s.id,
                    "speaker": d.speaker,
                    "directive": d.directive,
                    "reward": round(total(comps, weights), 4),
                    **comps,
                }
            )
        n = max(1, len(rows))
        result["policies"][label] = {
            "mean_reward": round(sum(r["reward"] for r in rows) / n, 4),
            "components": {c: round(sum(r[c] for r in rows) / n, 4) for c in COMPONENTS},
            "speakers": {
                sp: sum(1 for r in rows if r["speaker"] == sp)
                for sp in {r["speaker"] for r in rows}
            },
            "decisions": rows,
        }
    if by_k:
        result[f"mean_reward_at_{rewarder.samples}_samples"] = by_k
    for rt in runtimes:
        rt.llm.close()
    rewarder.save()
    if cfg.eval_table and manifest.get("directive_mode", "menu") == "menu":
        # the best and the average allowed decision per held-out state, for scale
        summary = table_summary(rewarder.table(states, decision_choices), states, weights)
        result["headroom"] = {
            k: summary[k] for k in ("oracle", "random", "round_robin", "decisions")
        }
        result["headroom"]["signal"] = summary["signal"] = rewarder.split_half_signal(
            states, decision_choices, weights
        )
        write_json(folder / "table.json", summary)
    p = result["policies"]
    result["trained_beats_untrained"] = p["trained"]["mean_reward"] > p["untrained"]["mean_reward"]
    result["trained_beats_round_robin"] = (
        p["trained"]["mean_reward"] > p["round-robin"]["mean_reward"]
    )
    write_json(folder / METRICS, result)
    save_config(folder, cfg)
    mark_done(folder, {k: v for k, v in result.items() if k != "policies"})
    return folder
