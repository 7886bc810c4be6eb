"""The ``mascot`` command line: chat, personas, models, history.

Every error is one line on stderr and a non-zero exit code; unexpected failures are logged with
their traceback to ``<data folder>/logs/mascot.log`` and shown as one line.
"""

from __future__ import annotations

import json
import logging
import queue
import sys
import threading
import traceback
from pathlib import Path
from typing import Any

import click

from engine.errors import InputError, MascotError

log = logging.getLogger("mascot")


def _store() -> Any:
    from engine.storage import Store
    return Store()


def _rgb(color: str) -> tuple[int, int, int]:
    c = color.lstrip("#")
    return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


def paint(text: str, color: str | None, enabled: bool, bold: bool = True) -> str:
    if not enabled or not color:
        return text
    r, g, b = _rgb(color)
    return f"\x1b[{'1;' if bold else ''}38;2;{r};{g};{b}m{text}\x1b[0m"


@click.group()
@click.version_option(package_name="mascot")
def cli() -> None:
    """Mascot: a private group chat with AI companions, running entirely on this computer."""


# -- chat ---------------------------------------------------------------------------------------

@cli.command()
@click.option("--group", "-g", default="support", show_default=True,
              help="A bundled/imported persona set (support, workplace, writers-room) or a .json/.png file.")
@click.option("--policy", "-p", type=click.Choice(["director", "round-robin", "random", "all"]),
              default="director", show_default=True, help="Who speaks next.")
@click.option("--max-speakers", type=int, default=3, show_default=True,
              help="At most this many companions answer per round (`all` ignores it).")
@click.option("--min-speakers", type=int, default=None,
              help="The Director may end a round once this many companions spoke "
                   "(default: --max-speakers, i.e. full rounds; 1 lets it end early).")
@click.option("--say", "say", default=None, help="Send one message, run one round and exit.")
@click.option("--json", "as_json", is_flag=True, help="With --say: print one JSON object per event.")
@click.option("--conversation", "-c", type=int, default=None, help="Continue a stored conversation by id.")
@click.option("--model", "-m", default=None, help="Model for companions without their own (name or .gguf path).")
@click.option("--director-model", default=None, help="Model for the Director (default: --model).")
@click.option("--region", default=None, help="Crisis resources region (US, UK, CA, AU, IE, DE, FR, IN, NZ, INTL).")
@click.option("--seed", type=int, default=None, help="Sampling seed, for repeatable rounds.")
@click.option("--max-tokens", type=int, default=None, help="Longest reply in tokens (default per persona).")
@click.option("--name", "user_name", default="User", show_default=True, help="What the companions call you.")
@click.option("--history-tokens", type=int, default=None,
              help="Recent conversation each companion reads, in tokens (default 2048; 0 = all that fits).")
@click.option("--no-color", is_flag=True, help="Plain text output.")
@click.option("--no-save", is_flag=True, help="Do not store this conversation in the history.")
def chat(group: str, policy: str, max_speakers: int, min_speakers: int | None, say: str | None,
         as_json: bool, conversation: int | None, model: str | None, director_model: str | None,
         region: str | None, seed: int | None, max_tokens: int | None, user_name: str,
         history_tokens: int | None, no_color: bool, no_save: bool) -> None:
    """Talk with a group of companions (interactive, or one round with --say)."""
    from engine.chat.group import GroupChat
    from engine.chat.settings import ChatSettings
    from engine.personas import load_set
    from engine.safety import DISCLOSURE

    if as_json and say is None:
        raise InputError("--json needs --say \"TEXT\" (one round, machine-readable).")
    if max_tokens is not None and not 8 <= max_tokens <= 1024:
        raise InputError("--max-tokens must be between 8 and 1024.")
    settings = ChatSettings(policy=policy, max_speakers=max_speakers, min_speakers=min_speakers,
                            user_name=user_name.strip() or "User", region=region, seed=seed,
                            model=model, director_model=director_model, max_tokens=max_tokens,
                            **({} if history_tokens is None else {"history_tokens": history_tokens}))
    store = None if no_save else _store()
    pset = load_set(group)
    session = GroupChat(pset, settings=settings, store=store, conversation_id=conversation)
    color = sys.stdout.isatty() and not no_color and not as_json
    if say is not None:
        _round(session, say, as_json, color)
        return
    click.echo(paint(f"{pset.title}", "#888888", color) + " — " + ", ".join(
        paint(p.name, p.color, color) for p in session.members))
    click.echo(DISCLOSURE)
    click.echo("Type a message and press Enter. /help for commands, /quit to leave; Ctrl+C stops a round.")
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
        click.echo("/mute NAME, /unmute NAME, /policy director|round-robin|random|all, "
                   "/max N, /who, /quit")
    elif cmd in ("mute", "unmute"):
        try:
            session.mute(arg, cmd == "mute")
            click.echo(f"{arg} {'muted' if cmd == 'mute' else 'unmuted'}.")
        except MascotError as e:
            click.echo(f"Error: {e}", err=True)
    elif cmd == "policy":
        from engine.director.policies import POLICIES
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
        except BaseException as e:  # delivered to the main thread
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
                click.echo(paint(f"{ev.data['speaker']}: ", colors.get(ev.data["speaker"]), color)
                           + ev.data["text"], nl=False)
            click.echo()
            streaming = None
        elif ev.type == "safety":
            if ev.data.get("emergency"):  # behaviour in progress: the number to call comes first
                click.echo(paint(f"⚠ EMERGENCY: {ev.data['emergency']['text']}", "#d9534f", color))
            click.echo(paint("⚠ You matter, and help is available right now:", "#d9534f", color))
            for r in ev.data["resources"]:
                click.echo(f"  • {r['name']}: {r['contact']}" + (f" ({r['url']})" if r.get("url") else ""))
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


