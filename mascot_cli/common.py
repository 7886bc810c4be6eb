"""What the terminal commands share: the data store and coloured output."""

from __future__ import annotations

import sys

import click

from engine.cipher import PASSPHRASE_ENV, Locked
from engine.errors import InputError
from engine.storage import Store


def ask_secret(prompt: str) -> str:
    """A passphrase, typed unseen in a terminal, or the next line of standard input in a
    script. Nothing typed is an ``InputError``."""
    if sys.stdin is not None and sys.stdin.isatty():
        text = click.prompt(prompt, hide_input=True, default="", show_default=False)
    else:
        text = (sys.stdin.readline() if sys.stdin is not None else "").rstrip("\r\n")
    if not text:
        raise InputError(
            f"No passphrase given; type it when asked, or set {PASSPHRASE_ENV} for scripts."
        )
    return text


def open_store() -> Store:
    """The history database in the user's data folder; an encrypted one with
    ``MASCOT_PASSPHRASE`` or the passphrase typed when asked."""
    try:
        return Store()
    except Locked:
        return Store(passphrase=ask_secret("Passphrase of your history"))


def _rgb(color: str) -> tuple[int, int, int]:
    c = color.lstrip("#")
    return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


def paint(text: str, color: str | None, enabled: bool, bold: bool = True) -> str:
    if not enabled or not color:
        return text
    r, g, b = _rgb(color)
    return f"\x1b[{'1;' if bold else ''}38;2;{r};{g};{b}m{text}\x1b[0m"
