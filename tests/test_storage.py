"""History in real SQLite: migrations, per-message commits, export and delete."""

import json
import sqlite3

import sqlite_utils

from engine.migrations import MIGRATIONS
from engine.storage import Store


def make_conv(store, n_messages=3):
    cid = store.create_conversation(
        title="Evening chat",
        group_name="support",
        policy="director",
        max_speakers=3,
        members=[{"name": "Mia"}, {"name": "Theo"}],
    )
    for i in range(n_messages):
        store.add_message(
            cid,
            round=1,
            role="companion" if i else "user",
            speaker="Mia" if i else "User",
            text=f"message {i} ünïcødé 🌱",
            directive="listen" if i else "",
            prompt_tokens=10,
            completion_tokens=5,
        )
    return cid


def test_blank_database_gets_every_migration_and_wal(store):
    names = [r["name"] for r in store.db["_migrations"].rows]
    assert names == [m.__name__ for m in MIGRATIONS]
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    cols = {c.name for c in store.db["messages"].columns}
    assert {
        "speaker",
        "text",
        "directive",
        "model",
        "prompt_tokens",
        "completion_tokens",
        "latency_ms",
        "ttft_ms",
        "created",
    } <= cols


def test_old_database_is_migrated_forward(tmp_path):
    path = tmp_path / "old.db"
    db = sqlite_utils.Database(path)
    db["_migrations"].create({"name": str, "applied": str}, pk="name")
    MIGRATIONS[0](db)
    db["_migrations"].insert({"name": MIGRATIONS[0].__name__, "applied": "then"})
    db["conversations"].insert(
        {
            "id": 1,
            "title": "kept",
            "group_name": "g",
            "policy": "all",
            "max_speakers": 3,
            "created": "x",
            "updated": "x",
        }
    )
    db.conn.close()
    s = Store(path)
    assert s.db["models"].exists() and s.conversation(1)["title"] == "kept"
    fresh = Store(tmp_path / "fresh.db")
    for table in ("conversations", "members", "messages", "models"):
        assert [c.name for c in s.db[table].columns] == [c.name for c in fresh.db[table].columns]


def test_each_message_is_durable_on_return(store):
    cid = make_conv(store, 2)
    other = sqlite3.connect(str(store.path))  # a second connection sees it at once
    assert (
        other.execute("select count(*) from messages where conversation_id=?", [cid]).fetchone()[0]
        == 2
    )


def test_export_markdown_and_json(store):
    cid = make_conv(store)
    md = store.export_markdown(cid)
    assert (
        md.startswith("# Evening chat")
        and "**Mia**" in md
        and "🌱" in md
        and "Director: listen" in md
    )
    data = json.loads(json.dumps(store.export_json(cid)))
    assert len(data["messages"]) == 3 and data["members"][0]["name"] == "Mia"


def test_delete_conversation_removes_all_its_rows(store):
    keep = make_conv(store)
    gone = make_conv(store)
    store.delete_conversation(gone)
    for table in ("messages", "members"):
        assert (
            store.db.execute(
                f"select count(*) from {table} where conversation_id=?", [gone]
            ).fetchone()[0]
            == 0
        )
    assert len(store.messages(keep)) == 3
    assert [c["id"] for c in store.conversations()] == [keep]
    assert store.integrity_check() == "ok"


def test_search_finds_titles_and_message_text(store):
    make_conv(store)
    cid = store.create_conversation(
        title="Work", group_name="workplace", policy="all", max_speakers=3, members=[]
    )
    store.add_message(cid, role="user", speaker="User", text="quarterly roadmap")
    assert [c["id"] for c in store.conversations("roadmap")] == [cid]
    assert len(store.conversations("Evening")) == 1


def test_corrupt_database_gives_one_clear_line(tmp_path):
    import pytest

    from engine.errors import StorageError

    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StorageError) as e:
        Store(bad)
    assert "\n" not in str(e.value) and "move the file away" in str(e.value)