# -- personas ------------------------------------------------------------------------------------

@cli.group()
def personas() -> None:
    """List, show, import and export personas and persona sets."""


@personas.command("list")
def personas_list() -> None:
    from engine.personas import list_sets
    for s in list_sets():
        click.echo(f"{s.name:14} {s.title} — {', '.join(s.names)}")


@personas.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the set as JSON.")
def personas_show(name: str, as_json: bool) -> None:
    """Show a set (by name or file) or one companion (SET/NAME)."""
    from engine.personas import load_set
    set_name, _, member = name.partition("/")
    s = load_set(set_name)
    members = [s.member(member)] if member else s.members
    if as_json:
        click.echo(json.dumps([p.to_dict() for p in members] if member else s.to_dict(),
                              indent=2, ensure_ascii=False))
        return
    if not member:
        click.echo(f"{s.title} ({s.name}, {s.domain}): {s.description}\n")
    for p in members:
        click.echo(f"{p.avatar} {p.name} — {p.role}\n  traits: {', '.join(p.traits)}\n"
                   f"  style: {p.speaking_style}\n  colour: {p.color}"
                   + (f"\n  model: {p.model}" if p.model else "") + "\n")


@personas.command("import")
@click.argument("path", type=click.Path(path_type=Path))
def personas_import(path: Path) -> None:
    """Import a persona set (.json), a persona, or a Character Card (.json/.png, V1/V2/V3)."""
    from engine.personas import load_set_file, save_user_set
    s = load_set_file(path)
    out = save_user_set(s)
    click.echo(f"Imported '{s.name}' ({', '.join(s.names)}) to {out}. "
               f"Chat with: mascot chat --group {out.stem}")


@personas.command("export")
@click.argument("name")
@click.argument("out", type=click.Path(path_type=Path))
@click.option("--spec", type=click.Choice(["v2", "v3"]), default="v2", show_default=True,
              help="Character Card version for .png/.json card exports.")
def personas_export(name: str, out: Path, spec: str) -> None:
    """Export SET/NAME as a Character Card (.png or .json), or a whole SET as a set .json."""
    from engine.personas import load_set
    set_name, _, member = name.partition("/")
    s = load_set(set_name)
    if not member:
        if out.suffix.lower() != ".json":
            raise InputError("A whole set exports as .json; for a card name one companion: SET/NAME.")
        out.write_text(json.dumps(s.to_dict(), indent=2, ensure_ascii=False), encoding="utf-8")
    else:
        from engine.cards import export_card
        export_card(s.member(member), out, spec=f"chara_card_{spec}")
    click.echo(f"Wrote {out}")


# -- models ------------------------------------------------------------------------------------

@cli.group()
def models() -> None:
    """List, add and verify GGUF model files."""


@models.command("list")
@click.option("--json", "as_json", is_flag=True)
def models_list(as_json: bool) -> None:
    from engine.models.registry import ModelRegistry
    items = ModelRegistry(_store()).list()
    if as_json:
        click.echo(json.dumps([{k: v for k, v in m.to_dict().items() if k != "chat_template"} for m in items], indent=2))
        return
    for m in items:
        if m.kind == "lora":
            click.echo(f"{m.name:32} {m.size_mb:8.1f} MB  {m.architecture:10} {m.quantization:8} "
                       f"LoRA on {m.base}  sha256 {m.sha256[:12]}…")
            continue
        click.echo(f"{m.name:32} {m.size_mb:8.1f} MB  {m.architecture:10} {m.quantization:8} "
                   f"ctx {m.context_length:<6} sha256 {m.sha256[:12]}…{'  (bundled)' if m.bundled else ''}")


