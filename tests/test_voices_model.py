"""The voices model: the shipped voices LoRA merged into the bundled model on the first run.

A deterministic stand-in replaces the trained adapter (``voices_adapter`` in conftest.py: random
rank-16 matrices in training/adapter_gguf.py's layout). Checked: the merged weights are the
bundled ones plus ``alpha / r * B @ A`` within Q8_0's rounding; llama.cpp's next-token choices on
the merged model agree with the bundled model with the adapter applied at decode time; the build
runs once and again only for a new adapter; a damaged adapter or a full disk is one line and
leaves the plain model; companions (imported cards included) run on it and say so.
"""

import json
from pathlib import Path

import numpy as np
import pytest
from test_cli import mascot

from engine.card_files import export_card
from engine.chat.backends import default_backend_factory
from engine.chat.group import GroupChat
from engine.chat.settings import ChatSettings
from engine.errors import ModelError
from engine.llm.adapters import synthetic_adapter
from engine.llm.backend import GenRequest
from engine.llm.runtime import LlamaRuntime
from engine.models.registry import BUNDLED_FILE, BUNDLED_NAME, ModelRegistry, sha256_file
from engine.models.voices import (
    ADAPTER_FILE,
    VOICES_LABEL,
    VOICES_NAME,
    companion_default,
    ensure_voices,
    manifest_path,
)
from engine.persona_files import load_set, load_set_file
from engine.personas import PersonaSet, persona_from_dict

VOICES_FILE = f"{VOICES_NAME}.gguf"
MERGED = f"{ADAPTER_FILE} (merged)"


def one_line(message):
    assert message and "\n" not in message and len(message) < 400, message
    return message


# -- the merge ------------------------------------------------------------------------------------


def test_the_voices_model_is_the_bundled_weights_plus_the_adapter(
    voices_built, voices_adapter, bundled_path
):
    from gguf import GGMLQuantizationType, GGUFReader, LlamaFileType
    from gguf.quants import dequantize

    merged = GGUFReader(str(voices_built / VOICES_FILE))
    base = GGUFReader(str(bundled_path))
    lora = GGUFReader(str(voices_adapter))
    alpha = float(lora.fields["adapter.lora.alpha"].contents())
    ab = {t.name: np.asarray(t.data, dtype=np.float32) for t in lora.tensors}
    originals = {t.name: t for t in base.tensors}
    assert [t.name for t in merged.tensors] == [t.name for t in base.tensors]
    adapted = 0
    for t in merged.tensors:
        old = originals[t.name]
        if t.name + ".lora_a" not in ab:  # not adapted: the very same bytes
            assert t.tensor_type == old.tensor_type and np.array_equal(t.data, old.data), t.name
            continue
        adapted += 1
        a, b = ab[t.name + ".lora_a"], ab[t.name + ".lora_b"]
        plain = dequantize(old.data, old.tensor_type)
        want = plain + alpha / a.shape[0] * (b @ a)
        got = dequantize(t.data, t.tensor_type)
        assert t.tensor_type == GGMLQuantizationType.Q8_0
        step = np.abs(want).reshape(-1, 32).max(axis=1, keepdims=True) / 127  # Q8_0's step
        err = np.abs(got - want).reshape(-1, 32)
        assert (err <= 0.6 * step + 1e-7).all(), t.name  # rounding to the nearest step, no more
        # the adapter is in it: requantizing the plain weight alone moves it by half a step at most
        assert np.abs(got - plain).mean() > step.mean(), t.name
    assert adapted == len(ab) // 2 == 210  # seven projections in each of 30 layers
    for key, field in base.fields.items():
        if key.startswith("GGUF."):
            continue
        value = merged.fields[key].contents()
        if key == "general.file_type":
            assert value == LlamaFileType.MOSTLY_Q8_0
        else:
            assert value == field.contents(), key


# The app's companion requests, rendered with the model's own template (system prompt first).
SYSTEM = (
    "You are Mia, a warm and practical friend in a small group chat with Theo and Ruth. "
    "Reply in one or two short sentences."
)
SAID = [
    "I had a long day at work and I can't switch off. Any ideas?",
    "I failed my driving test today.",
    "My sister is moving abroad next month and I don't know how to say goodbye.",
    "Do you think it's silly to start learning the piano at forty?",
]


def top1(runtime, tokens, adapter=None):
    """llama.cpp's most likely next token after every prefix of ``tokens``, with ``adapter``
    set on the context the way the app sets it (a request's ``GenRequest.adapter``)."""
    import llama_cpp

    hello = [{"role": "user", "content": "Hi"}]
    runtime.generate(GenRequest("check", hello, max_tokens=1, adapter=adapter)).text()
    llm = runtime.llm
    llm.reset()
    out = []
    for tok in tokens:
        llm.eval([tok])
        logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits(llm.ctx), shape=(llm.n_vocab(),))
        out.append(int(logits.argmax()))
    return np.array(out)


