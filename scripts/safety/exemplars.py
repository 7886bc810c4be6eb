"""The labelled exemplar set (assets/safety/exemplars.jsonl) and the screen's scores on it.

Each line: ``text``, ``lang`` (en/de/fr), ``category`` (emergency, urgent, concern: risk; idiom,
fiction, everyday: no risk), ``level`` (what the screen should say), ``source`` (who wrote it:
``v1`` the first rules' author, ``blind1`` the first blind set's author, ``bank2`` the second
bank's author, ``bank3``, ``bank4``, ``bank5``, ``bank6`` and ``bank7`` the third, fourth, sixth, seventh and eighth rounds' banks; see docs/safety.md) and ``split``: ``train``
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
SPLITS = ("train", "dev", "dev2", "holdout", "blind2", "blind3", "blind4", "blind5", "blind6", "blind7",
          "blind8", "blind9", "blind10", "blind11", "blind12",
          "blind13", "blind14",
          "blind15", "blind16", "blind17",
          "blind18", "blind19")  # blind*: own files (BLIND_SETS), never tuned on
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


# The blind sets (assets/safety/<name>.jsonl): each written by someone who saw only the level
# definitions (blind2: never saw the screen), kept outside the project until the screen named here
# was frozen, scored once; a test set only, never fitted or tuned on (docs/safety.md).
BLIND_SETS = {
    "blind2": "the second round's screen (4a78a0a)",
    "blind3": "the third round's screen (27965b8)",
    "blind4": "the fourth round's gloss screen (5a3fb26); bank4 was written after its misses were read",
    "blind5": "the fourth round's screen fitted on bank4",
    "blind6": "the fifth round's first screen (bea388d)",
    "blind7": "the fifth round's final rules (554cb2b)",
    "blind8": "the fifth round's refitted layer (2e8b49a)",
    "blind9": "the fifth round's last screen (a37533f)",
    "blind10": "the sixth round's first screen (181a1f0: bank5 and the emergency step)",
    "blind11": "the sixth round's final screen (72a19d1: nearest neighbours and denials)",
    "blind12": "the seventh round's screen (11cf799: the tuned encoder, bank6 and the veto)",
    "blind13": "the eighth round's screen (adf0af1: rules for weapons, heights, blades and threats, bank7, the retuned encoder)",
    "blind14": "the ninth round's screen (62ae52c: one stacked encoder pass, the jump to urgent per language)",
    "blind15": "the ninth round's final screen (b64af17: blind14's three French misses fixed)",
    "blind16": "the tenth round's screen (d7a895f: rules for the families the read blind sets showed)",
    "blind17": "the tenth round's screen (d7a895f), written beside blind16 by three other authors",
    "blind18": "the tenth round's final screen (8b277b5: fixes read from blind16 and blind17)",
    "blind19": "the tenth round's final screen (8b277b5), written beside blind18 by three other authors",
}


def blind_path(name: str) -> Path:
    """The file of one blind set (a key of ``BLIND_SETS``)."""
    if name not in BLIND_SETS:
        raise MascotError(f"There is no blind set {name!r}; the blind sets are {', '.join(BLIND_SETS)}.")
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
    if path is None and name in BLIND_SETS:
        path = blind_path(name)
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
