"""Lorebooks (Character Card V2 ``character_book``, or a group's own ``lorebook``): keyword-
triggered notes a companion reads before its turn.

Each entry follows the V2 spec: it fires when one of its ``keys`` occurs in the last
``scan_depth`` messages (whole words at the key's word edges; case-insensitive unless
``case_sensitive``); a ``selective`` entry also needs one of its ``secondary_keys``; a
``constant`` entry is always in; a disabled one (``enabled: false``) never. Within the book's
``token_budget``, entries with a higher ``priority`` are kept first; kept entries are ordered by
``position`` (``before_char`` first) and then ``insertion_order`` (lower first).

Where entries go (so llama.cpp's KV prefix stays valid, see engine.chat): constant entries never
change, so they join the persona's system prompt (before or after the character, as
``position`` says); triggered entries go into a note right before the companion's turn, near the
end of its prompt. Simplifications: keys are plain text (SillyTavern's ``/regex/`` keys and
``recursive_scanning`` are not supported).

Limits (checked on import, so a card cannot blow up a prompt): ``MAX_ENTRIES`` entries, each of
at most ``MAX_CONTENT_CHARS`` characters and ``MAX_KEYS`` keys of ``MAX_KEY_CHARS`` characters;
the budget is clamped to ``MAX_BUDGET`` tokens and the scan depth to ``MAX_SCAN_DEPTH`` messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable

from .errors import CardError, InputError, PersonaError

MAX_ENTRIES = 256
MAX_CONTENT_CHARS = 4000
MAX_KEYS = 32
MAX_KEY_CHARS = 100
MAX_BUDGET = 1024
DEFAULT_BUDGET = 256
DEFAULT_SCAN_DEPTH = 4
MAX_SCAN_DEPTH = 50
POSITIONS = ("before_char", "after_char")


@dataclass(frozen=True)
class LoreEntry:
    keys: tuple[str, ...]
    content: str
    secondary_keys: tuple[str, ...] = ()
    selective: bool = False
    constant: bool = False
    case_sensitive: bool = False
    enabled: bool = True
    insertion_order: float = 100
    priority: float = 10
    position: str = "after_char"
    name: str = ""
    index: int = 0

    def fires(self, text: str) -> bool:
        """Whether this (non-constant, enabled) entry is triggered by ``text``."""
        if not self.enabled:
            return False
        if not any(_matches(k, text, self.case_sensitive) for k in self.keys):
            return False
        if self.selective and self.secondary_keys:
            return any(_matches(k, text, self.case_sensitive) for k in self.secondary_keys)
        return True

    def text(self, char: str, user: str) -> str:
        """The entry as the companion reads it: one line, ``{{char}}``/``{{user}}`` filled in."""
        out = re.sub(r"\{\{\s*char\s*\}\}|<BOT>", char, self.content, flags=re.IGNORECASE)
        out = re.sub(r"\{\{\s*user\s*\}\}|<USER>", user, out, flags=re.IGNORECASE)
        return " ".join(out.split())


@dataclass
class Lorebook:
    entries: list[LoreEntry] = field(default_factory=list)
    scan_depth: int = DEFAULT_SCAN_DEPTH
    token_budget: int = DEFAULT_BUDGET
    name: str = ""

    def constant(self, count: Callable[[str], int], char: str, user: str) -> list[LoreEntry]:
        """The constant entries that fit the budget (always the same: they join the stable
        system prompt)."""
        return select(
            [e for e in self.entries if e.constant and e.enabled],
            count,
            self.token_budget,
            char,
            user,
        )

    def triggered(
        self,
        recent: list[str],
        count: Callable[[str], int],
        char: str,
        user: str,
        budget: int | None = None,
    ) -> list[LoreEntry]:
        """The non-constant entries that the last ``scan_depth`` of ``recent`` (message texts,
        oldest first) trigger, within ``budget`` (default: what the constant entries leave)."""
        text = "\n".join(recent[-self.scan_depth :]) if self.scan_depth else ""
        fired = [e for e in self.entries if not e.constant and e.fires(text)]
        if budget is None:
            used = sum(count(e.text(char, user)) for e in self.constant(count, char, user))
            budget = self.token_budget - used
        return select(fired, count, budget, char, user)


@lru_cache(maxsize=4096)
def _pattern(key: str, case_sensitive: bool) -> re.Pattern[str]:
    body = re.escape(key.strip())
    lead = r"(?<!\w)" if re.match(r"\w", key.strip()) else ""
    tail = r"(?!\w)" if re.search(r"\w$", key.strip()) else ""
    return re.compile(lead + body + tail, 0 if case_sensitive else re.IGNORECASE)


def _matches(key: str, text: str, case_sensitive: bool) -> bool:
    return bool(key.strip()) and _pattern(key, case_sensitive).search(text) is not None


def select(
    entries: list[LoreEntry], count: Callable[[str], int], budget: int, char: str, user: str
) -> list[LoreEntry]:
    """The entries kept within ``budget`` tokens (higher priority first, then lower insertion
    order), in prompt order (``before_char`` first, then by insertion order)."""
    kept: list[LoreEntry] = []
    left = budget
    for e in sorted(entries, key=lambda e: (-e.priority, e.insertion_order, e.index)):
        cost = count(e.text(char, user)) + 2
        if cost <= left:
            kept.append(e)
            left -= cost
    return sorted(kept, key=lambda e: (e.position != "before_char", e.insertion_order, e.index))


# -- reading and checking books ------------------------------------------------------------------


def _number(entry: dict, key: str, default: float, where: str, error: type) -> float:
    value = entry.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise error(f"{where}: field '{key}' must be a number, not {type(value).__name__}.")
    return float(value)


def _flag(entry: dict, key: str, default: bool, where: str, error: type) -> bool:
    value = entry.get(key, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise error(f"{where}: field '{key}' must be true or false.")
    return value


def _keys(entry: dict, key: str, where: str, error: type) -> tuple[str, ...]:
    value = entry.get(key) or []
    if isinstance(value, str):
        value = [v for v in value.split(",")]
    if not isinstance(value, list):
        raise error(f"{where}: field '{key}' must be a list of words.")
    if len(value) > MAX_KEYS:
        raise error(f"{where}: field '{key}' has {len(value)} keys; the limit is {MAX_KEYS}.")
    out = []
    for i, k in enumerate(value):
        if not isinstance(k, str):
            raise error(f"{where}: field '{key}[{i}]' must be text, not {type(k).__name__}.")
        if len(k) > MAX_KEY_CHARS:
            raise error(
                f"{where}: field '{key}[{i}]' is {len(k)} characters; the limit is {MAX_KEY_CHARS}."
            )
        if k.strip():
            out.append(k.strip())
    return tuple(out)


def parse_book(book: Any, where: str, error: type = PersonaError) -> Lorebook:
    """A checked ``Lorebook`` from a V2 ``character_book`` object; raises ``error`` (one line
    naming the entry and field) when it breaks the spec or the limits."""
    if not isinstance(book, dict):
        raise error(f"{where}: the lorebook must be an object with 'entries'.")
    entries_in = book.get("entries") or []
    if not isinstance(entries_in, list):
        raise error(f"{where}: the lorebook's 'entries' must be a list.")
    if len(entries_in) > MAX_ENTRIES:
        raise error(
            f"{where}: the lorebook has {len(entries_in)} entries; the limit is {MAX_ENTRIES}."
        )
    entries = []
    for i, e in enumerate(entries_in):
        at = f"{where}: lorebook entry {i + 1}"
        if not isinstance(e, dict):
            raise error(f"{at} must be an object, not {type(e).__name__}.")
        content = e.get("content", "")
        if not isinstance(content, str):
            raise error(f"{at}: field 'content' must be text.")
        if len(content) > MAX_CONTENT_CHARS:
            raise error(
                f"{at}: field 'content' is {len(content):,} characters; the limit is "
                f"{MAX_CONTENT_CHARS:,}."
            )
        position = e.get("position") or "after_char"
        if position not in POSITIONS:
            position = "after_char"  # other tools' numeric positions: treat as after the character
        name = e.get("name") if isinstance(e.get("name"), str) else ""
        entries.append(
            LoreEntry(
                keys=_keys(e, "keys", at, error),
                content=content,
                secondary_keys=_keys(e, "secondary_keys", at, error),
                selective=_flag(e, "selective", False, at, error),
                constant=_flag(e, "constant", False, at, error),
                case_sensitive=_flag(e, "case_sensitive", False, at, error),
                enabled=_flag(e, "enabled", True, at, error),
                insertion_order=_number(e, "insertion_order", 100, at, error),
                priority=_number(e, "priority", 10, at, error),
                position=position,
                name=name[:100],
                index=i,
            )
        )
    budget = _number(book, "token_budget", DEFAULT_BUDGET, where, error)
    depth = _number(book, "scan_depth", DEFAULT_SCAN_DEPTH, where, error)
    return Lorebook(
        entries=[e for e in entries if e.content.strip()],
        scan_depth=int(min(max(depth, 0), MAX_SCAN_DEPTH)),
        token_budget=int(min(max(budget, 0), MAX_BUDGET)),
        name=book.get("name") if isinstance(book.get("name"), str) else "",
    )


def card_book(card: Any) -> Any:
    """The raw ``character_book`` of a card dict (V2/V3 ``data`` or a V1 body), or None."""
    if not isinstance(card, dict):
        return None
    body = card.get("data") if isinstance(card.get("data"), dict) else card
    return body.get("character_book")


def check_card_book(body: dict, where: str) -> None:
    """Raise CardError when a card body's ``character_book`` breaks the spec or the limits."""
    book = body.get("character_book")
    if book is not None:
        parse_book(book, where, CardError)


