"""The learned layer's heads: what ``assets/safety/classifier.npz`` holds and how a message is
scored with it (numpy only; the file is written by scripts/fit_safety_classifier.py).

Three heads, each the sum of two logistic regressions, each scaled by the spread of its
out-of-fold logits so that neither dominates:

- over the 384-d MiniLM embedding (``emb_w``, ``emb_b``, ``emb_sd``): English paraphrases;
- over hashed character n-grams (``features.ngrams``; ``char_idx`` the features seen in fitting,
  ``char_w``, ``char_b``, ``char_sd``): German, French, misspellings, slang.

``risk``: concern or higher; ``high``: urgent or higher; ``emer``: emergency. A message is
scored as a whole and clause by clause (``features.clauses``); each head takes the highest
score, so a risk in the middle of everyday talk is not averaged away. ``thresholds`` were chosen
on out-of-fold scores with the rules in front (docs/safety.md); ``emer`` makes an urgent message
(urgent by the rules or by ``high``) an emergency.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import features

HEADS = ("risk", "high", "emer")


@dataclass(frozen=True)
class Heads:
    emb_w: np.ndarray          # (3, 384)
    emb_b: np.ndarray          # (3,)
    emb_sd: np.ndarray         # (3,)
    char_idx: np.ndarray       # (k,) sorted feature indices
    char_w: np.ndarray         # (k, 3)
    char_b: np.ndarray         # (3,)
    char_sd: np.ndarray        # (3,)
    thresholds: np.ndarray     # (4,) risk, high, emer, jump (learned.learned_level)
    meta: dict

    def char_logits(self, text: str) -> np.ndarray:
        idx = features.ngrams(text)
        if not len(idx):
            return self.char_b.copy()
        pos = np.searchsorted(self.char_idx, idx)
        pos = np.minimum(pos, len(self.char_idx) - 1)
        hit = pos[self.char_idx[pos] == idx]
        return self.char_w[hit].sum(0) / np.sqrt(len(idx)) + self.char_b

    def score(self, text: str, vec: np.ndarray) -> np.ndarray:
        """The combined score of each head for one text and its unit embedding ``vec``."""
        ze = (self.emb_w @ vec + self.emb_b) / self.emb_sd
        zc = self.char_logits(text) / self.char_sd
        return ze + zc


def load(path: Path) -> Heads | None:
    """The heads in ``path``, or None when it is missing or broken (then the rules work alone)."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as d:
            h = Heads(*(np.asarray(d[k], dtype=np.float32 if k != "char_idx" else np.int64)
                        for k in ("emb_w", "emb_b", "emb_sd", "char_idx", "char_w", "char_b",
                                  "char_sd", "thresholds")),
                      meta=json.loads(str(d["meta"])))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if h.emb_w.shape[0] != len(HEADS) or h.char_w.shape != (len(h.char_idx), len(HEADS)) \
            or h.thresholds.shape != (4,):
        return None
    return h


def save(path: Path, **arrays) -> None:
    meta = arrays.pop("meta")
    np.savez_compressed(path, meta=np.array(json.dumps(meta)), **arrays)


def texts_to_score(text: str) -> list[str]:
    """The whole message first, then its clauses when it has more than one."""
    parts = features.clauses(text)
    return [text] + (parts if len(parts) > 1 else [])
