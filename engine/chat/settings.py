"""A conversation's settings."""

from __future__ import annotations

from dataclasses import dataclass

from engine.director.policies import POLICIES
from engine.errors import InputError

DEFAULT_HISTORY_TOKENS = (
    2048  # the recent transcript a companion reads (docs/architecture.md: context policy)
)
MIN_HISTORY_TOKENS = 256


@dataclass
class ChatSettings:
    policy: str = "director"
    max_speakers: int = 3
    min_speakers: int | None = None  # None = max_speakers: every round has that many voices
    user_name: str = "User"
    region: str | None = None
    seed: int | None = None
    model: str | None = None  # group default model (name or path); None = bundled
    director_model: str | None = None  # None = the group default model
    max_tokens: int | None = None  # override every persona's max_tokens
    temperature: float | None = None  # override every persona's temperature
    history_tokens: int = (
        DEFAULT_HISTORY_TOKENS  # recent transcript a companion reads; 0 = all that fits
    )
    memory: bool = (
        True  # lorebooks and remembered facts in companions' prompts; facts found in messages
    )

    def validate(self) -> None:
        if self.policy not in POLICIES:
            raise InputError(f"Unknown policy '{self.policy}'; use one of: {', '.join(POLICIES)}.")
        if not 1 <= self.max_speakers <= 8:
            raise InputError(f"--max-speakers must be between 1 and 8, not {self.max_speakers}.")
        if self.min_speakers is not None and self.min_speakers < 1:
            raise InputError("--min-speakers must be at least 1.")
        if not (self.history_tokens == 0 or MIN_HISTORY_TOKENS <= self.history_tokens <= 1_000_000):
            raise InputError(
                f"--history-tokens must be 0 (all that fits) or at least {MIN_HISTORY_TOKENS}, "
                f"not {self.history_tokens}."
            )

    def effective_min_speakers(self) -> int:
        return min(self.min_speakers or self.max_speakers, self.max_speakers)