def persona_book(persona: Any) -> Lorebook | None:
    """The lorebook of a persona imported from a Character Card (kept in its card copy)."""
    ext = getattr(persona, "extensions", None)
    book = card_book(ext.get("chara_card")) if isinstance(ext, dict) else None
    if book is None:
        return None
    try:
        return parse_book(book, persona.name)
    except PersonaError:
        return None  # checked on import; a book edited since into something broken is ignored


# -- a group's own book, edited in the app (stored in the history database) ----------------------


def entry_dict(e: LoreEntry) -> dict[str, Any]:
    """An entry in V2 ``character_book`` form (what the database and exports keep)."""
    return {
        "name": e.name,
        "keys": list(e.keys),
        "secondary_keys": list(e.secondary_keys),
        "content": e.content,
        "selective": e.selective,
        "constant": e.constant,
        "case_sensitive": e.case_sensitive,
        "enabled": e.enabled,
        "insertion_order": e.insertion_order,
        "priority": e.priority,
        "position": e.position,
    }


def check_entry(entry: dict[str, Any], where: str = "Lorebook entry") -> dict[str, Any]:
    """One entry as typed in the editor, checked against the spec and the card limits (the
    same ``parse_book``), normalised; raises InputError with one line. A keyless entry that is
    not constant could never fire, so it is refused too."""
    if not str(entry.get("content") or "").strip():
        raise InputError(f"{where}: write what the companions should read (the entry's text).")
    try:
        book = parse_book({"entries": [entry]}, "\x00", InputError)
    except InputError as err:
        raise InputError(str(err).replace("\x00: lorebook entry 1", where)) from None
    e = book.entries[0]
    if not e.constant and not e.keys:
        raise InputError(
            f"{where}: give at least one key (a word that makes it fire), or make it "
            "constant (always in)."
        )
    return entry_dict(e)


def book_entries(book: Any, where: str) -> list[dict[str, Any]]:
    """The entries of a raw book, checked and normalised (for copying it into the database)."""
    return [entry_dict(e) for e in parse_book(book, where).entries]
