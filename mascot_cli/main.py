"""The ``mascot`` command line: chat, personas, models, history.

Every error is one line on stderr and a non-zero exit code; unexpected failures are logged with
their traceback to ``<data folder>/logs/mascot.log`` and shown as one line.
"""

from __future__ import annotations

import logging
import queue
import sys
import threading
import traceback
from pathlib import Path
from typing import Any

import click

from engine.chat.group import GroupChat
from engine.chat.settings import ChatSettings
from engine.director.policies import POLICIES
from engine.errors import InputError, MascotError
from engine.models.voices import companion_default, describe_model, ensure_voices
from engine.paths import user_dir
from engine.persona_files import load_set
from engine.safety import DISCLOSURE
from mascot_cli.common import open_store, paint
from mascot_cli.library import data, doctor, history, models, personas

log = logging.getLogger("mascot")


@click.group()
@click.version_option(package_name="mascot")
def cli() -> None:
    """Mascot: a private group chat with AI companions, running entirely on this computer."""


# -- chat ---------------------------------------------------------------------------------------


@cli.command()
@click.option(
    "--group",
    "-g",
    default="support",
    show_default=True,
    help="A bundled/imported persona set (support, workplace, writers-room) or a .json/.png file.",
)
@click.option(
    "--policy",
    "-p",
    type=click.Choice(["director", "round-robin", "random", "all"]),
    default="director",
    show_default=True,
    help="Who speaks next.",
)
@click.option(
    "--max-speakers",
    type=int,
    default=3,
    show_default=True,
    help="At most this many companions answer per round (`all` ignores it).",
)
@click.option(
    "--min-speakers",
    type=int,
    default=None,
    help="The Director may end a round once this many companions spoke "
    "(default: --max-speakers, i.e. full rounds; 1 lets it end early).",
)
@click.option("--say", "say", default=None, help="Send one message, run one round and exit.")
@click.option(
    "--json", "as_json", is_flag=True, help="With --say: print one JSON object per event."
)
@click.option(
    "--conversation", "-c", type=int, default=None, help="Continue a stored conversation by id."
)
@click.option(
    "--model",
    "-m",
    default=None,
    help="Model for companions without their own (name or .gguf path). Default: the voices "
    "model (the bundled SmolLM2-135M with the voices adapter merged, built on first use); "
    "`bundled` for the plain model.",
)
@click.option("--director-model", default=None, help="Model for the Director (default: --model).")
@click.option(
    "--region",
    default=None,
    help="Crisis resources region (US, UK, CA, AU, IE, DE, FR, IN, NZ, INTL).",
)
@click.option("--seed", type=int, default=None, help="Sampling seed, for repeatable rounds.")
@click.option(
    "--max-tokens", type=int, default=None, help="Longest reply in tokens (default per persona)."
)
@click.option(
    "--name", "user_name", default="User", show_default=True, help="What the companions call you."
)
@click.option(
    "--history-tokens",
    type=int,
    default=None,
    help="Recent conversation each companion reads, in tokens (default 2048; 0 = all that fits).",
)
@click.option("--no-color", is_flag=True, help="Plain text output.")
@click.option("--no-save", is_flag=True, help="Do not store this conversation in the history.")
def chat(
    group: str,
    policy: str,
    max_speakers: int,
    min_speakers: int | None,
    say: str | None,
    as_json: bool,
    conversation: int | None,
    model: str | None,
    director_model: str | None,
    region: str | None,
    seed: int | None,
    max_tokens: int | None,
    user_name: str,
    history_tokens: int | None,
    no_color: bool,
    no_save: bool,
) -> None:
    """Talk with a group of companions (interactive, or one round with --say)."""
    if as_json and say is None:
        raise InputError('--json needs --say "TEXT" (one round, machine-readable).')
    if max_tokens is not None and not 8 <= max_tokens <= 1024:
        raise InputError("--max-tokens must be between 8 and 1024.")
    store = None if no_save else open_store()
    if model is None:
        model = _voices(store)
    settings = ChatSettings(
        policy=policy,
        max_speakers=max_speakers,
        min_speakers=min_speakers,
        user_name=user_name.strip() or "User",
        region=region,
        seed=seed,
        model=model,
        director_model=director_model,
        max_tokens=max_tokens,
        **({} if history_tokens is None else {"history_tokens": history_tokens}),
    )
    pset = load_set(group)
    session = GroupChat(pset, settings=settings, store=store, conversation_id=conversation)
    color = sys.stdout.isatty() and not no_color and not as_json
    if say is not None:
        _round(session, say, as_json, color)
        return
    click.echo(
        paint(f"{pset.title}", "#888888", color)
        + " — "
        + ", ".join(paint(p.name, p.color, color) for p in session.members)
    )
    click.echo(paint(f"Companions run on {describe_model(settings.model)}.", "#888888", color))
    click.echo(DISCLOSURE)
    click.echo(
        "Type a message and press Enter. /help for commands, /quit to leave; Ctrl+C stops a round."
    )
    # Prefill every companion's prompt while the user types (stopped as soon as they send).
    stop_warm = threading.Event()
    warm = threading.Thread(target=_quiet(session.warm), args=(stop_warm,), daemon=True)
    warm.start()
    while True:
        try:
            line = input(paint("You> ", "#aaaaaa", color))
        except (EOFError, KeyboardInterrupt):
            click.echo()
            break
        line = line.strip()
        if not line:
            continue
        if line.startswith("/"):
            if _command(session, line):
                break
            continue
        stop_warm.set()
        warm.join()
        try:
            _round(session, line, False, color)
        except MascotError as e:
            click.echo(f"Error: {e}", err=True)


