"""One group conversation and its rounds: the single code path for CLI, GUI, eval and training.

A round, as data::

    user text -> safety check -> Director {speaker, directive} -> Speaker prompt (persona +
    transcript + directive) -> streamed tokens -> cleanup -> message committed -> Director again
    ... until the round ends or the speaker cap is reached

``GroupChat.send`` yields ``Event`` objects: ``round_start``, ``notice``, ``safety``,
``director``, ``token``, ``message``, ``round_end``, ``error``.

Context policy (stated, so long conversations never crash): each companion sees its persona, then
the recent transcript, up to ``ChatSettings.history_tokens`` (default 2,048 tokens: about the last
dozen rounds) or as much as fits the context window, whichever is less. When the transcript would
overflow that budget, the oldest messages are dropped in one block, keeping roughly the newest half
of the budget, so the kept prefix stays stable (and cached) for many turns after each trim. Any
single message longer than a quarter of the context is shown to companions with its middle cut out
(the full text is stored). Why a window below the context size: every token a companion reads
costs more the longer its prompt is (attention over the whole KV cache; on the bundled model a
token read at 3,700 tokens of context costs ~1.7x one read at 1,000), so without a window the
wait for a reply grows with the conversation (docs/performance.md). ``history_tokens=0`` lifts the
window (the whole context window is used).
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from .director import Decision, Policy, RoundState, annotate_turns, find_addressed, make_policy, reply_gist
from .errors import InputError, MascotError
from .models import director_options, director_trained_for
from .personas import Persona, PersonaSet
from .runtime import Backend, GenRequest

log = logging.getLogger("mascot.chat")
MAX_MESSAGE_CHARS = 100_000
PARAGRAPH_END = re.compile(r"(?<=\S)[ \t]*\n[ \t]*\n")
# While a reply streams, only text that cleanup can no longer cut is shown (``stream_safe``):
# a start that may still become a label ("Mi…" of "Mia:", "(…" of "(Mia's reply)"), a last
# line or sentence that may still become "Theo:", and a "<|…" that may be a special token are
# held back until they are settled. Everything else is shown at once, so the first words appear
# about as soon as they are decoded (a fixed holdback of 24 characters used to delay the first
# visible token by ~6 decoded tokens: 100-250 ms depending on the context length).
_ECHO_LEAD = 80  # an echo ("(Mia's response)", "(Mia responds to the request for a reply)") names itself within this
_LEAD_ECHO = re.compile(r"\s*\(([^()\n]{0,%d})" % (_ECHO_LEAD + 90))
_ECHO_WORD = re.compile(r"[^()\n]{0,%d}(?:response|reply|note|turn)" % _ECHO_LEAD, re.IGNORECASE)
_LEAD_LABEL = re.compile(r"\s*\**[A-Za-z]{0,21}\**\s*:?")
_LEAD_NAMES = re.compile(r"\s*[A-Z][a-z]{1,20}(?:\s*(?:,|&|a|an|and)\s*(?:[A-Z][a-z]{0,20})?)+\s*:?")
_TAIL_LABEL = re.compile(r"\**(?:[A-Z][A-Za-z]{0,20}(?: (?:[A-Z0-9][A-Za-z0-9]{0,20})?)?)?\**\s*:?")
_BOUNDARY = re.compile(r"\n\s*|(?<=[.!?…])\s+")
_NOTE_TAIL = "briefly and in character"  # the end of every turn note (``turn_note``)
_NOTE_ECHO = re.compile(r"(?:^|(?<=[.!?…])\s+)\s*(?:reply now as [^,.\n]{1,30},\s*)?%s\s*[.!]?" % _NOTE_TAIL,
                        re.IGNORECASE)


def stream_safe(visible: str) -> str:
    """The longest start of ``visible`` (a cleaned, growing reply) that no later text can make
    cleanup cut (see ``clean_reply``)."""
    echo = _LEAD_ECHO.fullmatch(visible)  # an open "(…" is held while it may still be an echo
    if echo and (len(echo.group(1)) < _ECHO_LEAD + 8 or _ECHO_WORD.match(echo.group(1))):
        return ""
    if _LEAD_LABEL.fullmatch(visible) or _LEAD_NAMES.fullmatch(visible):
        return ""
    lead = " ".join(visible.lower().split())
    if lead and (_NOTE_TAIL.startswith(lead) or "reply now as".startswith(lead)
                 or (lead.startswith("reply now as") and len(lead) < 44)):
        return ""  # may still become an echo of the turn note (cut by cleanup)
    cut = len(visible)
    paren = visible.rfind("(")  # an open "(…" may still turn out to be about someone else (cut)
    if paren > 0 and ")" not in visible[paren:] and len(visible) - paren <= 130:
        cut = paren
    special = max(visible.rfind("<"), visible.rfind("["))
    if special >= 0 and not re.search(r"[>\]]", visible[special:]) and len(visible) - special <= 32:
        cut = special
    last = None
    for last in _BOUNDARY.finditer(visible, 0, cut):
        pass
    if last is not None and _TAIL_LABEL.fullmatch(visible, last.end(), cut):
        cut = last.start()
    return visible[:cut].rstrip()


@dataclass
class Event:
    type: str
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **self.data}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)


DEFAULT_HISTORY_TOKENS = 2048  # see the context policy above
MIN_HISTORY_TOKENS = 256


@dataclass
class ChatSettings:
    policy: str = "director"
    max_speakers: int = 3
    min_speakers: int | None = None      # None = max_speakers: every round has that many voices
    user_name: str = "User"
    region: str | None = None
    seed: int | None = None
    model: str | None = None             # group default model (name or path); None = bundled
    director_model: str | None = None    # None = the group default model
    max_tokens: int | None = None        # override every persona's max_tokens
    temperature: float | None = None     # override every persona's temperature
    history_tokens: int = DEFAULT_HISTORY_TOKENS  # recent transcript a companion reads; 0 = all that fits
    memory: bool = True  # lorebooks and remembered facts in companions' prompts; facts found in messages

    def validate(self) -> None:
        from .director import POLICIES
        if self.policy not in POLICIES:
            raise InputError(f"Unknown policy '{self.policy}'; use one of: {', '.join(POLICIES)}.")
        if not 1 <= self.max_speakers <= 8:
            raise InputError(f"--max-speakers must be between 1 and 8, not {self.max_speakers}.")
        if self.min_speakers is not None and self.min_speakers < 1:
            raise InputError("--min-speakers must be at least 1.")
        if not (self.history_tokens == 0 or MIN_HISTORY_TOKENS <= self.history_tokens <= 1_000_000):
            raise InputError(f"--history-tokens must be 0 (all that fits) or at least {MIN_HISTORY_TOKENS}, "
                             f"not {self.history_tokens}.")

    def effective_min_speakers(self) -> int:
        return min(self.min_speakers or self.max_speakers, self.max_speakers)


def sanitize_user_text(text: str) -> str:
    """Drop control and binary characters; keep every script and emoji. Raises InputError."""
    if not isinstance(text, str):
        raise InputError("The message must be text.")
    cleaned = "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cs", "Co", "Cn"))
    cleaned = cleaned.replace("\t", " ").strip()
    if not cleaned:
        raise InputError("The message is empty (or only control characters); type something to send.")
    if len(cleaned) > MAX_MESSAGE_CHARS:
        raise InputError(f"The message is {len(cleaned):,} characters; the limit is "
                         f"{MAX_MESSAGE_CHARS:,}. Send a shorter part.")
    return cleaned


_SPECIAL = re.compile(r"<\|[^|>]{1,30}\|>|</?s>|\[/?INST\]")


def turn_note(name: str, directive: str, proper_names: tuple[str, ...] = ()) -> dict[str, str]:
    """The user-role note right before a companion's turn: the Director's directive addressed
    to the companion by name ("(Mia, ask User one gentle question.)"), or "(It is Mia's turn.)"
    for a free turn; then "Reply now as Mia, briefly and in character." A user-role note: small
    models follow the last user turn far better than a system note.

    Measured on the bundled 135M model (docs/director.md, 24 states, 2 replies each, 4 kinds of
    directive): addressed this way, 2% of directed replies came out empty after cleanup and
    their mean group reward was 0.754; as "(Director's note for Mia: Ask User one gentle
    question)", the wording until 2026-12-05, 15% and 0.692 (free turns: 10%, 0.725). The
    directive's first letter is lowered unless it starts with a name (``proper_names``) or "I"."""
    if not directive:
        note = f"It is {name}'s turn."
    else:
        text = " ".join(directive.split())
        first = text.split()[0]
        if first not in proper_names and first != "I" and not first.isupper():
            text = text[:1].lower() + text[1:]
        note = f"{name}, {text}" + ("" if text.endswith((".", "!", "?")) else ".")
    return {"role": "user", "content": f"({note}) Reply now as {name}, briefly and in character."}


