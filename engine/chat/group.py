"""One group conversation and its rounds, for every front end (app, CLI, evaluation, benchmark).

A round: user text -> safety screen -> Director {speaker, directive} -> the companion's prompt
(``engine.reply.prompts``) -> its reply streamed (``engine.reply.turn``) -> message committed ->
Director again, until the round ends or the speaker cap is reached. ``GroupChat.send`` yields
the events of ``engine.chat.events``. The context policy (each companion reads the recent
transcript within ``ChatSettings.history_tokens``) is in docs/architecture.md.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable, Iterator

from engine import safety
from engine.chat.backends import default_backend_factory
from engine.chat.companion_memory import CompanionMemory
from engine.chat.events import (
    DirectorChoice,
    ErrorEvent,
    Event,
    MessageEvent,
    Notice,
    RoundEnd,
    RoundStart,
    SafetyAlert,
    Token,
)
from engine.chat.settings import ChatSettings
from engine.director.policies import Decision, Policy, RoundState, make_policy
from engine.director.transcript import director_transcript
from engine.errors import InputError, MascotError
from engine.llm.backend import Backend, GenRequest, director_lane_ctx
from engine.models.registry import director_options, director_trained_for
from engine.personas import Persona, PersonaSet, persona_from_dict
from engine.reply.copyguard import DEFAULT_RULE, copy_key
from engine.reply.prompts import (
    TranscriptItem,
    companion_messages,
    companion_request,
    note_of,
    transcript_messages,
)
from engine.reply.turn import ReplyResult, Speaker, stream_reply
from engine.user_text import sanitize_user_text

log = logging.getLogger("mascot.chat")
DIRECTOR = "__director__"  # the Director's slot and window key
TOKEN_CACHE_LIMIT = 20_000


def companion_prompt(
    persona: Persona,
    items: list[TranscriptItem],
    directive: str,
    *,
    names: list[str],
    settings: ChatSettings,
    memory: CompanionMemory,
    count: Callable[[str], int],
    n_ctx: int,
    start: int = 0,
    context: str | None = None,
) -> tuple[GenRequest, int]:
    """A companion's request: system prompt (with its lorebooks' constant entries), the
    transcript ``items`` from ``start`` (moved by the context policy), its note (``context``;
    None: what its lorebooks, facts and recall give now, less what it already reads in its
    window; "": none) and the turn note last. Returns the request and the new start. The app
    and training build prompts here."""
    s = persona.sampling_settings()
    max_tokens = int(settings.max_tokens or s["max_tokens"])
    user = settings.user_name
    system = memory.system_prompt(persona, names, count)
    body = transcript_messages(items, persona.name, names, user, count, n_ctx)
    shape = dict(
        count=count, n_ctx=n_ctx, reserve=max_tokens, history_tokens=settings.history_tokens
    )
    lines: list[str] = []
    if context is None and settings.memory:  # the window first: recall reads what is before it
        start = companion_messages(
            persona.name, system, body, directive, (*names, user), start=start, **shape
        )[1]
        lines = memory.note_lines(persona, items, start, count)
    messages, start = companion_messages(
        persona.name,
        system,
        body,
        directive,
        (*names, user),
        start=start,
        lines=lines,
        context=context,
        **shape,
    )
    req = companion_request(
        persona.name,
        messages,
        names,
        user,
        s,
        max_tokens=max_tokens,
        temperature=settings.temperature,
        seed=settings.seed,
    )
    return req, start


class GroupChat:
    """A conversation with a persona set. Not thread-safe: run one round at a time."""

    def __init__(
        self,
        group: PersonaSet,
        *,
        settings: ChatSettings | None = None,
        store: Any = None,
        backend_for: Callable[[str | None], Backend] | None = None,
        conversation_id: int | None = None,
        title: str | None = None,
    ):
        self.group = group
        self.settings = settings or ChatSettings()
        self.settings.validate()
        self.store = store
        self._backend_for = backend_for or default_backend_factory(store)
        self.members: list[Persona] = list(group.members)
        self.muted: set[str] = set()
        self.transcript: list[TranscriptItem] = []
        self.memory = CompanionMemory(group, store, self.settings)
        self._starts: dict[str, int] = {}  # each reader's window start (the context policy)
        self._ntok: dict[tuple[int, str], int] = {}  # token counts of transcript texts, per backend
        self.last_warm: dict[str, int] = {}  # tokens each agent read in the last ``warm``
        self._policy: Policy | None = None
        self._policy_key: tuple[str, str | None] | None = None
        self._director_elsewhere: tuple[str, str] | None = (
            None  # (name, group) of a Director trained on another group
        )
        self._director_noticed: tuple[str, str | None] | None = None
        self.round = 0
        self.conversation_id = conversation_id
        if store is not None:
            if conversation_id is None:
                self.conversation_id = store.create_conversation(
                    title=title or f"{group.title}",
                    group_name=group.name,
                    policy=self.settings.policy,
                    max_speakers=self.settings.max_speakers,
                    members=[p.to_dict() for p in self.members],
                )
            else:
                self._load(conversation_id)
        self.memory.conversation_id = self.conversation_id

    # -- state --------------------------------------------------------------------------------
    def _load(self, cid: int) -> None:
        conv = self.store.conversation(cid)
        rows = self.store.members(cid)
        if rows:
            self.members = [persona_from_dict(r["persona"]) for r in rows]
            self.muted = {r["name"] for r in rows if r["muted"]}
        for m in self.store.messages(cid):
            self.transcript.append(
                TranscriptItem(
                    m["role"],
                    m["speaker"],
                    m["text"],
                    m["id"],
                    m.get("directive") or "",
                    (m.get("meta") or {}).get("context") or "",
                )
            )
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

    def speaker(self, persona: Persona) -> Speaker:
        return Speaker(
            persona.name,
            self.names,
            self.settings.user_name,
            framing=persona.instructions(self.names, self.settings.user_name),
        )

    # -- memory (lorebooks, facts, recall: engine.chat.companion_memory) -------------------------
    @property
    def extra_facts(self) -> list[dict[str, Any]]:
        return self.memory.extra_facts

    @extra_facts.setter
    def extra_facts(self, facts: list[dict[str, Any]]) -> None:
        self.memory.extra_facts = facts

    def facts(self) -> list[dict[str, Any]]:
        return self.memory.facts()

    def remember(
        self, text: str, *, message_id: int | None = None, pinned: bool | None = None
    ) -> int:
        return self.memory.remember(text, message_id=message_id, pinned=pinned)

    def set_group_lorebook(self, book: dict[str, Any] | None) -> None:
        self.memory.set_group_lorebook(book)

    # -- models and the Director ------------------------------------------------------------------
    def policy(self) -> Policy:
        """The turn-taking policy of ``settings.policy``, built again when the policy or the
        Director's model changes. A Director exported by ``mascot-train director`` is decoded
        as it was trained (its manifest's directive mode and participation prior)."""
        key = (self.settings.policy, self.settings.director_model or self.settings.model)
        if self._policy is None or self._policy_key != key:
            backend = self._backend_for(key[1]) if self.settings.policy == "director" else None
            path = backend.model_file if backend is not None else ""
            options = director_options(path)
            trained = director_trained_for(path)
            self._director_elsewhere = (
                trained if trained and trained[1] != self.group.name else None
            )
            backend = self._director_lane(backend)
            self._policy = make_policy(self.settings.policy, backend, self.settings.seed, **options)
            self._policy_key = key
        return self._policy

    def _director_lane(self, backend: Backend | None) -> Backend | None:
        """A Director on the same weights as a companion gets its own lane (a second, smaller
        context on the same weights): its KV stays live between decisions instead of being
        swapped around every companion turn (docs/performance.md: the Director's lane)."""
        if backend is None:
            return None
        if any(self._backend(p).weights is backend.weights for p in self.members):
            return backend.lane("director", director_lane_ctx(backend.n_ctx))
        return backend

    def _backend(self, persona: Persona) -> Backend:
        return self._backend_for(persona.model or self.settings.model)

    # -- prompts --------------------------------------------------------------------------------
    def _counter(self, backend: Backend) -> Callable[[str], int]:
        """``backend.count_tokens``, remembered: every decision and turn prices the transcript."""

        def count(text: str) -> int:
            key = (id(backend), text)
            n = self._ntok.get(key)
            if n is None:
                if len(self._ntok) > TOKEN_CACHE_LIMIT:
                    self._ntok.clear()
                n = self._ntok[key] = backend.count_tokens(text)
            return n

        return count

    def speaker_request(
        self, persona: Persona, directive: str, upto: int | None = None, context: str | None = None
    ) -> GenRequest:
        """The companion's request (``companion_prompt``) over the transcript before ``upto``."""
        backend = self._backend(persona)
        key = persona.name if upto is None else f"{persona.name}@{upto}"
        req, self._starts[key] = companion_prompt(
            persona,
            self.transcript[:upto],
            directive,
            names=self.names,
            settings=self.settings,
            memory=self.memory,
            count=self._counter(backend),
            n_ctx=backend.n_ctx,
            start=self._starts.get(key, 0),
            context=context,
        )
        return req

    def _director_rows(self, backend: Backend, opening: bool = False) -> list[dict[str, str]]:
        rows, self._starts[DIRECTOR] = director_transcript(
            self.transcript,
            self.names,
            self.settings.user_name,
            self._counter(backend),
            backend.n_ctx,
            self._starts.get(DIRECTOR, 0),
            opening,
        )
        return rows

    def recent_replies(self, upto: int | None = None) -> list[str]:
        """What a new reply must not repeat (the copy guard's recent companion turns before ``upto``)."""
        return DEFAULT_RULE.recent([(t.role, t.text) for t in self.transcript[:upto]], self.names)

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
            req = self.speaker_request(
                persona, "", context=""
            )  # the note depends on the next message
            req.messages = req.messages[:-1]
            self.last_warm[persona.name] = self._backend(persona).prefill(req, cancel)
            total += self.last_warm[persona.name]
        if self.settings.policy == "director" and not (cancel is not None and cancel.is_set()):
            policy = self.policy()
            backend = policy.backend
            active = [p for p in self.members if p.name not in self.muted] or self.members
            state = RoundState(members=active, user_name=self.settings.user_name, user_text="")
            # everything said so far, and the opening of the user's next message (its reply
            # counts and "User:"), so the round's first decision reads only the user's words
            msgs = policy.messages(state, self._director_rows(backend, opening=True))  # type: ignore[attr-defined]
            self.last_warm[DIRECTOR] = backend.prefill(
                GenRequest(slot=DIRECTOR, messages=msgs, open_last=True), cancel
            )
            total += self.last_warm[DIRECTOR]
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
        yield RoundStart(
            round=self.round, conversation_id=self.conversation_id, message_id=uid, text=text
        )
        spoken: list[str] = []
        try:
            yield from self._round(text, cancel, spoken)
        except MascotError as e:
            yield ErrorEvent(str(e))
        except (
            Exception
        ) as e:  # a bug or a llama.cpp failure: one line for the user, details logged
            log.exception("round failed")
            yield ErrorEvent(
                f"The round failed unexpectedly ({type(e).__name__}: {str(e)[:160]}); "
                "your message is saved, try again."
            )
        yield RoundEnd(
            round=self.round,
            speakers=list(spoken),
            cancelled=cancel.is_set(),
            seconds=round(time.perf_counter() - t_round, 3),
        )

    def _round(self, text: str, cancel: threading.Event, spoken: list[str]) -> Iterator[Event]:
        # the user's recent messages, this one last: weak signals over several add up
        verdict = safety.assess_conversation([t.text for t in self.transcript if t.role == "user"])
        safety_directive = ""
        if verdict.urgent:  # urgent or emergency: a reviewed message instead of the role-play
            yield from self._safety_round(verdict, spoken)
            return
        if not verdict.risk:  # a crisis message becomes a fact only if the user pins it
            yield from self.memory.remember_said(text, self.transcript[-1].id)
        if verdict.risk:  # concern: show resources, and companions check in seriously
            yield self._safety_alert(verdict)
            safety_directive = (
                f"Take this seriously: gently check in on how {self.settings.user_name} "
                "is really doing, no jokes, and encourage talking to someone they trust"
            )
        active = [p for p in self.members if p.name not in self.muted]
        if not active:
            yield Notice("Every companion is muted; unmute one to get replies.")
            return
        probe = self._backend(active[0])
        if probe.count_tokens(text) > probe.n_ctx // 4:
            yield Notice(
                "Your message is longer than the companions can read at once; they will see "
                "its beginning and end."
            )
        state = RoundState.begin(
            active,
            self.settings.user_name,
            text,
            [(t.role, t.speaker) for t in self.transcript[:-1]],
            max_speakers=self.settings.max_speakers,
            min_speakers=self.settings.effective_min_speakers(),
            spoken=spoken,
        )
        policy = self.policy()
        elsewhere = self._director_elsewhere
        if elsewhere and self._director_noticed != self._policy_key:  # once per Director model
            self._director_noticed = self._policy_key
            yield Notice(
                f"The Director model {elsewhere[0]} was trained on the '{elsewhere[1]}' group, "
                f"not '{self.group.name}'; its choices may fit this group less well."
            )
        while not cancel.is_set():
            t_dir = time.perf_counter()
            rows = self._director_rows(policy.backend) if policy.backend is not None else []
            decision = policy.next(state, rows)
            decision.seconds = (
                time.perf_counter() - t_dir
            )  # all the Director's work, prompt included
            if cancel.is_set():
                break
            if safety_directive and decision.speaker is not None:
                decision.directive = safety_directive
            yield DirectorChoice(
                speaker=decision.speaker,
                directive=decision.directive,
                source=decision.source,
                valid=decision.valid,
                seconds=round(decision.seconds, 3),
            )
            if decision.speaker is None:
                break
            persona = self.member(decision.speaker)
            posted = False
            # a safety directive stays on a copy's retry; any other becomes a free turn there
            for event in self._speak(persona, decision, cancel, free_retry=not safety_directive):
                posted = posted or isinstance(event, MessageEvent)
                yield event
            spoken.append(persona.name)
            if not posted:  # nothing (new) to add: another companion may still answer
                state.silent.append(persona.name)

    def _reply(
        self,
        persona: Persona,
        req: GenRequest,
        cancel: threading.Event,
        message_id: int | None,
        recent: list[str],
        free_retry: bool,
    ) -> Iterator[Token | ReplyResult]:
        """``engine.reply.turn.stream_reply`` with its text pieces as ``Token`` events."""
        for out in stream_reply(
            self._backend(persona),
            req,
            self.speaker(persona),
            recent=recent,
            free_retry=free_retry,
            cancel=cancel,
        ):
            yield (
                out
                if isinstance(out, ReplyResult)
                else Token(speaker=persona.name, text=out, message_id=message_id)
            )

    def _speak(
        self, persona: Persona, decision: Decision, cancel: threading.Event, free_retry: bool = True
    ) -> Iterator[Event]:
        req = self.speaker_request(persona, decision.directive)
        context = note_of(persona.name, req.messages)
        t0 = time.perf_counter()
        result = ReplyResult("")
        for out in self._reply(persona, req, cancel, None, self.recent_replies(), free_retry):
            if isinstance(out, ReplyResult):
                result = out
            else:
                yield out
        if not result.text:
            if not cancel.is_set():
                yield Notice(
                    f"{persona.name} had {'nothing new to add' if result.copies else 'nothing to add'}."
                )
            return
        stats = result.stats
        status = "cancelled" if cancel.is_set() else "done"
        # the directive the reply was written under: none when it came from a copy's free retry
        directive = "" if result.free_retry else decision.directive
        meta = {
            "role_confusion": result.confused,
            "director_valid": decision.valid,
            "source": decision.source,
        }
        if context:
            meta["context"] = context
        if stats.adapter:
            meta["adapter"] = stats.adapter
        if directive != decision.directive:
            meta["directive_dropped"] = decision.directive
        latency_ms = round((time.perf_counter() - t0) * 1000, 1)
        ttft_ms = round(stats.ttft * 1000, 1)
        mid = self._commit(
            "companion",
            persona.name,
            result.text,
            directive=directive,
            model=stats.model,
            prompt_tokens=stats.prompt_tokens,
            prefilled_tokens=stats.prefilled_tokens,
            completion_tokens=stats.completion_tokens,
            latency_ms=latency_ms,
            ttft_ms=ttft_ms,
            status=status,
            meta=meta,
        )
        self.transcript.append(
            TranscriptItem("companion", persona.name, result.text, mid, directive, context)
        )
        yield MessageEvent(
            id=mid,
            speaker=persona.name,
            text=result.text,
            directive=directive,
            color=persona.color,
            status=status,
            role_confusion=result.confused,
            context=context,
            prompt_tokens=stats.prompt_tokens,
            prefilled_tokens=stats.prefilled_tokens,
            completion_tokens=stats.completion_tokens,
            ttft_ms=ttft_ms,
            decode_tps=round(stats.decode_tps, 2),
            latency_ms=round((time.perf_counter() - t0) * 1000, 1),
            model=stats.model or None,
            adapter=stats.adapter or None,
        )

    def _safety_alert(self, verdict: Any) -> SafetyAlert:
        lang = self._user_language()
        resources = safety.resources_for(verdict, self.settings.region)
        return SafetyAlert(
            category=verdict.category,
            level=verdict.level,
            evidence=verdict.evidence,
            source=verdict.source,
            resources=resources,
            disclosure=safety.DISCLOSURE_BY_LANG.get(lang, safety.DISCLOSURE),
            screened_languages=list(safety.SCREENED_LANGUAGES),
            # behaviour in progress: the local number comes first
            emergency=safety.emergency_call(resources, lang)
            if verdict.level == "emergency"
            else None,
            lang=lang,
        )

    def _user_language(self) -> str:
        """The language of the user's last message (en, de or fr), for the crisis texts."""
        said = next((t.text for t in reversed(self.transcript) if t.role == "user"), "")
        return safety.message_language(said)

    def _safety_round(self, verdict: Any, spoken: list[str]) -> Iterator[Event]:
        """An urgent or emergency signal: resources and a reviewed message out of role-play
        (``safety.crisis_message``; a small local model cannot be trusted to respond safely to a
        person at risk), posted under the first active companion's name, saying plainly that
        the companions are AI."""
        alert = self._safety_alert(verdict)
        yield alert
        lead = next((p for p in self.members if p.name not in self.muted), self.members[0])
        text = safety.crisis_message(
            verdict, alert.resources, companion_name=lead.name, lang=alert.lang
        )
        directive = "safety response (no role-play)"
        mid = self._commit(
            "safety",
            lead.name,
            text,
            directive=directive,
            meta={"category": verdict.category, "level": verdict.level},
        )
        self.transcript.append(TranscriptItem("safety", lead.name, text, mid))
        yield MessageEvent(
            id=mid,
            speaker=lead.name,
            text=text,
            color=lead.color,
            directive=directive,
            status="done",
            safety=True,
        )
        spoken.append(lead.name)

    # -- editing ----------------------------------------------------------------------------------
    def regenerate(self, message_id: int, cancel: threading.Event | None = None) -> Iterator[Event]:
        """Generate a new alternative for a companion's reply (same speaker, same directive,
        same earlier transcript). The old text stays available as an alternative."""
        cancel = cancel or threading.Event()
        idx = next((i for i, t in enumerate(self.transcript) if t.id == message_id), None)
        if idx is None or self.transcript[idx].role != "companion":
            yield ErrorEvent("Only a companion's reply can be regenerated.")
            return
        item = self.transcript[idx]
        persona = self.member(item.speaker)
        directive = self.store.message(message_id).get("directive", "") if self.store else ""
        req = self.speaker_request(persona, directive, upto=idx, context=item.context)
        req.seed = (req.seed or 0) + 7919 * (
            len(self.store.variants(message_id)) if self.store else 1
        )
        req.temperature = max(req.temperature, 0.7)
        t0 = time.perf_counter()
        result = ReplyResult("")
        try:
            # a new alternative repeats neither the alternatives so far nor the turns before it
            variants = [v["text"] for v in self.store.variants(message_id)] if self.store else []
            recent = self.recent_replies(idx) + [
                copy_key(t, self.names) for t in variants + [item.text]
            ]
            for out in self._reply(persona, req, cancel, message_id, recent, free_retry=False):
                if isinstance(out, ReplyResult):
                    result = out
                else:
                    yield out
        except MascotError as e:
            yield ErrorEvent(str(e))
            return
        if not result.text or cancel.is_set():
            why = (
                "Regeneration stopped"
                if cancel.is_set()
                else f"{persona.name} had nothing new to add"
                if result.copies
                else "The new reply came out empty"
            )
            yield Notice(f"{why}; the reply is unchanged.")
            return
        stats = result.stats
        index = (
            self.store.add_variant(
                message_id,
                result.text,
                directive,
                completion_tokens=stats.completion_tokens,
                latency_ms=round((time.perf_counter() - t0) * 1000, 1),
            )
            if self.store
            else 0
        )
        item.text = result.text
        yield MessageEvent(
            id=message_id,
            speaker=persona.name,
            text=result.text,
            directive=directive,
            color=persona.color,
            status="done",
            regenerated=True,
            variant=index,
            role_confusion=result.confused,
            model=stats.model or None,
            adapter=stats.adapter or None,
        )

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

    def _commit(self, role: str, speaker: str, text: str, **fields: Any) -> int | None:
        if self.store is None or self.conversation_id is None:
            return None
        return self.store.add_message(
            self.conversation_id, round=self.round, role=role, speaker=speaker, text=text, **fields
        )
