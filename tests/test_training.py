"""Training pipeline: unit tests for its pieces and the --tiny pipeline end to end.

The end-to-end test runs ``mascot-train pipeline --tiny`` in a subprocess (as a user would), on a
tiny random Llama with the bundled tokenizer, then checks the exported files in llama.cpp, the
manifest's fidelity and the model registry.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.errors import InputError
from engine.persona_files import load_set
from training.judges.rubric import DIMENSIONS, parse_scores
from training.scenarios import DOMAINS, GROUP_FOR_DOMAIN, USER, load_scenarios

ROOT = Path(__file__).resolve().parent.parent


# -- scenarios ----------------------------------------------------------------------------------


def test_scenario_sets_are_complete_and_well_formed():
    ids = set()
    for domain in DOMAINS:
        items = load_scenarios(domain)
        assert len(items) >= 40
        group = load_set(GROUP_FOR_DOMAIN[domain])
        for s in items:
            assert s.domain == domain and s.group == group.name and s.split in ("train", "heldout")
            assert 1 <= len(s.history) <= 4 and s.user_message.strip() and s.situation.strip()
            speakers = {h["speaker"] for h in s.history}
            assert speakers <= set(group.names) | {USER}, s.id
            assert speakers & set(group.names), f"{s.id}: no earlier turn by a member"
            assert s.id not in ids
            ids.add(s.id)
        held = [s for s in items if s.split == "heldout"]
        assert 0.2 <= len(held) / len(items) <= 0.3


def test_scenario_splits_are_disjoint_and_filtered():
    train = load_scenarios(split="train")
    held = load_scenarios(split="heldout")
    assert {s.id for s in train}.isdisjoint({s.id for s in held})
    assert len(train) + len(held) == len(load_scenarios())
    assert all(s.domain == "workplace" for s in load_scenarios("workplace", "heldout"))
    with pytest.raises(InputError):
        load_scenarios("cooking")
    with pytest.raises(InputError):
        load_scenarios(split="test")


def test_training_contexts_use_the_train_split_and_the_apps_prompt():
    from engine.chat.group import GroupChat
    from engine.chat.settings import ChatSettings
    from engine.llm.backend import FakeBackend
    from engine.reply.prompts import TranscriptItem
    from training.contexts import build_contexts

    ctxs = build_contexts("support", ["Mia"], split="train", limit=3)
    held = {s.id for s in load_scenarios("support", "heldout")}
    assert len(ctxs) == 3 and not {c.scenario.id for c in ctxs} & held
    c = ctxs[0]
    group = load_set("support")
    chat = GroupChat(
        group,
        settings=ChatSettings(policy="round-robin"),
        backend_for=lambda _m: FakeBackend(n_ctx=2048),
    )
    chat.transcript = [
        TranscriptItem("user" if h["speaker"] == USER else "companion", h["speaker"], h["text"])
        for h in c.scenario.transcript()
    ]
    assert c.messages == chat.speaker_request(group.member("Mia"), "").messages
    assert c.prompt.rstrip().endswith("assistant") and c.scenario.user_message in c.prompt
    assert c.clean("Hello there.\nTheo: I will answer instead") == (
        "Hello there.",
        False,
    )  # a stop string
    assert c.clean("Hello there. Theo: I will answer instead") == ("Hello there.", True)


def test_the_judge_reward_scores_what_the_user_would_see_with_the_teacher():
    """`--policy.reward judge`: GRPO completions scored by the teacher on their training context,
    after the app's cleanup; a reply that goes on as the user loses what it wrote as the user."""
    from training.contexts import build_contexts
    from training.judges.factory import make_judge
    from training.rewards import make_rewards

    ctx = build_contexts("support", ["Mia"], split="train", limit=1)[0]
    judge = make_judge("learned")
    (fn,), _ = make_rewards({"judge": 1.0}, {"judge": judge, "contexts": {ctx.id: ctx}})
    good = "Oh, that sounds so heavy. I'm here with you. What has been the hardest part today?"
    rude = "Whatever. Not my problem, honestly."
    cols = dict(
        context=[ctx.id] * 4,
        persona=["Mia"] * 4,
        stop=[ctx.stop] * 4,
        others=[ctx.others] * 4,
        recent=[ctx.recent] * 4,
    )
    scores = fn([ctx.prompt] * 4, [good, rude, "", good + "\nUser: thanks Mia"], **cols)
    assert scores[0] > scores[1] and scores[2] == -2.0
    assert scores[3] == scores[0]  # the line written as the user is cut before judging
    assert scores[0] == judge.score(ctx.scenario, ctx.persona, good).mean - 3.0