@pytest.mark.model
def test_merged_model_predicts_what_the_adapter_applied_by_llama_cpp_predicts(
    voices_built, voices_adapter, bundled_path
):
    """Teacher-forced over each prompt and the reply the bundled model writes with the adapter:
    the merged model's top-1 token is the adapter's at almost every position, while the plain
    model's often is not (so agreement is the merge's doing, not a weak adapter's). The bound is
    below 0.98 because llama.cpp's Q4_1 kernels round activations to 8 bits: even a lossless
    f32 copy of the plain model picks another top-1 token than the Q4_1 file at about 2% of these
    positions (docs/models.md, "The voices model"); the weights test above checks the merge's
    own precision exactly."""
    base = LlamaRuntime(bundled_path, n_ctx=1024, n_threads=1)
    merged = LlamaRuntime(voices_built / VOICES_FILE, n_ctx=1024, n_threads=1)
    adapter = str(voices_adapter)
    same_merged = same_plain = positions = 0
    try:
        for said in SAID:
            messages = [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": f"User: {said}"},
            ]
            reply = base.generate(
                GenRequest("ref", messages, max_tokens=32, temperature=0.0, adapter=adapter)
            ).text()
            tokens = base.tokenize(base.format.render(messages))
            tokens += base.llm.tokenize(reply.encode(), add_bos=False, special=False)
            want = top1(base, tokens, adapter)
            same_merged += int((top1(merged, tokens) == want).sum())
            same_plain += int((top1(base, tokens) == want).sum())
            positions += len(tokens)
    finally:
        base.close()
        merged.close()
    assert positions > 300
    assert same_merged / positions >= 0.93, (same_merged, positions)
    assert same_plain / positions <= 0.88, (same_plain, positions)


# -- once, and again for a new adapter ------------------------------------------------------------


def test_first_run_builds_the_voices_model_once_and_registers_it(
    voices_home, store, voices_adapter, bundled_path
):
    result = ensure_voices(store)
    path = voices_home / "models" / VOICES_FILE
    assert result.status == "built" and result.message == "" and result.path == path
    assert path.is_file() and not list(path.parent.glob("*.part"))
    info = ModelRegistry(store).get(VOICES_NAME)
    assert info.path == str(path.resolve()) and info.sha256 == sha256_file(path)
    assert (info.architecture, info.quantization, info.kind) == ("llama", "Q8_0", "model")
    manifest = json.loads(manifest_path(path).read_text())
    assert manifest["label"] == VOICES_LABEL
    assert manifest["base"]["name"] == BUNDLED_NAME
    assert manifest["base"]["sha256"] == sha256_file(bundled_path)
    assert manifest["adapter"]["file"] == ADAPTER_FILE
    assert manifest["adapter"]["sha256"] == sha256_file(voices_adapter)
    assert companion_default(store) == VOICES_NAME
    assert companion_default(store, "plain") is None  # the user's switch back

    written = path.stat().st_mtime_ns
    again = ensure_voices(store)
    assert again.status == "ready" and path.stat().st_mtime_ns == written  # not built twice


def test_a_new_shipped_adapter_rebuilds_the_voices_model(
    voices_ready, store, tmp_path, monkeypatch, bundled_path
):
    assert ensure_voices(store).status == "ready"
    path = voices_ready / "models" / VOICES_FILE
    old = json.loads(manifest_path(path).read_text())
    new = synthetic_adapter(bundled_path, tmp_path / ADAPTER_FILE, alpha=32, seed=8, scale=0.04)
    monkeypatch.setenv("MASCOT_VOICES_ADAPTER", str(new))

    result = ensure_voices(store)
    manifest = json.loads(manifest_path(path).read_text())
    assert result.status == "built"
    assert manifest["adapter"]["sha256"] == sha256_file(new) != old["adapter"]["sha256"]
    assert manifest["source"] != old["source"] and manifest["sha256"] != old["sha256"]
    assert ModelRegistry(store).get(VOICES_NAME).sha256 == sha256_file(path) == manifest["sha256"]


# -- failures: one line, the plain model ----------------------------------------------------------


def test_a_damaged_adapter_is_one_line_and_leaves_the_plain_model(
    voices_ready, store, tmp_path, monkeypatch, voices_adapter
):
    assert ensure_voices(store).status == "ready"  # built on an earlier run, then damaged
    broken = tmp_path / ADAPTER_FILE
    broken.write_bytes(voices_adapter.read_bytes()[:4_000_000])
    monkeypatch.setenv("MASCOT_VOICES_ADAPTER", str(broken))

    result = ensure_voices(store)
    message = one_line(result.message)
    assert result.status == "failed" and not result.usable
    assert message.startswith("Could not build the voices model")
    assert "damaged" in message and "reinstall Mascot" in message
    assert message.endswith("use the plain SmolLM2-135M.")
    assert store.model(VOICES_NAME) is None and companion_default(store) is None


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
def test_a_full_disk_is_one_line_and_leaves_no_part_file(voices_home, store):
    part = voices_home / "models" / f"{VOICES_FILE}.part"
    part.parent.mkdir(parents=True)
    part.symlink_to("/dev/full")  # every write there fails: no space left on device

    result = ensure_voices(store)
    assert result.status == "failed" and "not enough disk space" in one_line(result.message)
    assert not part.is_symlink() and not part.exists()
    assert not (voices_home / "models" / VOICES_FILE).exists()
    assert companion_default(store) is None