@models.command("add")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--name", default=None, help="Name to register it under (default: from the file).")
def models_add(path: Path, name: str | None) -> None:
    """Check a GGUF file and register it."""
    from engine.models.registry import ModelRegistry
    m = ModelRegistry(_store()).add(path, name)
    click.echo(f"Added {m.name}: {m.architecture}, {m.quantization}, context {m.context_length}, "
               f"{m.size_mb:.1f} MB, sha256 {m.sha256}")


@models.command("add-adapter")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--base", required=True, help="The model it was trained on (registered name or .gguf path).")
@click.option("--name", default=None, help="Name to register it under (default: from the file name).")
def models_add_adapter(path: Path, base: str, name: str | None) -> None:
    """Check a LoRA adapter GGUF and register it over a base model (personas can use its name)."""
    from engine.models.registry import ModelRegistry
    m = ModelRegistry(_store()).add_adapter(path, base, name)
    click.echo(f"Added adapter {m.name}: LoRA on {m.base}, {m.quantization}, {m.size_mb:.1f} MB, "
               f"sha256 {m.sha256}")


@models.command("remove")
@click.argument("name")
def models_remove(name: str) -> None:
    """Forget a registered model (the file stays on disk)."""
    from engine.models.registry import ModelRegistry
    ModelRegistry(_store()).remove(name)
    click.echo(f"Removed {name} from the model list (the file was not deleted).")


@models.command("verify")
@click.argument("name", required=False)
def models_verify(name: str | None) -> None:
    """Re-check a model (or all) against its recorded sha256."""
    from engine.models.registry import ModelRegistry
    reg = ModelRegistry(_store())
    names = [name] if name else [m.name for m in reg.list()]
    bad = 0
    for n in names:
        ok, msg = reg.verify(n)
        click.echo(msg)
        bad += not ok
    if bad:
        raise MascotError(f"{bad} model(s) failed verification.")


@models.command("catalog")
@click.option("--companions", default=4, show_default=True, help="Companions sharing the model (plus the Director).")
@click.option("--context", "n_ctx", default=4096, show_default=True, help="Tokens of context.")
@click.option("--json", "as_json", is_flag=True)
def models_catalog(companions: int, n_ctx: int, as_json: bool) -> None:
    """The curated models with what each needs and whether it fits this computer (docs/models.md)."""
    from engine.models.catalog import entry_need, fit, gb, load_catalog, memory_info, recommend
    entries = load_catalog()
    total, available = memory_info()
    fits = {e.id: fit(entry_need(e, n_ctx=n_ctx, companions=companions), total, available) for e in entries}
    pick = recommend(entries, fits)
    if as_json:
        click.echo(json.dumps([{"id": e.id, "name": e.name, "repo": e.repo, "file": e.file,
                                "size_bytes": e.size_bytes, "need_bytes": fits[e.id].need,
                                "fit": fits[e.id].label, "recommended": e.id == pick, "licence": e.licence}
                               for e in entries], indent=2))
        return
    click.echo(f"This computer: {gb(total)} of memory, {gb(available)} free; {companions} companions, "
               f"{n_ctx:,} tokens of context.")
    for e in entries:
        f = fits[e.id]
        click.echo(f"{'*' if e.id == pick else ' '} {e.id:24} {e.size_bytes / 1e9:5.2f} GB  needs {gb(f.need):>7}  "
                   f"{f.label:12} {e.licence}")
    if pick:
        click.echo(f"* recommended; download it with `mascot models get {pick}`.")


@models.command("get")
@click.argument("model_id")
def models_get(model_id: str) -> None:
    """Download a catalog model (resumes an interrupted download, checks its sha256) and register it."""
    import sys
    from engine.models.catalog import load_catalog
    from engine.models.hub import download_gguf
    entries = {e.id: e for e in load_catalog()}
    e = entries.get(model_id)
    if e is None:
        raise InputError(f"No catalog model '{model_id}'; see `mascot models catalog` ({', '.join(entries)}).")
    shown = [0.0]

    def progress(done: int, total: int, status) -> None:
        import time
        if time.monotonic() - shown[0] > 1 or status.phase in ("verifying", "done"):
            shown[0] = time.monotonic()
            extra = status.describe(done, total)
            print(f"\r{done / 1e6:,.0f} of {total / 1e6:,.0f} MB {extra}   ", end="", file=sys.stderr, flush=True)

    path = download_gguf(e.repo, e.file, None, progress, None, store=_store(), revision=e.revision,
                         sha256=e.sha256, md5=e.md5, size=e.size_bytes, name=e.id)
    print(file=sys.stderr)
    click.echo(f"Downloaded and verified {e.name} ({path}); use it with --model {e.id}.")


