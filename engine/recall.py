"""Recall: the user's earlier messages that the companions no longer read (older than their
window, or from the group's past conversations) and that bear on what the user just said.

Scoring is by shared content words, weighted by how rare each word is among the candidates
(an IDF-weighted overlap): it needs nothing beyond the chat app's own install. MiniLM embeddings
(all-MiniLM-L6-v2) need torch and sentence-transformers, which only the ``train``/``eval`` extras
bring, so the app does not use them; docs/memory.md compares both on the long-conversation
benchmark. Messages the safety screen flags are never recalled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from .memory import words

RECALL_BUDGET = 120     # tokens of recalled messages in one companion note
RECALL_TOP = 2          # at most this many messages
RECALL_MIN_SCORE = 2.0  # an IDF-weighted overlap below this is chance (one common shared word)
RECALL_CHARS = 220      # a recalled message is clipped to this many characters
COMMON = 0.2            # a word in more than this share of the candidates is not evidence


@dataclass(frozen=True)
class Candidate:
    key: str     # a stable id ("m123"), for caching
    text: str


def score(query: set[str], cands: list[tuple[Candidate, set[str]]]) -> list[tuple[float, Candidate]]:
    """(score, candidate) for candidates sharing words with ``query``, best first."""
    n = max(len(cands), 20)  # a small pool says little about which words are rare
    df: dict[str, int] = {}
    for _c, ws in cands:
        for w in ws & query:
            df[w] = df.get(w, 0) + 1
    query = {w for w in query if df.get(w, 0) <= COMMON * n}  # words most messages share say nothing
    out = []
    for c, ws in cands:
        shared = ws & query
        if shared:
            out.append((sum(math.log(1 + n / df[w]) for w in shared), c))
    return sorted(out, key=lambda x: -x[0])


def clip(text: str, limit: int = RECALL_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def recall_lines(query_text: str, cands: list[tuple[Candidate, set[str]]], user_name: str,
                 count: Callable[[str], int], budget: int = RECALL_BUDGET,
                 allowed: Callable[[Candidate], bool] = lambda c: True) -> list[str]:
    """The note lines for the best earlier messages for ``query_text`` (the user's last message);
    ``allowed`` is asked only about the best-scoring ones (it may be slow: the safety screen)."""
    query = words(query_text)
    if not query:
        return []
    lines, left = [], budget
    ranked = [(s, c) for s, c in score(query, cands) if s >= RECALL_MIN_SCORE]
    for s, c in [x for x in ranked[:RECALL_TOP * 4] if allowed(x[1])][:RECALL_TOP]:
        line = f'Earlier, {user_name} said: "{clip(c.text)}"'
        cost = count(line) + 2
        if cost <= left:
            lines.append(line)
            left -= cost
    return lines
