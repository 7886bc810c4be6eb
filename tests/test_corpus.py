"""The persona corpus: every round usable, the splits apart, and its prompts the app's own."""

from __future__ import annotations

import json
import re

import pytest

from engine.chat.events import MessageEvent
from engine.chat.group import GroupChat
from engine.chat.settings import ChatSettings
from engine.errors import InputError
from engine.llm.backend import FakeBackend
from engine.paths import assets_dir
from engine.persona_files import load_set
from training.corpus import Corpus, Round, Turn, parse_round


@pytest.fixture(scope="module")
def train() -> Corpus:
    return Corpus("train")


@pytest.fixture(scope="module")
def test_split() -> Corpus:
    return Corpus("test")


def test_every_round_is_usable(train, test_split):
    problems = [p for c in (train, test_split) for r in c.rounds for p in c.problems(r)]
    assert problems == []
    assert train.rounds, "the training split is empty"


def test_every_bundled_persona_has_replies(train):
    per = train.stats()["per_persona"]
    for group in ("support", "workplace", "writers-room"):
        for name in load_set(group).names:
            assert per.get(name, 0) >= 20, f"{name} has {per.get(name, 0)} training replies"


def test_the_invented_companions_load_as_the_app_imports_them(train):
    assert len(train.personas) >= 12
    for p in train.personas.values():
        assert p.name and p.role


def test_splits_share_no_writer_situation_or_invented_persona(train, test_split):
    if not test_split.rounds:
        pytest.skip("no test split written yet")
    assert not {r.writer for r in train.rounds} & {r.writer for r in test_split.rounds}
    assert not set(train.personas) & set(test_split.personas)
    seen = {r.user_message.lower() for r in train.rounds}
    assert not [r.id for r in test_split.rounds if r.user_message.lower() in seen]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z']+", text.lower())


def _grams(text: str, n: int = 8) -> set[tuple[str, ...]]:
    w = _words(text)
    return {tuple(w[i : i + n]) for i in range(len(w) - n + 1)}


def test_the_corpus_copies_nothing_of_the_evaluation(train, test_split):
    held = set()
    for line in (assets_dir() / "eval" / "persona_exemplars.jsonl").read_text().splitlines():
        if line.strip():
            held |= _grams(json.loads(line).get("text", ""))
    for path in (assets_dir() / "scenarios").glob("*.jsonl"):
        for line in path.read_text().splitlines():
            if line.strip():
                sc = json.loads(line)
                held |= _grams(sc["user_message"])
                for h in sc.get("history", []):
                    held |= _grams(h["text"])
    copied = [
        (r.id, text)
        for c in (train, test_split)
        for r in c.rounds
        for text in (r.user_message, *(t.text for t in r.all_turns()))
        if _grams(text) & held
    ]
    assert copied == []


def test_a_malformed_line_is_one_clear_error():
    with pytest.raises(InputError, match=r"x.jsonl:3: field 'user_message' must be non-empty"):
        parse_round(
            json.dumps(
                {
                    "id": "a",
                    "writer": "w",
                    "split": "train",
                    "domain": "support",
                    "group": "support",
                    "situation": "s",
                    "turns": [],
                }
            ),
            "x.jsonl:3",
        )


def test_narration_and_off_menu_directives_are_refused(train):
    r = Round(
        id="t-1",
        writer="w",
        split="train",
        domain="support",
        group="support",
        situation="s",
        user_message="I passed my driving test.",
        turns=[
            Turn("Mia", "*smiles* That is wonderful."),
            Turn("Theo", "Two steps now.", directive="Plan a party"),
            Turn("Bob", "Hello."),
        ],
    )
    found = " ".join(train.problems(r))
    assert (
        "narrates" in found and "not on Theo's menu" in found and "'Bob' is not a member" in found
    )


def test_an_example_is_exactly_the_request_the_app_sends():
    """A round played through GroupChat (round-robin) and the same round read from the corpus
    give each companion the same messages and stop strings."""
    group = load_set("support")
    replies = [
        "Passing after three tries says a lot about sticking with it. How does it feel?",
        "One: book a first solo drive on a quiet road. Two: pick a day this week.",
        "My own test ended with me reversing into a bin, so you are already ahead of me.",
        "In my experience the things we fail at first are the ones we remember with pride.",
    ]
    fake = FakeBackend(list(replies))
    settings = ChatSettings(policy="round-robin", max_speakers=4)
    chat = GroupChat(group, settings=settings, backend_for=lambda _model: fake)
    events = list(chat.send("I finally passed my driving test, third time lucky."))
    said = [(e.speaker, e.text) for e in events if isinstance(e, MessageEvent)]
    spoken = [name for name, _ in said]
    sent = [r for r in fake.requests if r.max_tokens > 16]  # the companions' turns, not decisions
    assert len(spoken) == 4 and len(sent) == 4
    r = Round(
        id="t-2",
        writer="w",
        split="train",
        domain="support",
        group="support",
        situation="s",
        user_message="I finally passed my driving test, third time lucky.",
        turns=[Turn(name, text) for name, text in said],
    )
    examples = list(Corpus("train").examples([r]))
    assert [e.target for e in examples] == [text for _, text in said]
    for ex, app_req in zip(examples, sent):
        req = ex.request(fake.count_tokens, fake.n_ctx)
        assert req.messages == app_req.messages
        assert req.stop == app_req.stop
