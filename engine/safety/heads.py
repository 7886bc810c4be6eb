"""The learned layer's heads: what ``assets/safety/classifier.npz`` holds and how a message is
scored with it (numpy only; the file is written by scripts/safety/fit_classifier.py).

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

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import features

HEADS = ("risk", "high", "emer")
JUMP_LANGS = ("en", "de", "fr")  # the order of ``lang_jump``


@dataclass(frozen=True)
class Heads:
    emb_w: np.ndarray  # (3, 384)
    emb_b: np.ndarray  # (3,)
    emb_sd: np.ndarray  # (3,)
    char_idx: np.ndarray  # (k,) sorted feature indices
    char_w: np.ndarray  # (k, 3)
    char_b: np.ndarray  # (3,)
    char_sd: np.ndarray  # (3,)
    thresholds: np.ndarray  # (4,) risk, high, emer, jump (learned.learned_level); (5,) + veto
    meta: dict
    # nearest neighbours: unit embeddings of the fitted emergency + urgent messages
    # and of the fitted level-none ones; ``high`` adds ``nn_scale`` times the difference of the
    # mean cosine of the ``nn_k`` nearest of each (None: no neighbours in the file)
    nn_pos: np.ndarray | None = None
    nn_neg: np.ndarray | None = None
    nn_k: int = 3
    nn_scale: float = 0.0
    # the fine-tuned encoder's logits (learned.scores) join each head times
    # ``ft_scale`` (3,) (None: not used)
    ft_scale: np.ndarray | None = None
    # the ``jump`` threshold per detected language (gloss.language), in the order of
    # JUMP_LANGS (None: ``thresholds[3]`` for all); German and French are read through a gloss,
    # so their scores are spread differently
    lang_jump: np.ndarray | None = None

    def jump(self, lang: str) -> float:
        """The ``jump`` threshold for a message in ``lang``."""
        if self.lang_jump is not None and lang in JUMP_LANGS:
            return float(self.lang_jump[JUMP_LANGS.index(lang)])
        return float(self.thresholds[3])

    def char_logits(self, text: str) -> np.ndarray:
        idx = features.ngrams(text)
        if not len(idx):
            return self.char_b.copy()
        pos = np.searchsorted(self.char_idx, idx)
        pos = np.minimum(pos, len(self.char_idx) - 1)
        hit = pos[self.char_idx[pos] == idx]
        return self.char_w[hit].sum(0) / np.sqrt(len(idx)) + self.char_b

    def knn(self, vec: np.ndarray) -> float:
        """How much closer ``vec`` is to the fitted risky messages than to the benign ones."""
        if self.nn_pos is None or self.nn_neg is None:
            return 0.0
        return nearest(self.nn_pos, self.nn_neg, vec[None, :], self.nn_k)[0]

    def score(self, text: str, vec: np.ndarray) -> np.ndarray:
        """The combined score of each head for one text and its unit embedding ``vec``."""
        ze = (self.emb_w @ vec + self.emb_b) / self.emb_sd
        zc = self.char_logits(text) / self.char_sd
        return ze + zc


def nearest(pos: np.ndarray, neg: np.ndarray, vecs: np.ndarray, k: int) -> np.ndarray:
    """Per row of ``vecs``: mean cosine of its ``k`` nearest in ``pos`` minus that in ``neg``."""
    vecs = np.asarray(vecs, dtype=np.float32)

    def top(bank):
        sims = vecs @ np.asarray(bank, dtype=np.float32).T  # no copy on the hot path
        k_ = min(k, sims.shape[1])
        return np.partition(sims, sims.shape[1] - k_, axis=1)[:, -k_:].mean(1)

    return top(pos) - top(neg)


def load(path: Path) -> Heads | None:
    """The heads in ``path``, or None when it is missing or broken (then the rules work alone)."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as d:
            h = Heads(
                *(
                    np.asarray(d[k], dtype=np.float32 if k != "char_idx" else np.int64)
                    for k in (
                        "emb_w",
                        "emb_b",
                        "emb_sd",
                        "char_idx",
                        "char_w",
                        "char_b",
                        "char_sd",
                        "thresholds",
                    )
                ),
                meta=json.loads(str(d["meta"])),
            )
            if "nn_pos" in d.files:
                h = dataclasses.replace(
                    h,
                    nn_pos=np.asarray(d["nn_pos"], dtype=np.float32),
                    nn_neg=np.asarray(d["nn_neg"], dtype=np.float32),
                    nn_k=int(d["nn_k"]),
                    nn_scale=float(d["nn_scale"]),
                )
            if "ft_scale" in d.files:
                h = dataclasses.replace(h, ft_scale=np.asarray(d["ft_scale"], dtype=np.float32))
            if "lang_jump" in d.files:
                h = dataclasses.replace(h, lang_jump=np.asarray(d["lang_jump"], dtype=np.float32))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if (
        h.emb_w.shape[0] != len(HEADS)
        or h.char_w.shape != (len(h.char_idx), len(HEADS))
        or h.thresholds.shape not in ((4,), (5,))
    ):
        return None
    if h.ft_scale is not None and h.ft_scale.shape != (len(HEADS),):
        return None
    if h.lang_jump is not None and h.lang_jump.shape != (len(JUMP_LANGS),):
        return None
    if h.nn_pos is not None and (
        h.nn_pos.shape[1:] != h.emb_w.shape[1:]
        or h.nn_neg.shape[1:] != h.emb_w.shape[1:]
        or not len(h.nn_pos)
        or not len(h.nn_neg)
    ):
        return None
    return h


def save(path: Path, **arrays) -> None:
    meta = arrays.pop("meta")
    np.savez_compressed(path, meta=np.array(json.dumps(meta)), **arrays)


def texts_to_score(text: str) -> list[str]:
    """The whole message first, then its clauses when it has more than one."""
    parts = features.clauses(text)
    return [text] + (parts if len(parts) > 1 else [])
