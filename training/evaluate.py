"""Stage ``evaluate``: the persona's mean reward on held-out contexts, before vs after training.

    mascot-train evaluate --out runs/mia --judge heuristic

Both models are run alike through llama.cpp at f16 (``OUT/base/base-f16.gguf`` vs the exported
``<name>-f16.gguf``), on the scenario ``heldout`` split (never used in training), with the app's
prompts and cleanup and the same seeds. Each reply is scored by the trained reward model and,
optionally, by a judge (``--judge``; the judge is the more independent check, since the policy
was optimised against the reward model itself).

Output ``OUT/evaluate/results.json`` (means per persona and model) and ``replies.jsonl``; the
numbers are also added to each export's ``manifest.json`` under ``metrics.heldout``.
"""

from __future__ import annotations

import json
from pathlib import Path
from statistics import mean
from typing import Any

from engine.llm.backend import GenRequest
from engine.llm.runtime import LlamaRuntime
from training.common import need, progress, read_json, write_json
from training.config import EvalConfig, save_config
from training.contexts import build_contexts, chat_template_of
from training.judges.factory import make_judge
from training.layout import (
    CONFIG,
    MANIFEST,
    base_gguf,
    eval_dir,
    export_dir,
    is_done,
    mark_done,
    reward_dir,
    reward_model_dir,
    samples_dir,
    trained_personas,
)
from training.reward_model import RewardScorer


def run(cfg: EvalConfig, out: Path, seed: int = 0) -> Path:
    out = Path(out)
    folder = eval_dir(out)
    if is_done(folder):
        return folder
    need(export_dir(out), "export")
    scfg = read_json(samples_dir(out) / CONFIG)
    rcfg = read_json(reward_dir(out) / CONFIG)
    scorer = RewardScorer.load(reward_model_dir(out), max_length=int(rcfg["max_length"]))
    judge = make_judge(cfg.judge) if cfg.judge else None
    results: dict[str, Any] = {"judge": cfg.judge or None, "personas": {}}
    rows_out = []
    for persona in trained_personas(out):
        manifest_path = export_dir(out, persona) / MANIFEST
        manifest = read_json(manifest_path)
        after = export_dir(out, persona) / manifest["files"]["f16"]["path"]
        ctxs = build_contexts(
            scfg["group"],
            [persona],
            split="heldout",
            domain=scfg["domain"],
            limit=cfg.contexts,
            chat_template=chat_template_of(base_gguf(out)),
        )
        per: dict[str, Any] = {}
        for label, gguf in (("before", base_gguf(out)), ("after", after)):
            runtime = LlamaRuntime(gguf, n_ctx=2048)
            replies = []
            try:
                for ctx in progress(ctxs, desc=f"evaluate {persona} {label}", unit="ctx"):
                    for i in range(cfg.samples):
                        req = GenRequest(
                            slot="eval",
                            messages=ctx.messages,
                            max_tokens=cfg.max_tokens,
                            temperature=cfg.temperature,
                            top_p=0.9,
                            top_k=40,
                            repeat_penalty=1.1,
                            stop=ctx.stop,
                            seed=seed * 1000 + i,
                        )
                        reply, confused = ctx.clean(runtime.generate(req).text())
                        replies.append((ctx, i, reply, confused))
            finally:
                runtime.llm.close()
            nonempty = [(c, i, r, x) for c, i, r, x in replies if r.strip()]
            rewards = dict(
                zip(
                    [(c.id, i) for c, i, _, _ in nonempty],
                    scorer([c.rm_prompt for c, *_ in nonempty], [r for _, _, r, _ in nonempty]),
                )
            )
            stats: dict[str, Any] = {
                "replies": len(replies),
                "empty": len(replies) - len(nonempty),
                "role_confusion": sum(1 for *_, x in replies if x),
            }
            rm = [rewards.get((c.id, i), -5.0) for c, i, _, _ in replies]
            stats["reward"] = round(mean(rm), 4) if rm else float("nan")
            judged = []
            for (c, i, r, x), rew in zip(replies, rm):
                row = {
                    "model": label,
                    "persona": persona,
                    "context": c.id,
                    "i": i,
                    "reply": r,
                    "reward": round(rew, 4),
                }
                if judge is not None:
                    s = judge.score(c.scenario, c.persona, r)
                    row["judge_mean"] = round(s.mean, 4)
                    row["judge"] = s.values
                    judged.append(s.mean)
                rows_out.append(row)
            if judged:
                stats["judge_mean"] = round(mean(judged), 4)
            per[label] = stats
        per["reward_gain"] = round(per["after"]["reward"] - per["before"]["reward"], 4)
        if "judge_mean" in per["after"]:
            per["judge_gain"] = round(per["after"]["judge_mean"] - per["before"]["judge_mean"], 4)
        per["contexts"] = len(ctxs)
        results["personas"][persona] = per
        manifest["metrics"]["heldout"] = per
        write_json(manifest_path, manifest)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "replies.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows_out), encoding="utf-8"
    )
    write_json(folder / "results.json", results)
    save_config(folder, cfg)
    mark_done(folder, results)
    return folder
