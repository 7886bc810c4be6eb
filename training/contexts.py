"""Training contexts: (scenario, persona) -> the exact prompt the app would send that persona.

Prompts are built by ``engine.chat.GroupChat.speaker_request`` (persona system prompt, the group
transcript, the "reply now" tail) and rendered with the model's own chat template, as llama.cpp
does at runtime, so the trained model is optimised on the prompt format it will see in the app.

Simplification: the Director's directive is left empty ("It is Mia's turn."); the paper's
persona training also conditions on Director instructions.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from engine.chat import ChatSettings, GroupChat, TranscriptItem, clean_reply
from engine.personas import Persona, PersonaSet, load_set
from engine.llm.runtime import ChatFormat, FakeBackend
from training.scenarios import GROUP_FOR_DOMAIN, USER, Scenario, load_scenarios


@dataclass
class Context:
    id: str                      # "<scenario id>/<persona>"
    scenario: Scenario
    persona: Persona
    messages: list[dict[str, str]]
    prompt: str                  # rendered with the chat template, ends with the assistant header
    stop: list[str]
    others: list[str]            # names whose lines count as role confusion

    @property
    def rm_prompt(self) -> str:
        """What the reward model reads before a reply: a compact view of the persona and the last
        turns (about 150 tokens instead of the ~500 of the full chat prompt, which on CPU made
        reward-model training the slowest stage). The policy still sees the full app prompt."""
        return reward_prompt(self.scenario, self.persona)

    def clean(self, text: str) -> tuple[str, bool]:
        """The app's own cleanup of a reply (cut at stop strings, lines written as others)."""
        for s in self.stop:
            if s and s in text:
                text = text[: text.index(s)]
        return clean_reply(text, self.persona.name, self.others, USER)


def reward_prompt(scenario: Scenario, persona: Persona, last_turns: int = 2) -> str:
    lines = [f"Companion: {persona.name}, {persona.role}. Traits: {', '.join(persona.traits)}.",
             f"Style: {persona.speaking_style}", "Conversation:"]
    lines += [f"{h['speaker']}: {h['text']}" for h in scenario.history[-last_turns:]]
    lines += [f"{USER}: {scenario.user_message}", f"{persona.name}:"]
    return "\n".join(lines) + " "


def domain_for(group: str, domain: str = "") -> str:
    if domain:
        return domain
    for d, g in GROUP_FOR_DOMAIN.items():
        if g == group:
            return d
    return "support"


def persona_messages(group: PersonaSet, scenario: Scenario, persona: Persona,
                     n_ctx: int = 2048) -> tuple[list[dict[str, str]], list[str]]:
    """The chat messages and stop strings the app builds for ``persona`` in ``scenario``."""
    backend = FakeBackend(n_ctx=n_ctx)
    chat = GroupChat(group, settings=ChatSettings(policy="round-robin"), backend_for=lambda _m: backend)
    chat.transcript = [TranscriptItem("user" if h["speaker"] == USER else "companion", h["speaker"], h["text"])
                       for h in scenario.transcript()]
    req = chat.speaker_request(persona, "")
    return req.messages, req.stop


def split_fraction(key: str, fraction: float) -> bool:
    """A stable pseudo-random choice: True for about ``fraction`` of keys."""
    h = int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF
    return h < fraction


def build_contexts(group_name: str, personas: list[str], *, split: str, domain: str = "",
                   limit: int = 0, chat_template: str | None = None) -> list[Context]:
    """Contexts for every (scenario, persona) of ``split``; ``limit`` caps the scenarios."""
    group = load_set(group_name)
    members = [group.member(n) for n in personas] if personas else list(group.members)
    scenarios = load_scenarios(domain_for(group.name, domain), split)
    if limit:
        scenarios = scenarios[:limit]
    fmt = ChatFormat(chat_template or None)
    out = []
    for sc in scenarios:
        for p in members:
            messages, stop = persona_messages(group, sc, p)
            others = [n for n in group.names if n != p.name]
            out.append(Context(id=f"{sc.id}/{p.name}", scenario=sc, persona=p, messages=messages,
                               prompt=fmt.render(messages), stop=stop, others=others))
    return out


def chat_template_of(gguf_path: Any) -> str:
    from engine.models.registry import inspect_gguf
    return inspect_gguf(gguf_path, compute_hash=False).chat_template
