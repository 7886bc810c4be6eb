"""Mascot's engine: the pure-Python core shared by the CLI, the GUI, training and evaluation.

Public API (imported lazily so ``import engine`` stays cheap)::

    from engine import GroupChat, ChatSettings, Event, load_set, Store, ModelRegistry

``GroupChat.send(text, cancel)`` runs one round and yields ``Event``s; see ``engine.chat``.
The engine never imports Qt.
"""

from importlib import import_module
from typing import Any

_EXPORTS = {
    "GroupChat": "engine.chat.group",
    "ChatSettings": "engine.chat.settings",
    "Event": "engine.chat.events",
    "TranscriptItem": "engine.reply.prompts",
    "default_backend_factory": "engine.chat.backends",
    "Persona": "engine.personas",
    "PersonaSet": "engine.personas",
    "load_set": "engine.persona_files",
    "list_sets": "engine.persona_files",
    "persona_from_dict": "engine.personas",
    "Store": "engine.storage",
    "ModelRegistry": "engine.models.registry",
    "inspect_gguf": "engine.models.registry",
    "bundled_model_path": "engine.models.registry",
    "RuntimePool": "engine.llm.runtime",
    "GenRequest": "engine.llm.backend",
    "FakeBackend": "engine.llm.backend",
    "MascotError": "engine.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'engine' has no attribute {name!r}")
