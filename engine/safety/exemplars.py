"""The labelled exemplar set (assets/safety/exemplars.jsonl) and the screen's scores on it.

Each line: ``text``, ``lang`` (en/de/fr), ``category`` (emergency, urgent, concern: risk; idiom,
fiction, everyday: no risk), ``level`` (what the screen should say), ``source`` (who wrote it:
``v1`` the first rules' author, ``blind1`` the first blind set's author, ``bank2`` the second
bank's author, ``bank3`` and ``bank4`` the third and fourth rounds' banks; see docs/safety.md) and ``split``: ``train``
and ``dev`` (v1; ``dev`` was tuned on), ``dev2`` (blind1, folded in once it had been scored),
and ``holdout``: a quarter of blind1 and bank2, fixed from a hash of the language and text,
that nothing is fitted or tuned on. The blind sets (``blind2`` to ``blind9``) are files of their
own, written by someone who never saw the screen, and are the measures in docs/safety.md.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

from ..errors import MascotError
from ..paths import assets_dir
from .result import SafetyResult

RISK = ("emergency", "urgent", "concern")
BENIGN = ("idiom", "fiction", "everyday")
CATEGORIES = RISK + BENIGN
LANGS = ("en", "de", "fr")
RANK = {"none": 0, "concern": 1, "urgent": 2, "emergency": 3}
SPLITS = ("train", "dev", "dev2", "holdout", "blind2", "blind3", "blind4", "blind5", "blind6", "blind7", "blind8", "blind9")  # blind*: own files, never tuned on
FITTED = ("train", "dev", "dev2")           # what the learned layer is fitted on
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


def blind2_path() -> Path:
    """The second blind set: written by someone who never saw the screen, scored once on the
    frozen screen (docs/safety.md); a test set only, never fitted or tuned on."""
    return assets_dir() / "safety" / "blind2.jsonl"


def blind3_path() -> Path:
    """The third blind set: written by someone who saw only the level definitions, kept outside
    the project until the third round's screen was frozen (27965b8), scored once; never fitted
    or tuned on."""
    return assets_dir() / "safety" / "blind3.jsonl"


def blind4_path() -> Path:
    """The fourth blind set: written by someone who saw only the level definitions, kept outside
    the project until the fourth round's screen (the English gloss) was frozen (5a3fb26), scored
    once; never fitted or tuned on (the fourth round's second step, bank4, was written after its
    misses were read: docs/safety.md)."""
    return assets_dir() / "safety" / "blind4.jsonl"


def blind5_path() -> Path:
    """The fifth blind set: as the fourth, kept outside the project until the screen fitted on
    bank4 was frozen, scored once; never fitted or tuned on."""
    return assets_dir() / "safety" / "blind5.jsonl"


def blind6_path() -> Path:
    """The sixth blind set: as the fifth, kept outside the project until the fifth round's screen
    was frozen (bea388d), scored once; never fitted or tuned on."""
    return assets_dir() / "safety" / "blind6.jsonl"


def blind7_path() -> Path:
    """The seventh blind set: as the sixth, kept outside the project until the fifth round's
    final rules were frozen (554cb2b), scored once; never fitted or tuned on."""
    return assets_dir() / "safety" / "blind7.jsonl"


def blind8_path() -> Path:
    """The eighth blind set: as the seventh, kept outside the project until the fifth round's
    final screen (the refitted layer, 2e8b49a) was frozen, scored once; never fitted or tuned on."""
    return assets_dir() / "safety" / "blind8.jsonl"


def blind9_path() -> Path:
    """The ninth blind set: as the eighth, kept outside the project until the fifth round's last
    screen (a37533f) was frozen, scored once; never fitted or tuned on."""
    return assets_dir() / "safety" / "blind9.jsonl"


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
            ex = Exemplar(d["text"], d["lang"], d["category"], level, d["split"],
                          d.get("source", "v1"))
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise MascotError(f"{path} line {n} is not a valid exemplar ({e}).") from None
        if ex.category not in CATEGORIES or ex.split not in SPLITS \
                or ex.level not in RANK:
            raise MascotError(f"{path} line {n}: unknown category, level or split.")
        rows.append(ex)
    return tuple(rows)


def split(name: str, path: Path | None = None) -> list[Exemplar]:
    """The exemplars of one split (a blind set is read from its own file)."""
    if path is None and name.startswith("blind"):
        path = assets_dir() / "safety" / f"{name}.jsonl"
    return [e for e in load(path) if e.split == name]


@dataclass
class Scores:
    """Per (category, language): how many messages, and how many reached each level."""
    counts: Counter
    levels: Counter            # (category, lang, level) -> n
    confusion: Counter         # (expected level, predicted level) -> n

    def rate(self, categories: tuple[str, ...], at_least: str,
             langs: tuple[str, ...] = LANGS) -> tuple[int, int]:
        """(hits, total): messages of ``categories`` whose level is at least ``at_least``."""
        total = sum(self.counts[(c, lg)] for c in categories for lg in langs)
        hits = sum(n for (c, lg, lv), n in self.levels.items()
                   if c in categories and lg in langs and RANK[lv] >= RANK[at_least])
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
