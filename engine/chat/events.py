"""What a round tells its front end, as typed events. Each kind is built in one place
(``engine.chat.group``); ``to_dict`` is the JSON a front end reads (``mascot chat --json``).
Optional fields left at None are not part of an event's data."""

from __future__ import annotations

import json
from dataclasses import MISSING, dataclass, fields
from typing import Any, ClassVar


@dataclass
class Event:
    type: ClassVar[str] = ""

    @property
    def data(self) -> dict[str, Any]:
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.default is MISSING or getattr(self, f.name) is not None
        }

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **self.data}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)


@dataclass
class RoundStart(Event):
    type: ClassVar[str] = "round_start"
    round: int
    conversation_id: int | None
    message_id: int | None
    text: str


@dataclass
class Notice(Event):
    type: ClassVar[str] = "notice"
    text: str


@dataclass
class SafetyAlert(Event):
    """A crisis signal: resources to show; for an emergency, the number to call now first."""

    type: ClassVar[str] = "safety"
    category: str
    level: str
    evidence: Any
    source: str
    resources: list[dict[str, Any]]
    disclosure: str
    screened_languages: list[str]
    emergency: dict[str, Any] | None = None
    lang: str = "en"  # the language of the user's message (en, de, fr): the texts to show are in it


@dataclass
class DirectorChoice(Event):
    type: ClassVar[str] = "director"
    speaker: str | None
    directive: str
    source: str
    valid: bool
    seconds: float


@dataclass
class Token(Event):
    """Text of a reply that has settled (it will not be cut), as it streams."""

    type: ClassVar[str] = "token"
    speaker: str
    text: str
    message_id: int | None


@dataclass
class MessageEvent(Event):
    """A message committed: a companion's reply, a regenerated alternative or a safety message."""

    type: ClassVar[str] = "message"
    id: int | None
    speaker: str
    text: str
    directive: str
    color: str
    status: str
    role_confusion: bool | None = None
    context: str | None = None
    prompt_tokens: int | None = None
    prefilled_tokens: int | None = None
    completion_tokens: int | None = None
    ttft_ms: float | None = None
    decode_tps: float | None = None
    latency_ms: float | None = None
    regenerated: bool | None = None
    variant: int | None = None
    safety: bool | None = None
    model: str | None = None  # the model file (or registered adapter) that wrote the reply
    adapter: str | None = None  # the LoRA that shaped it: applied at decode time, or "(merged)"


@dataclass
class Remembered(Event):
    """A fact found in the user's message and stored (the memory panel lists it)."""

    type: ClassVar[str] = "memory"
    id: int
    text: str
    source: str
    message_id: int | None


@dataclass
class RoundEnd(Event):
    type: ClassVar[str] = "round_end"
    round: int
    speakers: list[str]
    cancelled: bool
    seconds: float


@dataclass
class ErrorEvent(Event):
    """A failure, as one line for the user; the round ends, the user's message is kept."""

    type: ClassVar[str] = "error"
    message: str
