"""Training contexts: (scenario, persona) -> the exact prompt the app would send that persona.

Prompts are built by ``engine.chat.group.companion_prompt``, as the app builds them (persona
system prompt, the group transcript, the "reply now" tail), counted with the model's own
tokenizer, and rendered with the model's own chat template, as llama.cpp
does at runtime, so the trained model is optimised on the prompt format it will see in the app.

Simplification: the Director's directive is left empty ("It is Mia's turn."); the paper's
persona training also conditions on Director instructions.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable

from engine.chat.companion_memory import CompanionMemory
from engine.chat.group import companion_prompt
from engine.chat.settings import ChatSettings
from engine.llm.chat_format import ChatFormat
from engine.llm.runtime import token_counter
from engine.models.registry import bundled_model_path, inspect_gguf
from engine.persona_files import load_set
from engine.personas import Persona, PersonaSet
from engine.reply.cleanup import finish_reply
from engine.reply.copyguard import DEFAULT_RULE
from engine.reply.prompts import from_history
from training.scenarios import GROUP_FOR_DOMAIN, USER, Scenario, load_scenarios


@dataclass
class Context:
    id: str  # "<scenario id>/<persona>"
    scenario: Scenario
    persona: Persona
    messages: list[dict[str, str]]
    prompt: str  # rendered with the chat template, ends with the assistant header
    stop: list[str]
    others: list[str]  # names whose lines count as role confusion
    recent: list[str] = field(
        default_factory=list
    )  # recent replies a reply must not copy (copy_key-ed)

    @property
    def rm_prompt(self) -> str:
        """What the reward model reads before a reply: a compact view of the persona and the last
        turns, a fraction of the full chat prompt, which on CPU made reward-model training the
        slowest stage (docs/training.md). The policy still sees the full app prompt."""
        return reward_prompt(self.scenario, self.persona)

    def clean(self, text: str, stopped: str = "stop") -> tuple[str, bool]:
        """The reply as the app would keep it (``keep_as_app``)."""
        return keep_as_app(text, self.persona.name, self.stop, self.others, self.recent, stopped)


def keep_as_app(
    text: str,
    persona: str,
    stop: list[str],
    others: list[str],
    recent: list[str] = (),  # type: ignore[assignment]
    stopped: str = "stop",
) -> tuple[str, bool]:
    """A sampled completion as the app keeps a reply: cut where llama.cpp would have stopped
    (``stop``), then ``finish_reply`` (one paragraph, lines written as others cut, a sentence
    cut by the token limit dropped) and the copy guard (a copy of one of ``recent`` is "").
    Returns (text, role_confused)."""
    for s in stop:
        if s and s in text:
            text = text[: text.index(s)]
    text, confused = finish_reply(text, persona, others, USER, stopped)
    if text and DEFAULT_RULE.copies(text, list(recent), [persona, *others]):
        return "", False
    return text, confused


def reward_prompt(scenario: Scenario, persona: Persona, last_turns: int = 2) -> str:
    lines = [
        f"Companion: {persona.name}, {persona.role}. Traits: {', '.join(persona.traits)}.",
        f"Style: {persona.speaking_style}",
        "Conversation:",
    ]
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


def persona_messages(
    group: PersonaSet,
    scenario: Scenario,
    persona: Persona,
    n_ctx: int = 2048,
    count: Callable[[str], int] | None = None,
) -> tuple[list[dict[str, str]], list[str]]:
    """The chat messages and stop strings the app builds for ``persona`` in ``scenario``
    (``count``: the model's token counter; default the bundled model's)."""
    settings = ChatSettings(policy="round-robin")
    req, _ = companion_prompt(
        persona,
        from_history(scenario.transcript(), USER),
        "",
        names=group.names,
        settings=settings,
        memory=CompanionMemory(group, None, settings),
        count=count or bundled_token_counter(),
        n_ctx=n_ctx,
    )
    return req.messages, req.stop


@lru_cache(maxsize=1)
def bundled_token_counter() -> Callable[[str], int]:
    """The bundled model's tokenizer as a token counter (the tokenizer alone is loaded)."""
    return token_counter(bundled_model_path())


def split_fraction(key: str, fraction: float) -> bool:
    """A stable pseudo-random choice: True for about ``fraction`` of keys."""
    h = int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF
    return h < fraction


def build_contexts(
    group_name: str,
    personas: list[str],
    *,
    split: str,
    domain: str = "",
    limit: int = 0,
    chat_template: str | None = None,
) -> list[Context]:
    """Contexts for every (scenario, persona) of ``split``; ``limit`` caps the scenarios."""
    group = load_set(group_name)
    members = [group.member(n) for n in personas] if personas else list(group.members)
    scenarios = load_scenarios(domain_for(group.name, domain), split)
    if limit:
        scenarios = scenarios[:limit]
    fmt = ChatFormat(chat_template or None)
    count = bundled_token_counter()
    out = []
    for sc in scenarios:
        recent = DEFAULT_RULE.recent(
            [(t.role, t.text) for t in from_history(sc.transcript(), USER)], group.names
        )
        for p in members:
            messages, stop = persona_messages(group, sc, p, count=count)
            others = [n for n in group.names if n != p.name]
            out.append(
                Context(
                    id=f"{sc.id}/{p.name}",
                    scenario=sc,
                    persona=p,
                    messages=messages,
                    prompt=fmt.render(messages),
                    stop=stop,
                    others=others,
                    recent=recent,
                )
            )
    return out


def chat_template_of(gguf_path: Any) -> str:
    return inspect_gguf(gguf_path, compute_hash=False).chat_template
