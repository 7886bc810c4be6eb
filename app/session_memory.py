"""``ChatSession``'s actions on what the companions remember: facts about the user and the
group's lorebook."""

from __future__ import annotations

from typing import Any, Callable

from engine.errors import InputError, MascotError
from engine.lorebook import MAX_BUDGET, MAX_ENTRIES, MAX_SCAN_DEPTH, book_entries, check_entry
from engine.memory import check_fact
from engine.persona_files import load_set


class MemoryActions:
    """Mixed into ``ChatSession`` (it provides ``chat``, ``store``, the item models and the signals)."""

    # -- memory: what the companions know about the user (per group) --------------------------------
    def refresh_memory(self) -> None:
        group = self.chat.group.name if self.chat else None
        self.memory.reset(self.store.memories(group) if group else [])

    def _memory_call(self, fn: Callable[[], Any], done: str) -> bool:
        try:
            fn()
        except MascotError as e:
            self.error.emit(str(e))
            return False
        self.refresh_memory()
        self.info.emit(done)
        return True

    def add_fact(self, text: str) -> bool:
        return self.chat is not None and self._memory_call(
            lambda: self.chat.remember(text, pinned=False), "Added to what the companions remember."
        )

    def remember_message(self, mid: int) -> bool:
        """The user pins a message: it becomes a pinned fact of this group."""
        return self.chat is not None and self._memory_call(
            lambda: self.chat.remember("", message_id=mid),
            "Pinned: the companions will remember this.",
        )

    def edit_fact(self, fid: int, text: str) -> bool:
        return self._memory_call(
            lambda: self.store.update_memory(fid, text=check_fact(text)), "Fact updated."
        )

    def pin_fact(self, fid: int, pinned: bool) -> bool:
        return self._memory_call(
            lambda: self.store.update_memory(fid, pinned=pinned),
            "Pinned." if pinned else "Unpinned.",
        )

    def forget_fact(self, fid: int) -> bool:
        return self._memory_call(lambda: self.store.delete_memory(fid), "Forgotten.")

    # -- the group's own lorebook (engine.lorebook; stored per group in the history database) --------
    def group_book(self, group: str) -> dict[str, Any] | None:
        """The group's lorebook: the one kept in the database; the first time a group whose
        persona set file has a book is opened, that book is copied in (from then on the app's
        copy is the one edited and used)."""
        if not self.store.has_lorebook(group):
            book = _group_lorebook(group)
            if not book:
                return None
            try:
                self.store.set_group_lorebook(group, {**book, "entries": book_entries(book, group)})
            except MascotError:
                return book
        return self.store.group_lorebook(group)

    def refresh_lorebook(self) -> None:
        group = self.chat.group.name if self.chat else None
        self.lorebook.reset(self.store.lore_entries(group) if group else [])

    def _lore_call(self, fn: Callable[[str], Any], done: str) -> Any:
        """Change the open group's book (not while a round runs: the companions' prompts are
        being built from it), then give the conversation the new book."""
        if not self._idle():
            return None
        group = self.chat.group.name
        try:
            out = fn(group)
        except MascotError as e:
            self.error.emit(str(e))
            return None
        self.chat.set_group_lorebook(self.store.group_lorebook(group))
        self.refresh_lorebook()
        self.info.emit(done)
        return True if out is None else out

    def add_lore_entry(self, entry: dict[str, Any]) -> int | None:
        """Add an entry (editor fields, checked like a card's) to the open group's book; its id."""

        def add(group: str) -> int:
            e = check_entry(entry)
            if len(self.store.lore_entries(group)) >= MAX_ENTRIES:
                raise InputError(
                    f"A lorebook holds at most {MAX_ENTRIES} entries; delete one first."
                )
            return self.store.add_lore_entry(group, e)

        return self._lore_call(add, "Lorebook entry added.")

    def edit_lore_entry(self, eid: int, entry: dict[str, Any]) -> bool:
        return bool(
            self._lore_call(
                lambda _g: self.store.update_lore_entry(eid, check_entry(entry)),
                "Lorebook entry saved.",
            )
        )

    def delete_lore_entry(self, eid: int) -> bool:
        return bool(
            self._lore_call(lambda _g: self.store.delete_lore_entry(eid), "Lorebook entry deleted.")
        )

    def set_lorebook_settings(self, scan_depth: int, token_budget: int) -> bool:
        return bool(
            self._lore_call(
                lambda g: self.store.set_lorebook_settings(
                    g,
                    scan_depth=max(0, min(int(scan_depth), MAX_SCAN_DEPTH)),
                    token_budget=max(0, min(int(token_budget), MAX_BUDGET)),
                ),
                "Lorebook settings saved.",
            )
        )


def _group_lorebook(name: str) -> dict[str, Any] | None:
    """The lorebook of the persona set a conversation was started with, if it still exists."""
    try:
        return load_set(name).lorebook
    except MascotError:
        return None
