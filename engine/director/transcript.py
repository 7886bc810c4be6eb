"""The transcript as the Director reads it: the user's messages whole, companion replies as their
gist, reply counts on the user's messages, trimmed by the same context policy as a companion's."""

from __future__ import annotations

from typing import Callable

from engine.director.policies import annotate_turns, reply_gist
from engine.reply.prompts import TranscriptItem, clip, trim_start

ROW_OVERHEAD = 12  # tokens the Director's prompt adds around a transcript line (about)


def director_transcript(
    items: list[TranscriptItem],
    names: list[str],
    user_name: str,
    count: Callable[[str], int],
    n_ctx: int,
    start: int,
    opening: bool = False,
) -> tuple[list[dict[str, str]], int]:
    """The rows the Director reads (from ``start``; it moves when they would overflow half of
    ``n_ctx``) and the new start. ``opening``: end with the opening of the user's next message
    (its reply counts), for reading ahead while the user types."""
    rows = [
        {
            "speaker": user_name if t.role == "user" else t.speaker,
            "text": clip(t.text, count, n_ctx) if t.role == "user" else reply_gist(t.text),
        }
        for t in items
    ]
    if opening:
        rows.append({"speaker": user_name, "text": "", "open": "1"})
    rows = annotate_turns(rows, names, user_name)
    costs = [count(r["text"] + r.get("turns", "")) + ROW_OVERHEAD for r in rows]
    start = trim_start(start, costs, n_ctx // 2)
    return rows[start:], start
