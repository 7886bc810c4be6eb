"""What the companions remember: conservative fact extraction, the memories table, facts in the
companion's note, pinning, forgetting, crisis messages, export and delete-all."""

from __future__ import annotations

import json
import sqlite3
import zipfile

import pytest
import sqlite_utils
from helpers import events_of, make_group, run_round

from engine.chat.group import GroupChat
from engine.chat.settings import ChatSettings
from engine.errors import InputError, NotFound
from engine.llm.backend import FakeBackend
from engine.memory import extract_facts
from engine.migrations import MIGRATIONS
from engine.reply.prompts import note_lines
from engine.storage import Store

FACT_MESSAGES = {
    "My dog is called Rex.": ["My dog is called Rex"],
    "Oh and my sister's name is Hannah, she's visiting.": ["my sister's name is Hannah"],
    "I live in Leeds. Work was long today.": ["I live in Leeds"],
    "I'm allergic to peanuts, so satay is out for me": ["I'm allergic to peanuts"],
    "By the way, I have a cat named Miso!": ["I have a cat named Miso"],
    "I work as a night nurse": ["I work as a night nurse"],
    "My name is Sam.": ["My name is Sam"],
}

# messages without a fact about the user, several built to tempt a careless extractor
NO_FACT_MESSAGES = [
    "I had a rough week at work and I can't switch off.",
    "My manager moved the deadline again.",
    "I keep replaying a meeting where I froze.",
    "I haven't been sleeping well.",
    "My friend says I should just quit.",
    "Maybe I need a holiday.",
    "What would you do?",
    "Is my dog called Rex?",
    "My dog is not called Rex.",
    "My dog isn't called Rex anymore.",
    "If I lived in Paris I would be happier.",
    "I wish I lived in Rome.",
    "My friend said her name is Ana.",
    "Imagine my cat was named Miso.",
    "I used to live in Leeds.",
    "I'm not allergic to peanuts.",
    "Do I work as a nurse?",
    "I live in fear of Mondays.",
    "My name is not important.",
    "Pretend my name is Bob.",
    "I'm from the future, lol.",
    "I think I live in Leeds?",
    "Call me later.",
    "That's fair.",
    "Good night!",
    "Thanks, all of you.",
    "My head is killing me.",
    "The dog next door is called Rex.",
    "Rex is a good name for a dog.",
    "You live in my computer.",
    "Mia, what's your favourite colour?",
    "My favourite thing would be a nap.",
    "I'll go to bed early.",
    "I'm going to live in Leeds.",
]


@pytest.mark.parametrize("text,expected", list(FACT_MESSAGES.items()))
def test_facts_are_clauses_the_user_wrote(text, expected):
    facts = extract_facts(text)
    assert facts == expected
    assert all(f in text for f in facts)  # word for word: nothing the user did not say


def test_no_facts_from_messages_without_one():
    found = {t: extract_facts(t) for t in NO_FACT_MESSAGES}
    assert {
        t: f for t, f in found.items() if f
    } == {}  # false positives: 0 of len(NO_FACT_MESSAGES)


def test_migration_adds_memories_to_an_old_database(tmp_path):
    path = tmp_path / "old.db"
    db = sqlite_utils.Database(path)
    db["_migrations"].create({"name": str, "applied": str}, pk="name")
    for fn in MIGRATIONS[:5]:
        fn(db)
        db["_migrations"].insert({"name": fn.__name__, "applied": "then"})
    db.conn.close()
    old, fresh = Store(path), Store(tmp_path / "fresh.db")
    assert [c.name for c in old.db["memories"].columns] == [
        c.name for c in fresh.db["memories"].columns
    ]
    assert {"group_name", "conversation_id", "message_id", "text", "source", "pinned"} <= {
        c.name for c in fresh.db["memories"].columns
    }


def chat_for(store, replies="Glad you told us.", group=None):
    fake = FakeBackend(lambda req: replies if isinstance(replies, str) else replies(req))
    chat = GroupChat(
        group or make_group(),
        store=store,
        backend_for=lambda m: fake,
        settings=ChatSettings(policy="round-robin", max_speakers=1, min_speakers=1),
    )
    return chat, fake


def test_stated_facts_are_stored_announced_and_put_in_the_note(store):
    chat, fake = chat_for(store, replies=lambda req: f"#{len(fake.requests)} nice")
    ev = run_round(chat, "My dog is called Rex. He chewed my shoe.")
    mem = events_of(ev, "memory")
    assert [e.data["text"] for e in mem] == ["My dog is called Rex"]
    rows = store.memories("test")
    assert rows[0]["conversation_id"] == chat.conversation_id and rows[0]["source"] == "auto"
    assert rows[0]["message_id"] == ev[0].data["message_id"]
    # many rounds later, in a new conversation of the same group, a question about the dog
    later, fake2 = chat_for(store, replies=lambda req: f"#{len(fake2.requests)} ok")
    run_round(later, "What should I feed my dog tonight?")
    note = fake2.requests[-1].messages[-2]["content"]
    assert 'User said: "My dog is called Rex"' in note_lines(fake2.requests[-1].slot, note)
    # an unrelated message gets no note with that fact
    run_round(later, "Work was long.")
    assert "Rex" not in fake2.requests[-1].messages[-2]["content"]


