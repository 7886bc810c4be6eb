"""The history database's schema as append-only numbered migrations, recorded by name in ``_migrations``."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # imported where a database opens (engine/storage.py says why)
    import sqlite_utils


Migration = Callable[["sqlite_utils.Database"], None]


def migration_registry() -> tuple[list[Migration], Callable[[Migration], Migration]]:
    """A list of migrations and the decorator that appends to it (in definition order)."""
    registry: list[Migration] = []

    def register(fn: Migration) -> Migration:
        registry.append(fn)
        return fn

    return registry, register


MIGRATIONS, migration = migration_registry()


def apply_migrations(
    db: sqlite_utils.Database,
    migrations: list[Callable[[sqlite_utils.Database], None]],
    stamp: Callable[[], str],
) -> list[str]:
    """Apply the append-only ``migrations`` not yet recorded in ``_migrations`` (by function
    name), each in its own transaction with its record; returns the names applied. Shared by the
    history database and the evaluation results database."""
    table = db["_migrations"]
    if not table.exists():
        table.create({"name": str, "applied": str}, pk="name")
    done = {r["name"] for r in table.rows}
    applied = []
    for fn in migrations:
        if fn.__name__ in done:
            continue
        with db.conn:
            fn(db)
            table.insert({"name": fn.__name__, "applied": stamp()})
        applied.append(fn.__name__)
    return applied


@migration
def m001_initial(db: sqlite_utils.Database) -> None:
    db["conversations"].create(
        {
            "id": int,
            "title": str,
            "group_name": str,
            "policy": str,
            "max_speakers": int,
            "created": str,
            "updated": str,
        },
        pk="id",
    )
    db["members"].create(
        {
            "id": int,
            "conversation_id": int,
            "position": int,
            "name": str,
            "persona": str,
            "model": str,
            "muted": int,
        },
        pk="id",
        foreign_keys=[("conversation_id", "conversations", "id")],
    )
    db["messages"].create(
        {
            "id": int,
            "conversation_id": int,
            "round": int,
            "role": str,
            "speaker": str,
            "text": str,
            "directive": str,
            "model": str,
            "prompt_tokens": int,
            "prefilled_tokens": int,
            "completion_tokens": int,
            "latency_ms": float,
            "ttft_ms": float,
            "created": str,
            "status": str,
            "meta": str,
        },
        pk="id",
        foreign_keys=[("conversation_id", "conversations", "id")],
    )
    db["members"].create_index(["conversation_id"])
    db["messages"].create_index(["conversation_id", "id"])


@migration
def m002_models(db: sqlite_utils.Database) -> None:
    db["models"].create(
        {
            "name": str,
            "path": str,
            "sha256": str,
            "size": int,
            "architecture": str,
            "context_length": int,
            "quantization": str,
            "chat_template": str,
            "parameters": int,
            "bundled": int,
            "added": str,
        },
        pk="name",
    )
    db["model_cache"].create({"path": str, "size": int, "mtime": float, "info": str}, pk="path")


@migration
def m003_message_variants(db: sqlite_utils.Database) -> None:
    """Regenerated replies keep every alternative so the user can flip through them."""
    db["messages"].add_column("variants", str)  # JSON list of {"text", "directive", "created"}
    db["messages"].add_column("variant", int)  # index of the shown alternative
    db["messages"].add_column("edited", int)


@migration
def m004_drop_model_cache(db: sqlite_utils.Database) -> None:
    """GGUF header facts are now cached in a file beside the database (engine.models.registry)."""
    db["model_cache"].drop()


@migration
def m005_model_adapters(db: sqlite_utils.Database) -> None:
    """LoRA adapters are registered beside models: kind "lora" and the base model they run on."""
    db["models"].add_column("kind", str, not_null_default="model")
    db["models"].add_column("base", str, not_null_default="")


@migration
def m006_memories(db: sqlite_utils.Database) -> None:
    """Facts the companions remember about the user, per group (engine.memory), with the
    conversation and message each came from."""
    db["memories"].create(
        {
            "id": int,
            "group_name": str,
            "conversation_id": int,
            "message_id": int,
            "text": str,
            "source": str,
            "pinned": int,
            "created": str,
            "updated": str,
        },
        pk="id",
    )
    db["memories"].create_index(["group_name"])


@migration
def m007_group_lorebooks(db: sqlite_utils.Database) -> None:
    """A group's own lorebook, edited in the app (engine.lorebook: V2 ``character_book`` fields):
    the book's settings per group, and its entries (keys as JSON lists)."""
    db["lorebooks"].create(
        {"group_name": str, "name": str, "scan_depth": int, "token_budget": int, "updated": str},
        pk="group_name",
    )
    db["lore_entries"].create(
        {
            "id": int,
            "group_name": str,
            "name": str,
            "keys": str,
            "secondary_keys": str,
            "content": str,
            "selective": int,
            "constant": int,
            "case_sensitive": int,
            "enabled": int,
            "insertion_order": float,
            "priority": float,
            "position": str,
            "created": str,
            "updated": str,
        },
        pk="id",
    )
    db["lore_entries"].create_index(["group_name"])


@migration
def m008_message_vectors(db: sqlite_utils.Database) -> None:
    """Sentence embeddings of the user's messages for recall (engine.recall): the model's name,
    a digest of the text it embedded (an edited message is embedded again) and the float32
    vector as a BLOB. Made lazily, when a message is first a recall candidate."""
    db["message_vectors"].create(
        {"message_id": int, "model": str, "digest": str, "vec": bytes}, pk="message_id"
    )


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")
