"""What the terminal commands share: the data store and coloured output."""

from __future__ import annotations

from engine.storage import Store


def open_store() -> Store:
    """The history database in the user's data folder."""
    return Store()


def _rgb(color: str) -> tuple[int, int, int]:
    c = color.lstrip("#")
    return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


def paint(text: str, color: str | None, enabled: bool, bold: bool = True) -> str:
    if not enabled or not color:
        return text
    r, g, b = _rgb(color)
    return f"\x1b[{'1;' if bold else ''}38;2;{r};{g};{b}m{text}\x1b[0m"
