"""What the companions of one conversation have in mind: lorebook entries, remembered facts and
recalled earlier messages (docs/memory.md)."""

from __future__ import annotations

from typing import Any, Callable, Iterator

from engine import safety
from engine.chat.events import Remembered
from engine.errors import InputError
from engine.lorebook import parse_book, persona_book
from engine.memory import (
    MAX_FACT_CHARS,
    check_fact,
    extract_facts,
    fact_line,
    relevant_facts,
    words,
)
from engine.personas import Persona, PersonaSet
from engine.recall import Candidate, recall_lines
from engine.reply.prompts import TranscriptItem, first_item

Count = Callable[[str], int]


class CompanionMemory:
    """Lorebooks (the persona's card and the group's), the group's facts in ``store`` and recall
    of the user's older messages, for one conversation (``conversation_id``)."""

    def __init__(self, group: PersonaSet, store: Any, settings: Any):
        self.group = group
        self.store = store
        self.settings = settings  # the chat's ChatSettings: ``memory`` on or off, ``user_name``
        self.conversation_id: int | None = None
        self.extra_facts: list[dict[str, Any]] = []  # facts given without a store (benchmarks)
        self._books: dict[tuple[str, int], list[Any]] = {}
        self._recall_cache: dict[str, tuple[str, set[str]]] = {}
        self._recall_safe: dict[str, bool] = {}

    @property
    def enabled(self) -> bool:
        return self.settings.memory

    @property
    def user_name(self) -> str:
        return self.settings.user_name

    # -- lorebooks ----------------------------------------------------------------------------
    def set_group_lorebook(self, book: dict[str, Any] | None) -> None:
        """Use ``book`` (V2 character_book form) as the group's lorebook from the next prompt on."""
        self.group.lorebook = book
        self._books.clear()

    def lorebooks(self, persona: Persona) -> list[Any]:
        """The persona's card lorebook and the group's, parsed once."""
        key = (persona.name, id(persona))
        if key not in self._books:
            books = [persona_book(persona)]
            if self.group.lorebook:
                books.append(parse_book(self.group.lorebook, self.group.name))
            self._books[key] = [b for b in books if b is not None]
        return self._books[key]

    def system_prompt(self, persona: Persona, names: list[str], count: Count) -> str:
        """The persona's stable prefix, with its lorebooks' constant entries (they never change,
        so they are read once), before or after the character as each entry's position says."""
        text = persona.system_prompt(names, self.user_name)
        if not self.enabled:
            return text
        before, after = [], []
        for book in self.lorebooks(persona):
            for e in book.constant(count, persona.name, self.user_name):
                (before if e.position == "before_char" else after).append(
                    e.text(persona.name, self.user_name)
                )
        return "\n".join([*before, text, *after])

    def note_lines(
        self, persona: Persona, items: list[TranscriptItem], window_start: int, count: Count
    ) -> list[str]:
        """What this companion should have in mind before its turn: the lorebook entries the
        recent ``items`` trigger, the pinned facts and those related to the user's last message,
        and the user's earlier messages before its window (``window_start``) that bear on it."""
        if not self.enabled:
            return []
        user = self.user_name
        recent = [t.text for t in items[-50:]]
        lines: list[str] = []
        for book in self.lorebooks(persona):
            lines += [
                e.text(persona.name, user)
                for e in book.triggered(recent, count, persona.name, user)
            ]
        said = [t.text for t in items if t.role == "user"][-1:]  # the user's last message
        facts = self.facts()
        fact_lines = relevant_facts(facts, said, count, user)
        noted = [f["text"] for f in facts if fact_line(f, user) in fact_lines]
        lines += fact_lines
        lines += self._recall_lines(
            items, first_item(items, persona.name, window_start), count, noted
        )
        return list(dict.fromkeys(lines))

    # -- recall -------------------------------------------------------------------------------
    def _recall_lines(
        self, items: list[TranscriptItem], start: int, count: Count, noted: list[str] = ()
    ) -> list[str]:
        """The user's earlier messages no longer in the window (before item ``start``, or in the
        group's past conversations) that bear on the user's last message (engine.recall); not a
        message that holds a fact already in the note (``noted``: facts are clauses of messages)."""
        last = next((t for t in reversed(items) if t.role == "user"), None)
        if last is None:
            return []
        pool = [
            (f"m{t.id}" if t.id is not None else f"t{i}", t.text)
            for i, t in enumerate(items[:start])
            if t.role == "user"
        ]
        if self.store is not None:
            pool += [
                (f"m{r['id']}", r["text"])
                for r in self.store.user_messages(self.group.name, self.conversation_id)
            ]
        known = [_plain(f) for f in noted]
        cands = [
            (Candidate(k, text), ws)
            for k, text in pool
            if (ws := self._recall_words(k, text))
            and not any(f and f in _plain(text) for f in known)
        ]
        return recall_lines(
            last.text, cands, self.user_name, count, allowed=self._recallable, store=self.store
        )

    def _recall_words(self, key: str, text: str) -> set[str]:
        """A message's content words for recall (cached by message)."""
        hit = self._recall_cache.get(key)
        if hit is None or hit[0] != text:
            hit = self._recall_cache[key] = (text, words(text))
        return hit[1]

    def _recallable(self, cand: Any) -> bool:
        """Whether a message may be recalled: never one the safety screen flags (asked only
        about the few best matches, for the screen's cost: docs/memory.md)."""
        ok = self._recall_safe.get(cand.text)
        if ok is None:
            ok = self._recall_safe[cand.text] = not safety.assess(cand.text).risk
        return ok

    # -- facts --------------------------------------------------------------------------------
    def facts(self) -> list[dict[str, Any]]:
        """The remembered facts of this group (the memory panel's list)."""
        if self.store is None:
            return list(self.extra_facts)
        return self.store.memories(self.group.name) + list(self.extra_facts)

    def remember(
        self, text: str, *, message_id: int | None = None, pinned: bool | None = None
    ) -> int:
        """Store a fact the user gave: typed (``text``) or a message they pinned (``message_id``;
        a pinned message is kept as a pinned fact). Returns its id."""
        if self.store is None:
            raise InputError("This chat is not saved (--no-save), so it cannot remember facts.")
        if message_id is not None:
            text = self.store.message(message_id)["text"]
            text = " ".join(text.split())[:MAX_FACT_CHARS]
        text = check_fact(text)
        source = "pinned" if message_id is not None else "typed"
        return self.store.add_memory(
            self.group.name,
            text,
            source=source,
            conversation_id=self.conversation_id,
            message_id=message_id,
            pinned=message_id is not None if pinned is None else pinned,
        )

    def remember_said(self, text: str, message_id: int | None) -> Iterator[Remembered]:
        """Facts the user just stated (``memory.extract_facts``), stored and announced."""
        if self.store is None or not self.enabled:
            return
        known = {f["text"].casefold() for f in self.store.memories(self.group.name)}
        for fact in extract_facts(text):
            if fact.casefold() in known:
                continue
            fid = self.store.add_memory(
                self.group.name,
                fact,
                source="auto",
                conversation_id=self.conversation_id,
                message_id=message_id,
            )
            yield Remembered(id=fid, text=fact, source="auto", message_id=message_id)


def _plain(text: str) -> str:
    """Lower case, single spaces, no end punctuation: to see a fact inside the message it came from."""
    return " ".join(text.lower().split()).strip(" .!?,;:")