def _voices(store: Any) -> str | None:
    """The companions' default model: the voices model, built here on first use (one line on
    stderr while it is built, and one if it cannot be: then the plain model)."""
    result = ensure_voices(
        store,
        progress=lambda _step: click.echo(
            "Building the voices model (first use only; a few seconds)…", err=True
        ),
    )
    if result.message:
        click.echo(result.message, err=True)
    return companion_default(store) if result.usable else None


def _quiet(fn: Any) -> Any:
    """Run a background helper; a failure there must not disturb the prompt (it is logged)."""

    def run(*args: Any) -> None:
        try:
            fn(*args)
        except Exception:
            log.debug("background warm-up failed", exc_info=True)

    return run


def _command(session: Any, line: str) -> bool:
    cmd, _, arg = line[1:].partition(" ")
    arg = arg.strip()
    if cmd in ("quit", "exit", "q"):
        return True
    if cmd == "help":
        click.echo(
            "/mute NAME, /unmute NAME, /policy director|round-robin|random|all, /max N, /who, /quit"
        )
    elif cmd in ("mute", "unmute"):
        try:
            session.mute(arg, cmd == "mute")
            click.echo(f"{arg} {'muted' if cmd == 'mute' else 'unmuted'}.")
        except MascotError as e:
            click.echo(f"Error: {e}", err=True)
    elif cmd == "policy":
        if arg not in POLICIES:
            click.echo(f"Error: use one of {', '.join(POLICIES)}.", err=True)
        else:
            session.settings.policy = arg
            click.echo(f"Policy: {arg}.")
    elif cmd == "max":
        if arg.isdigit() and 1 <= int(arg) <= 8:
            session.settings.max_speakers = int(arg)
        else:
            click.echo("Error: /max takes a number from 1 to 8.", err=True)
    elif cmd == "who":
        for p in session.members:
            click.echo(f"{p.name}{' (muted)' if p.name in session.muted else ''}: {p.role}")
    else:
        click.echo(f"Error: unknown command /{cmd}; try /help.", err=True)
    return False


