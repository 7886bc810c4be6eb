"""Lorebooks (Character Card V2 character_book): which entries fire, where they go in the prompt,
and that the companion's KV prefix stays valid. Rules on a fake backend; the prompt and the
prefill on llama.cpp at the end."""

from __future__ import annotations

import json

import pytest
from helpers import events_of, make_group, run_round

from engine.card_files import import_card
from engine.chat.group import GroupChat
from engine.chat.settings import ChatSettings
from engine.llm.backend import FakeBackend
from engine.lorebook import parse_book
from engine.personas import PersonaSet
from engine.reply.prompts import note_head, note_lines

LIGHTHOUSE = "The lighthouse has been dark since 1998."
FERRY = "The ferry leaves at 6:40 sharp."
SMUGGLERS = "Smugglers used the north cove."
CAFE = "{{char}} serves coffee to {{user}} at the harbor cafe."
OLD_NAME = "Mara used to be called Captain Red."
TIDE = "High tide floods the lower pier."

BOOK = {
    "name": "Harbor lore",
    "scan_depth": 2,
    "token_budget": 400,
    "entries": [
        {
            "keys": ["lighthouse", "beacon"],
            "content": LIGHTHOUSE,
            "enabled": True,
            "insertion_order": 20,
            "position": "after_char",
        },
        # case-sensitive: "ferry" in lower case must not fire it
        {
            "keys": ["Ferry"],
            "content": FERRY,
            "enabled": True,
            "case_sensitive": True,
            "insertion_order": 10,
            "position": "before_char",
        },
        # selective: needs "cove" and also "night" or "boat"
        {
            "keys": ["cove"],
            "secondary_keys": ["night", "boat"],
            "selective": True,
            "content": SMUGGLERS,
            "enabled": True,
            "insertion_order": 30,
        },
        # constant: always there, in the system prompt (after the character)
        {"keys": [], "content": CAFE, "constant": True, "enabled": True, "insertion_order": 5},
        # disabled: never, even when its key is said
        {"keys": ["captain"], "content": OLD_NAME, "enabled": False, "insertion_order": 1},
        {"keys": ["tide"], "content": TIDE, "enabled": True, "insertion_order": 40},
    ],
}


def mara_card() -> dict:
    return {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {
            "name": "Mara",
            "description": "{{char}} is a retired ferry captain.",
            "personality": "gruff, warm",
            "character_book": BOOK,
        },
    }


@pytest.fixture
def mara(tmp_path):
    path = tmp_path / "mara.json"
    path.write_text(json.dumps(mara_card()), encoding="utf-8")
    return import_card(path)


def words(text: str) -> int:
    return len(text.split())


def fired(text: str, recent: tuple[str, ...] = ()) -> list[str]:
    book = parse_book(BOOK, "test")
    return [e.content for e in book.triggered([*recent, text], words, "Mara", "User")]


def test_keys_fire_as_whole_words_case_insensitive_unless_case_sensitive():
    assert fired("Is the Lighthouse still dark?") == [LIGHTHOUSE]
    assert fired("I saw a beacon.") == [LIGHTHOUSE]
    assert fired("The lighthouses of Maine") == []  # a different word
    assert fired("when does the ferry leave?") == []  # case-sensitive key
    assert fired("When does the Ferry leave?") == [FERRY]


def test_selective_entries_need_a_secondary_key_and_disabled_ones_never_fire():
    assert fired("We walked to the cove.") == []
    assert fired("We took a boat to the cove.") == [SMUGGLERS]
    assert fired("Tell me about the captain.") == []


def test_constant_entries_are_always_in_and_not_triggered():
    book = parse_book(BOOK, "test")
    assert [e.content for e in book.constant(words, "Mara", "User")] == [CAFE]
    assert CAFE not in fired("nothing special")


def test_scan_depth_limits_which_messages_are_scanned():
    assert fired("okay", recent=("the lighthouse!",)) == [LIGHTHOUSE]  # 2 messages back
    assert fired("okay", recent=("the lighthouse!", "hm", "so")) == []  # older than scan_depth


def test_order_is_position_then_insertion_order_and_budget_keeps_priority():
    text = "The Ferry passed the lighthouse at high tide."
    assert fired(text) == [FERRY, LIGHTHOUSE, TIDE]  # before_char first, then by insertion order
    book = parse_book(
        {
            **BOOK,
            "entries": [
                {**BOOK["entries"][0], "priority": 1},
                {**BOOK["entries"][5], "priority": 50},
            ],
        },
        "t",
    )
    kept = book.triggered([text], words, "Mara", "User", budget=words(TIDE) + 3)
    assert [e.content for e in kept] == [TIDE]  # the lower priority entry is dropped first


def chat_for(persona, fake, **settings):
    group = make_group(("Theo",))
    pset = PersonaSet(
        name="harbor", title="Harbor", description="", members=[persona, *group.members]
    )
    return GroupChat(
        pset,
        settings=ChatSettings(policy="round-robin", max_speakers=1, min_speakers=1, **settings),
        backend_for=lambda m: fake,
    )


