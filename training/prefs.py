"""Stage ``prefs``: judged replies -> preference pairs (chosen, rejected).

    mascot-train prefs --out runs/mia --min-margin 0.5

For every (context, persona), all pairs of distinct replies whose judge mean scores differ by at
least ``min_margin`` become preferences, widest margins first, at most ``max_pairs_per_context``.
A stable fraction of the *training* contexts (``eval_fraction``) is set aside: its pairs measure
the reward model's pairwise accuracy. The scenario ``heldout`` split is never read here.

Output ``OUT/prefs/train.jsonl`` and ``OUT/prefs/eval.jsonl`` with
``{prompt, chosen, rejected, margin, context, persona}``; ``prompt`` is the reward model's compact
view of the context (``Context.rm_prompt``: persona, last turns, user message), not the chat prompt.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Any

from training.common import TrainError, need, read_json, read_jsonl, sha256_file, write_json
from training.config import PrefsConfig, save_config
from training.contexts import build_contexts, chat_template_of, split_fraction
from training.layout import (
    CONFIG,
    base_gguf,
    is_done,
    mark_done,
    prefs_dir,
    prefs_file,
    samples_dir,
    samples_file,
)


def make_pairs(
    rows: list[dict[str, Any]], min_margin: float, max_pairs: int
) -> list[dict[str, Any]]:
    """Preference pairs from judged replies of ONE context (rows need ``reply`` and ``mean``)."""
    seen: set[str] = set()
    unique = []
    for r in rows:
        key = " ".join(r["reply"].split()).lower()
        if key and key not in seen:
            seen.add(key)
            unique.append(r)
    pairs = []
    for a, b in combinations(unique, 2):
        margin = a["mean"] - b["mean"]
        if abs(margin) >= min_margin - 1e-9:
            chosen, rejected = (a, b) if margin > 0 else (b, a)
            pairs.append(
                {
                    "chosen": chosen["reply"],
                    "rejected": rejected["reply"],
                    "margin": round(abs(margin), 4),
                }
            )
    pairs.sort(key=lambda p: -p["margin"])
    return pairs[:max_pairs] if max_pairs > 0 else pairs


def run(cfg: PrefsConfig, out: Path, seed: int = 0) -> Path:
    folder = prefs_dir(out)
    if is_done(folder):
        return folder
    need(samples_dir(out), "sample")
    scfg = read_json(samples_dir(out) / CONFIG)
    contexts = {
        c.id: c
        for c in build_contexts(
            scfg["group"],
            scfg["resolved_personas"],
            split="train",
            domain=scfg["domain"],
            limit=scfg["max_contexts"],
            chat_template=chat_template_of(base_gguf(out)),
        )
    }
    by_ctx: dict[str, list[dict[str, Any]]] = {}
    for row in read_jsonl(samples_file(out)):
        by_ctx.setdefault(row["context"], []).append(row)
    train, evals = [], []
    for cid, rows in by_ctx.items():
        ctx = contexts.get(cid)
        if ctx is None:
            continue
        held = split_fraction(f"{seed}:{ctx.scenario.id}", cfg.eval_fraction)
        for p in make_pairs(rows, cfg.min_margin, cfg.max_pairs_per_context):
            rec = {"prompt": ctx.rm_prompt, **p, "context": cid, "persona": ctx.persona.name}
            (evals if held else train).append(rec)
    if not train:
        raise TrainError(
            f"No preference pairs with a margin of at least {cfg.min_margin}: sample more "
            "replies (--k) or contexts, or lower --min-margin."
        )
    for name, rows in (("train", train), ("eval", evals)):
        path = prefs_file(out, name)
        folder.mkdir(parents=True, exist_ok=True)
        import json

        path.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
        )
    save_config(folder, cfg, {"data_sha256": sha256_file(samples_file(out))})
    stats = {
        "train_pairs": len(train),
        "eval_pairs": len(evals),
        "contexts": len(by_ctx),
        "mean_margin": round(sum(p["margin"] for p in train) / len(train), 4),
    }
    write_json(folder / "stats.json", stats)
    mark_done(folder, stats)
    return folder