def _round(session: Any, text: str, as_json: bool, color: bool) -> None:
    """Run one round in a worker thread so Ctrl+C cancels it cleanly."""
    cancel = threading.Event()
    events: queue.Queue = queue.Queue()
    failure: list[BaseException] = []

    def work() -> None:
        try:
            for ev in session.send(text, cancel):
                events.put(ev)
        except BaseException as e:  # noqa: BLE001 - delivered to the main thread
            failure.append(e)
        finally:
            events.put(None)

    t = threading.Thread(target=work, daemon=True)
    t.start()
    colors = {p.name: p.color for p in session.members}
    streaming: str | None = None
    errors: list[str] = []
    while True:
        try:
            ev = events.get()
        except KeyboardInterrupt:
            cancel.set()
            click.echo("\n[stopping…]", err=True)
            continue
        if ev is None:
            break
        if as_json:
            if ev.type != "token":
                click.echo(ev.to_json())
            if ev.type == "error":
                errors.append(ev.data["message"])
            continue
        if ev.type == "token":
            if streaming != ev.data["speaker"]:
                streaming = ev.data["speaker"]
                click.echo(paint(f"{streaming}: ", colors.get(streaming), color), nl=False)
            click.echo(ev.data["text"], nl=False)
        elif ev.type == "message":
            if streaming != ev.data["speaker"]:  # safety messages are not streamed
                click.echo(
                    paint(f"{ev.data['speaker']}: ", colors.get(ev.data["speaker"]), color)
                    + ev.data["text"],
                    nl=False,
                )
            click.echo()
            streaming = None
        elif ev.type == "safety":
            if ev.data.get("emergency"):  # behaviour in progress: the number to call comes first
                click.echo(paint(f"⚠ EMERGENCY: {ev.data['emergency']['text']}", "#d9534f", color))
            click.echo(paint("⚠ You matter, and help is available right now:", "#d9534f", color))
            for r in ev.data["resources"]:
                click.echo(
                    f"  • {r['name']}: {r['contact']}" + (f" ({r['url']})" if r.get("url") else "")
                )
        elif ev.type == "notice":
            click.echo(paint(f"[{ev.data['text']}]", "#888888", color, bold=False))
        elif ev.type == "memory":
            click.echo(paint(f"[Remembered: {ev.data['text']}]", "#888888", color, bold=False))
        elif ev.type == "error":
            errors.append(ev.data["message"])
        elif ev.type == "round_end" and ev.data.get("cancelled"):
            click.echo(paint("[round stopped]", "#888888", color, bold=False))
    t.join()
    if failure:
        raise failure[0]
    if errors:
        raise MascotError(errors[0])


# -- personas, models, doctor, history, data (mascot_cli/library.py) -----------------------------

for _command_group in (personas, models, doctor, history, data):
    cli.add_command(_command_group)


def _log_file() -> Path | None:
    try:
        d = user_dir() / "logs"
        d.mkdir(exist_ok=True)
        return d / "mascot.log"
    except Exception:  # noqa: BLE001 - no log file is no reason to fail
        return None


def main(argv: list[str] | None = None) -> int:
    try:
        cli.main(args=argv, prog_name="mascot", standalone_mode=False)
        return 0
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return 130
    except click.ClickException as e:
        click.echo(f"Error: {e.format_message()}", err=True)
        return e.exit_code
    except MascotError as e:
        click.echo(f"Error: {e}", err=True)
        return 1
    except KeyboardInterrupt:
        click.echo("Stopped.", err=True)
        return 130
    except Exception as e:  # noqa: BLE001 - never a traceback for users: log it, show one line
        path = _log_file()
        if path:
            with open(path, "a", encoding="utf-8") as f:
                f.write(traceback.format_exc() + "\n")
        click.echo(
            f"Error: unexpected failure ({type(e).__name__}: {str(e)[:200]})"
            + (f"; details in {path}" if path else ""),
            err=True,
        )
        return 2


if __name__ == "__main__":
    sys.exit(main())
