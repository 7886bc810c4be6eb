"""Automatic metrics: plain functions on texts, vectors and counts (no models, no I/O).

Each function states what a user would notice when the number moves:

* ``distinct_n``        low when replies reuse the same words (copy-paste between companions);
* ``redundancy``        1.0 when the companions in one round say the same thing;
* ``identifiability``   how often a reply alone tells you which companion wrote it (persona
                        collapse drives it to chance);
* ``identifiability_exemplar`` the same, judged against centroids of held-out persona exemplars
                        that no training step saw (``evaluation.exemplars``);
* ``speaking_balance``  1.0 when every companion gets the same share of turns, 0 when one talks;
* ``role_confused``     a reply that speaks as another companion or as the user;
* ``director_validity`` share of Director decisions that parsed and named an allowed speaker.

Embeddings come from ``evaluation.embed``; these functions take plain ``numpy`` arrays so tests
can hand-make them.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Iterable, Sequence

import numpy as np

_WORD = re.compile(r"[\w']+", re.UNICODE)


def words(text: str) -> list[str]:
    """Lower-cased word tokens (punctuation dropped)."""
    return _WORD.findall(text.lower())


def ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def distinct_n(texts: Iterable[str], n: int) -> float | None:
    """Distinct-n (Li et al., 2016): unique n-grams / all n-grams, pooled over ``texts``.

    Pooled over the replies of one round, so a companion repeating another's words lowers it.
    ``None`` when the texts hold no n-gram at all."""
    grams: list[tuple[str, ...]] = []
    for t in texts:
        grams.extend(ngrams(words(t), n))
    if not grams:
        return None
    return len(set(grams)) / len(grams)


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Each row scaled to length 1 (an all-zero row stays zero), as floats."""
    v = np.asarray(vectors, dtype=float)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(norms == 0, 1.0, norms)


def cosine_matrix(vectors: np.ndarray) -> np.ndarray:
    v = unit_rows(vectors)
    return v @ v.T


def redundancy(vectors: np.ndarray) -> float | None:
    """Inter-agent redundancy: mean pairwise cosine similarity of the replies of one round.

    1.0 for identical replies; ``None`` when fewer than two companions spoke."""
    v = np.asarray(vectors, dtype=float)
    if v.ndim != 2 or len(v) < 2:
        return None
    sims = cosine_matrix(v)
    iu = np.triu_indices(len(v), k=1)
    return float(np.clip(sims[iu].mean(), -1.0, 1.0))


def identifiability(
    vectors: np.ndarray, labels: Sequence[str], groups: Sequence[str] | None = None
) -> dict:
    """Persona identifiability: how often a reply's embedding is nearest (cosine) to the centroid
    of its own speaker's *other* replies, among all speakers' centroids.

    ``groups`` (e.g. scenario ids) makes it leave-one-group-out: the centroids for a reply are
    built only from replies of *other* scenarios. Without it, replies of the same round share a
    topic and pull the held-out reply towards whoever else spoke in that round, which measures
    topic, not persona. A reply whose speaker has no reply outside its group is not scored.
    Returns ``{"accuracy", "chance", "n", "per_label": {label: recall}}``; ``accuracy`` is
    ``None`` when fewer than two speakers can be scored. ``chance`` is 1/number-of-speakers: a
    persona-collapsed group scores near it."""
    v = np.asarray(vectors, dtype=float)
    labels = list(labels)
    groups = list(groups) if groups is not None else [str(i) for i in range(len(labels))]
    if len(v) == 0:
        return {"accuracy": None, "chance": None, "n": 0, "per_label": {}}
    v = unit_rows(v)
    classes = sorted(set(labels))
    hits: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    for i, lab in enumerate(labels):
        pool = [j for j in range(len(labels)) if groups[j] != groups[i]]
        cents = {}
        for c in classes:
            members = [j for j in pool if labels[j] == c]
            if members:
                cents[c] = v[members].mean(axis=0)
        if lab not in cents or len(cents) < 2:
            continue
        sims = {c: float(v[i] @ x / (np.linalg.norm(x) or 1.0)) for c, x in cents.items()}
        seen[lab] += 1  # a tie is a miss: identical replies do not tell anyone apart
        hits[lab] += int(all(sims[lab] > sims[c] + 1e-9 for c in sims if c != lab))
    scored = [c for c in classes if seen[c]]
    n = sum(seen.values())
    if len(scored) < 2:
        return {"accuracy": None, "chance": None, "n": n, "per_label": {}}
    return {
        "accuracy": sum(hits.values()) / n,
        "chance": 1.0 / len(scored),
        "n": n,
        "per_label": {c: hits[c] / seen[c] for c in scored},
    }


