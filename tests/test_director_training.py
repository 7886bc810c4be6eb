"""Director training: group rewards, config, and ``mascot-train director --tiny`` end to end.

The end-to-end test runs the CLI in a subprocess on a tiny random Llama, then checks the export
(manifest with ``"role": "director"``, sha256, fidelity, registry) and lets the exported Director
drive a real round in the engine with the bundled persona model.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.persona_files import load_set
from training.scenarios import load_scenarios

ROOT = Path(__file__).resolve().parent.parent


class FakeJudge:
    """Embeddings from word overlap; fixed scores (keeps unit tests free of model downloads)."""

    name = "fake"

    def embed(self, texts):
        import numpy as np

        vocab = sorted({w for t in texts for w in t.lower().split()}) or ["x"]
        rows = []
        for t in texts:
            v = np.array([float(w in t.lower().split()) for w in vocab]) + 1e-9
            rows.append(v / np.linalg.norm(v))
        return np.stack(rows)

    def score(self, scenario, persona, reply, others=None):
        from training.judges.rubric import Scores

        return Scores({"social_contribution": 5.0, "persona_consistency": 3.0}, self.name)


def _state(round_replies=()):
    from training.director_rewards import GroupState

    sc = load_scenarios("support", "train")[0]
    return GroupState(
        id=f"{sc.id}/{len(round_replies)}",
        scenario=sc,
        group=load_set("support"),
        round_replies=list(round_replies),
    )


def test_parse_decision_grades_the_format_like_the_app_reads_it():
    from engine.director.policies import Director
    from training.director_rewards import parse_decision

    st = _state()
    rs = st.round_state()
    allowed = rs.allowed()
    name = allowed[-1]
    menu = Director.menu(st.group.member(name), "User")
    exact = json.dumps({"speaker": name, "directive": menu[0]})
    assert parse_decision(exact, rs, "menu") == (name, menu[0], 1.0)
    assert parse_decision(json.dumps({"speaker": name, "directive": "whatever"}), rs, "menu")[
        ::2
    ] == (name, 0.5)
    assert parse_decision(f'{{"speaker": "{name}", "direct', rs, "menu") == (name, "", 0.25)
    assert parse_decision("garbage", rs, "menu") == (allowed[0], "", 0.0)
    assert parse_decision('{"speaker": "Nobody", "directive": ""}', rs, "menu")[2] == 0.0
    assert (
        parse_decision('{"speaker": "END", "directive": ""}', rs, "menu")[2] == 0.0
    )  # may not end yet
    free = json.dumps({"speaker": name, "directive": "Ask User how the week went"})
    assert parse_decision(free, rs, "free")[2] == 1.0


def test_group_rewarder_components_caching_and_reward_functions():
    from training.director_rewards import COMPONENTS, GroupRewarder, make_reward_funcs, total

    calls = []

    def rollout(state, speaker, directive):
        calls.append((speaker, directive))
        return f"{speaker} says something new about the plan"

    st = _state()
    rw = GroupRewarder(FakeJudge(), rollout, mode="menu")
    name = st.round_state().allowed()[0]
    comp = rw.evaluate(st, json.dumps({"speaker": name, "directive": "x"}))
    assert set(comp) == set(COMPONENTS) and all(0.0 <= v <= 1.0 for v in comp.values())
    assert comp["social"] == 1.0 and comp["persona"] == 0.5 and comp["format"] == 0.5
    rw.evaluate(st, json.dumps({"speaker": name, "directive": "x"}))
    assert len(calls) == 1 and rw.rollout_calls == 1  # cached by (state, speaker, directive)
    # diversity drops when the reply repeats another reply of the round
    same = GroupRewarder(FakeJudge(), lambda s, sp, d: "the very same words", mode="menu")
    st1 = _state([{"speaker": name, "text": "the very same words"}])
    assert same.decision_components(st1, st1.round_state().allowed()[0], "")["diversity"] < 0.01
    assert rw.decision_components(st1, st1.round_state().allowed()[0], "")["diversity"] > 0.5
    # balance: a companion who already spoke in the history scores lower than one who did not
    hist = [h["speaker"] for h in st.scenario.history if h["speaker"] in st.group.names]
    silent = [n for n in st.group.names if n not in hist]
    assert hist and silent, (
        "the first support scenario has companions who spoke and one who did not"
    )
    assert (
        rw.score_reply(st, hist[0], "hi there")["balance"]
        < rw.score_reply(st, silent[0], "hi there")["balance"]
    )
    weights = {c: 1.0 for c in COMPONENTS}
    weights["balance"] = 0.0
    fns, ws = make_reward_funcs(rw, {st.id: st}, weights)
    assert [f.__name__ for f in fns] == [c for c in COMPONENTS if c != "balance"] and ws == [
        1.0
    ] * 6
    assert fns[-1](["p"], ["garbage"], state_id=[st.id]) == [0.0]
    assert 0.0 <= total(comp, weights) <= 1.0


def test_decisions_are_scored_on_several_rollouts_and_the_reward_table_covers_every_choice():
    """With ``samples`` > 1 a decision's components are the mean over replies rolled out with
    other seeds (a bad draw no longer decides the ranking); the reward table scores every allowed
    decision once, so training steps and the headroom summary need no further rollouts."""
    from training.director_policy import decision_choices, table_summary
    from training.director_rewards import COMPONENTS, GroupRewarder

    calls = []

    def rollout(state, speaker, directive, sample=0):
        calls.append((speaker, directive, sample))
        # sample 0 is a bad draw (empty after cleanup), sample 1 a real reply
        return "" if sample == 0 else f"{speaker} offers a new idea about {directive or 'the plan'}"

    st = _state()
    name = st.round_state().allowed()[0]
    one = GroupRewarder(FakeJudge(), rollout, mode="menu").decision_components(st, name, "")
    two = GroupRewarder(FakeJudge(), rollout, mode="menu", samples=2).decision_components(
        st, name, ""
    )
    assert one["social"] == 0.0 and one["relevance"] == 0.0  # one empty draw: nothing
    assert two["social"] == 0.5 and 0.0 < two["diversity"] <= 0.5  # the mean of 0 and 1
    assert (name, "", 1) in calls and one["balance"] == two["balance"]
    calls.clear()
    states = [st, _state([{"speaker": name, "text": "first reply"}])]
    rw = GroupRewarder(FakeJudge(), rollout, mode="menu", samples=2)
    table = rw.table(states, decision_choices)
    for s in states:
        assert set(table[s.id]) == set(decision_choices(s))
        assert all(set(c) == set(COMPONENTS) and c["format"] == 1.0 for c in table[s.id].values())
    n_decisions = sum(len(decision_choices(s)) for s in states)
    assert len(calls) == 2 * n_decisions == rw.rollout_calls  # every decision, both seeds
    summary = table_summary(table, states, {c: 1.0 for c in COMPONENTS})
    assert summary["decisions"] == n_decisions
    assert summary["oracle"] >= summary["round_robin"] and summary["oracle"] >= summary["random"]
    assert all(
        r["round_robin_reward"] is not None for r in summary["per_state"]
    )  # RR's choice is in the table
    rw.evaluate(states[0], decision_choices(states[0])[0])
    assert rw.rollout_calls == 2 * n_decisions  # lookups from now on


def test_the_held_out_comparison_can_score_on_more_rollouts_without_repeating_the_first_ones():
    """``with_samples(k)`` scores on k replies and shares the replies already rolled out: the
    held-out comparison (one decision per policy and state) can use more samples than training
    for the price of the extra ones only."""
    from training.director_rewards import GroupRewarder

    calls = []

    def rollout(state, speaker, directive, sample=0):
        calls.append(sample)
        return "" if sample in (0, 1) else f"{speaker} offers a new idea, take {sample}"

    st = _state()
    name = st.round_state().allowed()[0]
    train = GroupRewarder(FakeJudge(), rollout, mode="menu", samples=2)
    low = train.decision_components(st, name, "")
    assert sorted(calls) == [0, 1] and low["social"] == 0.0  # two empty draws
    four = train.with_samples(4)
    high = four.decision_components(st, name, "")
    assert sorted(calls) == [0, 1, 2, 3]  # only the new seeds ran
    assert high["social"] == 0.5  # mean over 4: two empty, two real
    assert train.decision_components(st, name, "") == low  # the training view is unchanged
    assert set(train._rollouts) == set(four._rollouts)  # one store, saved together


def test_rolled_out_replies_are_saved_and_reused_by_a_restarted_run(tmp_path):
    from training.director_policy import decision_choices
    from training.director_rewards import GroupRewarder

    calls = []

    def rollout(state, speaker, directive, sample=0):
        calls.append(sample)
        return f"{speaker} reply {sample} to {directive}"

    st = _state()
    key = {"persona_model": "m.gguf", "seed": 0}
    first = GroupRewarder(FakeJudge(), rollout, mode="menu", samples=2)
    assert first.persist(tmp_path / "rollouts.json", key) == 0  # nothing saved yet
    table = first.table([st], decision_choices)
    n = len(calls)
    again = GroupRewarder(FakeJudge(), rollout, mode="menu", samples=2)
    assert again.persist(tmp_path / "rollouts.json", key) == n
    assert again.table([st], decision_choices) == table and len(calls) == n  # no new rollouts
    other = GroupRewarder(FakeJudge(), rollout, mode="menu", samples=2)
    assert (
        other.persist(tmp_path / "rollouts.json", {**key, "seed": 1}) == 0
    )  # other settings: not reused
    for damaged in (
        "{not json",
        json.dumps({"key": key, "rollouts": [["only", "three", 1]]}),
        json.dumps({"key": key}),
    ):
        (tmp_path / "bad.json").write_text(damaged)
        fresh = GroupRewarder(FakeJudge(), rollout, mode="menu", samples=2)
        assert fresh.persist(tmp_path / "bad.json", key) == 0  # damaged: rolled out again


def test_reward_table_signal_tells_learnable_headroom_from_lucky_replies():
    """The table's best decision per state is picked and scored on the same replies, so its lead
    over round-robin can be luck. ``split_half_signal`` picks on one reply and scores on
    another: where which reply is good is luck, the picked decision scores no better than a
    random one; where it depends on the decision (here: the speaker), it keeps its lead."""
    import zlib

    from training.director_policy import decision_choices
    from training.director_rewards import COMPONENTS, GroupRewarder

    states = [_state(), _state([{"speaker": "Mia", "text": "first reply"}])]
    weights = {c: 1.0 for c in COMPONENTS}

    def lucky(state, speaker, directive, sample=0):  # good on exactly one of the two draws
        good = (zlib.crc32(f"{state.id}{speaker}{directive}".encode()) + sample) % 2 == 0
        return f"{speaker} offers a new idea about {directive or 'the plan'}" if good else ""

    def skilled(state, speaker, directive, sample=0):  # one companion always has something to say
        return f"{speaker} offers a new idea about the plan" if speaker == "Theo" else ""

    noise = GroupRewarder(FakeJudge(), lucky, mode="menu", samples=2).split_half_signal(
        states, decision_choices, weights
    )
    assert noise["split_oracle"] < noise["random"] < noise["in_sample_oracle"]
    assert noise["round_robin"] is not None
    signal = GroupRewarder(FakeJudge(), skilled, mode="menu", samples=2).split_half_signal(
        states, decision_choices, weights
    )
    assert signal["split_oracle"] == signal["in_sample_oracle"] > signal["random"]
    assert (
        GroupRewarder(FakeJudge(), skilled, mode="menu").split_half_signal(
            states, decision_choices, weights
        )
        is None
    )


def test_a_long_batched_table_is_saved_chunk_by_chunk_and_a_stopped_run_resumes(tmp_path):
    """Rolling out a reward table takes up to an hour on a small CPU: batched rollouts are saved
    after every chunk with a progress line, so a run stopped halfway keeps what it rolled out and
    the restarted run rolls out only the rest."""
    from training.director_policy import decision_choices
    from training.director_rewards import GroupRewarder

    class Batched:
        def __init__(self, stop_after=None):
            self.calls, self.stop_after = 0, stop_after

        def __call__(self, state, speaker, directive, sample=0):
            return f"{speaker} reply {sample} to {directive}"

        def many(self, items):
            if self.stop_after is not None and self.calls >= self.stop_after:
                raise KeyboardInterrupt  # the user stops the run
            self.calls += 1
            return [self(*item) for item in items]

    states = [_state(), _state([{"speaker": "Mia", "text": "That sounds exhausting."}])]
    key = {"persona_model": "m.gguf", "seed": 0}
    lines = []
    first = GroupRewarder(FakeJudge(), Batched(stop_after=1), mode="menu", samples=2)
    first.PREFETCH_CHUNK = 16
    first.progress = lines.append
    first.persist(tmp_path / "rollouts.json", key)
    with pytest.raises(KeyboardInterrupt):
        first.table(states, decision_choices)
    total = 2 * sum(len(decision_choices(s)) for s in states)
    assert len(lines) == 1 and lines[0].startswith(f"rollouts 16/{total} (")
    again = GroupRewarder(FakeJudge(), Batched(), mode="menu", samples=2)
    again.PREFETCH_CHUNK = 16
    assert again.persist(tmp_path / "rollouts.json", key) == 16  # the first chunk was kept
    again.table(states, decision_choices)
    assert again.rollout_calls == total - 16  # only the rest rolled out


def test_director_config_precedence_and_cli(tmp_path):
    from training.cli import make_parser
    from training.director_config import resolve_config
    from training.director_eval import model_name

    y = tmp_path / "d.yaml"
    y.write_text("steps: 7\nweights: {format: 3.5}\n")
    args = make_parser().parse_args(
        ["director", "--tiny", "--config", str(y), "--weights.social", "0.25", "--out", "x"]
    )
    cfg = resolve_config(args)
    assert cfg.tiny and cfg.base.tiny and cfg.steps == 7 and cfg.out == "x"
    assert cfg.weights.format == 3.5 and cfg.weights.social == 0.25 and cfg.weights.relevance == 1.0
    assert model_name(cfg) == "director-support-grpo"
    assert cfg.balance_prior == 6.0  # the app's participation prior
    from training.common import TrainError

    with pytest.raises(TrainError, match=r"^--balance-prior must be 0 or more .*not -1\.0\.$"):
        resolve_config(
            make_parser().parse_args(["director", "--balance-prior", "-1", "--out", "x"])
        )


def test_director_prompt_is_the_apps_director_prompt():
    from engine.director.policies import Director
    from engine.llm.chat_format import ChatFormat
    from training.director_rollouts import director_prompt

    st = _state([{"speaker": "Mia", "text": "I hear you."}])
    fmt = ChatFormat(None)
    assert director_prompt(st, fmt) == fmt.render(
        Director.messages(st.round_state(), st.transcript())
    )
    prompt = director_prompt(st, fmt)
    # the round's reply is the last thing the Director reads before deciding
    assert prompt.rstrip().endswith("Mia: I hear you.<|im_end|>\n<|im_start|>assistant")
    # the user's message says how often each companion had replied before it
    history = [h["speaker"] for h in st.scenario.history]
    counts = ", ".join(f"{n} {history.count(n)}" for n in st.group.names)
    assert f"(Replies so far: {counts})" in prompt


# -- end to end ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_director(tmp_path_factory):
    out = tmp_path_factory.mktemp("dir-run")
    home = tmp_path_factory.mktemp("dir-home")
    env = {**os.environ, "MASCOT_HOME": str(home), "MASCOT_THREADS": "1"}
    cmd = [
        sys.executable,
        "-m",
        "training.cli",
        "director",
        "--tiny",
        "--out",
        str(out),
        "--threads",
        "1",
        "--rollout-samples",
        "2",
        "--reward-table",
        "--eval-table",
        "--eval-samples",
        "3",
    ]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, home


@pytest.mark.slow
@pytest.mark.model
@pytest.mark.timeout(1800)  # the CLI run (fixture) counts too; minutes on a busy shared CPU
def test_tiny_director_exports_registers_and_drives_a_real_round(tiny_director, monkeypatch):
    from engine.chat.backends import default_backend_factory
    from engine.chat.group import GroupChat
    from engine.chat.settings import ChatSettings
    from engine.models.registry import ModelRegistry
    from engine.storage import Store
    from tests.helpers import events_of, run_round

    out, home = tiny_director
    manifest = json.loads((out / "export" / "manifest.json").read_text())
    assert manifest["role"] == "director" and manifest["name"] == "director-support-grpo"
    assert manifest["metrics"]["fidelity"] >= 0.99
    assert all(
        len(f["sha256"]) == 64 and (out / "export" / f["path"]).is_file()
        for f in manifest["files"].values()
    )
    metrics = json.loads((out / "director" / "metrics.json").read_text())
    logged = {k for h in metrics["history"] for k in h}
    for comp in (
        "relevance",
        "diversity",
        "non_redundancy",
        "social",
        "persona",
        "balance",
        "format",
    ):
        assert f"rewards/{comp}/mean" in logged
    # menu mode: every sampled decision was one the app can make (constrained like the app)
    assert metrics["constrained_generations"] > 0 and metrics["unconstrained_generations"] == 0
    assert all(
        h["rewards/format/mean"] == 1.0 for h in metrics["history"] if "rewards/format/mean" in h
    )
    ev = json.loads((out / "eval" / "metrics.json").read_text())
    assert set(ev["policies"]) == {"round-robin", "untrained", "trained"}
    assert ev["samples"] == 3 and set(ev["mean_reward_at_2_samples"]) == set(ev["policies"])
    # the reward tables: every allowed decision scored; the best one per state bounds every policy
    table = json.loads((out / "director" / "reward_table.json").read_text())
    assert table["decisions"] >= 2 * 8 and table["oracle"] >= max(
        table["round_robin"], table["random"]
    )
    head = ev["headroom"]
    assert all(head["oracle"] >= p["mean_reward"] - 1e-6 for p in ev["policies"].values())
    saved = json.loads((out / "states" / "rollouts.json").read_text())["rollouts"]
    assert {r[3] for r in saved} == {0, 1, 2}  # two per decision, a third for the policies' own
    for stage in ("base", "director", "export", "eval"):
        assert (out / stage / "DONE").is_file()

    monkeypatch.setenv("MASCOT_HOME", str(home))
    store = Store()
    try:
        names = [m.name for m in ModelRegistry(store).list()]
        assert manifest["name"] in names
        chat = GroupChat(
            load_set("support"),
            store=store,
            backend_for=default_backend_factory(store, n_ctx=2048, n_threads=1),
            settings=ChatSettings(
                director_model=manifest["name"], max_speakers=2, max_tokens=16, seed=0
            ),
        )
        events = run_round(chat, "I had a rough day at work and can't switch off.")
        assert not events_of(events, "error"), events_of(events, "error")
        directed = [e for e in events_of(events, "director") if e.data["source"] == "director"]
        assert directed and all(e.data["valid"] for e in directed)
        assert all(
            e.data["speaker"] in chat.names for e in directed if e.data["speaker"] is not None
        )
        assert len(events_of(events, "message")) >= 1
        assert (
            Path(chat.policy().backend.path).name == manifest["registered"]["path"].split("/")[-1]
        )
    finally:
        store.close()


# peft's get_peft_model asks transformers a question transformers has renamed (upstream warning)
@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")
def test_grpo_can_continue_from_a_saved_adapter(tmp_path):
    """A long CPU run can be done in parts: --init-adapter starts from the adapter an earlier
    run saved, with its learned weights and still trainable; a wrong folder is one clear error."""
    import torch

    from training.base_model import build_tiny
    from training.common import TrainError
    from training.config import BaseConfig
    from training.director_config import DirectorConfig
    from training.director_policy import policy_model

    build_tiny(BaseConfig(tiny=True), tmp_path / "hf", seed=0)
    cfg = DirectorConfig(tiny=True)
    first = policy_model(cfg, tmp_path / "hf")
    lora = {n: p for n, p in first.named_parameters() if "lora_B" in n}
    assert lora
    with torch.no_grad():
        for p in lora.values():
            p.fill_(0.125)  # stands in for what an earlier run learned (lora_B starts at zero)
    first.save_pretrained(str(tmp_path / "adapter"))
    again = policy_model(
        DirectorConfig(tiny=True, init_adapter=str(tmp_path / "adapter")), tmp_path / "hf"
    )
    resumed = dict(again.named_parameters())
    assert all(torch.equal(resumed[n], p) and resumed[n].requires_grad for n, p in lora.items())
    with pytest.raises(TrainError, match="no LoRA adapter there"):
        policy_model(DirectorConfig(tiny=True, init_adapter=str(tmp_path)), tmp_path / "hf")


@pytest.mark.model
def test_grpo_samples_only_decisions_the_app_can_make(tmp_path):
    """During GRPO the Director's sampled decisions are restricted to the app's exact decision
    strings (the same list the runtime's constrained choice decoding uses), so the GRPO group
    differs in which speaker/directive it picks, never in broken JSON."""
    import torch
    from transformers import AutoModelForCausalLM

    from engine.llm.chat_format import ChatFormat
    from training.base_model import build_tiny
    from training.config import BaseConfig
    from training.director_policy import ChoiceConstraint, decision_choices
    from training.director_rollouts import director_prompt

    build_tiny(BaseConfig(tiny=True), tmp_path, seed=0)
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(tmp_path))
    tok.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(str(tmp_path), dtype=torch.float32)
    states = [_state(), _state([{"speaker": "Mia", "text": "That sounds exhausting."}])]
    fmt = ChatFormat(None)
    prompts = [director_prompt(s, fmt) for s in states]
    constraint = ChoiceConstraint(tok, {p: decision_choices(s) for p, s in zip(prompts, states)})
    constraint.attach(model)
    torch.manual_seed(0)
    batch = tok(text=prompts * 3, return_tensors="pt", padding=True)
    out = model.generate(
        **batch,
        do_sample=True,
        temperature=1.0,
        max_new_tokens=48,
        pad_token_id=tok.pad_token_id or tok.eos_token_id,
    )
    texts = tok.batch_decode(out[:, batch["input_ids"].shape[1] :], skip_special_tokens=True)
    for i, text in enumerate(texts):
        assert text in decision_choices(states[i % 2]), text
    assert "Mia" not in {json.loads(t)["speaker"] for t in texts[1::2]}  # Mia already spoke
    assert constraint.constrained == 6 and constraint.unconstrained == 0


@pytest.mark.model
def test_rollouts_of_a_grpo_group_are_decoded_together_and_cached():
    from engine.models.registry import bundled_model_path
    from training.director_rewards import GroupRewarder, GroupState
    from training.director_rollouts import Rollouts

    sc = load_scenarios("support", "train")[
        1
    ]  # (on scenario 0 the 135M model answers as Mia: cleaned to "")
    st = GroupState(id=f"{sc.id}/0", scenario=sc, group=load_set("support"))
    rollout = Rollouts(bundled_model_path(), max_tokens=32, n_threads=1, seed=3)
    rw = GroupRewarder(FakeJudge(), rollout, mode="menu")
    names = st.round_state().allowed()
    directive = "Ask User one gentle question"
    rw.prefetch([(st, n, directive) for n in names] + [(st, names[0], directive), (st, None, "")])
    assert rw.rollout_calls == len(names)  # duplicates and END are not rolled out
    replies = [rw.rollout(st, n, directive) for n in names]
    spoken = [r for r in replies if r.strip()]  # a reply can be empty after cleanup (scored 0)
    assert len(spoken) >= len(names) - 1 and len(set(spoken)) == len(spoken)
    for n, r in zip(names, replies):  # kept as the chat keeps a reply: nobody else's lines
        assert not any(f"{o}:" in r for o in names if o != n)
    rw.evaluate(st, json.dumps({"speaker": names[0], "directive": directive}))
    assert rw.rollout_calls == len(names)  # scoring reuses the batched rollout


def test_persona_models_give_companions_their_own_model_and_bad_pairs_are_refused_with_one_line(
    tmp_path,
):
    from training.cli import make_parser
    from training.common import TrainError
    from training.director_config import companion_models, resolve_config

    gguf = tmp_path / "mia.gguf"
    gguf.write_bytes(b"GGUF")
    parse = lambda v: resolve_config(  # noqa: E731 - a one-expression helper
        make_parser().parse_args(["director", "--out", "x", "--persona-models", v])
    )
    assert companion_models(parse(f"mia={gguf}")) == {"Mia": str(gguf.resolve())}
    assert companion_models(parse("")) == {}
    for value, message in (
        (str(gguf), r"^--persona-models: '.*' is not NAME=GGUF; separate pairs with commas\.$"),
        (
            f"Zed={gguf}",
            r"^--persona-models: no companion named 'Zed' in group 'support'; "
            r"members are: Mia, Theo, Juno, Ruth\.$",
        ),
        (
            f"Mia={tmp_path / 'nope.gguf'}",
            r"^--persona-models: .*nope\.gguf \(for Mia\) is not a file",
        ),
    ):
        with pytest.raises(TrainError, match=message):
            parse(value)


@pytest.mark.model
def test_rollouts_play_a_companion_with_its_own_model(tmp_path):
    """``--persona-models``: Mia's rollouts run on her own GGUF (here a copy of the bundled file,
    so a different runtime), everyone else's on the default model, in one call."""
    import shutil

    from engine.models.registry import bundled_model_path
    from training.director_rewards import GroupState
    from training.director_rollouts import Rollouts

    mia = tmp_path / "mia.gguf"
    shutil.copyfile(bundled_model_path(), mia)
    sc = load_scenarios("support", "train")[1]
    st = GroupState(id=f"{sc.id}/0", scenario=sc, group=load_set("support"))
    rollout = Rollouts(
        bundled_model_path(), max_tokens=24, n_threads=1, seed=3, models={"Mia": str(mia)}
    )
    used = []
    get = rollout.pool.get
    rollout.pool.get = lambda path: used.append(str(path)) or get(path)
    names = [n for n in st.round_state().allowed() if n != "Mia"][:1] + ["Mia"]
    replies = rollout.many([(st, n, "") for n in names])
    assert len(replies) == 2 and any(r.strip() for r in replies)
    assert str(mia) in used and str(bundled_model_path()) in used
    assert rollout.path_for("Mia") == str(mia) and rollout.path_for(names[0]) == str(
        bundled_model_path()
    )
    one = rollout(st, "Mia", "")  # one at a time too
    assert used[-1] == str(mia) and isinstance(one, str)


