"""All of a user's data at once: export it to a zip, or delete it (the app and `mascot data`
both use these)."""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from datetime import datetime
from pathlib import Path
from typing import Any

from engine.errors import InputError
from engine.paths import user_dir

PLAIN_EXPORT = (
    "Your history is encrypted, and an export is plain files that anyone with them can read; "
    "ask for a plain export to go ahead."
)


def check_plain_export(store: Any, plain: bool) -> None:
    """An encrypted history leaves the database as plain text only when the user asked for it:
    ``InputError`` otherwise (the CLI's ``--plain``, the app's confirmation)."""
    if getattr(store, "encrypted", False) and not plain:
        raise InputError(PLAIN_EXPORT)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:40] or "conversation"


def export_all(store: Any, folder: str | Path, *, plain: bool = False) -> Path:
    """``write_export`` into ``mascot-export-<date>.zip`` in ``folder``. Returns the zip's path."""
    check_plain_export(store, plain)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"mascot-export-{datetime.now():%Y%m%d-%H%M%S}.zip"
    write_export(store, target, plain=plain)
    return target


def write_export(store: Any, target: str | Path, *, plain: bool = False) -> int:
    """Write every conversation (Markdown and JSON), the imported personas, the remembered facts,
    the groups' lorebooks and the model list into the zip ``target``. Returns the conversations
    written. From an encrypted history only with ``plain`` (``check_plain_export``)."""
    check_plain_export(store, plain)
    personas = user_dir() / "personas"
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as z:
        count = 0
        for conv in store.conversations():
            base = f"conversations/{conv['id']:04d}-{_slug(conv['title'])}"
            z.writestr(f"{base}.md", store.export_markdown(conv["id"]))
            z.writestr(
                f"{base}.json",
                json.dumps(
                    store.export_json(conv["id"]), indent=2, ensure_ascii=False, default=str
                ),
            )
            count += 1
        if personas.is_dir():
            for f in sorted(personas.glob("*.json")):
                z.write(f, f"personas/{f.name}")
        z.writestr("models.json", json.dumps(store.models(), indent=2, default=str))
        z.writestr(
            "memory.json", json.dumps(store.memories(), indent=2, ensure_ascii=False, default=str)
        )
        z.writestr(
            "lorebooks.json",
            json.dumps(store.lore_entries(), indent=2, ensure_ascii=False, default=str),
        )
        z.writestr(
            "README.txt",
            f"Mascot data export, {datetime.now():%Y-%m-%d %H:%M}.\n"
            f"{count} conversation(s) as Markdown and JSON; imported personas; "
            "what the companions remember about you (memory.json); "
            "your groups' lorebooks (lorebooks.json); "
            "the list of registered models (not the model files).\n",
        )
    return count


def delete_all(store: Any, *, delete_models: bool = True) -> None:
    """Delete every conversation, imported persona, log and (optionally) downloaded model file.

    The database rows are deleted and the file is vacuumed (secure_delete is on), so the text is
    not left behind in free pages."""
    store.delete_all()
    for sub in ("personas", "logs") + (("models",) if delete_models else ()):
        path = user_dir() / sub
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
