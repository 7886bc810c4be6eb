"""``mascot-train bundled``: SFT on the persona corpus with the app's own prompts (tiny random
Llama with the bundled tokenizer, real corpus, real chat template)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from training.base_model import build_tiny  # noqa: E402
from training.config import BaseConfig, VoicesConfig  # noqa: E402
from training.layout import hf_dir, mark_done  # noqa: E402


@pytest.fixture(scope="module")
def tiny_out(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("voices")
    build_tiny(BaseConfig(tiny=True), hf_dir(out), seed=0)
    mark_done(out / "base", {"source": "tiny"})
    (out / "base" / "config.json").write_text(json.dumps({"tiny": True}), encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def tok(tiny_out):
    from training.voices import _tokenizer

    return _tokenizer(tiny_out)


def small(**kw) -> VoicesConfig:
    base = dict(
        max_train=16,
        eval_examples=6,
        contrast_examples=3,
        batch=4,
        steps=4,
        lr=3e-3,
        warmup=1,
        checkpoint_every=2,
        log_every=1,
        threads=1,
        eval_before=False,
    )
    base.update(kw)
    return VoicesConfig(**base)


def test_an_example_is_the_apps_request_with_the_reply_as_target(tok):
    from training.corpus import Corpus
    from training.voices import chat_format, encode

    ex = next(Corpus("train").examples())
    fmt = chat_format(tok)
    it = encode(ex, tok, fmt)

    def count(s):
        return len(tok(s, add_special_tokens=False)["input_ids"])

    app_text = fmt.render(ex.request(count).messages)
    assert tok.decode(it.prompt) == app_text
    assert app_text.rstrip().endswith("assistant")  # the model's turn comes next
    assert tok.decode(it.target) == ex.target + "<|im_end|>"
    # The system block (the companion's card) is a true prefix: it is read once per batch.
    assert it.prefix and it.prompt[: len(it.prefix)] == it.prefix
    assert ex.persona.name in tok.decode(it.prefix)


def test_the_same_reply_under_another_members_card_reads_another_card(tok):
    from training.corpus import Corpus
    from training.voices import chat_format, encode

    ex = next(Corpus("train").examples())
    other = next(p for p in ex.group.members if p.name != ex.persona.name)
    fmt = chat_format(tok)
    own, swapped = encode(ex, tok, fmt), encode(ex, tok, fmt, persona=other)
    assert own.target == swapped.target
    assert own.prefix != swapped.prefix
    assert f"Reply now as {other.name}" in tok.decode(swapped.prompt)


def test_batches_share_one_card_and_cover_every_reply_once(tok):
    from training.voices import batches, load_items

    items = load_items("train", tok, limit=40)
    order = batches(items, 4, seed=3)
    flat = [i for b in order for i in b]
    assert sorted(flat) == list(range(len(items)))
    assert all(len({items[i].key for i in b}) == 1 and len(b) <= 4 for b in order)
    assert order == batches(items, 4, seed=3)  # the order is fixed by the seed (resumable)
    assert order != batches(items, 4, seed=4)


def test_training_makes_the_written_replies_likelier(tiny_out, tok):
    import torch

    from training.voices import load_items, load_model, reply_nll, train

    cfg = small(steps=10, lr=3e-3, mode="full")
    seen = load_items("train", tok, limit=cfg.max_train)
    before = reply_nll(load_model(tiny_out, "full", cfg.lora), seen)
    folder = train(tiny_out, "learns", cfg, log=lambda m: None)
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(folder / "hf"), dtype=torch.float32)
    after = reply_nll(model, seen)
    assert after["bundled"] < before["bundled"] - 0.3
    metrics = json.loads((folder / "metrics.json").read_text())
    assert metrics["steps"] == 10 and metrics["train_examples"] == 16
    assert set(metrics["persona_contrast"]) >= {"bundled", "margin"}


def test_a_stopped_run_resumes_where_it_was_and_ends_as_an_unbroken_one(tiny_out):
    import torch

    from training.voices import train

    class Stop(Exception):
        pass

    def stop_at_step_3(msg: str) -> None:  # after the checkpoint of step 2
        if msg.startswith("step 3/"):
            raise Stop

    whole = train(tiny_out, "whole", small(), log=lambda m: None)
    with pytest.raises(Stop):
        train(tiny_out, "broken", small(), log=stop_at_step_3)
    broken = whole.parent / "broken"
    assert not (broken / "DONE").exists()
    assert torch.load(broken / "checkpoint.pt", weights_only=False)["step"] == 2
    said: list[str] = []
    train(tiny_out, "broken", small(), log=said.append)
    assert "resuming broken at step 2/4" in said
    assert not any(m.startswith("step 1/") or m.startswith("step 2/") for m in said)
    from safetensors.torch import load_file

    a = load_file(str(whole / "adapter" / "adapter_model.safetensors"))
    b = load_file(str(broken / "adapter" / "adapter_model.safetensors"))
    assert a.keys() == b.keys()
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)


def test_one_persona_trains_on_its_own_replies_only(tiny_out, tok):
    from training.voices import train

    folder = train(tiny_out, "ruth", small(persona="Ruth", steps=2), log=lambda m: None)
    metrics = json.loads((folder / "metrics.json").read_text())
    assert metrics["persona"] == "Ruth" and metrics["train_examples"] == 16


def test_the_cli_trains_and_refuses_a_bad_mode_in_one_line(tiny_out, capsys):
    from training.cli import main

    rc = main(["bundled", "--out", str(tiny_out), "--tiny", "--mode", "nope", "--steps", "1"])
    err = capsys.readouterr().err
    assert rc != 0
    assert "--mode nope" in err and "shared" in err and "Traceback" not in err
    rc = main(
        [
            "bundled",
            "--out",
            str(tiny_out),
            "--tiny",
            "--tag",
            "cli",
            "--steps",
            "1",
            "--max-train",
            "8",
            "--eval-examples",
            "4",
            "--contrast-examples",
            "2",
            "--threads",
            "1",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert out["steps"] == 1 and "shipped" not in out  # a tiny model is never shipped
    assert (tiny_out / "voices" / "cli" / "adapter").is_dir()
