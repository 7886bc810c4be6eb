"""Chat templates: a model's own Jinja template (from its GGUF) rendering a group conversation.

A group chat is not the conversation most templates were written for: a companion's prompt
holds several user-role turns in a row (the user, then the other companions, then its turn
note), and some templates demand strict user/assistant alternation (Mistral, Gemma) or have no
system role (Gemma 2). ``ChatFormat`` picks, once per template, the first way of shaping the
messages that renders every message's text (in order):

* ``as-is``: the messages unchanged (not for a template that says roles must alternate);
* ``merged``: consecutive turns of one role joined into one turn (blank line between), the
  persona's system message kept first, so the template places it where it places a system
  prompt (Mistral's ``[SYSTEM_PROMPT]``, Gemma 3's first user turn) instead of its own default;
* ``folded``: as ``merged``, with the system message folded into the first user turn, only for
  templates that refuse a system role.

The sandbox offers what llama.cpp and transformers give templates (``raise_exception``,
``strftime_now``, a JSON ``tojson``, loop controls, ``{% generation %}``). A template that still
fails raises ``TemplateError`` naming the model and what failed: Mascot never substitutes
ChatML for a model that was trained on another format. Only a GGUF without any template is
rendered as ChatML (llama.cpp's own default).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from engine.errors import ModelError

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

STRATEGIES = ("as-is", "merged", "folded")

# What a group prompt looks like to a template: a persona, turns by several speakers in a row,
# a turn note, the companion's own earlier reply, and the note for this turn.
_PROBE = [
    {"role": "system", "content": "You are Mia, a warm listener in a small group chat."},
    {"role": "user", "content": "User: I failed my driving test today."},
    {"role": "user", "content": "Theo: That happens to many people on the first try."},
    {"role": "user", "content": "(It is Mia's turn.) Reply now as Mia, briefly and in character."},
    {"role": "assistant", "content": "Oh no, I'm sorry. How are you feeling about it?"},
    {"role": "user", "content": "User: A bit embarrassed, honestly."},
    {
        "role": "user",
        "content": "(Mia, ask one gentle question.) Reply now as Mia, briefly and in character.",
    },
]


class TemplateError(ModelError):
    """A model's chat template cannot render a conversation (the message names the model)."""


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split()) or type(err).__name__
    return text[:160]


def _environment() -> Any:
    import jinja2
    from jinja2 import nodes
    from jinja2.ext import Extension
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class Generation(Extension):
        """transformers' ``{% generation %}…{% endgeneration %}`` (marks assistant text for
        training masks); rendering just keeps the body."""

        tags = {"generation"}

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return nodes.Scope(body, lineno=lineno)

    def raise_exception(message: str) -> None:
        raise jinja2.TemplateError(message)

    def tojson(
        value: Any,
        ensure_ascii: bool = False,
        indent: int | None = None,
        separators: Any = None,
        sort_keys: bool = False,
    ) -> str:
        # transformers' version: plain JSON (Jinja's own escapes <, > and & for HTML)
        return json.dumps(
            value,
            ensure_ascii=ensure_ascii,
            indent=indent,
            separators=separators,
            sort_keys=sort_keys,
        )

    def strftime_now(fmt: str) -> str:
        return datetime.now().strftime(fmt)

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=["jinja2.ext.loopcontrols", Generation],
        loader=jinja2.BaseLoader(),
    )
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    env.filters["tojson"] = tojson
    return env


def merge_roles(messages: list[dict[str, str]], fold_system: bool = False) -> list[dict[str, str]]:
    """Consecutive turns of one role joined (blank line between) so user and assistant
    alternate, starting with a user turn. A leading system message stays first, or with
    ``fold_system`` opens the first user turn; a later system message becomes a user turn."""
    system = ""
    out: list[dict[str, str]] = []
    for m in messages:
        role, content = m["role"], m["content"]
        if role == "system" and not out:
            system += ("\n\n" if system else "") + content
            continue
        if role == "system":
            role = "user"
        if out and out[-1]["role"] == role:
            out[-1] = {"role": role, "content": out[-1]["content"] + "\n\n" + content}
        else:
            out.append({"role": role, "content": content})
    if out and out[0]["role"] == "assistant":  # strict templates open with a user turn
        out.insert(0, {"role": "user", "content": "(The conversation so far.)"})
    if not system:
        return out
    if not fold_system:
        return [{"role": "system", "content": system}] + out
    if out and out[0]["role"] == "user":
        return [{"role": "user", "content": system + "\n\n" + out[0]["content"]}] + out[1:]
    return [{"role": "user", "content": system}] + out


