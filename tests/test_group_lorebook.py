"""The group's own lorebook kept in the history database (migration m007): stored and read back
in V2 form, checked like a card's book, and used in the companions' prompts exactly as a card's
``character_book`` is (the same entries give the same prompt). Real SQLite; fake backend."""

from __future__ import annotations

import json
import sqlite3

import pytest
from helpers import run_round
from test_lorebook import BOOK, CAFE, FERRY, LIGHTHOUSE, OLD_NAME, SMUGGLERS, TIDE

from engine.chat.group import GroupChat
from engine.chat.settings import ChatSettings
from engine.errors import InputError
from engine.llm.backend import FakeBackend
from engine.lorebook import check_entry, parse_book
from engine.personas import PersonaSet, persona_from_dict
from engine.reply.prompts import note_lines
from engine.storage import Store


def stored_book(store, group="harbor"):
    for e in BOOK["entries"]:
        store.add_lore_entry(group, check_entry(e))
    store.set_lorebook_settings(
        group, scan_depth=BOOK["scan_depth"], token_budget=BOOK["token_budget"], name=BOOK["name"]
    )
    return store.group_lorebook(group)


def test_entries_round_trip_through_sqlite_with_every_field(store):
    book = stored_book(store)
    assert (book["name"], book["scan_depth"], book["token_budget"]) == ("Harbor lore", 2, 400)
    assert len(book["entries"]) == len(BOOK["entries"])
    for got, want in zip(book["entries"], BOOK["entries"]):
        for k, v in want.items():
            assert got[k] == v, k
    # a fresh connection reads the same (it is on disk)
    again = Store(store.path)
    assert again.group_lorebook("harbor") == book
    assert again.group_lorebook("other") is None
    again.close()
    # edit and delete
    eid = book["entries"][0]["id"]
    store.update_lore_entry(
        eid, check_entry({**BOOK["entries"][0], "keys": ["beacon"], "enabled": False})
    )
    e = store.lore_entry(eid)
    assert e["keys"] == ["beacon"] and e["enabled"] is False and e["content"] == LIGHTHOUSE
    store.delete_lore_entry(eid)
    assert len(store.lore_entries("harbor")) == len(BOOK["entries"]) - 1


def test_parsed_stored_book_equals_the_card_book(store):
    ours, card = parse_book(stored_book(store), "db"), parse_book(BOOK, "card")
    assert ours.scan_depth == card.scan_depth and ours.token_budget == card.token_budget
    assert [
        (
            e.keys,
            e.secondary_keys,
            e.content,
            e.selective,
            e.constant,
            e.case_sensitive,
            e.enabled,
            e.insertion_order,
            e.priority,
            e.position,
        )
        for e in ours.entries
    ] == [
        (
            e.keys,
            e.secondary_keys,
            e.content,
            e.selective,
            e.constant,
            e.case_sensitive,
            e.enabled,
            e.insertion_order,
            e.priority,
            e.position,
        )
        for e in card.entries
    ]


def test_entries_are_checked_like_a_cards():
    with pytest.raises(InputError, match="text"):
        check_entry({"keys": ["x"], "content": "  "})
    with pytest.raises(InputError, match="key"):
        check_entry({"keys": [], "content": "Never fires."})
    with pytest.raises(InputError, match="limit is 100"):
        check_entry({"keys": ["k" * 101], "content": "x"})
    with pytest.raises(InputError, match="limit is 4,000"):
        check_entry({"keys": ["k"], "content": "x" * 4001})
    with pytest.raises(InputError, match="32"):
        check_entry({"keys": [f"k{i}" for i in range(33)], "content": "x"})
    assert check_entry({"keys": [], "constant": True, "content": "Always."})["constant"] is True
    assert check_entry({"keys": [" a ", ""], "content": "x", "position": 4})["keys"] == ["a"]


def test_migration_adds_lorebooks_to_an_old_database(tmp_path):
    import sqlite_utils

    from engine.migrations import MIGRATIONS, apply_migrations, now

    path = tmp_path / "old.db"
    db = sqlite_utils.Database(sqlite3.connect(str(path)))
    apply_migrations(db, [m for m in MIGRATIONS if m.__name__ < "m007"], now)
    db.conn.close()
    s = Store(path)
    names = [r["name"] for r in s.db["_migrations"].rows]
    assert "m007_group_lorebooks" in names
    assert s.group_lorebook("x") is None
    s.add_lore_entry("x", check_entry({"keys": ["a"], "content": "b"}))
    assert s.group_lorebook("x")["entries"][0]["keys"] == ["a"]
    s.close()


def test_delete_all_removes_the_lorebooks(store):
    stored_book(store)
    store.delete_all()
    assert store.lore_entries() == [] and store.group_lorebook("harbor") is None


def _mara(card_book=None):
    ext = (
        {
            "chara_card": {
                "spec": "chara_card_v2",
                "data": {"name": "Mara", "character_book": card_book},
            }
        }
        if card_book
        else {}
    )
    return persona_from_dict(
        {
            "name": "Mara",
            "role": "a retired ferry captain",
            "traits": ["gruff"],
            "speaking_style": "Short.",
            "extensions": ext,
        }
    )


def _prompts(pset):
    fake = FakeBackend(lambda req: f"Reply {len(fake.requests)}.")
    chat = GroupChat(
        pset,
        settings=ChatSettings(policy="round-robin", max_speakers=1, min_speakers=1),
        backend_for=lambda m: fake,
    )
    for text in (
        "Is the lighthouse still working? When does the ferry go?",
        "ok",
        "We took a boat to the cove at night, the Ferry too.",
        "The captain and the tide.",
    ):
        run_round(chat, text)
    return [r.messages for r in fake.requests if r.slot == "Mara"]


def test_a_stored_group_book_gives_the_same_prompts_as_the_same_card_book(store):
    """Used in prompts exactly like a card's book: Mara with the book in her card and Mara with
    no book in a group whose stored book has the same entries read identical prompts."""
    card = PersonaSet(name="harbor", title="Harbor", description="", members=[_mara(BOOK)])
    group = PersonaSet(
        name="harbor",
        title="Harbor",
        description="",
        members=[_mara()],
        lorebook=stored_book(store),
    )
    a, b = _prompts(card), _prompts(group)
    assert a == b and len(a) == 4
    system = a[0][0]["content"]
    assert system.endswith(CAFE.replace("{{char}}", "Mara").replace("{{user}}", "User"))
    notes = [note_lines("Mara", m[-2]["content"]) for m in a]
    assert notes[0] == [LIGHTHOUSE]  # "ferry" lower case: the case-sensitive key
    assert FERRY in notes[2] and SMUGGLERS in notes[2]  # selective: cove + boat/night
    assert notes[3] == [TIDE]  # the disabled "captain" entry never
    assert all(OLD_NAME not in json.dumps(m) for m in a)


def test_export_all_includes_the_lorebooks(store, tmp_path):
    import zipfile

    from engine.data import export_all

    stored_book(store)
    with zipfile.ZipFile(export_all(store, tmp_path)) as z:
        entries = json.loads(z.read("lorebooks.json"))
    assert [e["content"] for e in entries] == [e["content"] for e in BOOK["entries"]]
    assert entries[0]["group_name"] == "harbor" and entries[0]["keys"] == ["lighthouse", "beacon"]
