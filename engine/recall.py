"""Recall: the user's earlier messages that the companions no longer read (older than their
window, or from the group's past conversations) and that bear on what the user just said.

Two ways to score, chosen by measurement (docs/memory.md, ``evaluation.memory_bench``):

* ``minilm`` (the default when the embedding package is installed, as ``make run`` does): cosine
  similarity of all-MiniLM-L6-v2 sentence embeddings, the crisis screen's own numpy encoder
  (``engine.safety.learned.embed``, no torch), at least ``EMBED_MIN``. It finds a fact asked in
  other words ("What's my pet called?" for "I've got a golden retriever, Biscuit"). Each user
  message is embedded once, when it is first a candidate, and kept in the history database
  (``message_vectors``; an edited message is embedded again, a deleted one's vector goes with it).
* ``words`` (the fallback without the package, or ``MASCOT_RECALL=words``): shared content words,
  weighted by how rare each word is among the candidates (an IDF-weighted overlap).

Messages the safety screen flags are never recalled.
"""

from __future__ import annotations

import hashlib
import math
import os
import threading
import weakref
from dataclasses import dataclass
from typing import Any, Callable

from .memory import words
from .safety import learned

RECALL_BUDGET = 120  # tokens of recalled messages in one companion note
RECALL_TOP = 2  # at most this many messages
RECALL_MIN_SCORE = 2.0  # an IDF-weighted overlap below this is chance (one common shared word)
RECALL_CHARS = 220  # a recalled message is clipped to this many characters
COMMON = 0.2  # a word in more than this share of the candidates is not evidence
EMBED_MODEL = "all-MiniLM-L6-v2"
EMBED_MIN = 0.40  # cosine below this is not recalled (chosen on the benchmark, docs/memory.md)
EMBED_BATCH = 16  # messages per encoder call (the crisis screen waits for the encoder meanwhile)
EMBED_MAX_NEW = 32  # at most this many messages embedded for one turn (a backlog of past
# conversations is embedded over later turns; docs/memory.md)
METHODS = ("minilm", "words")


@dataclass(frozen=True)
class Candidate:
    key: str  # a stable id ("m123"), for caching
    text: str


def score(
    query: set[str], cands: list[tuple[Candidate, set[str]]]
) -> list[tuple[float, Candidate]]:
    """(score, candidate) for candidates sharing words with ``query``, best first."""
    n = max(len(cands), 20)  # a small pool says little about which words are rare
    df: dict[str, int] = {}
    for _c, ws in cands:
        for w in ws & query:
            df[w] = df.get(w, 0) + 1
    query = {
        w for w in query if df.get(w, 0) <= COMMON * n
    }  # words most messages share say nothing
    out = []
    for c, ws in cands:
        shared = ws & query
        if shared:
            out.append((sum(math.log(1 + n / df[w]) for w in shared), c))
    return sorted(out, key=lambda x: -x[0])


def method() -> str:
    """``minilm`` when its package is installed (``MASCOT_RECALL=words`` turns it off), else
    ``words``."""
    asked = os.environ.get("MASCOT_RECALL", "").strip().lower()
    if asked == "words":
        return "words"

    return "minilm" if learned.model_dir() is not None else "words"


def digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:16]


_vec_cache: dict[str, Any] = {}  # text digest -> unit vector (float32), for every store
_vec_lock = threading.Lock()
_persisted: "weakref.WeakKeyDictionary[Any, set[tuple[int, str]]]" = (
    weakref.WeakKeyDictionary()
)  # store -> kept there


def _embed(texts: list[str]) -> list[Any] | None:

    out: list[Any] = []
    for i in range(0, len(texts), EMBED_BATCH):
        vecs = learned.embed(texts[i : i + EMBED_BATCH])
        if vecs is None:
            return None
        out.extend(vecs)
    return out