def _shape(messages: list[dict[str, str]], strategy: str) -> list[dict[str, str]]:
    if strategy == "as-is":
        return messages
    return merge_roles(messages, fold_system=strategy == "folded")


def _all_in_order(text: str, pieces: list[str]) -> bool:
    at = 0
    for piece in pieces:
        i = text.find(piece.strip(), at)
        if i < 0:
            return False
        at = i + len(piece.strip())
    return True


class ChatFormat:
    """Renders messages with a model's chat template (see the module docstring).

    ``name`` names the model in errors. ``strategy`` is the message shaping chosen for this
    template (``None`` until the first render or ``check``); ``error`` is why no shaping works
    (then ``render`` raises ``TemplateError``)."""

    def __init__(
        self, template: str | None, bos: str = "", eos: str = "", name: str = "this model"
    ):
        self.bos, self.eos, self.name = bos, eos, name
        self.source = template or ""
        self.is_chatml = template is None or "<|im_start|>" in (template or "")
        self._env = _environment()
        self.strategy: str | None = None
        self.error: str | None = None
        try:
            self._tpl = self._env.from_string(template or CHATML)
        except Exception as e:  # noqa: BLE001 - a syntax error, or a tag the sandbox does not know
            self._tpl = None
            self.error = f"its chat template does not parse ({_one_line(e)})"

    def _render(self, messages: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
        assert self._tpl is not None
        # enable_thinking: Qwen3-style templates open an empty think block instead of reasoning
        return self._tpl.render(
            messages=messages,
            add_generation_prompt=add_generation_prompt,
            bos_token="",
            eos_token=self.eos,
            enable_thinking=False,
        )

    def check(self) -> str | None:
        """Choose the message shaping on a group-shaped probe conversation. Returns None when a
        shaping renders every message, else the reason (also kept in ``error``)."""
        if self.strategy is not None or self._tpl is None:
            return self.error
        reasons = []
        # a template that says roles must alternate gets alternating turns even where its check
        # does not fire (Mistral's sits in a loop whose `set` Jinja scopes away)
        strict = "alternate" in self.source
        for strategy in STRATEGIES[1:] if strict else STRATEGIES:
            msgs = _shape(_PROBE, strategy)
            try:
                text = self._render(msgs)
            except Exception as e:  # noqa: BLE001 - any template error: try the next strategy
                reasons.append(f"{strategy}: {_one_line(e)}")
                continue
            if _all_in_order(text, [m["content"] for m in msgs]):
                self.strategy, self.error = strategy, None
                return None
            reasons.append(f"{strategy}: it leaves out part of the conversation")
        self.error = (
            "its chat template cannot render a group conversation (" + "; ".join(reasons[:2]) + ")"
        )
        return self.error

    def failure(self, detail: str) -> TemplateError:
        return TemplateError(
            f"{self.name}: {detail}; Mascot will not guess another prompt format. "
            "Use a GGUF whose template works with llama.cpp, or another model."
        )

    def render(self, messages: list[dict[str, str]]) -> str:
        if self.check() is not None:
            raise self.failure(self.error or "its chat template failed")
        assert self.strategy is not None
        try:
            return self._render(_shape(messages, self.strategy))
        except Exception as e:  # noqa: BLE001 - any template error becomes one line for the user
            raise self.failure(
                f"its chat template failed to render this conversation ({_one_line(e)})"
            ) from None

    _OPEN = "\ue000open\ue000"

    def render_open(self, messages: list[dict[str, str]]) -> str:
        """The text ``render`` gives for ``messages`` up to the end of the last message's content
        (no end-of-message, no generation prompt): a prefix of the rendering of any longer
        version of that message, so it can be read into the KV cache ahead of time. Falls back
        to the messages before it if the template drops the content."""
        last = dict(messages[-1], content=messages[-1]["content"] + self._OPEN)
        text = self.render(messages[:-1] + [last])
        cut = text.find(self._OPEN)
        return text[:cut] if cut >= 0 else self.render(messages[:-1])