# -- judge parsing ---------------------------------------------------------------------------------


def test_parse_scores_reads_json_and_forgives_format():
    text = (
        'Sure! ```json\n{"emotional_expressiveness": 4, "Empathetic support": "5", '
        '"persona-consistency": 2.5, "response_relevance": "3/5", "social_contribution": 9}\n```'
    )
    values, complete = parse_scores(text)
    assert complete
    assert values == {
        "emotional_expressiveness": 4.0,
        "empathetic_support": 5.0,
        "persona_consistency": 2.5,
        "response_relevance": 3.0,
        "social_contribution": 5.0,
    }


@pytest.mark.parametrize(
    "text", ["", "no json here", '{"emotional_expressiveness": true}', "{broken", '{"a": {"b": 1}']
)
def test_parse_scores_falls_back_to_neutral(text):
    values, complete = parse_scores(text)
    assert not complete and set(values) == set(DIMENSIONS)
    assert all(v == 3.0 for v in values.values())


def test_parse_scores_skips_a_broken_object_before_a_good_one():
    values, complete = parse_scores("{oops} then " + json.dumps({d: 2 for d in DIMENSIONS}))
    assert complete and all(v == 2.0 for v in values.values())


# -- preference pairing ---------------------------------------------------------------------------


def _rows(*pairs):
    return [{"reply": r, "mean": m} for r, m in pairs]


def test_pairs_need_the_margin_and_point_the_right_way():
    from training.prefs import make_pairs

    pairs = make_pairs(_rows(("a", 4.0), ("b", 3.6), ("c", 2.0)), min_margin=0.5, max_pairs=10)
    assert [(p["chosen"], p["rejected"]) for p in pairs] == [("a", "c"), ("b", "c")]
    assert pairs[0]["margin"] == 2.0 and pairs[1]["margin"] == pytest.approx(1.6)


def test_pairs_skip_duplicates_and_keep_the_widest():
    from training.prefs import make_pairs

    rows = _rows(("Same text.", 5.0), ("same  TEXT.", 1.0), ("x", 3.0), ("y", 1.5))
    pairs = make_pairs(rows, min_margin=0.5, max_pairs=2)
    assert len(pairs) == 2 and pairs[0] == {"chosen": "Same text.", "rejected": "y", "margin": 3.5}
    assert all(p["chosen"] != p["rejected"] for p in pairs)
    assert make_pairs(_rows(("a", 3.0), ("b", 3.4)), 0.5, 4) == []
    assert len(make_pairs(_rows(("a", 3.0), ("b", 3.5)), 0.5, 4)) == 1  # exactly the margin counts


# -- config and CLI -----------------------------------------------------------------------------------


def test_config_precedence_defaults_tiny_yaml_cli(tmp_path):
    from training.cli import make_parser, resolve

    yml = tmp_path / "c.yaml"
    yml.write_text("out: from-yaml\nsample:\n  k: 7\n  personas: [Theo]\npolicy:\n  lora: {r: 2}\n")
    args = make_parser().parse_args(
        ["pipeline", "--tiny", "--config", str(yml), "--sample.k", "5", "--policy.lora.alpha", "3"]
    )
    cfg = resolve(args, None)
    assert cfg.out == "from-yaml" and cfg.base.tiny
    assert cfg.sample.k == 5 and cfg.sample.personas == ["Theo"] and cfg.sample.max_tokens == 16
    assert cfg.policy.lora.r == 2 and cfg.policy.lora.alpha == 3
    stage = resolve(
        make_parser().parse_args(["sample", "--out", "x", "--k", "2", "--personas", "Mia,Ruth"]),
        "sample",
    )
    assert stage.out == "x" and stage.sample.k == 2 and stage.sample.personas == ["Mia", "Ruth"]


