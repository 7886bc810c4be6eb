"""The screen's verdict on each real message, with what the learned layer's thresholds act on,
cached per screen version; and the level the screen would give at other thresholds (the
trade-off curve's model of ``engine.safety.learned.combine``)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine import safety
from engine.safety import learned
from engine.safety.gloss import language
from engine.safety.screen import LEVEL_RANK, assess_rules, denied, everyday_purpose

from . import sources as src

SAFETY_CODE = src.ROOT / "engine" / "safety"
SAFETY_ASSETS = src.ROOT / "assets" / "safety"
# the assets the verdict depends on (not the labelled sets or the resources)
SCREEN_ASSETS = ("*.npz", "*.tsv", "medicines.txt")


@dataclass(frozen=True)
class Verdict:
    """``level`` and ``layer`` are ``engine.safety.assess``'s; the rest is what
    ``learned.combine`` decided from: the rules' level and category, the heads' scores (None when
    the layer did not read the message: off, too long, or the rules already said emergency), the
    detected language, and whether the message states a harmless purpose or denies a risk."""

    level: str
    layer: str
    rules_level: str
    rules_category: str | None
    z: dict[str, float] | None
    lang: str
    purpose: bool
    denial: bool
    ms: float
    words: int


@functools.lru_cache(maxsize=4)
def fingerprint(use_learned: bool) -> str:
    """What the cached verdicts depend on: the screen's code and assets, the layer's presence."""
    h = hashlib.sha1()
    paths = sorted(SAFETY_CODE.glob("*.py"))
    for pattern in SCREEN_ASSETS:
        paths += sorted(SAFETY_ASSETS.glob(pattern))
    for path in paths:
        if path.is_file():
            h.update(path.name.encode())
            h.update(path.read_bytes())
    h.update(f"learned={use_learned and safety.learned_available()}".encode())
    return h.hexdigest()[:16]


@contextlib.contextmanager
def recording_scores() -> Iterator[dict[str, dict[str, float] | None]]:
    """Record the heads' scores ``learned.combine`` computes (text -> scores), so that a message
    is read once for both its verdict and the curve."""
    seen: dict[str, dict[str, float] | None] = {}
    original = learned.scores

    def spy(text: str) -> dict[str, float] | None:
        seen[text] = z = original(text)
        return z

    learned.scores = spy
    try:
        yield seen
    finally:
        learned.scores = original


def screen_one(text: str, seen: dict, use_learned: bool = True) -> Verdict:
    seen.pop(text, None)
    t0 = time.perf_counter()
    result = safety.assess(text, learned=use_learned)
    ms = (time.perf_counter() - t0) * 1000
    rules = assess_rules(text)
    return Verdict(
        result.level,
        result.source,
        rules.level,
        rules.category,
        seen.get(text),
        language(text),
        everyday_purpose(text),
        denied(text),
        ms,
        len(text.split()),
    )


def screen_rows(
    rows: list[src.Row], cache_dir: Path, use_learned: bool = True, cached_only: bool = False
) -> dict[str, Verdict]:
    """Row id -> verdict, read from and added to ``cache_dir/<fingerprint>/<source>.jsonl``
    (``cached_only``: the rows screened before, none screened now)."""
    folder = cache_dir / fingerprint(use_learned)
    folder.mkdir(parents=True, exist_ok=True)
    out: dict[str, Verdict] = {}
    by_source: dict[str, list[src.Row]] = {}
    for r in rows:
        by_source.setdefault(r.source, []).append(r)
    with recording_scores() as seen:
        for name, group in by_source.items():
            path = folder / f"{name}.jsonl"
            cached = {}
            if path.exists():
                with open(path, encoding="utf-8") as f:
                    for line in f:
                        d = json.loads(line)
                        key = d.pop("key")
                        cached[key] = Verdict(**d)
            with open(path, "a", encoding="utf-8") as f:
                for r in group:
                    key = f"{r.id}:{hashlib.sha1(r.text.encode()).hexdigest()[:12]}"
                    if key not in cached:
                        if cached_only:
                            continue
                        cached[key] = v = screen_one(r.text, seen, use_learned)
                        f.write(json.dumps({"key": key, **dataclasses.asdict(v)}) + "\n")
                        f.flush()
                    out[r.id] = cached[key]
    return out


@dataclass(frozen=True)
class Shift:
    """Thresholds moved from the shipped ones: ``high`` moves the urgent thresholds (``high``
    and every language's ``jump``) together, ``risk`` the concern one, ``emer`` the emergency one;
    ``cap`` keeps a level the learned layer alone reached at concern (the rules' urgent and
    emergency stay)."""

    high: float = 0.0
    risk: float = 0.0
    emer: float = 0.0
    cap: bool = False


def shifted_heads(heads, shift: Shift):
    t = np.array(heads.thresholds, dtype=float)
    t[0] += shift.risk
    t[1] += shift.high
    t[2] += shift.emer
    t[3] += shift.high
    jump = (
        None if heads.lang_jump is None else np.asarray(heads.lang_jump, dtype=float) + shift.high
    )
    return dataclasses.replace(heads, thresholds=t, lang_jump=jump)


def level_at(v: Verdict, heads, shift: Shift = Shift()) -> str:
    """The level ``learned.combine`` gives the message with the heads' thresholds moved by
    ``shift`` (with ``Shift()`` it must equal ``v.level``; the report counts where it does not)."""
    if v.rules_level == "emergency" or v.z is None or heads is None:
        return v.rules_level  # assess() returns the rules' verdict without reading the heads
    h = shifted_heads(heads, shift)
    z = v.z
    purpose = (
        v.rules_level == "none"
        and (z["high"] >= h.jump(v.lang) or z["risk"] >= h.thresholds[0])
        and v.purpose
    )
    level = learned.learned_level(z, h, v.rules_level, purpose, v.lang)
    rank = LEVEL_RANK
    if rank[level] > rank["concern"] and v.rules_level in ("none", "concern") and v.denial:
        level = "concern"
    if (
        v.rules_level == "concern"
        and v.rules_category == "suicide"
        and level == "none"
        and len(h.thresholds) > 4
        and z["risk"] < h.thresholds[4]
    ):
        return "none"
    if rank[level] <= rank[v.rules_level]:
        return v.rules_level
    if shift.cap and rank[level] > rank["concern"] and v.rules_level in ("none", "concern"):
        return "concern"
    return level
