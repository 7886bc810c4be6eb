"""``mascot-app``: the desktop window.

    mascot-app                                   # open the window
    mascot-app --group writers-room              # start a new conversation with another group
    mascot-app --screenshot OUT.png [--say TEXT] # open, optionally run one round, save, exit

``--screenshot`` waits for the round through the session's ``round_finished`` signal (an event
loop, not a sleep), saves ``window.grab()`` and exits 0. Errors are one line on stderr (exit 1);
tracebacks go to ``<data folder>/logs/mascot-app.log``.

This file is also the PyInstaller entry script (``build.spec``), hence absolute imports. Qt and the
window's modules (``app.notify``, ``app.theme``, ``app.window``, ...) and the crisis screen are
imported in the functions that need them: the display check runs before Qt loads (Qt aborts without
its window libraries), and the probe children (``--llama-probe``, ``--safety-probe``) start without
them.
"""

from __future__ import annotations

import argparse
import re
import signal
import sys
from typing import Any

from app.platform_check import check_display
from engine.cipher import WrongPassphrase, is_encrypted
from engine.errors import InputError, MascotError, ModelError
from engine.llm.check import LlamaUnusable, ensure_llama_works, probe_main
from engine.models.registry import bundled_model_path
from engine.paths import db_path
from engine.persona_files import load_set
from engine.storage import Store, passphrase_for


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mascot-app",
        description="Mascot: a private group chat with AI companions on this computer.",
    )
    p.add_argument(
        "--group",
        metavar="NAME",
        help="start a new conversation with this persona set (support, workplace, writers-room, "
        "or a .json/.png file)",
    )
    p.add_argument("--say", metavar="TEXT", help="send this message once the window is open")
    p.add_argument(
        "--screenshot",
        metavar="OUT.png",
        help="save a screenshot of the whole window (after the --say round, if any) and exit",
    )
    p.add_argument(
        "--size",
        default="1280x820",
        metavar="WxH",
        help="window size for --screenshot (default: %(default)s)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if (
        argv[:1] == ["--llama-probe"] and len(argv) == 2
    ):  # the one-folder app's llama.cpp probe child
        return probe_main(argv[1])
    if (
        argv[:1] == ["--safety-probe"] and len(argv) == 2
    ):  # which screen a build runs (tests, support)
        return safety_probe(argv[1])
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except MascotError as e:
        print(f"mascot-app: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - one line for the user, the traceback to the log
        from app.notify import describe, log, setup_logging  # Qt: only once something failed

        setup_logging()
        log.exception("mascot-app failed")
        print(f"mascot-app: {describe(e)}", file=sys.stderr)
        return 1


def safety_probe(text: str) -> int:
    """Print the crisis screen's verdict on ``text`` as one JSON line, and whether its learned
    layer runs in this build."""
    import json

    from engine import safety  # the probe child loads the screen alone

    r = safety.assess(text)
    print(
        json.dumps(
            {"level": r.level, "source": r.source, "learned_available": safety.learned_available()}
        )
    )
    return 0


def run(args: argparse.Namespace) -> int:
    size = _size(args.size) if args.screenshot else None
    if args.group:
        load_set(args.group)  # a wrong name is a one-line error before any window opens

    problem = check_display()  # Qt would abort (SIGABRT) without its window libraries
    if problem:
        raise MascotError(problem)

    from PySide6.QtWidgets import QApplication

    from app import icons, theme  # Qt: only after the display check
    from app.notify import Notifier, install_excepthooks  # Qt, as above
    from app.window import MainWindow  # Qt, as above

    QApplication.setApplicationName("Mascot")
    QApplication.setOrganizationName("Mascot")
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setWindowIcon(icons.app_icon())
    theme.apply(app)
    notifier = Notifier()
    install_excepthooks(notifier)  # also starts the log file
    errors: list[str] = []
    notifier.posted.connect(lambda level, text: errors.append(text) if level == "error" else None)

    unusable = _llama_problem()
    if unusable:
        if args.screenshot:
            raise MascotError(unusable)
        from PySide6.QtWidgets import QMessageBox

        QMessageBox.critical(None, "Mascot cannot run its models on this computer", unusable)
        print(f"mascot-app: {unusable}", file=sys.stderr)
        return 1

    store = open_history(screenshot=bool(args.screenshot))
    if store is False:
        return 0  # the user quit at the unlock dialog
    window = MainWindow(notifier=notifier, store=store or None)
    if args.group:
        window.session.new_conversation(args.group)
    if size:
        window.resize(*size)
    window.show()
    if args.screenshot:
        return screenshot(app, window, args.screenshot, args.say, errors)
    if args.say:
        window.send(args.say)
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl+C in the terminal quits
    return app.exec()


def open_history(screenshot: bool = False) -> Any:
    """The history store when it is encrypted (None when it is plain: the window opens it):
    with ``MASCOT_PASSPHRASE``, else the passphrase typed in the unlock dialog (False when the
    user quits there). ``--screenshot`` runs take the variable only."""
    path = db_path()
    if not is_encrypted(path):
        return None
    if passphrase_for(path):
        try:
            return Store(path)
        except WrongPassphrase:
            if screenshot:
                raise
    elif screenshot:
        return Store(path)  # Locked: one line that names MASCOT_PASSPHRASE
    from app.privacy import unlock  # Qt, as above

    return unlock(path) or False


def _llama_problem() -> str | None:
    """The one-line reason llama.cpp cannot run here, from a subprocess probe (cached), or None."""
    try:
        ensure_llama_works(bundled_model_path())
    except LlamaUnusable as e:
        return str(e)
    except ModelError:
        return None  # no bundled model: the engine checks again with the model it loads
    return None


def screenshot(app: Any, window: Any, out: str, say: str | None, errors: list[str]) -> int:
    from PySide6.QtCore import QEventLoop, QTimer

    def settle() -> None:
        for _ in range(4):  # let queued layout and scroll updates run
            loop = QEventLoop()
            QTimer.singleShot(0, loop.quit)
            loop.exec()

    settle()
    if say:
        loop = QEventLoop()
        window.session.round_finished.connect(lambda _info: loop.quit())
        if not window.send(say):
            raise InputError(errors[-1] if errors else "The message could not be sent.")
        loop.exec()
    settle()
    if not window.grab().save(out):
        raise MascotError(
            f"Cannot write the screenshot to {out}; check the folder and the .png name."
        )
    window.close()
    if errors:
        print(f"mascot-app: {errors[0]}", file=sys.stderr)
        return 1
    return 0


def _size(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d{3,4})\s*[xX]\s*(\d{3,4})\s*", text or "")
    if not m:
        raise InputError(f"--size must look like 1280x820, not '{text}'.")
    return int(m.group(1)), int(m.group(2))


if __name__ == "__main__":
    sys.exit(main())