def test_config_errors_are_one_line(tmp_path, capsys):
    from training.cli import main

    yml = tmp_path / "bad.yaml"
    yml.write_text("sample:\n  kk: 3\n")
    assert main(["pipeline", "--config", str(yml), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("mascot-train:") and "kk" in err and "\n" not in err
    assert main(["sample", "--out", str(tmp_path / "o"), "--k", "many"]) == 1
    assert "expected int" in capsys.readouterr().err


def test_missing_train_extra_says_how_to_install(monkeypatch, capsys):
    import importlib.util

    from training.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "trl" else real(name, *a)
    )
    assert main(["pipeline", "--tiny", "--out", "x"]) == 1
    err = capsys.readouterr().err.strip()
    assert "pip install -e '.[train]'" in err and "trl" in err and "\n" not in err


def test_a_stage_refuses_to_run_before_its_inputs(tmp_path, capsys):
    from training.cli import main

    assert main(["prefs", "--out", str(tmp_path)]) == 1
    assert "Stage 'sample' has not finished" in capsys.readouterr().err


def test_a_persona_adapter_is_served_over_the_bundled_model_only_when_training_started_from_it(
    tmp_path,
):
    from engine.models.registry import BUNDLED_NAME
    from training.export import served_base

    (tmp_path / "base").mkdir()
    for cfg, bundled in (
        ({"source": "bundled", "tiny": False}, True),
        ({"source": "bundled", "tiny": True}, False),
        ({"source": "Qwen/Qwen2.5-1.5B-Instruct", "tiny": False}, False),
    ):
        (tmp_path / "base" / "config.json").write_text(json.dumps(cfg))
        assert (served_base(tmp_path) == BUNDLED_NAME) is bundled
        if not bundled:
            assert served_base(tmp_path).endswith("base-f16.gguf")


def test_pyproject_declares_the_console_script():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'mascot-train = "training.cli:main"' in text


# -- the tiny pipeline end to end -------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("tiny-run")
    home = tmp_path_factory.mktemp("tiny-home")
    env = {**os.environ, "MASCOT_HOME": str(home), "MASCOT_THREADS": "1"}
    cmd = [
        sys.executable,
        "-m",
        "training.cli",
        "pipeline",
        "--tiny",
        "--out",
        str(out),
        "--threads",
        "1",
    ]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # stdout also carries the trainers' log lines; the summary is written to a file as well
    return out, home, json.loads((out / "summary.json").read_text()), cmd, env


@pytest.mark.slow
def test_tiny_pipeline_exports_a_gguf_that_llama_cpp_runs(tiny_run):
    from llama_cpp import Llama

    out, _home, summary, _cmd, _env = tiny_run
    export = summary["exports"]["Mia"]
    folder = out / "export" / "Mia"
    for key in ("f16", "q8_0", "q4_k_m", "lora"):
        assert (folder / export["files"][key]).is_file()
    for key in ("f16", "q4_k_m"):
        llm = Llama(model_path=str(folder / export["files"][key]), n_ctx=256, verbose=False)
        try:
            text = llm.create_completion("Hello", max_tokens=5, temperature=0.0)["choices"][0][
                "text"
            ]
            assert llm.n_tokens > 1 and isinstance(text, str)
        finally:
            llm.close()
    # the LoRA adapter alone loads on the base GGUF
    llm = Llama(
        model_path=str(out / "base" / "base-f16.gguf"),
        lora_path=str(folder / export["files"]["lora"]),
        n_ctx=256,
        verbose=False,
    )
    try:
        llm.create_completion("Hello", max_tokens=3, temperature=0.0)
    finally:
        llm.close()


@pytest.mark.slow
def test_tiny_pipeline_manifest_fidelity_and_registry(tiny_run, monkeypatch):
    from engine.models.registry import ModelRegistry
    from engine.storage import Store

    out, home, summary, _cmd, _env = tiny_run
    manifest = json.loads((out / "export" / "Mia" / "manifest.json").read_text())
    assert manifest["metrics"]["fidelity"] >= 0.99
    assert manifest["metrics"]["adapter_fidelity"] >= 0.99
    assert manifest["persona"] == "Mia" and manifest["base_model"] == "tiny-random-llama"
    assert len(manifest["data_sha256"]) == 64
    assert all(len(f["sha256"]) == 64 for f in manifest["files"].values())
    assert {"base", "sample", "prefs", "reward", "policy", "export"} <= set(manifest["config"])
    assert "heldout" in manifest["metrics"] and "reward" in manifest["metrics"]["heldout"]["before"]
    for stage in ("base", "samples", "prefs", "reward", "policy/Mia", "export/Mia", "evaluate"):
        assert (out / stage / "config.json").is_file() and (out / stage / "DONE").is_file()
    # only the train split was sampled
    held = {s.id for s in load_scenarios(split="heldout")}
    sampled = {
        json.loads(line)["scenario"]
        for line in (out / "samples" / "samples.jsonl").read_text().splitlines()
    }
    assert sampled and not sampled & held
    monkeypatch.setenv("MASCOT_HOME", str(home))
    store = Store()
    try:
        # registered as the app serves persona models: the LoRA adapter over the base it was trained on
        registry = ModelRegistry(store)
        base, adapter = registry.resolve(manifest["registered"]["name"])
        assert adapter is not None and Path(adapter.path).name == manifest["files"]["lora"]["path"]
        assert Path(base.path).resolve() == (out / "base" / "base-f16.gguf").resolve()
        from engine.chat.backends import default_backend_factory
        from engine.llm.backend import GenRequest

        backend = default_backend_factory(store, n_ctx=256, n_threads=1)(
            manifest["registered"]["name"]
        )
        gen = backend.generate(
            GenRequest(
                slot="Mia",
                messages=[{"role": "user", "content": "Hello"}],
                max_tokens=4,
                temperature=0.0,
            )
        )
        gen.text()
        assert (
            gen.stats.completion_tokens >= 1 and gen.stats.model == manifest["registered"]["name"]
        )
    finally:
        store.close()


@pytest.mark.slow
def test_tiny_pipeline_resumes_without_redoing_work(tiny_run):
    out, _home, _summary, cmd, env = tiny_run
    before = (out / "export" / "Mia" / "manifest.json").stat().st_mtime_ns
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (out / "export" / "Mia" / "manifest.json").stat().st_mtime_ns == before


@pytest.mark.slow
def test_sft_only_ablation_trains_the_warm_start_alone_and_exports(tiny_run, tmp_path):
    """The SFT-only ablation (RL's own effect) on the tiny run's samples and preferences:
    a persona adapter from the warm start alone, no RL history, that the export stage turns into a
    GGUF llama.cpp runs."""
    import shutil

    out, _home, _summary, _cmd, env = tiny_run
    abl = tmp_path / "sft-only"
    for stage in ("base", "samples", "prefs", "reward"):
        shutil.copytree(out / stage, abl / stage)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "training.cli",
            "policy",
            "--tiny",
            "--out",
            str(abl),
            "--sft-warmstart",
            "--sft-only",
            "--threads",
            "1",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    metrics = json.loads((abl / "policy" / "Mia" / "metrics.json").read_text())
    assert (
        metrics["algorithm"] == "sft-only"
        and metrics["sft"]["examples"] > 0
        and "history" not in metrics
    )
    assert (abl / "policy" / "Mia" / "adapter" / "adapter_config.json").is_file()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "training.cli",
            "export",
            "--tiny",
            "--out",
            str(abl),
            "--no-register",
            "--threads",
            "1",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert list((abl / "export" / "Mia").glob("*-f16.gguf"))


def test_sft_only_without_the_warm_start_is_one_line(tmp_path, capsys):
    from training.cli import main

    pytest.importorskip("trl")
    code = main(["policy", "--out", str(tmp_path), "--sft-only"])
    err = capsys.readouterr().err.strip()
    assert code != 0 and "Traceback" not in err and "--sft-warmstart" in err
    assert len(err.splitlines()) == 1, err
