"""The teacher: a learned judge over offline MiniLM embeddings, validated on length-matched pairs.

::

    from training.judges.factory import make_judge
    judge = make_judge()                  # "learned" (the default teacher; assets/judge/learned.json)
    judge = make_judge("learned:PATH")    # weights from another fit (``mascot-train judge-fit``)
    judge = make_judge("heuristic")       # any other judge spec still works
    scores = judge.score(scenario, persona, reply, others=[{"speaker": "Theo", "text": "..."}])

The judge turns a reply in its context into a few dozen interpretable features: embedding
similarity to the user's message and situation (relevance), to the persona's description and
example lines and to the other members' (voice and drift), to earlier companion turns and this
round's replies (copies), to the user's own turns (speaking as the user), to anchor sentences
for generic sympathy and dismissal; and surface cues (a "Name:" line for another member, stage
directions, "as an AI", first/second person, exclamations and questions compared with the
persona's own lines, advice verbs for a listener). One linear head per MASCOT dimension turns
the standardised features into a 1-5 score. The heads are fitted as pairwise (Bradley-Terry)
logistic models on the train split of ``assets/judge/preferences.jsonl`` plus automatically
made, length-matched flawed twins of its good replies (training/judge_fit.py); docs/judge.md
reports agreement on the held-out test split.

Honest limits: it is a linear model over fixed embeddings and hand-chosen cues, fitted on a
few hundred hand-written pairs. It recognises the flaws it was shown (and twins of them); it
does not read the reply the way an LLM judge would.
"""

from __future__ import annotations

import json
import math
import re
import threading
from pathlib import Path
from typing import Any, Sequence

from engine.errors import InputError, MascotError
from engine.paths import assets_dir
from engine.persona_files import load_set
from training.judges.heuristic import HeuristicJudge
from training.judges.rubric import DIMENSIONS, NEUTRAL, PreferencePair, Scores, persona_description

# Anchor sentences compared by embedding similarity (the highest similarity to each bank).
GENERIC = (
    "I'm so sorry you're going through this. That must be really hard.",
    "Everything happens for a reason and it will all work out in the end.",
    "Take care of yourself and remember that things will get better with time.",
    "That's a great question. Let's all work together and do our best.",
    "Just stay positive and believe in yourself, you've got this.",
    "That's interesting. Make sure it is engaging and interesting for the reader.",
    "Communication is key. Let's find a win-win solution for everyone.",
)
DISMISSIVE = (
    "It's not a big deal, just get over it.",
    "Whatever. That's not my problem.",
    "Everyone goes through that, stop being dramatic.",
    "That's boring, let's move on to something else.",
    "Just leave it, nobody cares about that.",
)
SUPPORTIVE = (
    "That sounds really hard, and it makes sense that you feel this way.",
    "I'm glad you told us. What's the hardest part right now?",
    "Here is one small, concrete next step we could take together.",
    "That's a fair concern; let's test it cheaply before we decide.",
)

_WORD = re.compile(r"[a-z0-9']+")
_STOP = frozenset(
    """a an the and or but if so to of in on at for with from by as is are was were be been am
i you he she it we they me him her us them my your his its our their this that these those what which who
whom how when where why not no do does did have has had will would can could should just really very then
than there here too also about into out up down over again more most some any all one two okay yes""".split()
)
_AI = re.compile(
    r"\b(as an ai|an ai\b|language model|i'?m just a program|as a (?:helpful )?assistant|"
    r"i (?:do not|don't) have (?:feelings|a family|personal experience))",
    re.IGNORECASE,
)
_ADVICE = re.compile(
    r"\b(you should|try |make sure|remember to|don't forget|just (?:buy|get|do|cut|fix|"
    r"write|submit|sign|leave|delete|describe|add|use)|set (?:a|clear)|download|sign up|"
    r"call your|email|contact|book|start (?:applying|exercising)|take a (?:week|break)|"
    r"get (?:some|a)|buy |consult)",
    re.IGNORECASE,
)
_STAGE = re.compile(r"(\*[^*]+\*|\([^)]*(?:nods|smiles|laughs|sighs|says)[^)]*\))", re.IGNORECASE)
_LAUGH = re.compile(r"\b(haha+|lol|omg|lmao)\b|!!", re.IGNORECASE)
_FEELING = re.compile(
    r"\b(feel\w*|felt|glad|sorry|love|proud|excit\w*|worr\w*|scar\w*|hurt\w*|heavy|hard|wow|oh|"
    r"honestly|thrill\w*|afraid|angry|frustrat\w*|heart|amazing|awful|lonely|tender|brave|ache|"
    r"exhaust\w*|painful|infuriating|relief|happy|sad|terrif\w*|nervous)\b",
    re.IGNORECASE,
)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def content(text: str) -> set[str]:
    return {w for w in words(text) if w not in _STOP and len(w) > 2}


