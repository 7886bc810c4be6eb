"""The check every user message passes: control and binary characters out, within a length limit."""

from __future__ import annotations

import unicodedata

from engine.errors import InputError

MAX_MESSAGE_CHARS = 100_000


def sanitize_user_text(text: str) -> str:
    """Drop control and binary characters; keep every script and emoji. Raises InputError."""
    if not isinstance(text, str):
        raise InputError("The message must be text.")
    cleaned = "".join(
        ch
        for ch in text
        if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cs", "Co", "Cn")
    )
    cleaned = cleaned.replace("\t", " ").strip()
    if not cleaned:
        raise InputError(
            "The message is empty (or only control characters); type something to send."
        )
    if len(cleaned) > MAX_MESSAGE_CHARS:
        raise InputError(
            f"The message is {len(cleaned):,} characters; the limit is "
            f"{MAX_MESSAGE_CHARS:,}. Send a shorter part."
        )
    return cleaned