def exemplar_scores(
    vectors: np.ndarray, labels: Sequence[str], centroids: dict[str, np.ndarray]
) -> list[dict]:
    """Per reply: the member whose exemplar centroid is the most similar (cosine) and whether that
    is the reply's own speaker. ``margin`` is the similarity to the speaker's centroid minus the
    best other one (negative when another member's voice is closer). A tie is a miss."""
    classes = list(centroids)
    if not classes or len(vectors) == 0:
        return [{"label": lab, "predicted": None, "hit": False, "margin": 0.0} for lab in labels]
    sims = unit_rows(vectors) @ unit_rows(np.stack([centroids[k] for k in classes])).T
    out = []
    for row, lab in zip(sims, labels):
        k = classes.index(lab) if lab in classes else None
        best = int(np.argmax(row))
        if k is None:
            out.append({"label": lab, "predicted": classes[best], "hit": False, "margin": 0.0})
            continue
        other = float(np.max(np.delete(row, k))) if len(classes) > 1 else -1.0
        margin = float(row[k]) - other
        out.append(
            {"label": lab, "predicted": classes[best], "hit": margin > 1e-9, "margin": margin}
        )
    return out


def identifiability_exemplar(
    vectors: np.ndarray, labels: Sequence[str], centroids: dict[str, np.ndarray]
) -> dict:
    """Persona identifiability against a classifier fitted elsewhere: the share of replies whose
    nearest centroid (one per member, from held-out exemplars) is their own speaker's.

    Replies by a speaker without a centroid are not scored. Returns ``{"accuracy", "chance",
    "n", "per_label": {label: recall}}`` like ``identifiability``; ``chance`` is one over the
    number of centroids, and the same replies attributed to every member score exactly that."""
    keep = [i for i, lab in enumerate(labels) if lab in centroids]
    if len(centroids) < 2 or not keep:
        return {"accuracy": None, "chance": None, "n": len(keep), "per_label": {}}
    rows = exemplar_scores(np.asarray(vectors)[keep], [labels[i] for i in keep], centroids)
    hits: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    for r in rows:
        seen[r["label"]] += 1
        hits[r["label"]] += int(r["hit"])
    n = len(rows)
    return {
        "accuracy": sum(hits.values()) / n,
        "chance": 1.0 / len(centroids),
        "n": n,
        "per_label": {c: hits[c] / seen[c] for c in sorted(seen)},
    }


def normalised_entropy(counts: Sequence[float]) -> float | None:
    """Shannon entropy of a distribution divided by its maximum log(k), in [0, 1]."""
    k = len(counts)
    total = float(sum(counts))
    if k < 2 or total <= 0:
        return None
    p = np.asarray(counts, dtype=float) / total
    h = -sum(x * math.log(x) for x in p if x > 0)
    return h / math.log(k)


def speaking_balance(speakers: Iterable[str], members: Sequence[str]) -> float | None:
    """Normalised entropy of the share of turns each member got (members who never spoke count
    as zero). 1.0 = perfectly even, 0.0 = one companion did all the talking."""
    c = Counter(speakers)
    return normalised_entropy([c.get(m, 0) for m in members])


def role_confused(
    text: str, speaker: str, others: Sequence[str], user_name: str = "User", flagged: bool = False
) -> bool:
    """True when a reply speaks as someone else: the engine flagged it (it cut lines written as
    another participant), or what is left still carries another participant's label
    (``Theo: ...``, ``**User:**``), or it narrates another member's actions in a stage direction
    (``(Theo smiles)``, ``(Milo's eyes light up)``)."""
    if flagged:
        return True
    names = [n for n in list(others) + [user_name, "User"] if n and n.lower() != speaker.lower()]
    if not names:
        return False
    alt = "|".join(re.escape(n) for n in sorted(set(names), key=len, reverse=True))
    if re.search(rf"(?:^|\n|(?<=[.!?…])\s+|\()\s*\**(?:{alt})\**\s*:", text, flags=re.IGNORECASE):
        return True
    # a stage direction about someone else: "(Theo smiles)", "*Greta nods*", "(Milo's eyes light up"
    return bool(re.search(rf"[(*]\s*(?:{alt})(?:'s\s+[a-z]+|\s+[a-z]+s\b)", text))


# Fragments of the engine's own prompt framing (speaker tail, Director's note, judge rubric): a
# reply that repeats them is echoing its instructions instead of talking to the user.
PROMPT_FRAGMENTS = (
    "in character",
    "reply now as",
    "director's note",
    "'s turn.",
    "in a small group chat with",
    "your goals:",
    "how you talk:",
)


