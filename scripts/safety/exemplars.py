"""The labelled sets (assets/safety/*.jsonl) and the screen's scores on them.

``exemplars.jsonl``: each line has ``text``, ``lang`` (en/de/fr), ``category`` (emergency, urgent,
concern: risk; idiom, fiction, everyday: no risk), ``level`` (what the screen should say),
``source`` (who wrote it; docs/safety.md, "The labelled sets", names each author) and ``split``:
``train`` and ``dev`` (``dev`` was tuned on), ``dev2`` (the first blind set, folded in once it
had been scored), and ``holdout``, a quarter of ``blind1`` and ``bank2`` fixed from a hash of
the language and text, that nothing is fitted or tuned on. The blind sets (``BLIND_SETS``) are
files of their own, written by people who never saw the screen; they are the measures in
docs/safety.md.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

from engine.errors import MascotError
from engine.paths import assets_dir
from engine.safety.result import SafetyResult

RISK = ("emergency", "urgent", "concern")
BENIGN = ("idiom", "fiction", "everyday")
CATEGORIES = RISK + BENIGN
LANGS = ("en", "de", "fr")
RANK = {"none": 0, "concern": 1, "urgent": 2, "emergency": 3}
_LEVEL_OF = {"emergency": "emergency", "urgent": "urgent", "concern": "concern"}


@dataclass(frozen=True)
class Exemplar:
    text: str
    lang: str
    category: str
    level: str
    split: str
    source: str = "v1"


def default_path() -> Path:
    return assets_dir() / "safety" / "exemplars.jsonl"


# The blind sets (assets/safety/<name>.jsonl): each written by people who saw only the level
# definitions, kept outside the project until a screen was committed, then scored once on it; a
# test set only, never fitted or tuned on. docs/safety.md, "The labelled sets", says which screen
# each was kept outside for.
BLIND_SETS = tuple(f"blind{n}" for n in range(2, 20))
SPLITS = ("train", "dev", "dev2", "holdout") + BLIND_SETS  # blind*: their own files
FITTED = ("train", "dev", "dev2")  # what the learned layer is fitted on


def blind_path(name: str) -> Path:
    """The file of one blind set (one of ``BLIND_SETS``)."""
    if name not in BLIND_SETS:
        raise MascotError(
            f"There is no blind set {name!r}; the blind sets are {', '.join(BLIND_SETS)}."
        )
    return assets_dir() / "safety" / f"{name}.jsonl"


@lru_cache(maxsize=4)
def load(path: Path | None = None) -> tuple[Exemplar, ...]:
    """Every exemplar; a malformed file raises MascotError with the line number."""
    path = Path(path) if path is not None else default_path()
    rows = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise MascotError(f"The safety exemplar file {path} cannot be read ({e}).") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            level = d.get("level") or _LEVEL_OF.get(d["category"], "none")
            ex = Exemplar(
                d["text"], d["lang"], d["category"], level, d["split"], d.get("source", "v1")
            )
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise MascotError(f"{path} line {n} is not a valid exemplar ({e}).") from None
        if ex.category not in CATEGORIES or ex.split not in SPLITS or ex.level not in RANK:
            raise MascotError(f"{path} line {n}: unknown category, level or split.")
        rows.append(ex)
    return tuple(rows)


def split(name: str, path: Path | None = None) -> list[Exemplar]:
    """The exemplars of one split (a blind set is read from its own file)."""
    if path is None and name in BLIND_SETS:
        path = blind_path(name)
    return [e for e in load(path) if e.split == name]


@dataclass
class Scores:
    """Per (category, language): how many messages, and how many reached each level."""

    counts: Counter
    levels: Counter  # (category, lang, level) -> n
    confusion: Counter  # (expected level, predicted level) -> n

    def rate(
        self, categories: tuple[str, ...], at_least: str, langs: tuple[str, ...] = LANGS
    ) -> tuple[int, int]:
        """(hits, total): messages of ``categories`` whose level is at least ``at_least``."""
        total = sum(self.counts[(c, lg)] for c in categories for lg in langs)
        hits = sum(
            n
            for (c, lg, lv), n in self.levels.items()
            if c in categories and lg in langs and RANK[lv] >= RANK[at_least]
        )
        return hits, total


def score(exemplars: list[Exemplar], screen: Callable[[str], SafetyResult]) -> Scores:
    counts: Counter = Counter()
    levels: Counter = Counter()
    confusion: Counter = Counter()
    for ex in exemplars:
        level = screen(ex.text).level
        counts[(ex.category, ex.lang)] += 1
        levels[(ex.category, ex.lang, level)] += 1
        confusion[(ex.level, level)] += 1
    return Scores(counts, levels, confusion)
