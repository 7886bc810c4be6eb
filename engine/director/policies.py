"""Who speaks next: the Director and the baseline policies.

Rules every policy obeys (enforced here in code, not left to the model):

* at most ``max_speakers`` companions per round (``all`` means everyone once);
* each companion speaks at most once per round, so nobody speaks twice in a row; the last
  speaker of the previous round does not open the next one unless the user addresses it;
* a companion the user names ("Mia, what do you think?" or "@Mia") answers first;
* the round may end only after ``min_speakers`` companions have spoken.

The Director is an LLM call whose output is constrained to
``{"speaker": <one of the allowed names or "END">, "directive": "<one line>"}`` holding only the
companions the rules allow at that moment, so every decision is valid by construction. Models
of 1B parameters and more write the directive freely under a JSON-schema grammar in llama.cpp;
smaller ones choose it from a menu, decoded as a constrained choice among the exact decision
strings (``Director.choices``, ``LlamaRuntime._choose``: the model is consulted only where the
options differ, so a decision costs a few batched evaluations, not ~20 grammar-sampled tokens);
if the output still cannot be parsed (e.g. cut off by the token limit) the rules' first allowed
speaker is used and the decision is reported as ``valid: false``.

Every decision is weighed by a fixed participation prior (``BALANCE_PRIOR``, ``balance_bias``):
companions who have replied more than the quietest allowed one are less likely to be picked. In
menu mode it is added to the constrained choice; in free-text mode, when someone is ahead, the
speaker is first chosen the same way (a constrained choice among the allowed names, or END),
and the directive is then written for that speaker under the grammar.

Simplification: the paper trains the Director with GRPO on group rewards, balance of
participation included; here balance is also a hand-set prior at decoding, which the trained
Director learns on top of. Until a trained Director model is registered, this is the
prompt-only Director running on the chat model.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from engine.errors import InputError
from engine.llm.backend import Backend, GenRequest

if TYPE_CHECKING:
    from engine.personas import Persona

POLICIES = ("director", "round-robin", "random", "all")
END = "END"
DIRECTIVE_MAX_CHARS = 90
# Below this size a model cannot write useful free-text directives, so it picks from a menu
# (each persona's goals plus generic group moves); docs/director.md, "Simplifications".
SMALL_MODEL_PARAMS = 1_000_000_000
# "auto" also turns to the menu when the model writes slower than this (tokens/s): a written
# directive would then keep the next companion waiting (docs/performance.md)
FREE_TEXT_MIN_TPS = 12.0
GENERIC_DIRECTIVES = (
    "Respond to what {user} just said",
    "Add a point nobody has made yet",
    "Ask {user} one gentle question",
    "Build on the previous reply without repeating it",
)
# The menu's last option: no directive, a free turn ("It is Mia's turn."); it often scores higher
# than a generic directive with the bundled model (docs/director.md).
NO_DIRECTIVE = ""
# The participation prior, in nats per reply beyond the quietest allowed companion (``balance_bias``):
# a fixed prior the trained policy learns on top of; why 6: docs/director.md.
BALANCE_PRIOR = 6.0
DIRECTIVE_VERBS = (
    "Acknowledge",
    "Ask",
    "Suggest",
    "Share",
    "Reflect",
    "Encourage",
    "Offer",
    "Validate",
    "Summarize",
    "Challenge",
    "Add",
    "Propose",
    "Clarify",
    "Invite",
    "Reassure",
    "Name",
    "Question",
    "Note",
    "Lighten",
    "Connect",
)
FREE_DIRECTIVE_PATTERN = (
    "^(" + "|".join(DIRECTIVE_VERBS) + ") [a-zA-Z ,'-]{8,70}$"
)  # a written directive


@dataclass
class Decision:
    speaker: str | None  # None ends the round
    directive: str = ""
    source: str = "director"  # director | addressed | round-robin | random | all | rules
    valid: bool = True
    seconds: float = 0.0
    raw: str = ""


@dataclass
class RoundState:
    members: list["Persona"]  # active (unmuted) companions, in group order
    user_name: str
    user_text: str
    max_speakers: int = 3
    min_speakers: int = 1
    addressed: list[str] = field(default_factory=list)
    spoken: list[str] = field(default_factory=list)  # who had a turn this round, in order
    # ... of them, who posted nothing (an empty reply, or a copy of a recent one, twice): they do
    # not count towards the speaker cap, so another companion can still answer
    silent: list[str] = field(default_factory=list)
    last_speaker: str | None = None  # the companion who spoke last before this round
    # replies each companion gave before this round (the whole conversation, untrimmed); None:
    # counted from the transcript the Director is given (``replies_so_far``)
    prior_replies: dict[str, int] | None = None

    @classmethod
    def begin(
        cls,
        members: list["Persona"],
        user_name: str,
        user_text: str,
        history: list[tuple[str, str]],
        *,
        max_speakers: int = 3,
        min_speakers: int = 1,
        spoken: list[str] | None = None,
    ) -> "RoundState":
        """The state at a round's start (``spoken``: replies already given this round) after
        ``history``, the (role, speaker) of every earlier message, oldest first."""
        earlier = [speaker for role, speaker in history if role == "companion"]
        return cls(
            members=list(members),
            user_name=user_name,
            user_text=user_text,
            max_speakers=max_speakers,
            min_speakers=min_speakers,
            addressed=find_addressed(user_text, [p.name for p in members]),
            spoken=spoken if spoken is not None else [],
            last_speaker=earlier[-1] if earlier else None,
            prior_replies=Counter(earlier),
        )

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.members]

    def pending_addressed(self) -> list[str]:
        return [n for n in self.addressed if n not in self.spoken]

    def allowed(self) -> list[str]:
        """Companions the rules allow to speak next (may be empty)."""
        pending = self.pending_addressed()
        if pending:
            return pending[:1]
        out = [n for n in self.names if n not in self.spoken]
        if not self.spoken and self.last_speaker in out and len(out) > 1:
            out.remove(self.last_speaker)
        return out

    def cap(self) -> int:
        return max(self.max_speakers, len(set(self.addressed)))

    def replied(self) -> int:
        """How many companions posted a reply this round."""
        return len([n for n in self.spoken if n not in self.silent])

    def may_end(self) -> bool:
        return (
            self.replied() >= min(self.min_speakers, len(self.members))
            and not self.pending_addressed()
        )

    def must_end(self) -> bool:
        return self.replied() >= self.cap() or not self.allowed()


def replies_so_far(state: RoundState, transcript: list[dict[str, str]]) -> dict[str, int]:
    """How many replies each active companion has given in the conversation, this round included."""
    if state.prior_replies is not None:
        counts = {n: state.prior_replies.get(n, 0) for n in state.names}
        for n in state.spoken:
            if n in counts and n not in state.silent:
                counts[n] += 1
        return counts
    counts = {n: 0 for n in state.names}
    for item in transcript:
        if item.get("speaker") in counts and not item.get("open"):
            counts[item["speaker"]] += 1
    return counts


def balance_bias(
    state: RoundState, transcript: list[dict[str, str]], strength: float
) -> dict[str, float]:
    """The participation prior: for each companion allowed to speak now, ``-strength`` times how
    many more replies it has given than the quietest allowed companion (0 for the quietest)."""
    allowed = state.allowed()
    if not allowed or strength == 0:
        return {n: 0.0 for n in allowed}
    counts = replies_so_far(state, transcript)
    lo = min(counts.get(n, 0) for n in allowed)
    return {n: -strength * (counts.get(n, 0) - lo) for n in allowed}


def find_addressed(text: str, names: list[str]) -> list[str]:
    """Companions the user names, in order of first mention (word match, any case, @name)."""
    hits = []
    for n in names:
        m = re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", text, flags=re.IGNORECASE)
        if m:
            hits.append((m.start(), n))
    return [n for _, n in sorted(hits)]


def annotate_turns(
    items: list[dict[str, str]], names: list[str], user_name: str
) -> list[dict[str, str]]:
    """Copies of ``items`` where each of the user's messages has ``turns``: how many replies
    each companion had given before it, e.g. "Mia 2, Leo 0, Sam 1". Balance of participation is
    part of the Director's reward, and a small model cannot count turns in a long transcript.
    Annotate the whole transcript before trimming it, so the text of a kept turn never changes."""
    counts = {n: 0 for n in names}
    out = []
    for item in items:
        item = dict(item)
        if item["speaker"] in counts:
            counts[item["speaker"]] += 1
        elif item["speaker"] == user_name:
            item["turns"] = ", ".join(f"{n} {c}" for n, c in counts.items())
        out.append(item)
    return out


# The Director reads a companion reply's opening only (first sentence, at most this many
# characters): reading is most of its time (docs/performance.md, run C). The user's messages are read whole.
DIRECTOR_REPLY_CHARS = 64


def reply_gist(text: str, limit: int = DIRECTOR_REPLY_CHARS) -> str:
    """The first sentence of ``text`` if it ends within ``limit`` characters, else the text cut
    at the last word boundary before ``limit`` and marked with "…". ``limit`` 0: all of it."""
    text = " ".join(text.split())
    if limit <= 0 or len(text) <= limit:
        return text
    m = re.match(r"(.{12,}?[.!?])(?:\s|$)", text[: limit + 1])
    if m:
        return m.group(1)
    return text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " …"


def clean_directive(text: str) -> str:
    text = " ".join(str(text).split())
    return text[:DIRECTIVE_MAX_CHARS].strip()


class Policy:
    name = "base"
    backend: Backend | None = None  # the model a policy reads the transcript with (the Director's)

    def next(self, state: RoundState, transcript: list[dict[str, str]]) -> Decision:
        raise NotImplementedError

    def _rules(self, state: RoundState) -> Decision | None:
        """Decisions forced by the rules, before any policy choice."""
        if state.must_end():
            return Decision(None, source="rules")
        pending = state.pending_addressed()
        if pending:
            return Decision(pending[0], source="addressed")
        return None


class RoundRobin(Policy):
    """Companions take turns in group order, continuing where the last round stopped."""

    name = "round-robin"

    def next(self, state: RoundState, transcript: list[dict[str, str]]) -> Decision:
        forced = self._rules(state)
        if forced:
            return forced
        names = state.names
        anchor = state.spoken[-1] if state.spoken else state.last_speaker
        start = (names.index(anchor) + 1) if anchor in names else 0
        allowed = set(state.allowed())
        for i in range(len(names)):
            n = names[(start + i) % len(names)]
            if n in allowed:
                return Decision(n, source=self.name)
        return Decision(None, source=self.name)


class RandomPolicy(Policy):
    """A random allowed companion each turn; a random number of speakers per round."""

    name = "random"

    def __init__(self, seed: int | None = None):
        self.rng = random.Random(seed)
        self._target: int | None = None

    def next(self, state: RoundState, transcript: list[dict[str, str]]) -> Decision:
        if not state.spoken:
            lo = max(1, min(state.min_speakers, state.cap()))
            self._target = self.rng.randint(lo, max(lo, state.cap()))
        forced = self._rules(state)
        if forced:
            return forced
        if self._target is not None and state.replied() >= self._target and state.may_end():
            return Decision(None, source=self.name)
        return Decision(self.rng.choice(state.allowed()), source=self.name)


class AllPolicy(Policy):
    """Everyone answers once, in group order (addressed companions first)."""

    name = "all"

    def next(self, state: RoundState, transcript: list[dict[str, str]]) -> Decision:
        state = replace(state, max_speakers=len(state.members))  # everyone: the cap is the group
        forced = self._rules(state)
        if forced:
            return forced
        allowed = set(state.allowed()) | {n for n in state.names if n not in state.spoken}
        for n in state.names:
            if n in allowed:
                return Decision(n, source=self.name)
        return Decision(None, source=self.name)


class Director(Policy):
    """The MASCOT Director: picks the next speaker and writes it a one-line directive."""

    name = "director"

    def __init__(
        self,
        backend: Backend,
        *,
        max_tokens: int = 48,
        temperature: float = 0.0,
        seed: int | None = 7,
        directive_mode: str = "auto",
        balance_prior: float = BALANCE_PRIOR,
    ):
        self.backend = backend
        self.balance_prior = balance_prior
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.seed = seed
        self.auto_mode = directive_mode == "auto"
        self.directive_mode = (
            directive_mode_for(backend.parameters) if self.auto_mode else directive_mode
        )

    @staticmethod
    def menu(persona: "Persona", user_name: str) -> list[str]:
        """Directive options for one companion: its own goals, generic group moves, and last
        ``NO_DIRECTIVE`` (a free turn)."""
        out = []
        for goal in persona.goals + list(GENERIC_DIRECTIVES):
            text = re.sub(r"\bthe user\b", user_name, goal.strip().rstrip("."))
            text = text[:1].upper() + text[1:]
            if text and text not in out:
                out.append(clean_directive(text.replace("{user}", user_name)))
        out.append(NO_DIRECTIVE)
        return out

    @classmethod
    def choices(cls, state: RoundState, allowed: list[str], may_end: bool) -> list[str]:
        """Every valid menu-mode decision, as the exact JSON text the model must produce (the
        runtime picks one with constrained choice decoding; training uses the same list)."""
        by_name = {p.name: p for p in state.members}
        out = [
            cls.decision_text(n, d) for n in allowed for d in cls.menu(by_name[n], state.user_name)
        ]
        if may_end:
            out.append(cls.decision_text(END, ""))
        return out

    @staticmethod
    def choice_bias(choices: list[str], bias: dict[str, float]) -> list[float] | None:
        """The participation prior of each decision string (its speaker's ``balance_bias``; END
        0), or None when it is 0 for all of them (nothing to add)."""
        out = [bias.get(json.loads(c)["speaker"], 0.0) for c in choices]
        return out if any(out) else None

    @staticmethod
    def speaker_text(speaker: str) -> str:
        """The speaker alone, as the free-text mode's first choice: ``{"speaker":"Mia"}``."""
        return json.dumps({"speaker": speaker}, separators=(",", ":"))

    @staticmethod
    def decision_text(speaker: str, directive: str) -> str:
        """A menu decision as the model writes it: compact JSON (no spaces after ``:`` and
        ``,``: three tokens fewer to evaluate per decision than ``json.dumps``' default)."""
        return json.dumps({"speaker": speaker, "directive": directive}, separators=(",", ":"))

    def schema(self, state: RoundState, allowed: list[str], may_end: bool) -> dict[str, Any]:
        if self.directive_mode == "menu":
            by_name = {p.name: p for p in state.members}
            options: list[dict[str, Any]] = [
                {
                    "type": "object",
                    "properties": {
                        "speaker": {"const": n},
                        "directive": {"enum": self.menu(by_name[n], state.user_name)},
                    },
                    "required": ["speaker", "directive"],
                }
                for n in allowed
            ]
            if may_end:
                options.append(
                    {
                        "type": "object",
                        "properties": {"speaker": {"const": END}, "directive": {"const": ""}},
                        "required": ["speaker", "directive"],
                    }
                )
            return {"anyOf": options} if len(options) > 1 else options[0]
        return self.free_schema(allowed, may_end)

    @staticmethod
    def free_schema(allowed: list[str], may_end: bool) -> dict[str, Any]:
        options = list(allowed) + ([END] if may_end else [])
        return {
            "type": "object",
            "properties": {
                "speaker": {"type": "string", "enum": options},
                "directive": {"type": "string", "pattern": FREE_DIRECTIVE_PATTERN},
            },
            "required": ["speaker", "directive"],
        }

    @staticmethod
    def system_prompt(state: RoundState) -> str:
        roster = "\n".join(
            f"- {p.name}: {p.role} ({', '.join(p.traits[:3])})" for p in state.members
        )
        return (
            "You are the Director of a small group chat between a person and AI companions. "
            "You never speak in the chat. Before each turn you choose which companion speaks next "
            "and write them one short directive: the new point they should add, so the group "
            "stays in character, helpful and never repeats itself.\n"
            f"The person is {state.user_name}. The companions:\n{roster}\n"
            "Pick the companion whose role fits what the conversation needs now, and tell them "
            "what to add that nobody has said yet, about the person's own words. A companion "
            "speaks at most once after each message of the person. Answer with JSON "
            'only: {"speaker": NAME, "directive": "VERB what"}, where VERB is one of: '
            + ", ".join(DIRECTIVE_VERBS)
            + '. Use "END" as the speaker when the message has '
            "been answered well enough."
        )

    @staticmethod
    def messages(
        state: RoundState, transcript: list[dict[str, str]], reply_chars: int = DIRECTOR_REPLY_CHARS
    ) -> list[dict[str, str]]:
        """System prompt, then the transcript, one message per turn; nothing after it. Companion
        replies appear as their gist (``reply_gist``: first sentence, at most ``reply_chars``
        characters; 0 = whole), the user's messages whole. The decision is generated right after
        the last turn, so a decision prefills only what was said since the previous one (no
        per-decision question to read; docs/director.md). The rules (who may speak now, END) are
        enforced by the constrained output, not by the prompt. Each of the user's messages opens
        with how often each companion had spoken before it (``turns`` of the item, see
        ``annotate_turns``; stable text, so the KV cache stays a prefix). The note comes first
        because it is known before the user writes: the app reads it ahead, with the message's
        "User:", while the user types (``GroupChat.warm``: an item with ``open`` set, last, is
        rendered as that opening only, and prefilled with ``GenRequest(open_last=True)``), so
        a round starts by reading only the user's words."""
        msgs = [{"role": "system", "content": Director.system_prompt(state)}]
        items = transcript
        if any(i["speaker"] == state.user_name and "turns" not in i for i in items):
            items = annotate_turns(items, state.names, state.user_name)
        for item in items:
            note = f"(Replies so far: {item['turns']})\n" if item.get("turns") else ""
            if item.get("open"):
                msgs.append({"role": "user", "content": f"{note}{item['speaker']}:"})
                break
            body = (
                item["text"]
                if item["speaker"] == state.user_name
                else reply_gist(item["text"], reply_chars)
            )
            msgs.append({"role": "user", "content": f"{note}{item['speaker']}: {body}"})
        return msgs

    def next(self, state: RoundState, transcript: list[dict[str, str]]) -> Decision:
        if state.must_end():
            return Decision(None, source="rules")
        allowed = state.allowed()
        may_end = state.may_end()
        menu = self.directive_mode == "menu"
        choices = self.choices(state, allowed, may_end) if menu else None
        bias = balance_bias(state, transcript, self.balance_prior) if self.balance_prior else {}
        messages = self.messages(state, transcript)
        source = "addressed" if state.pending_addressed() else self.name
        t0 = time.perf_counter()
        if not menu and any(bias.values()):
            # free text with someone ahead: the speaker first, as a constrained choice that
            # carries the prior (a grammar cannot weigh its options), then its directive
            names = [self.speaker_text(n) for n in allowed] + (
                [self.speaker_text(END)] if may_end else []
            )
            raw = self.backend.generate(
                GenRequest(
                    slot="__director__",
                    messages=messages,
                    temperature=self.temperature,
                    top_p=1.0,
                    top_k=0,
                    repeat_penalty=1.0,
                    seed=self.seed,
                    choices=names,
                    choice_bias=self.choice_bias(names, bias),
                )
            ).text()
            try:
                speaker = json.loads(raw)["speaker"]
            except (ValueError, KeyError, TypeError):
                speaker = allowed[0]
            if speaker == END and may_end:
                return Decision(None, "", source, True, time.perf_counter() - t0, raw)
            allowed, may_end = [speaker if speaker in allowed else allowed[0]], False
        req = GenRequest(
            slot="__director__",
            messages=messages,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            top_p=1.0,
            top_k=0,
            repeat_penalty=1.0,
            seed=self.seed,
            json_schema=None if menu else self.schema(state, allowed, may_end),
            choices=choices,
            choice_bias=self.choice_bias(choices, bias) if choices else None,
        )
        gen = self.backend.generate(req)
        raw = gen.text()
        seconds = time.perf_counter() - t0
        if self.auto_mode and not menu and 0 < decode_speed(gen.stats) < FREE_TEXT_MIN_TPS:
            self.directive_mode = "menu"  # too slow to write directives: pick them from now on
        try:
            data = json.loads(raw)
            speaker = data["speaker"]
            directive = clean_directive(data.get("directive", ""))
            if speaker == END and may_end:
                return Decision(None, directive, source, True, seconds, raw)
            if speaker not in allowed:
                raise ValueError(speaker)
            return Decision(speaker, directive, source, True, seconds, raw)
        except (ValueError, KeyError, TypeError):
            return Decision(allowed[0], "", source, False, seconds, raw)


def decode_speed(stats: Any) -> float:
    """Tokens/s after the first token of a finished generation (0 when it cannot tell)."""
    if stats.decode_tps:
        return stats.decode_tps
    span = stats.seconds - stats.ttft
    return (stats.completion_tokens - 1) / span if stats.completion_tokens > 1 and span > 0 else 0.0


def directive_mode_for(parameters: int) -> str:
    """Below ``SMALL_MODEL_PARAMS`` the Director picks directives from a menu; above, it writes them."""
    return "menu" if 0 < parameters < SMALL_MODEL_PARAMS else "free"


def make_policy(
    name: str, backend: Backend | None = None, seed: int | None = None, **director: Any
) -> Policy:
    """The policy called ``name``. ``director`` holds Director options (``directive_mode``,
    ``balance_prior``: ``engine.models.registry.director_options`` reads them from a trained Director's
    manifest); the other policies take none."""
    if name == "director":
        if backend is None:
            raise InputError("The director policy needs a model.")
        return Director(backend, **director)
    if name == "round-robin":
        return RoundRobin()
    if name == "random":
        return RandomPolicy(seed)
    if name == "all":
        return AllPolicy()
    raise InputError(f"Unknown policy '{name}'; use one of: {', '.join(POLICIES)}.")
