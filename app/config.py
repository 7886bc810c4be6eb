"""The app's own settings, kept as JSON in the user data folder (``settings.json``).

Engine state (conversations, personas, models) lives in the engine's database; this file holds
only window and generation preferences, so deleting it never loses a conversation.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from engine.chat.settings import DEFAULT_HISTORY_TOKENS
from engine.models.voices import CHOICES as COMPANION_MODELS
from engine.paths import user_dir

log = logging.getLogger("mascot.app")

CONTEXT_SIZES = (1024, 2048, 4096, 8192)
HISTORY_SIZES = (
    1024,
    DEFAULT_HISTORY_TOKENS,
    4096,
    0,
)  # recent conversation a companion reads; 0 = all that fits


@dataclass
class AppSettings:
    threads: int = 0  # 0 = automatic (engine default)
    context_size: int = 4096  # tokens of context per loaded model
    history_tokens: int = (
        DEFAULT_HISTORY_TOKENS  # recent conversation each companion reads (0 = all that fits)
    )
    override_sampling: bool = False  # use the two values below instead of each persona's
    temperature: float = 0.7
    max_tokens: int = 96
    user_name: str = "User"  # what the companions call you
    region: str = ""  # crisis resources region; "" = automatic
    director_model: str = ""  # registered model the Director runs on; "" = the group's model
    # what companions without a model of their own run on: "voices" (the voices model, once it
    # is built) or "plain" (the bundled model as it ships)
    companion_model: str = "voices"
    show_group: bool = True
    show_director: bool = True
    show_memory: bool = False
    memory: bool = True  # lorebooks and remembered facts in companions' prompts
    disclosure_seen: bool = False
    last_conversation: int | None = None
    geometry: str = ""  # QMainWindow.saveGeometry(), base64
    splitter: str = ""  # main splitter state, base64

    @staticmethod
    def path() -> Path:
        return user_dir() / "settings.json"

    @classmethod
    def load(cls) -> "AppSettings":
        """Read the settings file; a missing or damaged file gives the defaults (logged)."""
        path = cls.path()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls()
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            log.warning("settings file %s unreadable (%s); using defaults", path, e)
            return cls()
        if not isinstance(data, dict):
            return cls()
        known = {f.name: f for f in fields(cls)}
        out = cls()
        for key, value in data.items():
            if key in known and _fits(getattr(out, key), value):
                setattr(out, key, value)
        out.threads = max(0, min(int(out.threads), 256))
        if out.context_size not in CONTEXT_SIZES:
            out.context_size = 4096
        if out.companion_model not in COMPANION_MODELS:
            out.companion_model = "voices"
        if out.history_tokens not in HISTORY_SIZES:
            out.history_tokens = DEFAULT_HISTORY_TOKENS
        out.temperature = max(0.0, min(float(out.temperature), 2.0))
        out.max_tokens = max(8, min(int(out.max_tokens), 1024))
        return out

    def save(self) -> None:
        path = self.path()
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2), encoding="utf-8")
        os.replace(tmp, path)

    def chat_overrides(self) -> dict[str, Any]:
        """The ``ChatSettings`` fields these preferences set."""
        return {
            "max_tokens": self.max_tokens if self.override_sampling else None,
            "temperature": self.temperature if self.override_sampling else None,
            "user_name": self.user_name.strip() or "User",
            "region": self.region or None,
            "history_tokens": self.history_tokens,
            "director_model": self.director_model.strip() or None,
            "memory": self.memory,
        }


def _fits(default: Any, value: Any) -> bool:
    if default is None:
        return value is None or isinstance(value, int)
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, type(default))
