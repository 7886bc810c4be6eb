"""``ChatSession``'s actions on the group: members, mutes, speaking policy, models."""

from __future__ import annotations

from pathlib import Path

from engine.errors import MascotError
from engine.models.registry import BUNDLED_NAME, ModelRegistry
from engine.persona_files import load_set_file, save_user_set
from engine.personas import Persona

from . import data

MAX_MEMBERS = 8  # companions in one conversation


class GroupActions:
    """Mixed into ``ChatSession`` (it provides ``chat``, ``store``, the item models and the signals)."""

    # -- the group -----------------------------------------------------------------------------------
    def set_muted(self, name: str, muted: bool) -> None:
        if self.chat is None:
            return
        try:
            self.chat.mute(name, muted)
        except MascotError as e:
            self.error.emit(str(e))
            return
        self.members_changed.emit()

    def set_policy(self, policy: str) -> None:
        if self.chat is not None and policy != self.chat.settings.policy:
            self.chat.settings.policy = policy
            self.store.update_conversation(self.cid, policy=policy)

    def set_max_speakers(self, n: int) -> None:
        if self.chat is not None and n != self.chat.settings.max_speakers:
            self.chat.settings.max_speakers = n
            self.chat.settings.min_speakers = min(2, n)
            self.store.update_conversation(self.cid, max_speakers=n)

    def _save_members(self, personas: list[Persona]) -> bool:
        if not self._idle():
            return False
        muted = {n for n in self.chat.muted if n in {p.name for p in personas}}
        data.save_members(self.store, self.cid, personas, muted)
        self.chat = self._make_chat(self.cid)
        self._load_members()
        return True

    def add_member(self, persona: Persona) -> bool:
        if self.chat is None:
            return False
        if len(self.chat.members) >= MAX_MEMBERS:
            self.error.emit(f"A group has at most {MAX_MEMBERS} companions; remove one first.")
            return False
        if persona.name.lower() in {n.lower() for n in self.chat.names}:
            self.error.emit(
                f"{persona.name} is already in this group; rename the persona to add a second one."
            )
            return False
        return self._save_members(self.chat.members + [persona])

    def remove_member(self, name: str) -> bool:
        if self.chat is None:
            return False
        rest = [p for p in self.chat.members if p.name != name]
        if not rest:
            self.error.emit("A group needs at least one companion.")
            return False
        return self._save_members(rest)

    def replace_member(self, old_name: str, persona: Persona) -> bool:
        if self.chat is None:
            return False
        others = {p.name.lower() for p in self.chat.members if p.name != old_name}
        if persona.name.lower() in others:
            self.error.emit(f"Another companion is already called {persona.name}.")
            return False
        return self._save_members([persona if p.name == old_name else p for p in self.chat.members])

    def set_director_model(self, model: str | None) -> bool:
        """Run the Director on ``model`` (a registered name; None or the bundled model = the
        group's model) in every conversation from the next decision on. Kept in the app's
        settings. A trained Director (``mascot-train director``) is decoded as it was trained."""
        name = None if not model or model == BUNDLED_NAME else model
        if name is not None:
            try:
                ModelRegistry(self.store).get(name)
            except MascotError as e:
                self.error.emit(str(e))
                return False
        self.settings.director_model = name or ""
        self.settings.save()
        if self.chat is not None:
            self.chat.settings.director_model = name
        return True

    def assign_model(self, name: str, model: str | None) -> bool:
        p = self.persona(name)
        if p is None:
            return False
        from dataclasses import replace

        return self.replace_member(name, replace(p, model=model or None))

    def import_file(self, path: str | Path) -> bool:
        """A Character Card (PNG/JSON), persona or persona set file: one persona joins the open
        group; a set of several starts a new conversation. Both are kept in the persona library."""
        try:
            pset = load_set_file(Path(path))
            save_user_set(pset)
        except MascotError as e:
            self.error.emit(str(e))
            return False
        if len(pset.members) > 1:
            self.new_conversation(pset)
            self.info.emit(f"Started a conversation with {pset.title}.")
            return True
        if self.add_member(pset.members[0]):
            self.info.emit(f"{pset.members[0].name} joined the group.")
            return True
        return False