def bigrams(text: str) -> set[tuple[str, str]]:
    ws = words(text)
    return set(zip(ws, ws[1:]))


def containment(reply: str, sources: Sequence[str]) -> float:
    """Largest share of the reply's word bigrams found in one of ``sources`` (near-copy cue)."""
    b = bigrams(reply)
    if not b or not sources:
        return 0.0
    return max(len(b & bigrams(s)) / len(b) for s in sources)


def _rate(pattern: re.Pattern[str] | str, text: str) -> float:
    n = max(1, len(words(text)))
    found = (
        len(re.findall(pattern, text, re.IGNORECASE))
        if isinstance(pattern, str)
        else len(pattern.findall(text))
    )
    return found / n * 10.0  # per ten words


FIRST = r"\b(i|i'm|i've|i'd|i'll|me|my|myself)\b"
SECOND = r"\b(you|you're|you've|you'd|you'll|your|yourself)\b"


def style(text: str) -> dict[str, float]:
    """Surface rates per ten words, compared between a reply and the persona's own lines."""
    return {
        "excl": text.count("!") / max(1, len(words(text))) * 10.0,
        "quest": text.count("?") / max(1, len(words(text))) * 10.0,
        "first": _rate(FIRST, text),
        "second": _rate(SECOND, text),
        "advice": _rate(_ADVICE, text),
        "feeling": _rate(_FEELING, text),
        "digits": _rate(r"\b(\d+|one|two|three|four|five)\b", text),
    }


FEATURES = (
    "sim_user",
    "sim_context",
    "sim_user_turns",
    "lex_user",
    "lex_context",
    "copy_sim",
    "copy_lex",
    "round_sim",
    "own_voice",
    "own_desc",
    "peer_voice",
    "drift",
    "peer_desc_gap",
    "generic",
    "dismissive",
    "supportive",
    "name_tag",
    "stage",
    "ai_speak",
    "laugh",
    "first_person",
    "second_person",
    "first_minus_second",
    "excl_gap",
    "quest_gap",
    "advice_gap",
    "feeling_gap",
    "digits_gap",
    "advice_first",
    "question",
    "feeling",
)


