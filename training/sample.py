"""Stage ``sample``: K replies per (context, persona) from the current policy, each judged.

    mascot-train sample --out runs/mia --personas Mia --k 4 --judge heuristic

Replies are sampled with llama.cpp from ``OUT/base/base-f16.gguf`` (far faster than HF generation
on CPU), with the app's own prompt and cleanup, then scored 1-5 on the five MASCOT dimensions by
the judge (``--judge``, made by ``training.judges.factory``; by default the learned teacher).
Only the scenario ``train`` split is used.

The K replies of one context are decoded together (``engine.llm.batch.BatchGenerator``: one
llama.cpp step advances all K, and the shared prompt is evaluated once); with
``MASCOT_BATCH=0``, or when llama.cpp cannot create the batch context, they are generated one
after the other. Every reply has its own seed, so runs are reproducible in either
mode; the two modes draw different random numbers (same distribution, different replies).

Output ``OUT/samples/samples.jsonl``: one row per reply with its scores; the stage resumes where
it stopped (finished contexts are skipped).

Simplification: one sampling round from the base model (the paper iterates feedback and
optimisation); replies are judged as the first speaker of a round (``others`` is empty).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from engine.errors import ModelError
from engine.llm.backend import GenRequest
from engine.llm.batch import BatchGenerator
from engine.llm.runtime import LlamaRuntime
from engine.persona_files import load_set
from training.common import append_jsonl, need, progress, read_jsonl, sha256_file
from training.config import SampleConfig, save_config
from training.contexts import build_contexts, chat_template_of
from training.judges.factory import make_judge
from training.layout import base_dir, base_gguf, is_done, mark_done, samples_dir, samples_file


def resolve_personas(cfg: SampleConfig) -> list[str]:
    """The members this run trains (names checked against the group)."""
    group = load_set(cfg.group)
    if cfg.personas:
        return [group.member(n).name for n in cfg.personas]
    names = group.names
    return names[: cfg.max_personas] if cfg.max_personas > 0 else names


def run(cfg: SampleConfig, out: Path, seed: int = 0) -> Path:
    folder = samples_dir(out)
    if is_done(folder):
        return folder
    need(base_dir(out), "base")
    gguf = base_gguf(out)
    personas = resolve_personas(cfg)
    contexts = build_contexts(
        cfg.group,
        personas,
        split="train",
        domain=cfg.domain,
        limit=cfg.max_contexts,
        chat_template=chat_template_of(gguf),
    )
    save_config(
        folder,
        cfg,
        {
            "model": str(gguf),
            "model_sha256": sha256_file(gguf),
            "contexts": len(contexts),
            "resolved_personas": personas,
        },
    )
    path = samples_file(out)
    finished = {}
    for row in read_jsonl(path):
        finished[row["context"]] = finished.get(row["context"], 0) + 1
    todo = [c for c in contexts if finished.get(c.id, 0) < cfg.k]
    if path.exists() and todo:  # drop a partly written context; it is redone whole
        keep = [r for r in read_jsonl(path) if finished.get(r["context"], 0) >= cfg.k]
        path.write_text("", encoding="utf-8")
        append_jsonl(path, keep)
    judge = make_judge(cfg.judge)
    runtime = LlamaRuntime(gguf, n_ctx=cfg.n_ctx)
    batch = batch_generator(runtime, cfg.k, cfg.n_ctx)
    try:
        for ctx in progress(todo, desc="sample+judge", unit="ctx"):
            reqs = [
                GenRequest(
                    slot="sample",
                    messages=ctx.messages,
                    max_tokens=cfg.max_tokens,
                    temperature=cfg.temperature,
                    top_p=cfg.top_p,
                    top_k=0,
                    repeat_penalty=1.1,
                    stop=ctx.stop,
                    seed=seed * 100003 + i * 7919 + hash_id(ctx.id),
                )
                for i in range(cfg.k)
            ]
            replies = [(raw, *ctx.clean(raw)) for raw in generate_replies(runtime, batch, reqs)]
            if hasattr(judge, "warm"):
                judge.warm([r for _, r, _ in replies])
            rows = []
            for i, (raw, reply, confused) in enumerate(replies):
                scores = judge.score(ctx.scenario, ctx.persona, reply)
                rows.append(
                    {
                        "context": ctx.id,
                        "scenario": ctx.scenario.id,
                        "persona": ctx.persona.name,
                        "i": i,
                        "reply": reply,
                        "raw": raw,
                        "role_confusion": confused,
                        "scores": scores.values,
                        "mean": round(scores.mean, 4),
                        "judge": scores.judge,
                    }
                )
            append_jsonl(path, rows)
    finally:
        if batch is not None:
            batch.close()  # before the model it runs on
        runtime.llm.close()
    rows = read_jsonl(path)
    mark_done(folder, {"replies": len(rows), "contexts": len(contexts), "judge": cfg.judge})
    return folder


def batch_generator(runtime: Any, k: int, n_ctx: int) -> Any:
    """A ``BatchGenerator`` for the K replies of a context, or None for one-by-one generation
    (K = 1, ``MASCOT_BATCH=0``, or llama.cpp could not create the context: a note on stderr)."""
    if k < 2 or os.environ.get("MASCOT_BATCH", "1") == "0":
        return None
    try:
        return BatchGenerator(runtime, n_seq=min(k, 8), n_ctx=n_ctx)
    except ModelError as e:
        print(f"Sampling one reply at a time: {e}", file=sys.stderr)
        return None


def generate_replies(runtime: Any, batch: Any, reqs: list[Any]) -> list[str]:
    """Raw reply texts for ``reqs`` (batched when ``batch`` is a ``BatchGenerator``)."""
    if batch is None:
        return [runtime.generate(req).text() for req in reqs]
    return [r.text for r in batch.generate(reqs)]


def hash_id(text: str) -> int:
    import hashlib

    return int(hashlib.sha256(text.encode()).hexdigest()[:6], 16)
