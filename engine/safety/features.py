"""Language-agnostic text features for the learned layer: hashed character n-grams and clauses.

``ngrams(text)`` folds a message the same way in every language (lower case, accents and
umlauts folded, ``ß`` to ``ss``, apostrophes and punctuation to spaces, repeated letters cut to
two) and returns the sorted indices of its hashed features: character 2- to 5-grams inside
words (with a space on either side, so word starts and ends count), whole words and word pairs.
The hash is CRC32 modulo ``DIM``, stable across runs and machines. A logistic regression over
these indices (``learned.py``) reads German and French as well as English, and misspellings
share most of their n-grams with the right spelling.

``clauses(text)`` splits a message into its sentences and clauses, so that a risk mentioned in
the middle of everyday talk ("work was fine. anyway picked up the rope ...") is judged on its
own and not averaged away by the rest of the message.
"""

from __future__ import annotations

import re
import unicodedata
import zlib

import numpy as np

DIM = 1 << 18
_NON_WORD = re.compile(r"[^a-z0-9]+")
_REPEAT = re.compile(r"(.)\1{2,}")
# sentence ends, and the words people use to change the subject mid-message
_CLAUSE = re.compile(
    r"(?:[.!?;:\n]+|\s[-\u2013\u2014]+\s|\b(?:anyway|anyways|btw|also|oh and|"
    r"but|egal|jedenfalls|ach und|aber|bref|sinon|mais|enfin|ah et)\b)",
    re.IGNORECASE,
)


def fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text.lower().replace("ß", "ss"))
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = _REPEAT.sub(r"\1\1", text)
    return " ".join(_NON_WORD.sub(" ", text).split())


def _h(s: str) -> int:
    return zlib.crc32(s.encode("utf-8")) % DIM


def ngrams(text: str) -> np.ndarray:
    """Sorted unique feature indices of ``text`` (possibly empty)."""
    words = fold(text).split()
    feats = set()
    for i, w in enumerate(words):
        feats.add(_h("w:" + w))
        if i:
            feats.add(_h("b:" + words[i - 1] + " " + w))
        p = f" {w} "
        for n in (2, 3, 4, 5):
            for j in range(max(1, len(p) - n + 1)):
                feats.add(_h(p[j : j + n]))
    return np.array(sorted(feats), dtype=np.int64)


def clauses(text: str, min_words: int = 3) -> list[str]:
    """The message's clauses of at least ``min_words`` words (short ones join the next); one
    element (the whole message) when it has a single clause."""
    parts = [p.strip() for p in _CLAUSE.split(text) if p and p.strip()]
    out: list[str] = []
    carry = ""
    for p in parts:
        p = (carry + " " + p).strip() if carry else p
        if len(p.split()) < min_words:
            carry = p
            continue
        carry = ""
        out.append(p)
    if carry:
        if out:
            out[-1] = out[-1] + " " + carry
        else:
            out.append(carry)
    return out if len(out) > 1 else [text.strip()]
