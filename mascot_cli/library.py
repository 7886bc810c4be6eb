"""``mascot`` sub-commands for what is kept on this computer: personas, models, history, data, doctor."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from engine.card_files import export_card
from engine.cipher import NO_RECOVERY, PASSPHRASE_ENV, Conversion, check_passphrase
from engine.data import delete_all, write_export
from engine.doctor import text as doctor_text
from engine.errors import InputError, MascotError
from engine.models.catalog import entry_need, fit, gb, load_catalog, memory_info, recommend
from engine.models.hub import download_gguf
from engine.models.registry import ModelRegistry
from engine.paths import user_dir
from engine.persona_files import list_sets, load_set, load_set_file, save_user_set
from engine.storage import passphrase_for
from mascot_cli.common import ask_secret, open_store


@click.group()
def personas() -> None:
    """List, show, import and export personas and persona sets."""


@personas.command("list")
def personas_list() -> None:
    for s in list_sets():
        click.echo(f"{s.name:14} {s.title} — {', '.join(s.names)}")


@personas.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the set as JSON.")
def personas_show(name: str, as_json: bool) -> None:
    """Show a set (by name or file) or one companion (SET/NAME)."""
    set_name, _, member = name.partition("/")
    s = load_set(set_name)
    members = [s.member(member)] if member else s.members
    if as_json:
        click.echo(
            json.dumps(
                [p.to_dict() for p in members] if member else s.to_dict(),
                indent=2,
                ensure_ascii=False,
            )
        )
        return
    if not member:
        click.echo(f"{s.title} ({s.name}, {s.domain}): {s.description}\n")
    for p in members:
        click.echo(
            f"{p.avatar} {p.name} — {p.role}\n  traits: {', '.join(p.traits)}\n"
            f"  style: {p.speaking_style}\n  colour: {p.color}"
            + (f"\n  model: {p.model}" if p.model else "")
            + "\n"
        )


@personas.command("import")
@click.argument("path", type=click.Path(path_type=Path))
def personas_import(path: Path) -> None:
    """Import a persona set (.json), a persona, or a Character Card (.json/.png, V1/V2/V3)."""
    s = load_set_file(path)
    out = save_user_set(s)
    click.echo(
        f"Imported '{s.name}' ({', '.join(s.names)}) to {out}. "
        f"Chat with: mascot chat --group {out.stem}"
    )


@personas.command("export")
@click.argument("name")
@click.argument("out", type=click.Path(path_type=Path))
@click.option(
    "--spec",
    type=click.Choice(["v2", "v3"]),
    default="v2",
    show_default=True,
    help="Character Card version for .png/.json card exports.",
)
def personas_export(name: str, out: Path, spec: str) -> None:
    """Export SET/NAME as a Character Card (.png or .json), or a whole SET as a set .json."""
    set_name, _, member = name.partition("/")
    s = load_set(set_name)
    if not member:
        if out.suffix.lower() != ".json":
            raise InputError(
                "A whole set exports as .json; for a card name one companion: SET/NAME."
            )
        out.write_text(json.dumps(s.to_dict(), indent=2, ensure_ascii=False), encoding="utf-8")
    else:
        export_card(s.member(member), out, spec=f"chara_card_{spec}")
    click.echo(f"Wrote {out}")


# -- models ------------------------------------------------------------------------------------


@click.group()
def models() -> None:
    """List, add and verify GGUF model files."""


@models.command("list")
@click.option("--json", "as_json", is_flag=True)
def models_list(as_json: bool) -> None:
    items = ModelRegistry(open_store()).list()
    if as_json:
        click.echo(
            json.dumps(
                [{k: v for k, v in m.to_dict().items() if k != "chat_template"} for m in items],
                indent=2,
            )
        )
        return
    for m in items:
        if m.kind == "lora":
            click.echo(
                f"{m.name:32} {m.size_mb:8.1f} MB  {m.architecture:10} {m.quantization:8} "
                f"LoRA on {m.base}  sha256 {m.sha256[:12]}…"
            )
            continue
        click.echo(
            f"{m.name:32} {m.size_mb:8.1f} MB  {m.architecture:10} {m.quantization:8} "
            f"ctx {m.context_length:<6} sha256 {m.sha256[:12]}…{'  (bundled)' if m.bundled else ''}"
        )


@models.command("add")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--name", default=None, help="Name to register it under (default: from the file).")
def models_add(path: Path, name: str | None) -> None:
    """Check a GGUF file and register it."""
    m = ModelRegistry(open_store()).add(path, name)
    click.echo(
        f"Added {m.name}: {m.architecture}, {m.quantization}, context {m.context_length}, "
        f"{m.size_mb:.1f} MB, sha256 {m.sha256}"
    )


@models.command("add-adapter")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--base", required=True, help="The model it was trained on (registered name or .gguf path)."
)
@click.option(
    "--name", default=None, help="Name to register it under (default: from the file name)."
)
def models_add_adapter(path: Path, base: str, name: str | None) -> None:
    """Check a LoRA adapter GGUF and register it over a base model (personas can use its name)."""
    m = ModelRegistry(open_store()).add_adapter(path, base, name)
    click.echo(
        f"Added adapter {m.name}: LoRA on {m.base}, {m.quantization}, {m.size_mb:.1f} MB, "
        f"sha256 {m.sha256}"
    )


@models.command("remove")
@click.argument("name")
def models_remove(name: str) -> None:
    """Forget a registered model (the file stays on disk)."""
    ModelRegistry(open_store()).remove(name)
    click.echo(f"Removed {name} from the model list (the file was not deleted).")


@models.command("verify")
@click.argument("name", required=False)
def models_verify(name: str | None) -> None:
    """Re-check a model (or all) against its recorded sha256."""
    reg = ModelRegistry(open_store())
    names = [name] if name else [m.name for m in reg.list()]
    bad = 0
    for n in names:
        ok, msg = reg.verify(n)
        click.echo(msg)
        bad += not ok
    if bad:
        raise MascotError(f"{bad} model(s) failed verification.")


@models.command("catalog")
@click.option(
    "--companions",
    default=4,
    show_default=True,
    help="Companions sharing the model (plus the Director).",
)
@click.option("--context", "n_ctx", default=4096, show_default=True, help="Tokens of context.")
@click.option("--json", "as_json", is_flag=True)
def models_catalog(companions: int, n_ctx: int, as_json: bool) -> None:
    """The curated models with what each needs and whether it fits this computer (docs/models.md)."""
    entries = load_catalog()
    total, available = memory_info()
    fits = {
        e.id: fit(entry_need(e, n_ctx=n_ctx, companions=companions), total, available)
        for e in entries
    }
    pick = recommend(entries, fits)
    if as_json:
        click.echo(
            json.dumps(
                [
                    {
                        "id": e.id,
                        "name": e.name,
                        "repo": e.repo,
                        "file": e.file,
                        "size_bytes": e.size_bytes,
                        "need_bytes": fits[e.id].need,
                        "fit": fits[e.id].label,
                        "recommended": e.id == pick,
                        "licence": e.licence,
                    }
                    for e in entries
                ],
                indent=2,
            )
        )
        return
    click.echo(
        f"This computer: {gb(total)} of memory, {gb(available)} free; {companions} companions, "
        f"{n_ctx:,} tokens of context."
    )
    for e in entries:
        f = fits[e.id]
        click.echo(
            f"{'*' if e.id == pick else ' '} {e.id:24} {e.size_bytes / 1e9:5.2f} GB  needs {gb(f.need):>7}  "
            f"{f.label:12} {e.licence}"
        )
    if pick:
        click.echo(f"* recommended; download it with `mascot models get {pick}`.")


@models.command("get")
@click.argument("model_id")
def models_get(model_id: str) -> None:
    """Download a catalog model (resumes an interrupted download, checks its sha256) and register it."""
    entries = {e.id: e for e in load_catalog()}
    e = entries.get(model_id)
    if e is None:
        raise InputError(
            f"No catalog model '{model_id}'; see `mascot models catalog` ({', '.join(entries)})."
        )
    shown = [0.0]

    def progress(done: int, total: int, status) -> None:
        if time.monotonic() - shown[0] > 1 or status.phase in ("verifying", "done"):
            shown[0] = time.monotonic()
            extra = status.describe(done, total)
            print(
                f"\r{done / 1e6:,.0f} of {total / 1e6:,.0f} MB {extra}   ",
                end="",
                file=sys.stderr,
                flush=True,
            )

    path = download_gguf(
        e.repo,
        e.file,
        None,
        progress,
        None,
        store=open_store(),
        revision=e.revision,
        sha256=e.sha256,
        md5=e.md5,
        size=e.size_bytes,
        name=e.id,
    )
    print(file=sys.stderr)
    click.echo(f"Downloaded and verified {e.name} ({path}); use it with --model {e.id}.")


# -- doctor --------------------------------------------------------------------------------------


@click.command()
@click.option("--no-verify", is_flag=True, help="Skip re-hashing the registered models (faster).")
def doctor(no_verify: bool) -> None:
    """Print what a bug report needs: versions, CPU and llama.cpp build, probe, data, models, disk, RAM."""
    click.echo(doctor_text(verify_models=not no_verify))


# -- history -------------------------------------------------------------------------------------


@click.group()
def history() -> None:
    """List, export and delete stored conversations."""


@history.command("list")
@click.option(
    "--search", "-s", default="", help="Only conversations whose title or messages contain this."
)
def history_list(search: str) -> None:
    rows = open_store().conversations(search)
    if not rows:
        click.echo("No conversations yet.")
    for r in rows:
        click.echo(
            f"{r['id']:>5}  {r['updated'][:16].replace('T', ' ')}  {r['group_name']:12} "
            f"{r['n_messages']:>4} msgs  {r['title']}"
        )


@history.command("export")
@click.argument("conversation_id", type=int)
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True)
@click.option(
    "--out", "-o", type=click.Path(path_type=Path), default=None, help="File (default: stdout)."
)
@click.option(
    "--plain",
    is_flag=True,
    help="Export from an encrypted history anyway: the output is plain text.",
)
def history_export(conversation_id: int, fmt: str, out: Path | None, plain: bool) -> None:
    store = open_store()
    if store.encrypted and not plain:
        raise InputError(
            "Your history is encrypted, and the export would be plain text; "
            "add --plain to export it anyway."
        )
    text = (
        store.export_markdown(conversation_id)
        if fmt == "md"
        else json.dumps(store.export_json(conversation_id), indent=2, ensure_ascii=False)
    )
    if out:
        out.write_text(text, encoding="utf-8")
        click.echo(f"Wrote {out}")
    else:
        click.echo(text)


@history.command("delete")
@click.argument("conversation_id", type=int)
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def history_delete(conversation_id: int, yes: bool) -> None:
    store = open_store()
    conv = store.conversation(conversation_id)
    if not yes and not click.confirm(f"Delete '{conv['title']}' and all its messages?"):
        click.echo("Nothing deleted.")
        return
    store.delete_conversation(conversation_id)
    click.echo(f"Deleted conversation {conversation_id}.")


# -- all data ------------------------------------------------------------------------------------


@click.group()
def data() -> None:
    """Export or delete everything Mascot stores on this computer."""


@data.command("export")
@click.argument("out", type=click.Path(path_type=Path))
@click.option(
    "--plain",
    is_flag=True,
    help="Export an encrypted history anyway: the zip is plain text anyone can read.",
)
def data_export(out: Path, plain: bool) -> None:
    """Write every conversation (JSON + Markdown), imported personas, remembered facts, the groups'
    lorebooks and the model list to a .zip (the same export as the app's)."""
    if out.suffix.lower() != ".zip":
        raise InputError("Give a .zip file name for the export, e.g. mascot-data.zip.")
    store = open_store()
    if store.encrypted and not plain:
        raise InputError(
            "Your history is encrypted, and the zip would be plain text anyone can read; "
            "add --plain to export it anyway."
        )
    count = write_export(store, out, plain=plain)
    click.echo(f"Wrote {count} conversation(s) to {out}")


@data.command("delete")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def data_delete(yes: bool) -> None:
    """Delete all conversations, remembered facts, imported personas, registered models (files
    stay) and logs."""
    if not yes and not click.confirm("Delete ALL conversations, imported personas and settings?"):
        click.echo("Nothing deleted.")
        return
    delete_all(open_store(), delete_models=False)
    click.echo(f"Deleted all Mascot data in {user_dir()}.")


# -- entry point ---------------------------------------------------------------------------------


# -- encryption at rest (engine/cipher.py) ---------------------------------------------------------


def _new_passphrase() -> str:
    new = check_passphrase(ask_secret("New passphrase"))
    if ask_secret("The same passphrase again") != new:
        raise InputError("The two passphrases differ; nothing was changed. Try again.")
    return new


def _done(what: str, done: Conversion, seconds: float) -> None:
    click.echo(f"{what} ({done.rows:,} rows in {done.tables} tables, {seconds:.1f} s).")


@data.command("encrypt")
def data_encrypt() -> None:
    """Encrypt the history on this computer with a passphrase (asked twice)."""
    store = open_store()
    if store.encrypted:
        raise InputError(
            "Your history is encrypted already; `mascot data passphrase` changes the passphrase."
        )
    click.echo(NO_RECOVERY)
    new = _new_passphrase()
    start = time.perf_counter()
    done = store.encrypt(new)
    _done("Your history is encrypted", done, time.perf_counter() - start)
    click.echo(f"Mascot asks for the passphrase when it starts ({PASSPHRASE_ENV} for scripts).")


@data.command("passphrase")
def data_passphrase() -> None:
    """Change the passphrase of the encrypted history (the current one first)."""
    store = open_store()
    if not store.encrypted:
        raise InputError("Your history is not encrypted; `mascot data encrypt` encrypts it.")
    old = passphrase_for(store.path) or ""
    click.echo(NO_RECOVERY)
    new = _new_passphrase()
    start = time.perf_counter()
    done = store.change_passphrase(old, new)
    _done("The passphrase is changed", done, time.perf_counter() - start)


@data.command("decrypt")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def data_decrypt(yes: bool) -> None:
    """Store the history as a plain file again (anyone with this computer can read it then)."""
    store = open_store()
    if not store.encrypted:
        raise InputError("Your history is not encrypted; there is nothing to decrypt.")
    if not yes and not click.confirm(
        "Store your history unencrypted, readable by anyone with this computer?"
    ):
        click.echo("Nothing changed.")
        return
    start = time.perf_counter()
    done = store.decrypt(passphrase_for(store.path) or "")
    _done("Your history is a plain file again", done, time.perf_counter() - start)