def test_the_same_fact_is_not_stored_twice(store):
    chat, _ = chat_for(store, replies=lambda req: "ok " + str(len(store.memories())))
    run_round(chat, "My name is Sam.")
    run_round(chat, "my name is Sam")
    assert len(store.memories("test")) == 1


def test_crisis_messages_never_become_facts_on_their_own(store):
    chat, _ = chat_for(store)
    ev = run_round(chat, "My name is Sam. I want to kill myself tonight.")
    assert events_of(ev, "safety") and not events_of(ev, "memory")
    assert store.memories() == []
    # the user's say: pinning the message keeps it (as a pinned fact)
    uid = ev[0].data["message_id"]
    fid = chat.remember("", message_id=uid)
    fact = store.memory(fid)
    assert fact["pinned"] and fact["source"] == "pinned" and "My name is Sam" in fact["text"]


def test_pinned_and_typed_facts_always_reach_the_note_and_can_be_edited_and_forgotten(store):
    chat, fake = chat_for(store, replies=lambda req: f"#{len(fake.requests)} sure")
    fid = chat.remember("Prefers to be called Sammy", pinned=True)
    run_round(chat, "Hello there.")
    note = fake.requests[-1].messages[-2]["content"]
    assert "About User: Prefers to be called Sammy" in note
    store.update_memory(fid, text="Prefers to be called Sam")
    assert store.memory(fid)["text"] == "Prefers to be called Sam"
    store.update_memory(fid, pinned=False)
    assert not store.memory(fid)["pinned"]
    store.delete_memory(fid)  # "Forget this"
    with pytest.raises(NotFound):
        store.memory(fid)
    with pytest.raises(InputError):
        chat.remember("   ")


def test_deleting_a_conversation_removes_its_found_facts_and_keeps_the_users(store):
    chat, _ = chat_for(store)
    run_round(chat, "I live in Leeds.")
    chat.remember("Likes tea")
    store.delete_conversation(chat.conversation_id)
    left = store.memories("test")
    assert [f["text"] for f in left] == ["Likes tea"] and left[0]["conversation_id"] is None


def test_delete_all_data_removes_every_fact_from_the_file(store):
    chat, _ = chat_for(store)
    run_round(chat, "My cat is called Zanzibarquux.")
    assert store.memories()
    store.delete_all()
    assert store.memories() == []
    other = sqlite3.connect(str(store.path))
    assert other.execute("select count(*) from memories").fetchone()[0] == 0
    assert b"Zanzibarquux" not in store.path.read_bytes()


def test_export_all_includes_memory(store, tmp_path):
    from engine.data import export_all

    chat, _ = chat_for(store)
    run_round(chat, "I live in Leeds.")
    with zipfile.ZipFile(export_all(store, tmp_path)) as z:
        facts = json.loads(z.read("memory.json"))
    assert facts[0]["text"] == "I live in Leeds" and facts[0]["group_name"] == "test"


def test_cli_data_export_includes_memory(store, tmp_path):
    from mascot_cli.main import main

    chat, _ = chat_for(store)
    run_round(chat, "I live in Leeds.")
    out = tmp_path / "all.zip"
    assert main(["data", "export", str(out)]) == 0
    with zipfile.ZipFile(out) as z:
        assert json.loads(z.read("memory.json"))[0]["text"] == "I live in Leeds"


def long_chat(store, history_tokens=256):
    fake = FakeBackend(lambda req: f"#{len(fake.requests)} I hear you, tell me more about it.")
    chat = GroupChat(
        make_group(("Mia",)),
        store=store,
        backend_for=lambda m: fake,
        settings=ChatSettings(policy="round-robin", max_speakers=1, history_tokens=history_tokens),
    )
    return chat, fake


FILLER = [
    "The weather was grey again today.",
    "I watched a film about trains.",
    "Lunch was soup and bread.",
    "I cleaned the kitchen this evening.",
    "The bus was late this morning.",
    "I read two chapters of a novel.",
]


def test_messages_older_than_the_window_are_recalled_when_they_bear_on_the_question(store):
    chat, fake = long_chat(store)
    run_round(chat, "Our old caravan holiday in Cornwall was the best week of my childhood.")
    for i in range(30):
        run_round(chat, FILLER[i % len(FILLER)])
    first = fake.requests[-1].messages
    assert all("Cornwall" not in m["content"] for m in first)  # out of the companion's window now
    run_round(chat, "I keep thinking about that caravan holiday.")
    note = note_lines("Mia", fake.requests[-1].messages[-2]["content"])
    assert any("Cornwall" in x and x.startswith("Earlier, User said:") for x in note), note
    run_round(chat, "Anyway, the bus was late again.")  # nothing to do with it: not recalled
    assert all("Cornwall" not in m["content"] for m in fake.requests[-1].messages[-2:])


def test_recall_reaches_past_conversations_of_the_group_but_never_crisis_messages(store):
    chat, _ = long_chat(store)
    run_round(chat, "Our caravan holiday in Cornwall was lovely.")
    run_round(chat, "I want to kill myself since the caravan holiday ended.")
    later, fake = long_chat(store)
    run_round(later, "Tell me again about the caravan holiday.")
    content = fake.requests[-1].messages[-2]["content"]
    assert "Cornwall was lovely" in content and "kill" not in content
