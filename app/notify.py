"""The one path by which errors and notices reach the user.

Everything that goes wrong ends up in :class:`Notifier`: ``MascotError`` lines from workers,
unexpected exceptions from ``sys.excepthook`` and ``threading.excepthook``, and plain notices.
The window shows them (status bar, and an error strip for errors); unexpected ones are also
logged with their traceback to ``<data folder>/logs/mascot-app.log``. Nothing is a crash.
"""

from __future__ import annotations

import logging
import logging.handlers
import sys
import threading
import traceback
from pathlib import Path
from types import TracebackType

from PySide6.QtCore import QObject, Signal

from engine.errors import MascotError
from engine.paths import user_dir

log = logging.getLogger("mascot.app")


def log_path() -> Path:
    d = user_dir() / "logs"
    d.mkdir(parents=True, exist_ok=True)
    return d / "mascot-app.log"


def setup_logging() -> Path:
    """Log warnings and errors (with tracebacks) to a small rotating file in the data folder."""
    path = log_path()
    for h in list(log.handlers):
        if isinstance(h, logging.FileHandler) and Path(h.baseFilename) != path:
            log.removeHandler(h)
            h.close()
    if not any(isinstance(h, logging.FileHandler) for h in log.handlers):
        handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=1_000_000, backupCount=2, encoding="utf-8", delay=True
        )
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    return path


def close_logging() -> None:
    for h in list(log.handlers):
        log.removeHandler(h)
        h.close()


def describe(exc: BaseException) -> str:
    """One line for the user: a MascotError's own message, otherwise a short summary."""
    if isinstance(exc, MascotError):
        return str(exc)
    first = (str(exc).strip().splitlines() or [""])[0][:200]
    detail = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    return f"Something went wrong ({detail}); details are in {log_path()}."


class Notifier(QObject):
    """Thread-safe: ``post`` may be called from any thread; ``posted`` arrives on the GUI thread."""

    posted = Signal(str, str)  # level ("info" | "warning" | "error"), one line of text

    def info(self, text: str) -> None:
        self.posted.emit("info", text)

    def warning(self, text: str) -> None:
        log.warning(text)
        self.posted.emit("warning", text)

    def error(self, text: str) -> None:
        log.error(text)
        self.posted.emit("error", text)

    def exception(
        self, exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None
    ) -> None:
        """Log an unexpected exception with its traceback and tell the user in one line."""
        if not isinstance(exc, MascotError):
            log.error(
                "unexpected error\n%s", "".join(traceback.format_exception(exc_type, exc, tb))
            )
        self.posted.emit("error", describe(exc))


def install_excepthooks(notifier: Notifier) -> None:
    """Route uncaught exceptions (GUI thread and worker threads) to the notifier and the log."""
    setup_logging()

    def hook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(exc_type, KeyboardInterrupt):
            sys.__excepthook__(exc_type, exc, tb)
            return
        notifier.exception(exc_type, exc, tb)

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is SystemExit or args.exc_value is None:
            return
        notifier.exception(args.exc_type, args.exc_value, args.exc_traceback)

    sys.excepthook = hook
    threading.excepthook = thread_hook


def uninstall_excepthooks() -> None:
    sys.excepthook = sys.__excepthook__
    threading.excepthook = threading.__excepthook__