class FeatureMaker:
    """Features of one reply in its context (embeddings from all-MiniLM-L6-v2, cached by text)."""

    def __init__(self, embed: Any):
        self.embed = embed
        self._groups: dict[str, list[Any]] = {}

    def group(self, name: str) -> list[Any]:
        if name not in self._groups:
            try:
                self._groups[name] = list(load_set(name).members)
            except MascotError:
                self._groups[name] = []
        return self._groups[name]

    def __call__(
        self, scenario: Any, persona: Any, reply: str, others: list[dict] | None = None
    ) -> list[float]:
        import numpy as np

        reply = (reply or "").strip()
        peers = [p for p in self.group(scenario.group) if p.name != persona.name]
        user_turns = [h["text"] for h in scenario.history if h.get("speaker") == "User"] + [
            scenario.user_message
        ]
        companion_turns = [h["text"] for h in scenario.history if h.get("speaker") != "User"]
        round_texts = [o.get("text", "") for o in (others or []) if o.get("text", "").strip()]
        prior = companion_turns + round_texts
        own_lines = list(persona.example_lines) or [persona_description(persona)]
        peer_lines = [(p, list(p.example_lines) or [persona_description(p)]) for p in peers]
        context = f"{scenario.situation} {scenario.user_message}"
        texts = [
            reply,
            scenario.user_message,
            context,
            persona_description(persona),
            *own_lines,
            *user_turns,
            *prior,
            *GENERIC,
            *DISMISSIVE,
            *SUPPORTIVE,
            *(persona_description(p) for p in peers),
            *(t for _, ls in peer_lines for t in ls),
        ]
        e = self.embed(texts)
        r = e[0]
        sims = e @ r
        i = 1
        sim_user, sim_ctx, own_desc = float(sims[i]), float(sims[i + 1]), float(sims[i + 2])
        i += 3
        own_voice = float(np.mean(np.sort(sims[i : i + len(own_lines)])[-2:]))
        i += len(own_lines)
        sim_user_turns = float(np.max(sims[i : i + len(user_turns)]))
        i += len(user_turns)
        copy_sim = float(np.max(sims[i : i + len(prior)])) if prior else 0.0
        round_sim = (
            float(np.max(sims[i + len(companion_turns) : i + len(prior)])) if round_texts else 0.0
        )
        i += len(prior)
        generic = float(np.max(sims[i : i + len(GENERIC)]))
        i += len(GENERIC)
        dismissive = float(np.max(sims[i : i + len(DISMISSIVE)]))
        i += len(DISMISSIVE)
        supportive = float(np.max(sims[i : i + len(SUPPORTIVE)]))
        i += len(SUPPORTIVE)
        peer_desc = float(np.max(sims[i : i + len(peers)])) if peers else 0.0
        i += len(peers)
        peer_voice = 0.0
        for _, ls in peer_lines:
            peer_voice = max(peer_voice, float(np.mean(np.sort(sims[i : i + len(ls)])[-2:])))
            i += len(ls)

        rw = content(reply)
        user_words = set().union(*(content(t) for t in user_turns))
        ctx_words = (
            content(context) | user_words | set().union(*(content(t) for t in prior))
            if prior
            else content(context) | user_words
        )
        lex_user = len(rw & user_words) / max(1, len(rw))
        lex_ctx = len(rw & ctx_words) / max(1, len(rw))
        copy_lex = containment(reply, prior)

        names = [p.name for p in peers] + ["User"]
        name_tag = sum(
            len(re.findall(rf"(?:^|[.!?]\s+|\s){re.escape(n)}\s*:", reply)) for n in names
        )
        own_tag = len(re.findall(rf"(?:^|\s){re.escape(persona.name)}\s*:", reply))
        s_reply = style(reply)
        s_own = style(" ".join(own_lines))
        first_sentence = re.split(r"(?<=[.!?])\s", reply, maxsplit=1)[0]
        f = {
            "sim_user": sim_user,
            "sim_context": sim_ctx,
            "sim_user_turns": sim_user_turns,
            "lex_user": lex_user,
            "lex_context": lex_ctx,
            "copy_sim": copy_sim,
            "copy_lex": copy_lex,
            "round_sim": round_sim,
            "own_voice": own_voice,
            "own_desc": own_desc,
            "peer_voice": peer_voice,
            "drift": peer_voice - own_voice,
            "peer_desc_gap": peer_desc - own_desc,
            "generic": generic,
            "dismissive": dismissive,
            "supportive": supportive,
            "name_tag": float(min(3, name_tag + own_tag)),
            "stage": float(bool(_STAGE.search(reply))),
            "ai_speak": float(bool(_AI.search(reply))),
            "laugh": float(min(3, len(_LAUGH.findall(reply)))),
            "first_person": s_reply["first"],
            "second_person": s_reply["second"],
            "first_minus_second": s_reply["first"] - s_reply["second"],
            "excl_gap": abs(s_reply["excl"] - s_own["excl"]),
            "quest_gap": abs(s_reply["quest"] - s_own["quest"]),
            "advice_gap": max(0.0, s_reply["advice"] - s_own["advice"]),
            "feeling_gap": abs(s_reply["feeling"] - s_own["feeling"]),
            "digits_gap": abs(s_reply["digits"] - s_own["digits"]),
            "advice_first": float(bool(_ADVICE.search(first_sentence)))
            * float(s_own["advice"] == 0.0),
            "question": float("?" in reply),
            "feeling": s_reply["feeling"],
        }
        return [float(f[k]) for k in FEATURES]


def weights_path() -> Path:
    return assets_dir() / "judge" / "learned.json"


def audit_path() -> Path:
    """The audit judge: the same features fitted on the dev split only, with no twins, so its
    training pairs and corruptions are disjoint from the teacher's (an evaluation signal)."""
    return assets_dir() / "judge" / "audit.json"


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, x))))