def prompt_echo(text: str) -> bool:
    """True when a reply repeats the prompt's framing ("Mia, briefly and in character.") or talks
    about being in character, which breaks the fourth wall the same way."""
    low = text.lower()
    return any(re.search(rf"(?<![a-z]){re.escape(f)}", low) for f in PROMPT_FRAGMENTS)


_STAGE = re.compile(r"^\s*[*(\[]|\*[^*]{1,40}\*")
_SELF_NARRATION = re.compile(r"^\s*(?:she|he|they)\s+[a-z]+(?:ed|s)\b", re.IGNORECASE)


def narrated(text: str, speaker: str) -> bool:
    """True when a reply narrates instead of talking: a stage direction (``*smiles*``, a reply
    opening with ``(`` or ``[``), the speaker's own name as a label or a narrated subject
    (``Mia: ...``, ``Mia smiled ...``), or third-person narration of itself
    (``She smiled warmly and added``)."""
    if _STAGE.search(text) or _SELF_NARRATION.match(text):
        return True
    return bool(re.match(rf"\s*\**{re.escape(speaker)}\**(?::|\s+[a-z]+(?:ed|s)\b)", text))


def echoed(text: str, earlier: Sequence[str], n: int = 8) -> bool:
    """True when a reply repeats an earlier message of the round or its history: a run of
    ``n`` words in common (case and punctuation aside), outside what the reply puts in double
    quotes."""
    text = re.sub(r"[\"“][^\"“”]{3,}[\"”]", " ", text)  # a quoted line is quoted, not echoed
    words = re.findall(r"[a-z0-9']+", text.lower())
    if len(words) < n:
        return (
            any(" ".join(words) == " ".join(re.findall(r"[a-z0-9']+", e.lower())) for e in earlier)
            if words
            else False
        )
    grams = {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}
    for e in earlier:
        ew = re.findall(r"[a-z0-9']+", e.lower())
        if any(tuple(ew[i : i + n]) in grams for i in range(len(ew) - n + 1)):
            return True
    return False


def bad_reply(text: str, speaker: str, earlier: Sequence[str]) -> bool:
    """A reply a user would see as broken: empty (fewer than two words), echoing its
    instructions or an earlier message, or narrated (see ``narrated``)."""
    return (
        len(text.split()) < 2
        or prompt_echo(text)
        or narrated(text, speaker)
        or echoed(text, earlier)
    )


def director_validity(decisions: Iterable[dict]) -> float | None:
    """Share of the Director model's decisions that were valid (parsed, allowed speaker).
    Decisions forced by the rules or by the user addressing someone are not the model's and are
    left out; ``None`` when the model made no decision (baselines)."""
    own = [d for d in decisions if d.get("source") == "director"]
    if not own:
        return None
    return sum(bool(d.get("valid")) for d in own) / len(own)


def to_100(score: float | None) -> float | None:
    """A 1–5 judge score on a 0–100 scale (1 -> 0, 3 -> 50, 5 -> 100)."""
    return None if score is None else (score - 1.0) / 4.0 * 100.0


# -- statistics ---------------------------------------------------------------------------------


def mean_ci(
    values: Iterable[float | None],
    *,
    level: float = 0.95,
    method: str = "bootstrap",
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[float | None, float | None, float | None, int]:
    """Mean with a confidence interval over independent units (scenarios).

    ``method="bootstrap"``: percentile bootstrap with a fixed seed (reproducible);
    ``method="t"``: Student-t interval. ``None`` values are skipped. Returns
    ``(mean, low, high, n)``; the interval is ``None`` with fewer than two values."""
    xs = np.asarray([float(v) for v in values if v is not None and not _isnan(v)], dtype=float)
    n = len(xs)
    if n == 0:
        return None, None, None, 0
    mean = float(xs.mean())
    if n < 2:
        return mean, None, None, n
    alpha = 1.0 - level
    if method == "t":
        from scipy import stats  # scipy comes with scikit-learn/sentence-transformers

        half = float(stats.t.ppf(1 - alpha / 2, n - 1) * xs.std(ddof=1) / math.sqrt(n))
        return mean, mean - half, mean + half, n
    if method != "bootstrap":
        raise ValueError(f"unknown CI method {method!r}")
    rng = np.random.default_rng(seed)
    means = xs[rng.integers(0, n, size=(resamples, n))].mean(axis=1)
    lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return mean, float(lo), float(hi), n


def _isnan(v: float) -> bool:
    try:
        return math.isnan(v)
    except TypeError:
        return False
