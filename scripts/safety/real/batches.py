"""Annotation batches of real messages: a sample per source, stratified over the source's own
labels and with long posts in it, written as unlabelled ``{id, text}`` JSONL files of about 100
messages for two annotators who never see the screen (docs/safety-realdata.md).

The batches mix the sources in a seeded order and their ids (``m0001`` ...) say nothing about
where a message came from; a key (not for the annotators) maps each id to
its row, source and source label, so that labels can be joined back; it lies outside the batches'
folder (``ROOT/annotation-key.jsonl``), so that handing the folder over hands no labels over.
"""

from __future__ import annotations

import json
import random
import re
import shutil
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from . import sources as src

BRIEF = src.ROOT / "docs" / "safety-annotation.md"
BATCH_SIZE = 100
LONG_WORDS = 150  # a "long post": the screen's hardest case (issue 40)
MIN_WORDS = 3


@dataclass(frozen=True)
class Plan:
    """How many messages to draw from a source: ``n`` in all, split evenly over ``strata``
    (groups of the source's labels; one stratum per label when empty), with ``long_share`` of
    each stratum from posts of at least ``LONG_WORDS`` words where there are that many, and at
    most ``per_group`` messages from one group (a Reddit user, a conversation)."""

    n: int
    strata: tuple[tuple[str, ...], ...] = ()
    long_share: float = 0.0
    per_group: int = 0
    rest: int = 0  # messages drawn from every label outside ``strata``


SAD = ("sad", "lonely", "devastated", "disappointed", "guilty", "ashamed", "afraid", "terrified")
SAD += ("anxious", "apprehensive")

PLANS: dict[str, Plan] = {
    "cssrs_reddit": Plan(300, long_share=1 / 3, per_group=2),
    "si_tweets": Plan(200),
    "suicidal_kw_tweets": Plan(200),
    "empathetic": Plan(250, strata=tuple((e,) for e in SAD), per_group=1, rest=75),
    "goemotions": Plan(
        250,
        strata=(
            ("sadness",),
            ("grief",),
            ("remorse",),
            ("disappointment",),
            ("fear",),
            ("nervousness",),
        ),
        rest=75,
    ),
}


def _words(text: str) -> int:
    return len(text.split())


def _norm(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()


def _labels_of(row: src.Row) -> set[str]:
    return set(row.source_label.split("+"))  # GoEmotions: several emotions per comment


def _draw(pool: list[src.Row], k: int, plan: Plan, rng: random.Random, used: dict) -> list[src.Row]:
    """``k`` rows of ``pool``, ``plan.long_share`` of them long, at most ``plan.per_group`` per
    group over the whole sample (``used`` counts), no text twice."""
    rng.shuffle(pool)
    long_k = round(k * plan.long_share)
    picked: list[src.Row] = []

    def take(rows: list[src.Row], limit: int) -> None:
        for r in rows:
            if len(picked) >= limit:
                return
            key = _norm(r.text)
            if key in used["texts"]:
                continue
            group = r.group or r.id
            if plan.per_group and used["groups"][group] >= plan.per_group:
                continue
            used["texts"].add(key)
            used["groups"][group] += 1
            picked.append(r)

    take([r for r in pool if _words(r.text) >= LONG_WORDS], long_k)
    take(pool, k)
    return picked


def sample(name: str, rows: list[src.Row], plan: Plan, seed: int = 40) -> list[src.Row]:
    """A stratified sample of one source (``plan``); seeded, so a rerun draws the same rows."""
    rng = random.Random(f"{seed}:{name}")
    rows = [r for r in rows if _words(r.text) >= MIN_WORDS]
    strata = plan.strata or tuple((lab,) for lab in sorted({r.source_label for r in rows}))
    in_strata = {lab for group in strata for lab in group}
    used = {"texts": set(), "groups": defaultdict(int)}
    base = (plan.n - plan.rest) // len(strata)
    extra = (plan.n - plan.rest) % len(strata)
    picked: list[src.Row] = []
    for i, group in enumerate(strata):
        pool = [r for r in rows if _labels_of(r) & set(group)]
        picked += _draw(pool, base + (i < extra), plan, rng, used)
    if plan.rest:
        pool = [r for r in rows if not _labels_of(r) & in_strata]
        picked += _draw(pool, plan.rest, plan, rng, used)
    return picked


def write(root: Path, picked: list[src.Row], seed: int = 40) -> Path:
    """The batches (``batch-01.jsonl`` ...) and the annotation brief under ``root/annotation/``,
    the key in ``root/annotation-key.jsonl``; the ids follow a seeded order over all sources."""
    out = root / "annotation"
    if out.exists():
        for old in out.glob("batch-*.jsonl"):
            old.unlink()
    out.mkdir(parents=True, exist_ok=True)
    order = list(picked)
    random.Random(f"{seed}:order").shuffle(order)
    key = []
    for b in range(0, len(order), BATCH_SIZE):
        path = out / f"batch-{b // BATCH_SIZE + 1:02d}.jsonl"
        with open(path, "w", encoding="utf-8") as f:
            for i, row in enumerate(order[b : b + BATCH_SIZE], start=b + 1):
                mid = f"m{i:04d}"
                f.write(json.dumps({"id": mid, "text": row.text}, ensure_ascii=False) + "\n")
                key.append(
                    {"id": mid, "row": row.id, "source": row.source, "label": row.source_label}
                )
    with open(key_path(root), "w", encoding="utf-8") as f:
        for k in key:
            f.write(json.dumps(k, ensure_ascii=False) + "\n")
    if BRIEF.exists():
        shutil.copy(BRIEF, out / "BRIEF.md")
    return out


def key_path(root: Path) -> Path:
    return root / "annotation-key.jsonl"


def read_key(root: Path) -> dict[str, dict]:
    """Batch id -> ``{row, source, label}`` (empty when no batches were written)."""
    path = key_path(root)
    if not path.exists():
        return {}
    with open(path, encoding="utf-8") as f:
        return {k["id"]: k for k in map(json.loads, filter(str.strip, f))}
