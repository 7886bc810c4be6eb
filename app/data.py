"""Persist a group's members for the open conversation (export and delete all data: engine/data.py)."""

from __future__ import annotations

from typing import Any


def save_members(store: Any, cid: int, personas: list[Any], muted: set[str]) -> None:
    """Replace a conversation's companions (order, personas, mutes). Call it only while no
    round is running."""
    store.set_members(cid, [p.to_dict() for p in personas], muted)
