"""``ChatSession``'s actions on the group: members, mutes, speaking policy, models, and the
companions' default model (the voices model, built on first run)."""

from __future__ import annotations

from pathlib import Path

from engine.errors import MascotError
from engine.models.registry import BUNDLED_NAME, ModelRegistry
from engine.models.voices import (
    PLAIN_LABEL,
    VOICES_LABEL,
    VoicesResult,
    companion_default,
    describe_model,
    ensure_voices,
)
from engine.persona_files import load_set_file, save_user_set
from engine.personas import Persona

from . import data
from .workers import CallWorker

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
        """Run the Director on ``model`` (a registered name; None or the companions' default
        model = the group's model) in every conversation from the next decision on. Kept in the
        app's settings. A trained Director (``mascot-train director``) is decoded as it was
        trained."""
        name = None if not model or model == self.default_model_name() else model
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
        """Give companion ``name`` the model ``model``; None or the companions' default model
        makes it follow the default (so it moves with the Settings choice)."""
        p = self.persona(name)
        if p is None:
            return False
        from dataclasses import replace

        own = None if not model or model == self.default_model_name() else model
        return self.replace_member(name, replace(p, model=own))

    # -- the companions' default model ------------------------------------------------------------
    def companion_model(self) -> str | None:
        """What companions without a model of their own run on: the voices model when it is
        built and Settings chooses it, else None (the plain bundled model)."""
        if not self.voices.usable:
            return None
        return companion_default(self.store, self.settings.companion_model)

    def default_model_name(self) -> str:
        return self.companion_model() or BUNDLED_NAME

    def voices_note(self) -> str:
        """One line on the voices model's state, for Settings ("" when it is in use or chosen away)."""
        status = self.voices.status
        if status == "building":
            return (
                "The voices model is being built (first run only); until then companions "
                "use the plain model."
            )
        if status in ("failed", "stale"):
            return (
                self.voices.message
                or "The voices model is not built yet; it is built on the next start."
            )
        if status == "absent":
            return "This copy of Mascot ships no voices adapter; companions use the plain model."
        return ""

    def model_summary(self) -> list[tuple[str, str]]:
        """(companions, what they run on) for the open group, the default model first."""
        if self.chat is None:
            return []
        default = describe_model(self.chat.settings.model)
        groups: dict[str, list[str]] = {}
        for p in self.chat.members:
            what = describe_model(p.model) + " (chosen for this companion)" if p.model else default
            groups.setdefault(what, []).append(p.name)
        return [(", ".join(names), what) for what, names in groups.items()]

    def prepare_voices(self) -> None:
        """Build the voices model on a worker when the shipped adapter needs it (the first run,
        or a new adapter or bundled model). Companions use the plain model until it is done;
        a failure is one line, and they stay on the plain model."""
        if self.voices.status != "stale" or self._voices_job is not None:
            return
        self.voices = VoicesResult("building")
        store = self.store
        job = CallWorker(
            lambda progress, cancel: ensure_voices(store, cancel=cancel), name="voices"
        )
        job.done.connect(self._voices_done)
        job.finished.connect(lambda: setattr(self, "_voices_job", None))
        self._voices_job = self.runner.start(job, on_error=self._voices_stopped)

    def _voices_done(self, result: VoicesResult) -> None:
        self.voices = result
        if result.message:
            self.error.emit(result.message)
        elif result.status == "built" and self.settings.companion_model == "voices":
            self.info.emit(
                f"The companions now speak with the voices model ({VOICES_LABEL.split(': ', 1)[1]}); "
                f"Settings switches back to {PLAIN_LABEL}."
            )
        self.apply_companion_model()

    def _voices_stopped(self, message: str) -> None:
        """The build was stopped (the app is closing): nothing to tell."""
        self.voices = VoicesResult("stale")

    def apply_companion_model(self) -> None:
        """Give the open conversation the companions' default model now, or after the running
        job (a round is never switched to other weights halfway)."""
        if self.chat is None:
            return
        if self.busy:
            self._model_pending = True
            return
        self._model_pending = False
        model = self.companion_model()
        if self.chat.settings.model != model:
            self._stop_warm()
            self.chat.settings.model = model
            self.members_changed.emit()
            self._warm_later()

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