def vectors(cands: list[Candidate], store: Any = None) -> dict[str, Any] | None:
    """{candidate key: unit vector}: from this process's cache, the history database (keys
    ``m<id>``; what is missing there is written) or the encoder, for at most ``EMBED_MAX_NEW``
    new ones. None when the encoder is not installed."""
    import numpy as np

    found: dict[str, Any] = {}
    saved = (
        _persisted.setdefault(store, set())
        if store is not None and hasattr(store, "message_vectors")
        else None
    )
    with _vec_lock:
        cached = {c.key: _vec_cache.get(digest(c.text)) for c in cands}
    unsaved = [
        c
        for c in cands
        if saved is not None and _mid(c) is not None and (_mid(c), digest(c.text)) not in saved
    ]
    stored = store.message_vectors([_mid(c) for c in unsaved], EMBED_MODEL) if unsaved else {}
    write: list[Candidate] = []
    for c in unsaved:
        row = stored.get(_mid(c))
        if row is not None and row[0] == digest(c.text):
            saved.add((_mid(c), row[0]))
            if cached[c.key] is None:
                cached[c.key] = _remember(row[0], np.frombuffer(row[1], dtype=np.float32))
        else:
            write.append(c)
    todo = [c for c in cands if cached[c.key] is None][:EMBED_MAX_NEW]
    if todo:
        vecs = _embed([c.text for c in todo])
        if vecs is None:
            return None
        for c, v in zip(todo, vecs):
            cached[c.key] = _remember(digest(c.text), np.asarray(v, dtype=np.float32))
    rows = [
        (_mid(c), digest(c.text), cached[c.key].tobytes())
        for c in write
        if cached[c.key] is not None
    ]
    if rows:
        store.put_message_vectors(rows, EMBED_MODEL)
        saved.update((r[0], r[1]) for r in rows)
    found = {k: v for k, v in cached.items() if v is not None}
    return found


def _mid(c: Candidate) -> int | None:
    return int(c.key[1:]) if c.key[:1] == "m" and c.key[1:].isdigit() else None


def _remember(d: str, v: Any) -> Any:
    with _vec_lock:
        if len(_vec_cache) > 50000:
            _vec_cache.clear()
        _vec_cache[d] = v
    return v


def embed_scores(
    query_text: str, cands: list[Candidate], store: Any = None
) -> list[tuple[float, Candidate]] | None:
    """(cosine, candidate) at or above ``EMBED_MIN``, best first; None without the encoder. A
    candidate not embedded yet (more than ``EMBED_MAX_NEW`` new ones at once) counts when it
    shares a rare word with the query (scored ``EMBED_MIN``)."""
    import numpy as np

    q = vectors([Candidate("q", query_text)])
    if q is None:
        return None
    have = vectors(cands, store)
    if have is None:
        return None
    qv = q["q"]
    out = []
    rest = [c for c in cands if c.key not in have]
    if have:
        keys = [c for c in cands if c.key in have]
        sims = np.stack([have[c.key] for c in keys]) @ qv
        out = [(float(s), c) for s, c in zip(sims, keys) if s >= EMBED_MIN]
    if rest:
        query = words(query_text)
        out += [
            (EMBED_MIN, c)
            for s, c in score(query, [(c, words(c.text)) for c in rest])
            if s >= RECALL_MIN_SCORE
        ]
    return sorted(out, key=lambda x: -x[0])


def clip(text: str, limit: int = RECALL_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def ranked(
    query_text: str,
    cands: list[tuple[Candidate, set[str]]],
    store: Any = None,
    how: str | None = None,
) -> list[tuple[float, Candidate]]:
    """The candidates worth recalling for ``query_text``, best first, by ``how`` (default:
    ``method()``; ``minilm`` falls back to ``words`` when the encoder is missing)."""
    how = how or method()
    if how == "minilm" and query_text.strip():
        out = embed_scores(query_text, [c for c, _ws in cands], store)
        if out is not None:
            return out
    query = words(query_text)
    if not query:
        return []
    return [(s, c) for s, c in score(query, cands) if s >= RECALL_MIN_SCORE]


def recall_lines(
    query_text: str,
    cands: list[tuple[Candidate, set[str]]],
    user_name: str,
    count: Callable[[str], int],
    budget: int = RECALL_BUDGET,
    allowed: Callable[[Candidate], bool] = lambda c: True,
    store: Any = None,
    how: str | None = None,
) -> list[str]:
    """The note lines for the best earlier messages for ``query_text`` (the user's last message);
    ``allowed`` is asked only about the best-scoring ones (it may be slow: the safety screen).
    ``store``: the history database, where message embeddings are kept."""
    lines, left = [], budget
    ranked_ = ranked(query_text, cands, store, how)
    kept = []
    for x in ranked_[: RECALL_TOP * 4]:  # asked lazily: the screen's cost, docs/memory.md
        if len(kept) == RECALL_TOP:
            break
        if allowed(x[1]):
            kept.append(x)
    for s, c in kept:
        line = f'Earlier, {user_name} said: "{clip(c.text)}"'
        cost = count(line) + 2
        if cost <= left:
            lines.append(line)
            left -= cost
    return lines