# -- companions run on it, and say so -------------------------------------------------------------


@pytest.mark.model
def test_every_companion_runs_on_the_voices_model_unless_given_its_own(
    voices_ready, store, tmp_path
):
    """The support circle and a card the user imports run on the voices model; a companion the
    user gave the plain model keeps it. Each reply names its model and adapter, as stored."""
    assert ensure_voices(store).status == "ready"
    bundled = load_set("support").members
    luna = persona_from_dict(
        {
            "name": "Luna",
            "role": "a stargazer who notices small things",
            "traits": ["calm", "curious"],
            "speaking_style": "Quiet and precise.",
        }
    )
    imported = load_set_file(export_card(luna, tmp_path / "Luna.png")).members[0]
    members = [bundled[0], persona_from_dict({**bundled[1].to_dict(), "model": BUNDLED_NAME})]
    group = PersonaSet(
        name="support", title="Support", description="", members=[*members, imported]
    )
    chat = GroupChat(
        group,
        settings=ChatSettings(
            policy="round-robin",
            max_speakers=3,
            max_tokens=12,
            seed=3,
            model=companion_default(store),
        ),
        store=store,
        backend_for=default_backend_factory(store, n_ctx=2048, n_threads=1),
    )
    events = [e for e in chat.send("Hello everyone, how was your week?") if e.type == "message"]
    by = {e.speaker: e.to_dict() for e in events}
    assert set(by) == {members[0].name, members[1].name, "Luna"}
    for name in (members[0].name, "Luna"):
        assert (by[name]["model"], by[name]["adapter"]) == (VOICES_FILE, MERGED)
    assert by[members[1].name]["model"] == BUNDLED_FILE and "adapter" not in by[members[1].name]
    stored = {m["speaker"]: m for m in store.messages(chat.conversation_id)}
    assert stored["Luna"]["model"] == VOICES_FILE and stored["Luna"]["meta"]["adapter"] == MERGED


@pytest.mark.model
def test_mascot_chat_builds_the_voices_model_and_names_it_in_json(voices_home, monkeypatch):
    monkeypatch.setenv("MASCOT_THREADS", "1")
    args = ("chat", "--policy", "round-robin", "--max-speakers", "2", "--max-tokens", "12")
    say = ("--say", "I start a new job on Monday.", "--json")
    first = mascot(*args, *say, env_home=voices_home)
    assert first.returncode == 0, first.stderr
    assert "Building the voices model" in first.stderr
    messages = [e for e in map(json.loads, first.stdout.splitlines()) if e["type"] == "message"]
    assert messages and all((m["model"], m["adapter"]) == (VOICES_FILE, MERGED) for m in messages)

    plain = mascot(*args, "--model", "bundled", *say, env_home=voices_home)
    assert plain.returncode == 0 and "voices" not in plain.stderr, plain.stderr
    messages = [e for e in map(json.loads, plain.stdout.splitlines()) if e["type"] == "message"]
    assert messages and all(m["model"] == BUNDLED_FILE and "adapter" not in m for m in messages)


@pytest.mark.model
def test_mascot_chat_with_a_damaged_adapter_says_so_once_and_chats_on_the_plain_model(
    voices_home, tmp_path, monkeypatch, voices_adapter
):
    broken = tmp_path / ADAPTER_FILE
    broken.write_bytes(voices_adapter.read_bytes()[:4_000_000])
    monkeypatch.setenv("MASCOT_VOICES_ADAPTER", str(broken))
    monkeypatch.setenv("MASCOT_THREADS", "1")
    r = mascot(
        "chat", "--max-speakers", "1", "--max-tokens", "12", "--say", "Hi!", "--json",
        env_home=voices_home,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if "voices" in line]
    assert len(lines) == 1 and lines[0].startswith("Could not build the voices model")
    assert "Traceback" not in r.stderr
    messages = [e for e in map(json.loads, r.stdout.splitlines()) if e["type"] == "message"]
    assert messages and all(m["model"] == BUNDLED_FILE for m in messages)


def test_doctor_says_what_companions_run_on(voices_home, store):
    from engine.doctor import voices_row

    assert voices_row(store).startswith("not built yet")
    ensure_voices(store)
    line = voices_row(store)
    assert line.startswith("ready:") and VOICES_FILE in line and "by default" in line


def test_doctor_says_when_the_shipped_adapter_is_missing(mascot_home, store):
    from engine.doctor import voices_row

    assert "missing" in voices_row(store) and "plain model" in voices_row(store)


def test_the_voices_model_cannot_be_removed_but_the_way_back_to_plain_is_named(voices_home, store):
    ensure_voices(store)
    with pytest.raises(ModelError) as e:
        ModelRegistry(store).remove(VOICES_NAME)
    assert "plain model" in str(e.value) and "--model bundled" in str(e.value)
    assert ModelRegistry(store).get(VOICES_NAME)  # still registered