@pytest.mark.model
@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")
def test_table_warm_start_moves_the_constrained_policy_to_the_decisions_the_table_scores_higher(
    tmp_path,
):
    """The warm start before GRPO: every allowed decision's probability under the constrained
    policy (what the app decodes from) is computed exactly, sums to one over the menu, matches a
    plain full-sequence computation, and training on table rewards makes the Director prefer the
    higher-scored decisions, greedy included."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from engine.llm.chat_format import ChatFormat
    from engine.llm.choices import choice_tokens
    from training.base_model import build_tiny
    from training.config import BaseConfig, LoraSettings
    from training.director_config import DirectorConfig
    from training.director_policy import (
        constrained_logprobs,
        decision_choices,
        policy_model,
        table_warm_start,
    )
    from training.director_rollouts import director_prompt

    build_tiny(BaseConfig(tiny=True), tmp_path, seed=0)
    tok = AutoTokenizer.from_pretrained(str(tmp_path))
    states = [_state(), _state([{"speaker": "Mia", "text": "That sounds exhausting."}])]
    fmt = ChatFormat(None)
    prompts = [director_prompt(s, fmt) for s in states]
    choices = [decision_choices(s) for s in states]

    plain = AutoModelForCausalLM.from_pretrained(str(tmp_path), dtype=torch.float32).eval()
    with torch.no_grad():
        lp = constrained_logprobs(plain, tok, prompts[1], choices[1])
        assert abs(float(lp.exp().sum()) - 1.0) < 1e-4
        # the same numbers from whole sequences, one choice at a time (no shared cache)
        trie = {}
        ids = [
            choice_tokens(c, lambda piece: tok(piece, add_special_tokens=False)["input_ids"])
            + [tok.eos_token_id]
            for c in choices[1]
        ]
        for seq in ids:
            node = trie
            for t in seq:
                node = node.setdefault(t, {})
        p_ids = tok(text=prompts[1])["input_ids"]
        for k in (0, len(ids) // 2, len(ids) - 1):
            logits = plain(input_ids=torch.tensor([p_ids + ids[k]])).logits[0, len(p_ids) - 1 : -1]
            node, want = trie, 0.0
            for j, t in enumerate(ids[k]):
                if len(node) > 1:
                    allowed = torch.tensor(list(node))
                    want += float(logits[j, t] - torch.logsumexp(logits[j, allowed], 0))
                node = node[t]
            assert abs(float(lp[k]) - want) < 1e-3

    # the table: one speaker's decisions score high, the rest low (a tiny random model can
    # learn one preference across states; telling the states apart is the real model's job)
    speakers = [{json.loads(c)["speaker"] for c in cs} for cs in choices]
    target = sorted(speakers[0] & speakers[1])[-1]
    items = [
        (p, {c: (0.9 if json.loads(c)["speaker"] == target else 0.3) for c in cs})
        for p, cs in zip(prompts, choices)
    ]
    model = policy_model(DirectorConfig(tiny=True, lora=LoraSettings(r=8, alpha=16)), tmp_path)
    torch.manual_seed(0)
    torch.set_num_threads(1)  # tiny tensors: threads only wait on each other
    result = table_warm_start(model, tok, items, epochs=30, lr=3e-2, seed=0)
    assert result["final_expected_reward"] > result["initial_expected_reward"] + 0.15, result
    assert result["final_greedy_reward"] == pytest.approx(0.9), (
        result
    )  # what the app's greedy Director picks
    assert len(result["history"]) == 30 and result["oracle"] == pytest.approx(0.9)


@pytest.mark.model
def test_training_applies_the_apps_participation_prior_to_the_directors_choice(tmp_path):
    """The Director is trained as the app decodes it: with the participation prior. In a state
    where one allowed companion has replied more, its decisions carry the app's bias; the exact
    policy (warm start) is pi * exp(bias), renormalised; GRPO's constrained sampling adds the
    same bias, so a strongly weighed-down companion is never sampled."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from engine.director.policies import BALANCE_PRIOR
    from engine.llm.chat_format import ChatFormat
    from training.base_model import build_tiny
    from training.config import BaseConfig
    from training.director_policy import (
        ChoiceConstraint,
        constrained_logprobs,
        decision_bias,
        decision_choices,
    )
    from training.director_rollouts import director_prompt

    state = _state([{"speaker": "Theo", "text": "Let's look at it step by step."}])
    history = {n: sum(h["speaker"] == n for h in state.scenario.history) for n in state.group.names}
    choices = decision_choices(state)
    bias = decision_bias(state, BALANCE_PRIOR)
    allowed = state.round_state().allowed()
    lo = min(history[n] for n in allowed)
    assert bias is not None and any(history[n] > lo for n in allowed)
    for c, b in zip(choices, bias):
        assert b == -BALANCE_PRIOR * (history[json.loads(c)["speaker"]] - lo)
    assert decision_bias(state, 0.0) is None

    build_tiny(BaseConfig(tiny=True), tmp_path, seed=0)
    tok = AutoTokenizer.from_pretrained(str(tmp_path))
    tok.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(str(tmp_path), dtype=torch.float32).eval()
    prompt = director_prompt(state, ChatFormat(None))
    with torch.no_grad():
        lp = constrained_logprobs(model, tok, prompt, choices)
        lpb = constrained_logprobs(model, tok, prompt, choices, bias)
    assert abs(float(lpb.exp().sum()) - 1.0) < 1e-4
    want = lp + torch.tensor(bias)
    assert torch.allclose(lpb, want - torch.logsumexp(want, 0), atol=1e-5)

    loud = next(n for n in allowed if history[n] == lo)  # push one quiet companion far down
    strong = [-40.0 if json.loads(c)["speaker"] == loud else 0.0 for c in choices]
    constraint = ChoiceConstraint(tok, {prompt: choices}, {prompt: strong})
    constraint.attach(model)
    torch.manual_seed(0)
    batch = tok(text=[prompt] * 8, return_tensors="pt", padding=True)
    out = model.generate(
        **batch,
        do_sample=True,
        temperature=1.5,
        max_new_tokens=48,
        pad_token_id=tok.pad_token_id or tok.eos_token_id,
    )
    texts = tok.batch_decode(out[:, batch["input_ids"].shape[1] :], skip_special_tokens=True)
    assert all(t in choices for t in texts)
    picked = {json.loads(t)["speaker"] for t in texts}
    assert loud not in picked and len(picked) >= 1