# -- doctor --------------------------------------------------------------------------------------

@cli.command()
@click.option("--no-verify", is_flag=True, help="Skip re-hashing the registered models (faster).")
def doctor(no_verify: bool) -> None:
    """Print what a bug report needs: versions, CPU and llama.cpp build, probe, data, models, disk, RAM."""
    from engine.doctor import text
    click.echo(text(verify_models=not no_verify))


# -- history -------------------------------------------------------------------------------------

@cli.group()
def history() -> None:
    """List, export and delete stored conversations."""


@history.command("list")
@click.option("--search", "-s", default="", help="Only conversations whose title or messages contain this.")
def history_list(search: str) -> None:
    rows = _store().conversations(search)
    if not rows:
        click.echo("No conversations yet.")
    for r in rows:
        click.echo(f"{r['id']:>5}  {r['updated'][:16].replace('T', ' ')}  {r['group_name']:12} "
                   f"{r['n_messages']:>4} msgs  {r['title']}")


@history.command("export")
@click.argument("conversation_id", type=int)
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True)
@click.option("--out", "-o", type=click.Path(path_type=Path), default=None, help="File (default: stdout).")
def history_export(conversation_id: int, fmt: str, out: Path | None) -> None:
    store = _store()
    text = (store.export_markdown(conversation_id) if fmt == "md"
            else json.dumps(store.export_json(conversation_id), indent=2, ensure_ascii=False))
    if out:
        out.write_text(text, encoding="utf-8")
        click.echo(f"Wrote {out}")
    else:
        click.echo(text)


@history.command("delete")
@click.argument("conversation_id", type=int)
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def history_delete(conversation_id: int, yes: bool) -> None:
    store = _store()
    conv = store.conversation(conversation_id)
    if not yes and not click.confirm(f"Delete '{conv['title']}' and all its messages?"):
        click.echo("Nothing deleted.")
        return
    store.delete_conversation(conversation_id)
    click.echo(f"Deleted conversation {conversation_id}.")


# -- all data ------------------------------------------------------------------------------------

@cli.group()
def data() -> None:
    """Export or delete everything Mascot stores on this computer."""


@data.command("export")
@click.argument("out", type=click.Path(path_type=Path))
def data_export(out: Path) -> None:
    """Write every conversation (JSON + Markdown), imported personas, remembered facts and the
    model list to a .zip."""
    import zipfile
    from engine.models.registry import ModelRegistry
    from engine.personas import user_personas_dir
    if out.suffix.lower() != ".zip":
        raise InputError("Give a .zip file name for the export, e.g. mascot-data.zip.")
    store = _store()
    convs = list(store.iter_all())
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("conversations.json", json.dumps(convs, indent=2, ensure_ascii=False))
        for c in convs:
            cid = c["conversation"]["id"]
            z.writestr(f"conversations/{cid:05d}.md", store.export_markdown(cid))
        for f in sorted(user_personas_dir().glob("*.json")):
            z.write(f, f"personas/{f.name}")
        z.writestr("models.json", json.dumps([m.to_dict() for m in ModelRegistry(store).list()], indent=2))
        z.writestr("memory.json", json.dumps(store.memories(), indent=2, ensure_ascii=False))
    click.echo(f"Wrote {len(convs)} conversation(s) to {out}")


@data.command("delete")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def data_delete(yes: bool) -> None:
    """Delete all conversations, remembered facts, imported personas, registered models (files
    stay) and logs."""
    import shutil
    from engine.paths import user_dir
    if not yes and not click.confirm("Delete ALL conversations, imported personas and settings?"):
        click.echo("Nothing deleted.")
        return
    _store().delete_all()
    for sub in ("personas", "logs"):
        shutil.rmtree(user_dir() / sub, ignore_errors=True)
    click.echo(f"Deleted all Mascot data in {user_dir()}.")


# -- entry point ---------------------------------------------------------------------------------

def _log_file() -> Path | None:
    try:
        from engine.paths import user_dir
        d = user_dir() / "logs"
        d.mkdir(exist_ok=True)
        return d / "mascot.log"
    except Exception:
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
    except Exception as e:  # never a traceback for users: log it, show one line
        path = _log_file()
        if path:
            with open(path, "a", encoding="utf-8") as f:
                f.write(traceback.format_exc() + "\n")
        click.echo(f"Error: unexpected failure ({type(e).__name__}: {str(e)[:200]})"
                   + (f"; details in {path}" if path else ""), err=True)
        return 2


if __name__ == "__main__":
    sys.exit(main())
