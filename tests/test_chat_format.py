"""Chat templates of the families people run, rendering a group conversation (no model needed).

The templates in tests/templates/ are the real ones (tests/templates/SOURCES.md says where each
comes from). A group prompt has several user-role turns in a row; strict templates (Gemma 3,
Mistral) must still get the persona's system prompt, every message, and never ChatML."""

import pytest
from family_templates import FAMILY_TEMPLATES, template_text

from engine.llm.chat_format import ChatFormat, TemplateError

PERSONA = "You are Mia, a warm listener in a small group chat with User, Theo and Ruth."
GROUP = [
    {"role": "system", "content": PERSONA},
    {"role": "user", "content": "User: I failed my driving test this morning."},
    {"role": "user", "content": "Theo: Most people pass on the second try; book it now."},
    {"role": "user", "content": "Ruth: What did the examiner say?"},
    {
        "role": "user",
        "content": "(Mia, name the feeling.) Reply now as Mia, briefly and in character.",
    },
]
REPLY = {"role": "assistant", "content": "That sounds so disappointing after all that practice."}
LATER = [
    {"role": "user", "content": "User: Yes, I was nervous at the roundabout."},
    {"role": "user", "content": "Theo: Then practise roundabouts twice this week."},
    {"role": "user", "content": "(It is Mia's turn.) Reply now as Mia, briefly and in character."},
]

# the default system prompt each template uses when it is given none (must not replace ours)
DEFAULT_SYSTEM = {
    "mistral-small-3.1": "You are Mistral Small 3",
    "qwen2.5": "You are Qwen",
    "smollm2": "named SmolLM",
}


def fmt_for(family):
    return ChatFormat(template_text(family), eos="</s>", name=f"{family}.gguf")


@pytest.mark.parametrize("family", sorted(FAMILY_TEMPLATES))
def test_every_family_renders_the_whole_group_conversation_with_the_persona(family):
    fmt = fmt_for(family)
    text = fmt.render(GROUP)
    at = 0
    for m in GROUP:  # every message, in order
        at = text.index(m["content"].strip(), at)
    assert "<|im_start|>" not in text or FAMILY_TEMPLATES[family]["chatml"]
    assert DEFAULT_SYSTEM.get(family, "\0") not in text  # the persona is the system prompt
    assert text.endswith(FAMILY_TEMPLATES[family]["generation_prompt"])
    assert fmt.strategy == FAMILY_TEMPLATES[family]["strategy"]


@pytest.mark.parametrize("family", sorted(FAMILY_TEMPLATES))
def test_a_turn_only_adds_to_the_previous_prompt(family):
    """A companion's prompt after its reply starts with the prompt it was given (so llama.cpp
    reuses the KV cache), also where turns had to be merged for a strict template."""
    fmt = fmt_for(family)
    first = fmt.render(GROUP)
    second = fmt.render(GROUP + [REPLY] + LATER)
    assert second.startswith(first + REPLY["content"]) or second.startswith(
        first + " " + REPLY["content"]
    )
    opening = fmt.render_open(GROUP + [REPLY] + LATER[:1])
    assert second.startswith(opening) and opening.endswith(LATER[0]["content"])


def test_mistral_gets_strftime_now_and_keeps_the_persona_in_its_system_slot():
    text = fmt_for("mistral-small-3.1").render(GROUP)
    assert text.startswith("[SYSTEM_PROMPT]" + PERSONA + "[/SYSTEM_PROMPT][INST]User: I failed")
    assert "[INST]" in text and text.count("[INST]") == 1  # the group's turns are one user turn
    assert "Theo: Most people pass" in text and text.endswith("[/INST]")


def test_gemma3_folds_the_persona_into_its_first_user_turn_and_alternates():
    text = fmt_for("gemma3").render(GROUP + [REPLY] + LATER)
    assert text.startswith("<start_of_turn>user\n" + PERSONA + "\n\nUser: I failed")
    assert text.count("<start_of_turn>user") == 2 and text.count("<start_of_turn>model") == 2


def test_a_template_without_a_system_role_gets_the_persona_in_the_first_user_turn():
    gemma2 = (
        "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not "
        "supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != "
        "(loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate "
        "user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}"
        "{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>'"
        " + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if "
        "add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}"
    )
    fmt = ChatFormat(gemma2, name="gemma-2.gguf")
    text = fmt.render(GROUP)
    assert fmt.strategy == "folded"
    assert text.startswith("<start_of_turn>user\n" + PERSONA + "\n\nUser: I failed")


@pytest.mark.parametrize(
    "template,needle",
    [
        (
            "{{ bos_token }}{% for m in messages %}{{ undefined_helper(m.content) }}{% endfor %}",
            "undefined_helper",
        ),
        ("{% for m in messages %}{{ m.content }}", "does not parse"),
        ("{{ raise_exception('This model only speaks to one user') }}", "only speaks to one user"),
        (
            "{% for m in messages %}{% if m.role == 'user' %}[U]{% endif %}{% endfor %}",
            "leaves out",
        ),
    ],
)
def test_a_template_that_cannot_render_is_one_clear_error_never_chatml(template, needle):
    fmt = ChatFormat(template, name="odd-model.Q4_K_M.gguf")
    with pytest.raises(TemplateError) as e:
        fmt.render(GROUP)
    msg = str(e.value)
    assert "\n" not in msg and len(msg) < 400
    assert msg.startswith("odd-model.Q4_K_M.gguf: ") and needle in msg
    assert fmt.check() is not None


def test_a_gguf_without_a_template_is_rendered_as_chatml():
    fmt = ChatFormat(None)
    assert fmt.render(GROUP).startswith("<|im_start|>system\n" + PERSONA + "<|im_end|>")


def test_tojson_writes_plain_json_as_transformers_does():
    fmt = ChatFormat("{% for m in messages %}{{ m | tojson }}{% endfor %}")
    text = fmt.render([{"role": "user", "content": "<b> & ü"}])
    assert '"content": "<b> & ü"' in text


def test_the_smollm2_template_is_the_bundled_models(bundled_path):
    from engine.models.registry import gguf_fields

    bundled = gguf_fields(bundled_path, ["tokenizer.chat_template"])["tokenizer.chat_template"]
    assert bundled.strip() == template_text("smollm2").strip()


def test_a_model_whose_template_cannot_render_is_refused_before_loading(bundled_path, monkeypatch):
    """LlamaRuntime checks the template first: one line naming the file, llama.cpp never starts."""
    import engine.models.registry
    from engine.llm.runtime import LlamaRuntime

    real = engine.models.registry.inspect_gguf

    def odd_template(path, **kw):
        info = real(path, **kw)
        info.chat_template = (
            "{{ strftime_later('%Y') }}{% for m in messages %}{{ m.content }}{% endfor %}"
        )
        return info

    monkeypatch.setattr(engine.models.registry, "inspect_gguf", odd_template)
    monkeypatch.setattr("llama_cpp.Llama", lambda *a, **kw: pytest.fail("llama.cpp was started"))
    with pytest.raises(TemplateError) as e:
        LlamaRuntime(bundled_path, n_ctx=512)
    msg = str(e.value)
    assert msg.startswith(bundled_path.name + ": ") and "strftime_later" in msg and "\n" not in msg