def mara_requests(fake):
    return [
        r
        for r in fake.requests
        if r.slot == "Mara"
        and r.messages[-1]["role"] == "user"
        and "Reply now as Mara" in r.messages[-1]["content"]
    ]


def test_triggered_entries_go_in_a_note_before_the_turn_and_are_not_repeated(mara):
    count = [0]

    def reply(req):
        count[0] += 1
        return f"Reply number {count[0]} from {req.slot}."

    fake = FakeBackend(reply)
    chat = chat_for(mara, fake)
    run_round(chat, "Is the lighthouse still working? When does the ferry go?")
    first = mara_requests(fake)[-1]
    system = first.messages[0]["content"]
    assert system.endswith("Mara serves coffee to User at the harbor cafe.")  # constant, after_char
    note = first.messages[-2]["content"]
    assert note.startswith(note_head("Mara")) and LIGHTHOUSE in note
    for absent in (FERRY, SMUGGLERS, OLD_NAME, TIDE):
        assert absent not in note and absent not in system
    # Theo's turn (round-robin), then Mara's again: her earlier note is still in her prefix at
    # the same place, so the new prompt starts with the old one plus her reply
    run_round(chat, "ok")
    run_round(chat, "The lighthouse again, and high tide.")
    second = mara_requests(fake)[-1]
    assert second.messages[: len(first.messages)] == first.messages
    assert note_lines("Mara", second.messages[-2]["content"]) == [TIDE]  # the lighthouse was read
    stored = [m for m in chat.transcript if m.speaker == "Mara"]
    assert LIGHTHOUSE in stored[0].context


def test_memory_off_leaves_the_prompt_as_before(mara):
    fake = FakeBackend(lambda req: "A reply.")
    chat = chat_for(mara, fake, memory=False)
    run_round(chat, "Is the lighthouse still working?")
    req = mara_requests(fake)[-1]
    assert all(
        LIGHTHOUSE not in m["content"] and "harbor cafe" not in m["content"] for m in req.messages
    )


def test_group_lorebook_from_a_set_file(tmp_path):
    from engine.persona_files import load_set_file

    path = tmp_path / "set.json"
    path.write_text(
        json.dumps(
            {
                "name": "harbor",
                "lorebook": BOOK,
                "members": [
                    {
                        "name": "Ivo",
                        "role": "a fisherman",
                        "traits": ["quiet"],
                        "speaking_style": "Short.",
                    }
                ],
            }
        ),
        encoding="utf-8",
    )
    pset = load_set_file(path)
    assert pset.lorebook["name"] == "Harbor lore"
    fake = FakeBackend(lambda req: "Aye.")
    chat = GroupChat(
        pset,
        settings=ChatSettings(policy="round-robin", max_speakers=1),
        backend_for=lambda m: fake,
    )
    run_round(chat, "the beacon was off")
    req = [r for r in fake.requests if r.slot == "Ivo"][-1]
    assert LIGHTHOUSE in req.messages[-2]["content"]


@pytest.mark.model
def test_entry_reaches_the_real_prompt_and_the_prefix_stays_cached(mara, pool, bundled_path):
    runtime = pool.get(bundled_path)

    class Recording:
        """The bundled runtime, recording each request it renders."""

        def __init__(self):
            self.requests, self.gens = [], []

        def __getattr__(self, name):
            return getattr(runtime, name)

        def generate(self, req, cancel=None):
            self.requests.append(req)
            self.gens.append(runtime.generate(req, cancel))
            return self.gens[-1]

    rec = Recording()
    pset = PersonaSet(name="harbor", title="Harbor", description="", members=[mara])
    chat = GroupChat(
        pset,
        settings=ChatSettings(policy="round-robin", max_speakers=1, seed=3, max_tokens=24),
        backend_for=lambda m: rec,
    )
    ev = run_round(chat, "Is the lighthouse still working?")
    prompt = runtime.format.render(rec.requests[-1].messages)
    assert LIGHTHOUSE in prompt and "harbor cafe" in prompt
    assert FERRY not in prompt and OLD_NAME not in prompt
    assert prompt.index("harbor cafe") < prompt.index(LIGHTHOUSE)  # constant early, note late
    msgs = events_of(ev, "message")
    assert msgs and LIGHTHOUSE in msgs[0].data["context"]
    first = len(rec.gens)
    run_round(chat, "Mara, is high tide dangerous?")  # addressed: she may open again
    stats = rec.gens[first].stats  # its first attempt (a reply may still be dropped as a copy)
    # the second turn reads only what is new: the reply, the user's message, the new note
    assert 0 < stats.prefilled_tokens < 0.5 * stats.prompt_tokens, stats
    assert TIDE in runtime.format.render(rec.requests[first].messages)