def clean_reply(text: str, speaker: str, others: list[str], user_name: str) -> tuple[str, bool]:
    """Cut anything the model wrote as someone else. Returns (text, had_role_confusion)."""
    text = _SPECIAL.sub("", text).replace("\r", "")
    # Drop a leading "Speaker:" the model may write for itself (also **Speaker:**), or a label
    # it invents ("Drama: ..."); a leading label naming another member is role confusion (below).
    text = re.sub(rf"^\s*\**{re.escape(speaker)}\**\s*:\s*", "", text, flags=re.IGNORECASE)
    # An echo of the prompt's own framing: "(Mia's response)", "(Director's note ...)", or the
    # turn note itself, "(Mia, ask User one gentle question.)".
    text = re.sub(r"^\s*\([^()\n]{0,%d}(?:response|reply|note|turn)[^()\n]{0,80}\)\s*" % _ECHO_LEAD, "", text,
                  flags=re.IGNORECASE)
    text = re.sub(rf"^\s*\(\s*{re.escape(speaker)}\s*,[^()\n]{{0,{_ECHO_LEAD}}}\)\s*", "", text, flags=re.IGNORECASE)
    names = [n for n in others + [user_name, "User", "Director", "Assistant"] if n and n.lower() != speaker.lower()]
    alt = "|".join(re.escape(n) for n in sorted(set(names), key=len, reverse=True))
    confused = False
    if names:
        # A turn note for someone else echoed back ("(Ruth, add a point nobody has made yet)"), or
        # a stage direction for someone else ("(Ruth responds with a smile)"): not this reply's.
        # Cut before the leading labels below, which then also drop what it hid ("Ruth: ...").
        text, n_cut = re.subn(rf"\s*\(\s*(?:{alt})\b[^()\n]{{0,120}}\)", "", text, flags=re.IGNORECASE)
        confused = n_cut > 0
    lead = re.match(r"^\s*\**([A-Z][a-z]{1,20})\**:\s+", text)
    if lead and lead.group(1).lower() not in {n.lower() for n in others + [user_name, "user"]}:
        text = text[lead.end():]
    # "Mia, Theo: ..." (a label naming several people) is an address, not a reply of theirs.
    text = re.sub(r"^\s*[A-Z][a-z]{1,20}(?:\s*(?:,|&|and)\s*[A-Z][a-z]{1,20})+\s*:\s*", "", text)
    # The speaker's own name as if addressed, an echo of the turn note "(Mia, ...)": "Mia, I'm so glad ..."
    text = re.sub(rf"^\s*{re.escape(speaker)}\s*,\s*", "", text, flags=re.IGNORECASE)
    # The turn note's own words, "(Reply now as Mia,) briefly and in character.", as a sentence
    text = _NOTE_ECHO.sub("", text)
    if names:
        m = re.search(rf"(?:^|\n|(?<=[.!?…])\s+)\**(?:{alt})\**\s*:", text, flags=re.IGNORECASE)
        if m:
            text = text[: m.start()]
            confused = True
    # The model may also start a fresh line as itself: keep only its first message block.
    m = re.search(rf"\n\s*\**{re.escape(speaker)}\**\s*:", text, flags=re.IGNORECASE)
    if m:
        text = text[: m.start()]
    # ... or invent a new participant ("Chat: ...", "Friend 2: ..."), which is the same failure.
    m = re.search(r"\n\s*\**[A-Z][A-Za-z]{1,20}(?: [A-Z0-9][A-Za-z0-9]{0,20})?\**\s*:\s", text)
    if m:
        text = text[: m.start()]
        confused = True
    text = re.sub(r"[ \t]+", " ", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return text, confused


def note_head(name: str) -> str:
    return f"(Notes for {name}; use them only where they fit, never read them out:)"


def note_text(name: str, lines: list[str]) -> str:
    """The note a companion reads right before its turn: lorebook entries and remembered facts.
    It goes near the end of the prompt and stays in the companion's own transcript at that turn,
    so its KV prefix stays valid; what it already read in its window is not repeated."""
    return "\n".join([note_head(name), *(f"- {x}" for x in lines)])


def note_lines(name: str, content: str) -> list[str]:
    """The lines of a note (``note_text``); [] for any other message."""
    head = note_head(name) + "\n"
    return [x[2:] for x in content[len(head):].split("\n")] if content.startswith(head) else []


def note_of(name: str, messages: list[dict[str, str]]) -> str:
    """The note of a prompt built by ``speaker_request`` ("" when it has none)."""
    if len(messages) >= 2 and note_lines(name, messages[-2]["content"]):
        return messages[-2]["content"]
    return ""


def retry_request(req: GenRequest, free_turn: dict[str, str] | None = None) -> GenRequest:
    """Change ``req`` in place for the one retry of a reply that came out empty after cleanup
    or as a copy of a recent reply: another seed, and at least temperature 0.8 so the retry can
    leave a greedy dead end. For a copy, ``free_turn`` (the speaker's turn note without a
    directive, ``turn_note(name, "")``) replaces the request's last message, the turn note.

    Why a copy is retried as a free turn, measured on the bundled 135M model: after a first
    reply, directed turns mostly copy it more often than free turns (v9's 1,500 rolled-out
    replies: 9-19% copies for five of the six kinds of directive, "Build on the previous reply
    without repeating it" the most, against 6% for a free turn). Retrying the 176 directed copies among them three
    times each, the retry copied again 14.4% of the time with the directive kept and 8.0% as a
    free turn, and its group reward was 0.596 against 0.632 (docs/director.md). An empty reply
    keeps its directive: at round start, directed turns come out empty less often (4% against
    11%)."""
    req.seed = (req.seed or 0) + 101
    req.temperature = max(0.8, req.temperature)
    if free_turn is not None and req.messages:
        req.messages = [*req.messages[:-1], free_turn]
    return req


COPY_WORDS = 12     # a reply whose first this many words are nearly a recent reply's first words is a copy
COPY_SIMILARITY = 0.8  # ... nearly: this word-sequence similarity (difflib ratio) or more
RECENT_TURNS = 8    # ... recent: the companion turns among the last this many transcript items
COPY_SHORT_WORDS = 4  # a shorter reply is compared whole, from this many words
COPY_CONTAINED = 0.8  # a reply of 5+ words with this share of its words inside a recent reply...
COPY_BLOCK = 3        # ... in runs of at least this many words, in order, is a copy too


# Pronouns compared as one word each: the 135M model echoes "I'm going to make it happen." as
# "You're going to make it happen." and "She's going to make it happen."
_PRONOUNS = {**dict.fromkeys(("i", "you", "he", "she", "we", "they"), "~p"),
             **dict.fromkeys(("i'm", "you're", "he's", "she's", "we're", "they're"), "~pbe"),
             **dict.fromkeys(("me", "him", "us", "them"), "~pobj"),
             **dict.fromkeys(("my", "your", "his", "her", "our", "their"), "~pposs")}


def copy_key(text: str, names: list[str] | tuple[str, ...] = ()) -> str:
    """A reply as the copy check compares it: its words, lower case, without punctuation,
    pronouns as one word each, and without member names leading it (the 135M model copies
    "Mia, I'm so glad ..." and "(Theo, "I'm so glad ...")" as often as "I'm so glad ...")."""
    words = re.findall(r"[a-z0-9]+(?:'[a-z]+)?", text.lower().replace("’", "'"))
    lead = {n.lower() for n in names}
    while words and words[0] in lead:
        words.pop(0)
    return " ".join(_PRONOUNS.get(w, w) for w in words)


def _similar_start(words: list[str], other: list[str]) -> float:
    """How closely ``words`` match the start of ``other``: the best difflib ratio against
    ``other``'s first len-1 to len+2 words (a word left out or added still matches)."""
    from difflib import SequenceMatcher
    n = len(words)
    return max(SequenceMatcher(None, words, other[:k], autojunk=False).ratio()
               for k in range(max(1, n - 1), n + 3))


def _contained(words: list[str], other: list[str]) -> float:
    """The share of ``words`` found in ``other``, in order, in runs of ``COPY_BLOCK`` words or
    more (common words scattered through a long reply do not count)."""
    from difflib import SequenceMatcher
    blocks = SequenceMatcher(None, words, other, autojunk=False).get_matching_blocks()
    return sum(b.size for b in blocks if b.size >= COPY_BLOCK) / max(1, len(words))


def copies(text: str, recent: list[str], names: list[str] | tuple[str, ...] = ()) -> bool:
    """Whether ``text`` repeats one of the ``recent`` replies (already ``copy_key``-ed): the same
    words, or first ``COPY_WORDS`` words that are nearly those of a recent reply (similarity
    ``COPY_SIMILARITY``: "I'm really sorry for the confusion. I just love ..." copies "I'm sorry
    for the confusion. I just love ..."), or, for a reply of 4 to 11 words, nearly the same words
    as a recent reply of about its length ("You're going to make it happen." after "I'm going to
    make it happen."), or, for a reply of 5 words or more, ``COPY_CONTAINED`` of its words inside
    a recent reply in runs of ``COPY_BLOCK`` words ("I'll miss you, my friend." after "I'm so
    glad to hear that. I'll miss you, my friend."; "You're right, I'm really glad you told us..."
    after "I'll play my role. You're right, I'm really glad you told us..."). Small models often
    post the previous speaker's message again, word for word or nearly (docs/eval.md); nobody
    should see that.

    The last rule, counted over v9's 2,903 rolled-out replies (docs/director.md): it flags 77
    more (2.7%); in a sample of 25 of them every one repeated most of a recent reply."""
    from difflib import SequenceMatcher
    words = copy_key(text, names).split()
    if not words:
        return False
    for r in recent:
        other = r.split()
        if words == other:
            return True
        if len(words) > COPY_SHORT_WORDS and _contained(words, other) >= COPY_CONTAINED:
            return True
        if len(words) >= COPY_WORDS and len(other) >= COPY_WORDS - 1 and \
                _similar_start(words[:COPY_WORDS], other) >= COPY_SIMILARITY:
            return True
        # a short reply: nearly the same words as a short recent one, whole
        if COPY_SHORT_WORDS <= len(words) < COPY_WORDS and abs(len(words) - len(other)) <= 2 and \
                SequenceMatcher(None, words, other, autojunk=False).ratio() >= COPY_SIMILARITY:
            return True
    return False


def may_become_copy(text: str, recent: list[str], names: list[str] | tuple[str, ...] = ()) -> bool:
    """Whether a growing reply is so far nearly the start of a recent reply, or (from
    ``COPY_BLOCK`` words) so far inside one (it is held back while it is: if it turns out a
    copy it is generated again, and nothing of it was shown). A copy behind an opening of its
    own ("Great, great. I'm glad to see ...") is not held: the opening is shown at once, and
    shown text is never taken back."""
    words = copy_key(text, names).split()[:COPY_WORDS]
    if not words:
        return False
    for r in recent:
        other = r.split()
        if other and _similar_start(words, other) >= COPY_SIMILARITY:
            return True
        if len(words) < COPY_BLOCK:  # too few words to tell yet: hold if they occur in order
            if f" {' '.join(words)} " in f" {r} ":
                return True
        elif _contained(words, other) >= COPY_CONTAINED:
            return True
    return False


def trim_to_sentence(text: str) -> str:
    """A reply cut by the token limit ends at its last complete sentence (if that keeps most
    of it), so nobody sees a half-sentence."""
    ends = [m.end() for m in re.finditer(r"[.!?…](?:[\"')\]]*)(?=\s|$)", text)]
    if ends and ends[-1] >= len(text) * 0.4:
        return text[: ends[-1]].rstrip()
    return text.rstrip() + "…"


@dataclass
class TranscriptItem:
    role: str          # user | companion | safety
    speaker: str
    text: str
    id: int | None = None
    directive: str = ""  # what the Director told the speaker (kept: it is part of its KV prefix)
    context: str = ""    # the note (lorebook entries, facts) it read before this turn (kept: the same)


class GroupChat:
    """A conversation with a persona set. Not thread-safe: run one round at a time."""

    def __init__(self, group: PersonaSet, *, settings: ChatSettings | None = None,
                 store: Any = None, backend_for: Callable[[str | None], Backend] | None = None,
                 conversation_id: int | None = None, title: str | None = None):
        self.group = group
        self.settings = settings or ChatSettings()
        self.settings.validate()
        self.store = store
        self._backend_for = backend_for or default_backend_factory(store)
        self.members: list[Persona] = list(group.members)
        self.muted: set[str] = set()
        self.transcript: list[TranscriptItem] = []
        self._starts: dict[str, int] = {}
        self._ntok: dict[tuple[int, str], int] = {}  # token counts of transcript texts, per backend
        self.last_warm: dict[str, int] = {}  # tokens each agent read in the last ``warm``
        self.last_copies = 0  # copies of a recent reply dropped while generating the last reply
        self.last_free_retry = False  # the last reply came from a copy's retry as a free turn
        self._policy: Policy | None = None
        self._policy_key: tuple[str, str | None] | None = None
        self._director_elsewhere: tuple[str, str] | None = None  # (name, group) of a Director trained on another group
        self._director_noticed: tuple[str, str | None] | None = None
        self._books: dict[tuple[str, int], list[Any]] = {}
        self._recall_cache: dict[str, tuple[str, set[str]]] = {}
        self._recall_safe: dict[str, bool] = {}
        self.extra_facts: list[dict[str, Any]] = []  # facts given without a store (benchmarks)
        self.round = 0
        self.conversation_id = conversation_id
        if store is not None:
            if conversation_id is None:
                self.conversation_id = store.create_conversation(
                    title=title or f"{group.title}", group_name=group.name,
                    policy=self.settings.policy, max_speakers=self.settings.max_speakers,
                    members=[p.to_dict() for p in self.members])
            else:
                self._load(conversation_id)

    # -- state --------------------------------------------------------------------------------
    def _load(self, cid: int) -> None:
        from .personas import persona_from_dict
        conv = self.store.conversation(cid)
        rows = self.store.members(cid)
        if rows:
            self.members = [persona_from_dict(r["persona"]) for r in rows]
            self.muted = {r["name"] for r in rows if r["muted"]}
        for m in self.store.messages(cid):
            self.transcript.append(TranscriptItem(m["role"], m["speaker"], m["text"], m["id"],
                                                  m.get("directive") or "",
                                                  (m.get("meta") or {}).get("context") or ""))
        self.round = self.store.last_round(cid)
        self.settings.policy = conv.get("policy") or self.settings.policy

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.members]

    def member(self, name: str) -> Persona:
        for p in self.members:
            if p.name.lower() == name.lower():
                return p
        raise InputError(f"No companion named '{name}'; members are: {', '.join(self.names)}.")

    def mute(self, name: str, muted: bool = True) -> None:
        p = self.member(name)
        (self.muted.add if muted else self.muted.discard)(p.name)
        if self.store is not None and self.conversation_id is not None:
            self.store.set_member_muted(self.conversation_id, p.name, muted)

    def policy(self) -> Policy:
        """The turn-taking policy of ``settings.policy``, built again when the policy or the
        Director's model changes. A Director exported by ``mascot-train director`` is decoded
        as it was trained (its manifest's directive mode and participation prior)."""
        key = (self.settings.policy, self.settings.director_model or self.settings.model)
        if self._policy is None or self._policy_key != key:
            backend = self._backend_for(key[1]) if self.settings.policy == "director" else None
            path = _model_file(backend) if backend is not None else ""
            options = director_options(path)
            trained = director_trained_for(path)
            self._director_elsewhere = trained if trained and trained[1] != self.group.name else None
            backend = self._director_lane(backend)
            self._policy = make_policy(self.settings.policy, backend, self.settings.seed, **options)
            self._policy_key = key
        return self._policy

    def _director_lane(self, backend: Backend | None) -> Backend | None:
        """When the Director runs on the same llama.cpp runtime as a companion, give it that
        runtime's own "director" lane (a second context on the same weights): its KV stays live
        between decisions instead of being swapped in and out around every companion turn. The
        lane has a quarter of the companions' context, at least 1,024 tokens (its KV buffer is
        memory held for good), and the Director reads the last half of that of transcript (512
        tokens at the default 4,096: the last two or three rounds, user messages whole, replies
        as their gist); the reply counts on the user's messages still cover the whole
        conversation. Each token the Director reads costs less in a short context (measured on
        the bundled model: reading two messages took 356 ms at 354 tokens of context, 452 ms at
        1,100), and reading is most of its time."""
        lane = getattr(backend, "lane", None)
        if backend is None or not callable(lane):
            return backend
        base = getattr(backend, "runtime", backend)
        if any(getattr(b, "runtime", b) is base for b in map(self._backend, self.members)):
            return lane("director", director_lane_ctx(backend.n_ctx))
        return backend

    def _backend(self, persona: Persona) -> Backend:
        return self._backend_for(persona.model or self.settings.model)

    # -- prompts --------------------------------------------------------------------------------
    def _count(self, backend: Backend, text: str) -> int:
        """``backend.count_tokens``, remembered: every Director decision and companion turn
        prices the whole transcript to apply the context policy, and the texts do not change."""
        key = (id(backend), text)
        n = self._ntok.get(key)
        if n is None:
            if len(self._ntok) > 20000:
                self._ntok.clear()
            n = self._ntok[key] = backend.count_tokens(text)
        return n

    def _clip(self, text: str, backend: Backend) -> str:
        limit = max(64, backend.n_ctx // 4)
        n = self._count(backend, text)
        if n <= limit:
            return text
        keep = int(len(text) * (limit / n) * 0.9) // 2
        return text[:keep].rstrip() + " […] " + text[-keep:].lstrip()

    def _transcript_messages(self, persona: Persona, backend: Backend,
                             upto: int | None = None) -> list[dict[str, str]]:
        """The transcript as this companion sees it. Its own replies are assistant turns,
        each preceded by the turn note it was given, exactly as it was generated, so its KV
        cache after a turn is a strict prefix of its next prompt (a turn prefills only what
        is new)."""
        out = []
        for item in self.transcript[:upto]:
            if item.role == "companion" and item.speaker == persona.name:
                if item.context:
                    out.append({"role": "user", "content": item.context})
                out.append(self._turn_note(persona, item.directive))
                out.append({"role": "assistant", "content": self._clip(item.text, backend)})
            else:
                who = self.settings.user_name if item.role == "user" else item.speaker
                out.append({"role": "user", "content": f"{who}: {self._clip(item.text, backend)}"})
        return out

    def _turn_note(self, persona: Persona, directive: str) -> dict[str, str]:
        return turn_note(persona.name, directive, (*self.names, self.settings.user_name))

    def _trim_start(self, key: str, costs: list[int], budget: int) -> int:
        """Apply the context policy to one reader (a companion or the Director): return the index
        of the oldest transcript item it sees. The index only moves when the transcript would
        overflow ``budget``; then it jumps so the kept part uses about half the budget."""
        start = min(self._starts.get(key, 0), len(costs))
        if sum(costs[start:]) > budget:
            start, used = len(costs), 0
            while start > 0 and used + costs[start - 1] <= budget // 2:
                start -= 1
                used += costs[start]
            self._starts[key] = start
        return start

    def _fit(self, key: str, head: list[dict[str, str]], body: list[dict[str, str]],
             tail: list[dict[str, str]], backend: Backend, reserve: int) -> list[dict[str, str]]:
        cost = lambda m: self._count(backend, m["content"]) + 6
        budget = backend.n_ctx - reserve - 16 - sum(map(cost, head)) - sum(map(cost, tail))
        if self.settings.history_tokens > 0:  # the recent-history window (context policy above)
            budget = min(budget, self.settings.history_tokens)
        start = self._trim_start(key, [cost(m) for m in body], budget)
        return head + body[start:] + tail

    def speaker_request(self, persona: Persona, directive: str, upto: int | None = None,
                        context: str | None = None) -> GenRequest:
        """The companion's prompt: system prompt, transcript, then its note (``context``; None:
        what its lorebooks and the remembered facts give now, less what it already read in its
        window; "": none) and the turn note last."""
        backend = self._backend(persona)
        s = persona.sampling_settings()
        max_tokens = int(self.settings.max_tokens or s["max_tokens"])
        head = [{"role": "system", "content": self._system_prompt(persona, backend)}]
        body = self._transcript_messages(persona, backend, upto)
        tail = [self._turn_note(persona, directive)]
        key = persona.name if upto is None else f"{persona.name}@{upto}"
        if context is None and self.settings.memory:  # the window first: recall reads what is before it
            self._fit(key, head, body, tail, backend, max_tokens)
        lines = self._context_lines(persona, backend, upto) if context is None else []
        if context is None and lines:  # room for all of them; only those not read yet are kept
            context = note_text(persona.name, lines)
        if context:
            tail.insert(0, {"role": "user", "content": context})
        messages = self._fit(key, head, body, tail, backend, max_tokens)
        if lines:
            seen = {x for m in messages[1:-2] for x in note_lines(persona.name, m["content"])}
            fresh = [x for x in lines if x not in seen]
            if fresh:
                messages[-2]["content"] = note_text(persona.name, fresh)
            else:
                del messages[-2]
        others = [n for n in self.names if n != persona.name] + [self.settings.user_name]
        stop = sorted({f"\n{n}:" for n in others} | {f"\n**{n}" for n in others}
                      | {"\nUser:", "<|im_end|>", "<|im_start|>", "<|endoftext|>"})
        return GenRequest(slot=persona.name, messages=messages, max_tokens=max_tokens,
                          temperature=float(self.settings.temperature if self.settings.temperature is not None
                                            else s["temperature"]),
                          top_p=float(s["top_p"]), top_k=int(s["top_k"]),
                          repeat_penalty=float(s["repeat_penalty"]), stop=stop,
                          seed=self.settings.seed)

    def _lorebooks(self, persona: Persona) -> list[Any]:
        """The persona's card lorebook and the group's, parsed once."""
        from .lorebook import parse_book, persona_book
        key = (persona.name, id(persona))
        if key not in self._books:
            books = [persona_book(persona)]
            if getattr(self.group, "lorebook", None):
                books.append(parse_book(self.group.lorebook, self.group.name))
            self._books[key] = [b for b in books if b is not None]
        return self._books[key]

    def _system_prompt(self, persona: Persona, backend: Backend) -> str:
        """The persona's stable prefix, with its lorebooks' constant entries (they never change,
        so they are read once), before or after the character as each entry's position says."""
        text = persona.system_prompt(self.names, self.settings.user_name)
        if not self.settings.memory:
            return text
        count = lambda t: self._count(backend, t)
        user = self.settings.user_name
        before, after = [], []
        for book in self._lorebooks(persona):
            for e in book.constant(count, persona.name, user):
                (before if e.position == "before_char" else after).append(e.text(persona.name, user))
        return "\n".join([*before, text, *after])

    def _context_lines(self, persona: Persona, backend: Backend, upto: int | None) -> list[str]:
        """What this companion should have in mind before its turn (``note_text``): the lorebook
        entries the recent messages trigger, then the pinned facts and the facts related to the
        last few messages."""
        if not self.settings.memory:
            return []
        from .memory import relevant_facts
        count = lambda t: self._count(backend, t)
        user = self.settings.user_name
        recent = [t.text for t in self.transcript[:upto][-50:]]
        lines: list[str] = []
        for book in self._lorebooks(persona):
            lines += [e.text(persona.name, user) for e in book.triggered(recent, count, persona.name, user)]
        said = [t.text for t in self.transcript[:upto] if t.role == "user"][-1:]  # the user's last message
        lines += relevant_facts(self.facts(), said, count, user)
        lines += self._recall_lines(persona, upto, count)
        return list(dict.fromkeys(lines))

    def _recall_lines(self, persona: Persona, upto: int | None, count: Callable[[str], int]) -> list[str]:
        """The user's earlier messages this companion no longer reads (before its window, or in
        the group's past conversations) that bear on the user's last message (engine.recall)."""
        from .recall import Candidate, recall_lines
        items = self.transcript[:upto]
        last = next((t for t in reversed(items) if t.role == "user"), None)
        if last is None:
            return []
        start = self._starts.get(persona.name if upto is None else f"{persona.name}@{upto}", 0)
        # ``start`` counts the companion's prompt messages (each of its own turns is 2-3), not items
        seen, cut = 0, len(items)
        for i, t in enumerate(items):
            if seen >= start:
                cut = i
                break
            seen += 2 + bool(t.context) if t.role == "companion" and t.speaker == persona.name else 1
        pool = [(f"m{t.id}" if t.id is not None else f"t{i}", t.text)
                for i, t in enumerate(items[:cut]) if t.role == "user"]
        if self.store is not None and hasattr(self.store, "user_messages"):
            pool += [(f"m{r['id']}", r["text"]) for r in self.store.user_messages(self.group.name, self.conversation_id)]
        cands = [(Candidate(k, text), ws) for k, text in pool if (ws := self._recall_words(k, text))]
        return recall_lines(last.text, cands, self.settings.user_name, count, allowed=self._recallable,
                            store=self.store)

    def _recall_words(self, key: str, text: str) -> set[str]:
        """A message's content words for recall (cached by message)."""
        hit = self._recall_cache.get(key)
        if hit is None or hit[0] != text:
            from .memory import words
            hit = self._recall_cache[key] = (text, words(text))
        return hit[1]

    def _recallable(self, cand: Any) -> bool:
        """Whether a message may be recalled: never one the safety screen flags (asked only
        about the few best matches: the screen takes tens of ms a message)."""
        ok = self._recall_safe.get(cand.text)
        if ok is None:
            from . import safety
            ok = self._recall_safe[cand.text] = not safety.assess(cand.text).risk
        return ok

    def facts(self) -> list[dict[str, Any]]:
        """The remembered facts of this group (the memory panel's list)."""
        if self.store is None or not hasattr(self.store, "memories"):
            return list(self.extra_facts)
        return self.store.memories(self.group.name) + list(self.extra_facts)

    def remember(self, text: str, *, message_id: int | None = None, pinned: bool | None = None) -> int:
        """Store a fact the user gave: typed (``text``) or a message they pinned (``message_id``;
        a pinned message is kept as a pinned fact). Returns its id."""
        from .memory import MAX_FACT_CHARS, check_fact
        if self.store is None:
            raise InputError("This chat is not saved (--no-save), so it cannot remember facts.")
        if message_id is not None:
            text = self.store.message(message_id)["text"]
            text = " ".join(text.split())[:MAX_FACT_CHARS]
        text = check_fact(text)
        source = "pinned" if message_id is not None else "typed"
        return self.store.add_memory(self.group.name, text, source=source,
                                     conversation_id=self.conversation_id, message_id=message_id,
                                     pinned=message_id is not None if pinned is None else pinned)

    def _remember_said(self, text: str) -> Iterator[Event]:
        """Facts the user just stated (``memory.extract_facts``), stored and announced."""
        if self.store is None or not self.settings.memory or not hasattr(self.store, "add_memory"):
            return
        from .memory import extract_facts
        known = {f["text"].casefold() for f in self.store.memories(self.group.name)}
        uid = self.transcript[-1].id if self.transcript else None
        for fact in extract_facts(text):
            if fact.casefold() in known:
                continue
            fid = self.store.add_memory(self.group.name, fact, source="auto",
                                        conversation_id=self.conversation_id, message_id=uid)
            yield Event("memory", {"id": fid, "text": fact, "source": "auto", "message_id": uid})

    def _director_transcript(self, backend: Backend, opening: bool = False) -> list[dict[str, str]]:
        """The transcript as the Director reads it: the user's messages whole (clipped like the
        companions'), companion replies as their gist (``director.reply_gist``), reply counts
        on the user's messages; trimmed to the Director's budget by the same policy.
        ``opening``: end with the opening of the user's next message (its reply counts), for
        reading ahead while the user types."""
        items = [{"speaker": self.settings.user_name if t.role == "user" else t.speaker,
                  "text": self._clip(t.text, backend) if t.role == "user" else reply_gist(t.text)}
                 for t in self.transcript]
        if opening:
            items.append({"speaker": self.settings.user_name, "text": "", "open": "1"})
        items = annotate_turns(items, self.names, self.settings.user_name)
        costs = [self._count(backend, i["text"] + i.get("turns", "")) + 12 for i in items]
        return items[self._trim_start("__director__", costs, backend.n_ctx // 2):]

    def warm(self, cancel: threading.Event | None = None) -> int:
        """Prefill every companion's (and the Director's) prompt prefix into its KV slot, so the
        first round starts fast. Run it in the background while the user types; it stops as
        soon as ``cancel`` is set. Returns the tokens evaluated (per agent in ``last_warm``)."""
        total = 0
        self.last_warm = {}
        for persona in self.members:
            if cancel is not None and cancel.is_set():
                break
            if persona.name in self.muted:
                continue
            backend = self._backend(persona)
            if not hasattr(backend, "prefill"):
                continue
            req = self.speaker_request(persona, "", context="")  # the note depends on the next message
            req.messages = req.messages[:-1]
            self.last_warm[persona.name] = backend.prefill(req, cancel)
            total += self.last_warm[persona.name]
        if self.settings.policy == "director" and not (cancel is not None and cancel.is_set()):
            policy = self.policy()
            backend = policy.backend  # type: ignore[attr-defined]
            if hasattr(backend, "prefill"):
                active = [p for p in self.members if p.name not in self.muted] or self.members
                state = RoundState(members=active, user_name=self.settings.user_name, user_text="")
                # everything said so far, and the opening of the user's next message (its reply
                # counts and "User:"), so the round's first decision reads only the user's words
                msgs = policy.messages(state, self._director_transcript(backend, opening=True))  # type: ignore[attr-defined]
                self.last_warm["__director__"] = backend.prefill(
                    GenRequest(slot="__director__", messages=msgs, open_last=True), cancel)
                total += self.last_warm["__director__"]
        return total

    # -- a round ----------------------------------------------------------------------------------
    def send(self, text: str, cancel: threading.Event | None = None) -> Iterator[Event]:
        """Run one round for the user's message, yielding events. Never raises MascotError
        mid-round: failures become an ``error`` event; the user's message is kept."""
        text = sanitize_user_text(text)
        cancel = cancel or threading.Event()
        t_round = time.perf_counter()
        self.round += 1
        uid = self._commit("user", self.settings.user_name, text)
        self.transcript.append(TranscriptItem("user", self.settings.user_name, text, uid))
        yield Event("round_start", {"round": self.round, "conversation_id": self.conversation_id,
                                    "message_id": uid, "text": text})
        spoken: list[str] = []
        try:
            yield from self._round(text, cancel, spoken)
        except MascotError as e:
            yield Event("error", {"message": str(e)})
        except Exception as e:  # a bug or a llama.cpp failure: one line for the user, details logged
            log.exception("round failed")
            yield Event("error", {"message": f"The round failed unexpectedly ({type(e).__name__}: "
                                             f"{str(e)[:160]}); your message is saved, try again."})
        yield Event("round_end", {"round": self.round, "speakers": list(spoken),
                                  "cancelled": cancel.is_set(),
                                  "seconds": round(time.perf_counter() - t_round, 3)})

    def _round(self, text: str, cancel: threading.Event, spoken: list[str]) -> Iterator[Event]:
        from . import safety
        # the user's recent messages, this one last: weak signals over several add up
        verdict = safety.assess_conversation([t.text for t in self.transcript if t.role == "user"])
        safety_directive = ""
        if verdict.urgent:  # urgent or emergency: a reviewed message instead of the role-play
            yield from self._safety_round(verdict, spoken)
            return
        if not verdict.risk:  # a crisis message becomes a fact only if the user pins it
            yield from self._remember_said(text)
        if verdict.risk:  # concern: show resources, and companions check in seriously
            yield Event("safety", {"category": verdict.category, "level": verdict.level,
                                   "evidence": verdict.evidence, "source": verdict.source,
                                   "resources": safety.resources_for(verdict, self.settings.region),
                                   "disclosure": safety.DISCLOSURE,
                                   "screened_languages": list(safety.SCREENED_LANGUAGES)})
            safety_directive = (f"Take this seriously: gently check in on how {self.settings.user_name} "
                                "is really doing, no jokes, and encourage talking to someone they trust")
        active = [p for p in self.members if p.name not in self.muted]
        if not active:
            yield Event("notice", {"text": "Every companion is muted; unmute one to get replies."})
            return
        probe = self._backend(active[0])
        if probe.count_tokens(text) > probe.n_ctx // 4:
            yield Event("notice", {"text": "Your message is longer than the companions can read at "
                                           "once; they will see its beginning and end."})
        last = next((t.speaker for t in reversed(self.transcript[:-1]) if t.role == "companion"), None)
        state = RoundState(members=active, user_name=self.settings.user_name, user_text=text,
                           max_speakers=self.settings.max_speakers,
                           min_speakers=self.settings.effective_min_speakers(),
                           addressed=find_addressed(text, [p.name for p in active]),
                           spoken=spoken, last_speaker=last,
                           prior_replies=Counter(t.speaker for t in self.transcript if t.role == "companion"))
        policy = self.policy()
        elsewhere = self._director_elsewhere
        if elsewhere and self._director_noticed != self._policy_key:  # once per Director model
            self._director_noticed = self._policy_key
            yield Event("notice", {"text": f"The Director model {elsewhere[0]} was trained on the "
                                           f"'{elsewhere[1]}' group, not '{self.group.name}'; its "
                                           "choices may fit this group less well."})
        while not cancel.is_set():
            t_dir = time.perf_counter()
            dir_backend = getattr(policy, "backend", None)
            transcript = self._director_transcript(dir_backend) if dir_backend else []
            decision = policy.next(state, transcript)
            decision.seconds = time.perf_counter() - t_dir  # all the Director's work, prompt included
            if cancel.is_set():
                break
            if safety_directive and decision.speaker is not None:
                decision.directive = safety_directive
            yield Event("director", {"speaker": decision.speaker, "directive": decision.directive,
                                     "source": decision.source, "valid": decision.valid,
                                     "seconds": round(decision.seconds, 3)})
            if decision.speaker is None:
                break
            persona = self.member(decision.speaker)
            posted = False
            # a safety directive stays on a copy's retry; any other becomes a free turn there
            for event in self._speak(persona, decision, cancel, free_retry=not safety_directive):
                posted = posted or event.type == "message"
                yield event
            spoken.append(persona.name)
            if not posted:  # nothing (new) to add: another companion may still answer
                state.silent.append(persona.name)

    def recent_replies(self, upto: int | None = None) -> list[str]:
        """The companion turns among the last ``RECENT_TURNS`` transcript items before ``upto``
        (default: all), ``copy_key``-ed: what a new reply must not repeat."""
        items = self.transcript[:upto] if upto is not None else self.transcript
        return [copy_key(t.text, self.names) for t in items[-RECENT_TURNS:] if t.role == "companion"]

    def _generate_reply(self, persona: Persona, req: GenRequest, cancel: threading.Event,
                        message_id: int | None = None,
                        recent: list[str] | None = None,
                        free_retry: bool = False) -> Iterator[Event | tuple[str, bool, Any]]:
        """Stream one reply (cleaned as it streams); the last item is (text, confused, stats).
        A reply that comes out empty after cleanup, or that repeats one of ``recent`` (see
        ``copies``; held back while it may, so none of it is shown), is generated once more
        with another seed; a second copy is dropped (empty text). With ``free_retry`` a copy's
        retry is a free turn (``retry_request``); ``last_free_retry`` then says the kept reply
        was written without the directive."""
        backend = self._backend(persona)
        others = [n for n in self.names if n != persona.name]
        recent = recent or []
        text, confused, gen = "", False, None
        t0 = time.perf_counter()
        first_token = 0.0
        prefilled = 0
        self.last_copies = 0
        self.last_free_retry = False
        for _attempt in range(2):
            gen = backend.generate(req, cancel)
            raw, shown, copied = "", "", False
            t_first = t_last = 0.0
            for piece in gen:
                t_last = time.perf_counter()
                t_first = t_first or t_last
                raw += piece
                if PARAGRAPH_END.search(raw):  # one message is one paragraph: stop generating
                    raw = raw[: PARAGRAPH_END.search(raw).start()]
                    break
                visible, _ = clean_reply(raw, persona.name, others, self.settings.user_name)
                if recent and not shown and may_become_copy(visible, recent, self.names):
                    if copies(visible, recent, self.names):
                        copied = True  # a copy: stop here, nothing of it was shown
                        break
                    continue
                safe = stream_safe(visible)  # nothing that may still be cut is shown
                if safe.startswith(shown) and len(safe) > len(shown):
                    first_token = first_token or time.perf_counter() - t0
                    yield Event("token", {"speaker": persona.name, "text": safe[len(shown):],
                                          "message_id": message_id})
                    shown = safe
            if hasattr(gen, "close"):
                gen.close()
            prefilled += gen.stats.prefilled_tokens
            text, confused = ("", False) if copied else self.finish_reply(raw, persona, gen.stats.stopped)
            if not shown and text and copies(text, recent, self.names):  # short, and whole: "I'm here."
                text, copied = "", True
            self.last_copies += copied
            if text.startswith(shown) and len(text) > len(shown):
                yield Event("token", {"speaker": persona.name, "text": text[len(shown):],
                                      "message_id": message_id})
            if text or cancel.is_set():
                break
            # empty after cleanup, or a copy: one retry with another seed (a copy's as a free turn)
            free = free_retry and copied
            retry_request(req, self._turn_note(persona, "") if free else None)
            self.last_free_retry = free
        gen.stats.prefilled_tokens = prefilled
        if gen.stats.completion_tokens > 1 and t_last > t_first:  # tokens/s as the app received them
            gen.stats.decode_tps = (gen.stats.completion_tokens - 1) / (t_last - t_first)
        gen.stats.ttft = first_token or time.perf_counter() - t0  # what the user waited
        yield (text, confused, gen.stats)

    def finish_reply(self, raw: str, persona: Persona, stopped: str) -> tuple[str, bool]:
        """A generated text as the chat keeps it: one paragraph, cleaned of lines written as
        others, and cut back to its last full sentence when the token limit stopped it.
        Returns (text, role_confused). Also used for replies generated in batches."""
        m = PARAGRAPH_END.search(raw)
        if m:
            raw = raw[: m.start()]
        others = [n for n in self.names if n != persona.name]
        text, confused = clean_reply(raw, persona.name, others, self.settings.user_name)
        if stopped == "length" and text:
            text = trim_to_sentence(text)
        return text, confused

    def regenerate(self, message_id: int, cancel: threading.Event | None = None) -> Iterator[Event]:
        """Generate a new alternative for a companion's reply (same speaker, same directive,
        same earlier transcript). The old text stays available as an alternative."""
        cancel = cancel or threading.Event()
        idx = next((i for i, t in enumerate(self.transcript) if t.id == message_id), None)
        if idx is None or self.transcript[idx].role != "companion":
            yield Event("error", {"message": "Only a companion's reply can be regenerated."})
            return
        item = self.transcript[idx]
        persona = self.member(item.speaker)
        directive = self.store.message(message_id).get("directive", "") if self.store else ""
        req = self.speaker_request(persona, directive, upto=idx, context=item.context)
        req.seed = (req.seed or 0) + 7919 * (len(self.store.variants(message_id)) if self.store else 1)
        req.temperature = max(req.temperature, 0.7)
        t0 = time.perf_counter()
        result: Any = None
        try:
            # a new alternative repeats neither the alternatives so far nor the turns before it
            variants = [v["text"] for v in self.store.variants(message_id)] if self.store else []
            recent = self.recent_replies(idx) + [copy_key(t, self.names) for t in variants + [item.text]]
            for out in self._generate_reply(persona, req, cancel, message_id, recent=recent):
                if isinstance(out, Event):
                    yield out
                else:
                    result = out
        except MascotError as e:
            yield Event("error", {"message": str(e)})
            return
        text, confused, stats = result
        if not text or cancel.is_set():
            why = ("Regeneration stopped" if cancel.is_set() else
                   f"{persona.name} had nothing new to add" if self.last_copies else "The new reply came out empty")
            yield Event("notice", {"text": f"{why}; the reply is unchanged."})
            return
        index = self.store.add_variant(message_id, text, directive,
                                       completion_tokens=stats.completion_tokens,
                                       latency_ms=round((time.perf_counter() - t0) * 1000, 1)) if self.store else 0
        item.text = text
        yield Event("message", {"id": message_id, "speaker": persona.name, "text": text,
                                "directive": directive, "color": persona.color, "status": "done",
                                "regenerated": True, "variant": index, "role_confusion": confused})

    def select_variant(self, message_id: int, index: int) -> str:
        text = self.store.select_variant(message_id, index)
        for t in self.transcript:
            if t.id == message_id:
                t.text = text
        return text

    def edit_message(self, message_id: int, text: str) -> None:
        text = sanitize_user_text(text)
        if self.store is not None:
            self.store.edit_message(message_id, text)
        for t in self.transcript:
            if t.id == message_id:
                t.text = text

    def delete_message(self, message_id: int) -> None:
        if self.store is not None:
            self.store.delete_message(message_id)
        self.transcript = [t for t in self.transcript if t.id != message_id]

    def _speak(self, persona: Persona, decision: Decision, cancel: threading.Event,
               free_retry: bool = True) -> Iterator[Event]:
        req = self.speaker_request(persona, decision.directive)
        context = note_of(persona.name, req.messages)
        t0 = time.perf_counter()
        result: Any = None
        for out in self._generate_reply(persona, req, cancel, recent=self.recent_replies(),
                                        free_retry=free_retry):
            if isinstance(out, Event):
                yield out
            else:
                result = out
        text, confused, stats = result
        if not text:
            if not cancel.is_set():
                nothing = "nothing new to add" if self.last_copies else "nothing to add"
                yield Event("notice", {"text": f"{persona.name} had {nothing}."})
            return
        status = "cancelled" if cancel.is_set() else "done"
        # the directive the reply was written under: none when it came from a copy's free retry
        directive = "" if self.last_free_retry else decision.directive
        meta = {"role_confusion": confused, "director_valid": decision.valid, "source": decision.source}
        if context:
            meta["context"] = context
        if directive != decision.directive:
            meta["directive_dropped"] = decision.directive
        mid = self._commit("companion", persona.name, text, directive=directive,
                           model=stats.model, prompt_tokens=stats.prompt_tokens,
                           prefilled_tokens=stats.prefilled_tokens,
                           completion_tokens=stats.completion_tokens,
                           latency_ms=round((time.perf_counter() - t0) * 1000, 1),
                           ttft_ms=round(stats.ttft * 1000, 1), status=status, meta=meta)
        self.transcript.append(TranscriptItem("companion", persona.name, text, mid, directive, context))
        yield Event("message", {"id": mid, "speaker": persona.name, "text": text,
                                "directive": directive, "color": persona.color,
                                "status": status, "role_confusion": confused, "context": context,
                                "prompt_tokens": stats.prompt_tokens,
                                "prefilled_tokens": stats.prefilled_tokens,
                                "completion_tokens": stats.completion_tokens,
                                "ttft_ms": round(stats.ttft * 1000, 1),
                                "decode_tps": round(stats.decode_tps, 2),
                                "latency_ms": round((time.perf_counter() - t0) * 1000, 1)})

    def _safety_round(self, verdict: Any, spoken: list[str]) -> Iterator[Event]:
        """An urgent or emergency crisis signal: resources and a supportive reply out of
        role-play; for an emergency the event carries ``emergency`` (the number to call now).

        The reply is written by ``safety.crisis_message`` (reviewed text), not generated: a small
        local model cannot be trusted to respond safely to a person at risk. It is posted under
        the first active companion's name and says plainly that the companions are AI."""
        from . import safety
        resources = safety.resources_for(verdict, self.settings.region)
        data = {"category": verdict.category, "level": verdict.level,
                "evidence": verdict.evidence, "source": verdict.source, "resources": resources,
                "disclosure": safety.DISCLOSURE,
                "screened_languages": list(safety.SCREENED_LANGUAGES)}
        if verdict.level == "emergency":  # behaviour in progress: the local number comes first
            data["emergency"] = safety.emergency_call(resources)
        yield Event("safety", data)
        lead = next((p for p in self.members if p.name not in self.muted), self.members[0])
        text = safety.crisis_message(verdict, resources, companion_name=lead.name)
        mid = self._commit("safety", lead.name, text, directive="safety response (no role-play)",
                           meta={"category": verdict.category, "level": verdict.level})
        self.transcript.append(TranscriptItem("safety", lead.name, text, mid))
        yield Event("message", {"id": mid, "speaker": lead.name, "text": text, "color": lead.color,
                                "directive": "safety response (no role-play)", "status": "done",
                                "safety": True})
        spoken.append(lead.name)

    def _commit(self, role: str, speaker: str, text: str, **fields: Any) -> int | None:
        if self.store is None or self.conversation_id is None:
            return None
        return self.store.add_message(self.conversation_id, round=self.round, role=role,
                                      speaker=speaker, text=text, **fields)


def director_lane_ctx(n_ctx: int) -> int:
    """Context of the Director's own lane next to companions with ``n_ctx``: a quarter of it,
    at least 1,024 tokens (see ``GroupChat._director_lane``)."""
    return max(1024, n_ctx // 4)


def _model_file(backend: Backend) -> str:
    """The GGUF a backend runs: a LoRA adapter's file, else its model's (``""`` if unknown)."""
    return str(getattr(backend, "adapter", "") or getattr(getattr(backend, "runtime", backend), "path", "") or "")


def default_backend_factory(store: Any = None, n_ctx: int = 4096,
                            n_threads: int | None = None) -> Callable[[str | None], Backend]:
    """Resolve a model name/path (None = bundled) to a shared llama.cpp runtime. A registered
    LoRA adapter resolves to its base model's runtime with the adapter applied per request."""
    from .models import ModelRegistry, bundled_model_path
    from .runtime import RuntimePool
    pool = RuntimePool(n_ctx=n_ctx, n_threads=n_threads)
    registry = ModelRegistry(store) if store is not None else None
    adapters: dict[tuple[str, str], Backend] = {}

    def factory(model: str | None) -> Backend:
        if not model:
            return pool.get(bundled_model_path())
        if registry is not None:
            info, adapter = registry.resolve(model)
            if adapter is not None:
                runtime = pool.get(info.path)
                key = (runtime.path, adapter.path)
                if key not in adapters:
                    from .adapters import AdapterBackend
                    adapters[key] = AdapterBackend(runtime, adapter.path, name=adapter.name)
                return adapters[key]
            return pool.get(info.path)
        return pool.get(model)

    factory.pool = pool  # type: ignore[attr-defined]
    return factory
