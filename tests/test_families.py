"""Every chat-template family of the model catalog, proven in llama.cpp on a tiny random-weight GGUF
made by llama.cpp's own converter (tests/tiny_models.py): the template renders the group's
messages, its end-of-turn token ends a reply, the Director's constrained choice and its JSON-schema
grammar work, and a real group round runs. The replies are random text; nothing here depends on
what a model writes."""

import json
import re
import threading

import pytest
from family_templates import FAMILY_TEMPLATES
from helpers import events_of, make_group
from tiny_models import FAMILIES, build

from engine.chat.group import GroupChat
from engine.chat.settings import ChatSettings
from engine.director.policies import DIRECTIVE_VERBS, Director, RoundState
from engine.llm.backend import GenRequest
from engine.llm.runtime import LlamaRuntime

pytestmark = [pytest.mark.model, pytest.mark.timeout(1800)]

TEXT = "I failed my driving test this morning and I feel stupid."


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def family(request, bundled_path):
    """(family, runtime on its tiny GGUF); the GGUF is converted once and cached."""
    path = build(request.param, bundled_path)
    rt = LlamaRuntime(path, n_ctx=1024, n_threads=1, seed=3)
    yield request.param, rt
    rt.close()


def spy_prompts(rt):
    """Record every prompt the runtime renders."""
    seen, render = [], rt.format.render

    def recording(messages):
        text = render(messages)
        seen.append((messages, text))
        return text

    rt.format.render = recording
    return seen


def test_the_template_renders_the_group_and_its_tags_are_special_tokens(family):
    name, rt = family
    info = FAMILY_TEMPLATES[name]
    assert rt.format.strategy == info["strategy"]
    end = FAMILIES[name][3]
    end_ids = rt.llm.tokenize(end.encode(), add_bos=False, special=True)
    assert len(end_ids) == 1  # the end-of-turn tag is one special token ...
    assert rt._llama_cpp.llama_vocab_is_eog(
        rt.llm._model.vocab, end_ids[0]
    )  # ... that ends a reply
    group = make_group()
    chat = GroupChat(
        group,
        settings=ChatSettings(policy="round-robin", max_speakers=1, max_tokens=4, seed=1),
        backend_for=lambda model: rt,
    )
    seen = spy_prompts(rt)
    events = list(chat.send(TEXT, threading.Event()))
    assert not events_of(events, "error"), events_of(events, "error")
    messages, prompt = seen[0]  # the first companion's prompt
    assert messages[0]["role"] == "system" and group.names[0] in messages[0]["content"]
    assert messages[0]["content"].strip()[:60] in prompt  # the persona, not the template's default
    assert TEXT in prompt and prompt.endswith(info["generation_prompt"])
    assert ("<|im_start|>" in prompt) == info["chatml"]
    tokens = rt.tokenize(prompt)
    if (
        name != "mistral-small-3.1"
    ):  # its template writes the end tag (</s>) after assistant turns only
        assert end_ids[0] in tokens  # the tags in the prompt are read as the special tokens


def test_the_end_of_turn_token_stops_a_reply_under_a_grammar(family):
    """Once a JSON-schema grammar is complete, only end-of-generation tokens are allowed: the
    reply must stop there ("stop"), not run to its token limit."""
    name, rt = family
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    gen = rt.generate(
        GenRequest(
            slot="eot",
            messages=[{"role": "user", "content": "Answer in JSON."}],
            json_schema=schema,
            max_tokens=200,
            temperature=0.0,
            seed=5,
        )
    )
    text = gen.text()
    assert json.loads(text) in ({"ok": True}, {"ok": False}), text
    assert gen.stats.stopped == "stop" and gen.stats.completion_tokens < 200


def test_the_director_decides_by_choice_and_by_grammar(family):
    name, rt = family
    group = make_group()
    state = RoundState(
        members=list(group.members), user_name="User", user_text=TEXT, min_speakers=2
    )
    transcript = [{"speaker": "User", "text": TEXT}]
    menu = Director(rt, directive_mode="menu").next(state, transcript)
    assert menu.valid and menu.speaker in state.allowed()
    free = Director(
        rt, directive_mode="free", max_tokens=300, temperature=0.7, balance_prior=0.0
    ).next(state, transcript)
    assert free.valid and free.speaker in state.allowed(), free.raw
    assert re.match(r"^(" + "|".join(DIRECTIVE_VERBS) + ") ", json.loads(free.raw)["directive"])


def test_a_group_round_runs_with_the_director(family):
    name, rt = family
    chat = GroupChat(
        make_group(),
        settings=ChatSettings(policy="director", max_speakers=2, max_tokens=6, seed=2),
        backend_for=lambda model: rt,
    )
    seen = spy_prompts(rt)
    events = list(chat.send(TEXT, threading.Event()))
    assert not events_of(events, "error"), events_of(events, "error")
    decisions = events_of(events, "director")
    assert decisions and all(d.data["valid"] for d in decisions)
    assert events_of(events, "round_end")
    assert seen and all(
        TEXT in text for _, text in seen
    )  # every prompt rendered the user's message
