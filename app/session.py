"""The open conversation: engine objects on one side, Qt item models and signals on the other.

``ChatSession`` owns the store, one shared llama.cpp backend factory (each model file is loaded
once for every conversation, companion and the Director) and the current ``GroupChat``. Rounds
and regenerations run as generator workers; their events update the item models on the GUI
thread. Only one job runs at a time, and the conversation is not changed under a running job.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timezone
from typing import Any, Callable

from PySide6.QtCore import QObject, Signal

from engine.chat.backends import default_backend_factory
from engine.chat.events import Event
from engine.chat.group import GroupChat
from engine.chat.settings import ChatSettings
from engine.cipher import Conversion
from engine.data import delete_all
from engine.errors import InputError, MascotError
from engine.llm.backend import Backend
from engine.models.voices import ensure_voices
from engine.persona_files import load_set
from engine.personas import Persona, PersonaSet, default_color, persona_from_dict
from engine.storage import Store
from engine.user_text import sanitize_user_text

from . import theme
from .config import AppSettings
from .item_models import (
    ConversationListModel,
    DirectorLogModel,
    LoreListModel,
    MemberListModel,
    MemoryListModel,
    MessageListModel,
)
from .notify import close_logging, setup_logging
from .session_group import MAX_MEMBERS, GroupActions
from .session_memory import MemoryActions
from .workers import CallWorker, GeneratorWorker, Runner, Worker

YOU = "You"
CHOOSING = "Choosing who speaks next…"


def backend_factory(store: Store, settings: AppSettings) -> Callable[[str | None], Backend]:
    """Resolve a model name or path (None = bundled) to a shared llama.cpp runtime."""
    return default_backend_factory(
        store, n_ctx=settings.context_size, n_threads=settings.threads or None
    )


class ChatSession(MemoryActions, GroupActions, QObject):
    opened = Signal(int)  # conversation id
    busy_changed = Signal(bool)
    typing_changed = Signal(str, str)  # text ("" hides it), colour
    token_received = Signal(str)  # speaker
    round_finished = Signal(dict)  # round_end data (+ "error"), after busy goes False
    regenerate_finished = Signal(int)  # message id
    safety_raised = Signal(dict)  # the engine's safety event data
    members_changed = Signal()
    error = Signal(str)
    info = Signal(str)

    def __init__(
        self, settings: AppSettings, store: Store | None = None, parent: QObject | None = None
    ):
        super().__init__(parent)
        self.settings = settings
        self.store = store or Store()
        self.messages = MessageListModel(self)
        self.members = MemberListModel(self)
        self.director_log = DirectorLogModel(self)
        self.memory = MemoryListModel(self)
        self.lorebook = LoreListModel(self)
        self.conversations = ConversationListModel(self.store, self)
        self.conversations.rename = self.rename_conversation
        self.members.set_muted = self.set_muted
        self.runner = Runner(self)
        # the voices model as it stands (a quick look; ``prepare_voices`` builds it when needed)
        self.voices = ensure_voices(self.store, build=False)
        self._voices_job: Worker | None = None
        self._model_pending = False  # the default model changed during a job: apply after it
        self.backend_for = backend_factory(self.store, settings)
        self.chat: GroupChat | None = None
        self.conversation: dict[str, Any] = {}
        self._job: Worker | None = None
        self._serial = 0
        self._round: dict[str, Any] = {}
        self._regen: int | None = None
        self._warming: Worker | None = None  # the read-ahead after a round (not a job: not busy)

    # -- state ------------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return self._job is not None

    @property
    def cid(self) -> int | None:
        return self.chat.conversation_id if self.chat else None

    def persona(self, name: str) -> Persona | None:
        for p in self.chat.members if self.chat else []:
            if p.name == name:
                return p
        return None

    def _look(self, name: str) -> tuple[str, str]:
        p = self.persona(name)
        return (p.color, p.avatar) if p else (default_color(name), name[:1].upper())

    def start(self) -> None:
        """Open the last conversation, or on first run a new one with the support circle."""
        self.conversations.refresh("")
        ids = [r["id"] for r in self.conversations.rows]
        if self.settings.last_conversation in ids:
            self.open_conversation(self.settings.last_conversation)
        elif ids:
            self.open_conversation(ids[0])
        else:
            self.new_conversation("support")

    def _chat_settings(self, conv: dict[str, Any]) -> ChatSettings:
        cap = max(1, min(int(conv.get("max_speakers") or 3), MAX_MEMBERS))
        return ChatSettings(
            policy=conv.get("policy") or "director",
            max_speakers=cap,
            min_speakers=min(2, cap),
            **self._overrides(),
        )

    def _overrides(self) -> dict[str, Any]:
        """The ``ChatSettings`` fields the app sets: its preferences and the companions' model."""
        return {**self.settings.chat_overrides(), "model": self.companion_model()}

    def _make_chat(self, cid: int) -> GroupChat:
        conv = self.store.conversation(cid)
        rows = self.store.members(cid)
        personas = [persona_from_dict(r["persona"]) for r in rows] or load_set(
            conv["group_name"]
        ).members
        pset = PersonaSet(
            name=conv["group_name"],
            title=conv["title"],
            description="",
            members=personas,
            lorebook=self.group_book(conv["group_name"]),
        )
        self.conversation = conv
        return GroupChat(
            pset,
            settings=self._chat_settings(conv),
            store=self.store,
            backend_for=self.backend_for,
            conversation_id=cid,
        )

    def open_conversation(self, cid: int) -> None:
        self._halt()
        try:
            self.chat = self._make_chat(cid)
        except MascotError as e:
            self.error.emit(str(e))
            return
        self._load_messages()
        self._load_members()
        self.refresh_memory()
        self.refresh_lorebook()
        self.settings.last_conversation = cid
        self.settings.save()
        self.opened.emit(cid)
        self._warm_later()  # the first round starts with the personas and history already read

    def new_conversation(self, group: str | PersonaSet) -> None:
        self._halt()
        try:
            pset = load_set(group) if isinstance(group, str) else group
            chat = GroupChat(
                pset,
                settings=ChatSettings(**self._overrides()),
                store=self.store,
                backend_for=self.backend_for,
                title=pset.title,
            )
        except MascotError as e:
            self.error.emit(str(e))
            return
        self.conversations.refresh()
        self.open_conversation(chat.conversation_id)

    def rename_conversation(self, cid: int, title: str) -> None:
        """Rename in the store (the conversation list updates its own row)."""
        try:
            self.store.rename_conversation(cid, title)
        except MascotError as e:
            self.error.emit(str(e))
            return
        if cid == self.cid:
            self.conversation = self.store.conversation(cid)
            self.opened.emit(cid)
        self.refresh_memory()

    def delete_conversation(self, cid: int) -> None:
        if cid == self.cid:
            self._halt()
        try:
            self.store.delete_conversation(cid)
        except MascotError as e:
            self.error.emit(str(e))
            return
        self.conversations.refresh()
        if cid == self.cid:
            self.chat = None
            self.settings.last_conversation = None
            self.start()

    def set_passphrase(self, old: str | None, new: str | None) -> Conversion:
        """Encrypt the history (``old`` None), change its passphrase, or store it plain again
        (``new`` None), in place (engine/cipher.py). Not while a job writes to it."""
        if self._job is not None or self._voices_job is not None:
            raise InputError(
                "Wait until the companions have finished (or press Stop), then try again."
            )
        self._stop_warm()
        if old is None and new is not None:
            done = self.store.encrypt(new)
            self.info.emit("Your history is encrypted; Mascot asks for the passphrase at start.")
        elif old is not None and new is None:
            done = self.store.decrypt(old)
            self.info.emit("Your history is stored as a plain file again.")
        elif old is not None and new is not None:
            done = self.store.change_passphrase(old, new)
            self.info.emit("The passphrase of your history is changed.")
        else:
            raise InputError("Give a passphrase to encrypt the history with.")
        return done

    def delete_all_data(self, delete_models: bool = True) -> None:
        self._halt()
        self.chat = None
        close_logging()
        delete_all(self.store, delete_models=delete_models)
        pool = getattr(self.backend_for, "pool", None)
        if pool is not None:  # the KV caches still hold the deleted conversations' text
            pool.clear_slots()
        setup_logging()
        self.settings.last_conversation = None
        self.settings.disclosure_seen = False
        self.settings.save()
        self.voices = ensure_voices(self.store, build=False)
        self.start()
        self.refresh_memory()
        self.prepare_voices()  # a deleted voices model is built again from the shipped adapter
        self.info.emit(
            "All conversations, remembered facts, imported personas and logs were deleted."
        )

    def apply_settings(self, new: AppSettings) -> None:
        reload = (new.threads, new.context_size) != (
            self.settings.threads,
            self.settings.context_size,
        )
        self.settings = new
        new.save()
        if reload:
            self._halt()
            self.backend_for = backend_factory(self.store, new)  # the old runtimes are freed
            if self.cid is not None:
                self.open_conversation(self.cid)
        elif self.chat is not None:
            for key, value in new.chat_overrides().items():
                setattr(self.chat.settings, key, value)
            self.apply_companion_model()

    # -- loading rows -----------------------------------------------------------------------------
    def _row(self, m: dict[str, Any]) -> dict[str, Any]:
        variants = len(json.loads(m["variants"])) if m.get("variants") else 1
        color, avatar = self._look(m["speaker"])
        return {
            "id": m["id"],
            "role": m["role"],
            "text": m["text"],
            "created": m["created"],
            "speaker": YOU if m["role"] == "user" else m["speaker"],
            "color": color,
            "avatar": avatar,
            "directive": m.get("directive") or "",
            "status": m.get("status") or "done",
            "variant": m.get("variant") or 0,
            "variants": variants,
            "streaming": False,
            "edited": bool(m.get("edited")),
            "model": m.get("model") or "",
            "adapter": (m.get("meta") or {}).get("adapter") or "",
        }

    def _load_messages(self) -> None:
        rows = self.store.messages(self.cid) if self.cid else []
        self.messages.reset([self._row(m) for m in rows])
        log = []
        for m in rows:
            if m["role"] == "companion" and m.get("directive"):
                meta = m.get("meta") or {}
                color, avatar = self._look(m["speaker"])
                log.append(
                    {
                        "round": m.get("round"),
                        "speaker": m["speaker"],
                        "directive": m["directive"],
                        "source": meta.get("source", "director"),
                        "valid": meta.get("director_valid", True),
                        "color": color,
                        "avatar": avatar,
                        "model": m.get("model") or "",
                        "adapter": meta.get("adapter") or "",
                    }
                )
        self.director_log.reset(log)

    def _load_members(self) -> None:
        if self.chat is not None:
            self.members.set_members(self.chat.members, self.chat.muted)
        self.members_changed.emit()

    # -- jobs ---------------------------------------------------------------------------------------
    def _start(
        self, job: Worker, on_item: Callable[[Any], None], on_done: Callable[[], None]
    ) -> None:
        self._stop_warm()
        self._serial += 1
        serial = self._serial
        live = lambda: serial == self._serial  # noqa: E731 - events of a halted job are dropped
        job.item.connect(lambda ev: live() and on_item(ev))
        job.finished.connect(lambda: live() and on_done())
        self._job = job
        self._round = {}
        self.runner.start(job, on_error=lambda msg: live() and self._job_failed(msg))
        self.busy_changed.emit(True)

    def _job_failed(self, message: str) -> None:
        self._round["error"] = message
        self.error.emit(message)

    def _finish_job(self) -> Worker | None:
        job, self._job = self._job, None
        for i in range(len(self.messages.rows) - 1, -1, -1):
            if self.messages.rows[i].get("streaming") and self.messages.rows[i].get("id") is None:
                self.messages.remove(i)
        self.typing_changed.emit("", "")
        self.busy_changed.emit(False)
        if self._model_pending:
            self.apply_companion_model()
        return job

    def _warm_later(self) -> None:
        """While the user reads and types, every companion and the Director read the round
        that just ended into their KV caches (``GroupChat.warm``, on a worker), so the next
        round starts with only the new message to read. Any new job cancels it first and waits
        for it (it stops within one 64-token chunk)."""
        if self.chat is None or self._job is not None:
            return
        self._stop_warm()
        chat = self.chat
        worker = CallWorker(lambda progress, cancel: chat.warm(cancel), name="warm")
        self._warming = self.runner.start(worker, on_error=_warm_failed)

    def warming(self) -> bool:
        """True while the read-ahead after a round is still running."""
        return self._warming is not None and self._warming in self.runner.active

    def _stop_warm(self) -> None:
        if self._warming is not None:
            self.runner.stop(self._warming)
            self._warming = None

    def _halt(self) -> None:
        """Cancel a running job and wait for it (the engine stops within a second)."""
        self._stop_warm()
        if self._job is not None:
            self.runner.stop(self._job)
            self._serial += 1
            self._finish_job()

    def stop(self) -> None:
        if self._job is not None:
            self._job.cancel()

    def shutdown(self) -> None:
        self._halt()
        self.runner.stop_all()

    # -- a round -----------------------------------------------------------------------------------
    def send(self, text: str) -> bool:
        """Start a round for ``text``; False (with a message) when it cannot start now."""
        if self.chat is None:
            return False
        if self.busy:
            self.info.emit("Wait for this round to finish, or press Stop.")
            return False
        try:
            sanitize_user_text(text)
        except InputError as e:
            self.error.emit(str(e))
            return False
        self._start(
            GeneratorWorker(self.chat.send, text, name="round"), self._on_event, self._round_done
        )
        return True

    def _on_event(self, ev: Event) -> None:
        d = ev.data
        handler = getattr(self, f"_ev_{ev.type}", None)
        if handler is not None:
            handler(d)

    def _ev_round_start(self, d: dict[str, Any]) -> None:
        self._round["round"] = d.get("round")
        self.messages.append(
            {
                "id": d.get("message_id"),
                "role": "user",
                "speaker": YOU,
                "text": d.get("text", ""),
                "created": _now(),
                "color": theme.ACCENT,
                "avatar": "",
                "directive": "",
                "status": "done",
                "variant": 0,
                "variants": 1,
                "streaming": False,
                "edited": False,
            }
        )
        self.typing_changed.emit(CHOOSING, theme.MUTED)

    def _ev_director(self, d: dict[str, Any]) -> None:
        speaker = d.get("speaker")
        color, avatar = self._look(speaker) if speaker else ("", "")
        self.director_log.append(
            {"round": self._round.get("round"), **d, "color": color, "avatar": avatar}
        )
        if speaker:
            self.typing_changed.emit(f"{speaker} is typing…", self._look(speaker)[0])
        else:
            self.typing_changed.emit("", "")

    def _ev_token(self, d: dict[str, Any]) -> None:
        speaker, piece = d.get("speaker", ""), d.get("text", "")
        i = self.messages.find_streaming(speaker)
        if i < 0:
            color, avatar = self._look(speaker)
            self.messages.append(
                {
                    "id": None,
                    "role": "companion",
                    "speaker": speaker,
                    "text": piece,
                    "created": _now(),
                    "color": color,
                    "avatar": avatar,
                    "directive": "",
                    "status": "streaming",
                    "variant": 0,
                    "variants": 1,
                    "streaming": True,
                    "edited": False,
                }
            )
        else:
            self.messages.update(i, text=self.messages.rows[i]["text"] + piece)
        self.token_received.emit(speaker)

    def _ev_message(self, d: dict[str, Any]) -> None:
        speaker = d.get("speaker", "")
        role = "safety" if d.get("safety") else "companion"
        fields = {
            "id": d.get("id"),
            "text": d.get("text", ""),
            "directive": d.get("directive", ""),
            "status": d.get("status", "done"),
            "streaming": False,
            "role": role,
            "model": d.get("model") or "",
            "adapter": d.get("adapter") or "",
        }
        if d.get("model"):  # the Director panel says which model wrote the turn it chose
            self.director_log.note_reply(speaker, d["model"], d.get("adapter") or "")
        i = self.messages.find_streaming(speaker)
        if i >= 0:
            self.messages.update(i, **fields)
        else:
            color, avatar = self._look(speaker)
            self.messages.append(
                {
                    "speaker": speaker,
                    "created": _now(),
                    "color": color,
                    "avatar": avatar,
                    "variant": 0,
                    "variants": 1,
                    "edited": False,
                    **fields,
                }
            )
        self.typing_changed.emit(CHOOSING, theme.MUTED)

    def _ev_notice(self, d: dict[str, Any]) -> None:
        self.messages.append(
            {
                "id": None,
                "role": "notice",
                "speaker": "",
                "text": d.get("text", ""),
                "created": _now(),
                "streaming": False,
            }
        )

    def _ev_memory(self, d: dict[str, Any]) -> None:
        self.refresh_memory()
        self.info.emit(f"Remembered: {d.get('text', '')} (see Memory; you can edit or forget it).")

    def _ev_safety(self, d: dict[str, Any]) -> None:
        self._round["safety"] = True
        self.safety_raised.emit(d)

    def _ev_error(self, d: dict[str, Any]) -> None:
        self._job_failed(d.get("message", "The round failed."))

    def _ev_round_end(self, d: dict[str, Any]) -> None:
        self._round.update(d)
        self.typing_changed.emit("", "")

    def _round_done(self) -> None:
        job = self._finish_job()
        info = dict(self._round)
        info.setdefault("cancelled", bool(job and job.cancelled))
        self._auto_title(info)
        self.conversations.refresh()
        self.refresh_memory()  # a fact's conversation may have just got its title
        self.round_finished.emit(info)
        if not info.get("error") and not info.get("cancelled"):
            self._warm_later()

    def _auto_title(self, info: dict[str, Any]) -> None:
        """Name a new conversation after its first message (not after a crisis message)."""
        if info.get("round") != 1 or info.get("safety") or self.cid is None:
            return
        conv = self.store.conversation(self.cid)
        first = next((r["text"] for r in self.messages.rows if r["role"] == "user"), "")
        if conv["title"] != self.chat.group.title or not first:
            return
        line = " ".join(first.split())
        title = line if len(line) <= 48 else line[:47].rsplit(" ", 1)[0] + "…"
        self.store.rename_conversation(self.cid, title)
        self.conversation = self.store.conversation(self.cid)
        self.opened.emit(self.cid)

    # -- editing messages ----------------------------------------------------------------------------
    def _idle(self) -> bool:
        if self.busy:
            self.info.emit("Wait for this round to finish, or press Stop.")
        if self.busy or self.chat is None:
            return False
        self._stop_warm()  # the conversation is about to change under the read-ahead
        return True

    def regenerate(self, mid: int) -> bool:
        i = self.messages.find_id(mid)
        if not self._idle() or i < 0 or self.messages.rows[i]["role"] != "companion":
            return False
        self._regen = mid
        self._start(
            GeneratorWorker(self.chat.regenerate, mid, name="regenerate"),
            self._on_regen_event,
            self._regen_done,
        )
        return True

    def _on_regen_event(self, ev: Event) -> None:
        i = self.messages.find_id(self._regen)
        if i < 0:
            return
        d = ev.data
        if ev.type == "token":
            row = self.messages.rows[i]
            text = (row["text"] if row["streaming"] else "") + d.get("text", "")
            self.messages.update(i, text=text, streaming=True)
        elif ev.type == "message":
            self.messages.update(
                i,
                text=d.get("text", ""),
                variant=d.get("variant", 0),
                variants=d.get("variant", 0) + 1,
                streaming=False,
            )
        elif ev.type == "notice":
            self.info.emit(d.get("text", ""))
        elif ev.type == "error":
            self._job_failed(d.get("message", "Regeneration failed."))

    def _regen_done(self) -> None:
        mid = self._regen
        i = self.messages.find_id(mid)
        if i >= 0:  # the store is the truth (a stopped regeneration keeps the old reply)
            self.messages.update(i, **self._row(self.store.message(mid)))
        self._finish_job()
        self.regenerate_finished.emit(mid)

    def select_variant(self, mid: int, index: int) -> None:
        i = self.messages.find_id(mid)
        if not self._idle() or i < 0:
            return
        try:
            text = self.chat.select_variant(mid, index)
        except MascotError as e:
            self.error.emit(str(e))
            return
        self.messages.update(i, text=text, variant=index)

    def edit_message(self, mid: int, text: str) -> bool:
        i = self.messages.find_id(mid)
        if not self._idle() or i < 0:
            return False
        try:
            self.chat.edit_message(mid, text)
        except MascotError as e:
            self.error.emit(str(e))
            return False
        self.messages.update(i, text=self.store.message(mid)["text"], edited=True)
        return True

    def delete_message(self, mid: int) -> None:
        i = self.messages.find_id(mid)
        if not self._idle() or i < 0:
            return
        try:
            self.chat.delete_message(mid)
        except MascotError as e:
            self.error.emit(str(e))
            return
        self.messages.remove(i)
        self.conversations.refresh()


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _warm_failed(message: str) -> None:
    """The read-ahead is an optimisation: its failures go to the log, never to the user."""
    logging.getLogger("mascot").error("warm-up after the round failed: %s", message)