class LearnedJudge:
    """Per-dimension linear heads over ``FeatureMaker`` features (weights from a JSON file)."""

    def __init__(self, path: str | Path | None = None, *, embedder: Any = None):
        path = Path(path) if path else weights_path()
        if not path.is_file():
            raise InputError(
                f"Learned judge weights '{path}' do not exist; fit them with "
                "`mascot-train judge-fit`."
            )
        data = json.loads(path.read_text(encoding="utf-8"))
        if list(data.get("features", [])) != list(FEATURES):
            raise InputError(
                f"Learned judge weights '{path}' were fitted on other features; refit them "
                "with `mascot-train judge-fit`."
            )
        self.path = path
        self.meta = data.get("meta", {})
        self.mean = [float(x) for x in data["mean"]]
        self.std = [float(x) or 1.0 for x in data["std"]]
        self.heads = {d: [float(x) for x in data["heads"][d]] for d in DIMENSIONS}
        self.bias = {d: float(data.get("bias", {}).get(d, 0.0)) for d in DIMENSIONS}
        self.name = (
            "learned"
            if path == weights_path()
            else "audit"
            if path == audit_path()
            else f"learned:{path.name}"
        )
        # changes when the weights or the feature code change (evaluation caches scores under it)
        import hashlib

        self.fingerprint = hashlib.sha256(
            path.read_bytes() + Path(__file__).read_bytes()
        ).hexdigest()[:16]
        self._embedder = embedder
        self._features: FeatureMaker | None = None
        self._lock = threading.Lock()

    @property
    def embedder(self) -> Any:
        if self._embedder is None:
            self._embedder = HeuristicJudge()  # its MiniLM loader and text cache
        return self._embedder

    def embed(self, texts: Sequence[str]) -> Any:
        return self.embedder.embed(list(texts))

    def warm(self, texts: Sequence[str]) -> None:
        self.embedder.warm(texts)

    def features(
        self, scenario: Any, persona: Any, reply: str, others: list[dict] | None = None
    ) -> list[float]:
        with self._lock:
            if self._features is None:
                self._features = FeatureMaker(self.embed)
        return self._features(scenario, persona, reply, others)

    def utilities(self, feats: Sequence[float]) -> dict[str, float]:
        z = [(x - m) / s for x, m, s in zip(feats, self.mean, self.std)]
        return {d: sum(w * v for w, v in zip(self.heads[d], z)) + self.bias[d] for d in DIMENSIONS}

    def score(
        self, scenario: Any, persona: Any, reply: str, others: list[dict] | None = None
    ) -> Scores:
        if not re.search(r"\w", reply or ""):
            return Scores({d: 1.0 for d in DIMENSIONS}, self.name, "")
        feats = self.features(scenario, persona, reply, others)
        u = self.utilities(feats)
        values = {d: round(1.0 + 4.0 * _sigmoid(u[d]), 4) for d in DIMENSIONS}
        return Scores(
            values, self.name, json.dumps(dict(zip(FEATURES, (round(x, 3) for x in feats))))
        )


# -- the length-matched preference set ----------------------------------------------------------


def preferences_path() -> Path:
    return assets_dir() / "judge" / "preferences.jsonl"


def load_preferences(
    split: str | Sequence[str] | None = None, path: str | Path | None = None
) -> list[PreferencePair]:
    """Pairs of ``assets/judge/preferences.jsonl`` (all splits, or the named ones)."""
    splits = {split} if isinstance(split, str) else set(split) if split else None
    out = []
    for line in Path(path or preferences_path()).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        d = json.loads(line)
        if splits is None or d["split"] in splits:
            out.append(
                PreferencePair(
                    d["scenario"],
                    d["persona"],
                    d["flaw"],
                    d["chosen"],
                    d["rejected"],
                    d.get("others") or [],
                    d["criterion"],
                    d["split"],
                )
            )
    return out


class LongerWins:
    """The "longer reply wins" rule as a judge (a baseline that length-matched pairs must defeat)."""

    name = "longer-wins"

    def score(
        self, scenario: Any, persona: Any, reply: str, others: list[dict] | None = None
    ) -> Scores:
        v = min(5.0, 1.0 + len((reply or "").split()) / 10.0)
        return Scores({d: v for d in DIMENSIONS}, self.name)


__all__ = [
    "audit_path",
    "FEATURES",
    "FeatureMaker",
    "LearnedJudge",
    "LongerWins",
    "NEUTRAL",
    "load_preferences",
    "preferences_path",
    "weights_path",
]
