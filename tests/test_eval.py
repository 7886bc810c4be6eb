"""mascot-eval: metric functions on hand-made data, the results database, the report, and real
runs on the bundled model (a tiny one, resumed; a slower one with the Director, the local judge
and position-debiased comparisons)."""

import json
import sqlite3

import numpy as np
import pytest

from evaluation import metrics as M
from evaluation.analysis import wilson
from evaluation.comparisons import plan, summarise
from evaluation.configs import BASELINES, TrainedModels, discover_trained, manifest_role, resolve
from evaluation.db import ResultsDB
from evaluation.report import Doc, Rows

# -- metrics --------------------------------------------------------------------------------------


def test_identical_replies_have_low_distinct_and_full_redundancy():
    same = ["That sounds really hard, I'm here for you."] * 3
    varied = [
        "That sounds really hard.",
        "One step: call your sister tonight.",
        "At least the cat still likes you, right?",
    ]
    assert M.distinct_n(same, 2) < 0.4
    assert M.distinct_n(varied, 2) == 1.0
    assert M.distinct_n(varied, 1) > M.distinct_n(same, 1)
    assert M.distinct_n(["", "!!"], 1) is None
    v = np.array([[0.3, 0.4, 0.5]] * 3)
    assert M.redundancy(v) == pytest.approx(1.0)
    assert M.redundancy(np.eye(3)) == pytest.approx(0.0)
    assert M.redundancy(np.eye(3)[:1]) is None  # one reply: nothing to be redundant with


def test_identifiability_separates_distinct_personas_and_drops_to_chance_when_they_collapse():
    rng = np.random.default_rng(0)
    names = ["Mia", "Theo", "Juno", "Ruth"]
    centres = np.eye(4, 16) * 5
    vecs = np.concatenate([centres[i] + rng.normal(0, 0.3, (5, 16)) for i in range(4)])
    labels = [n for n in names for _ in range(5)]
    distinct = M.identifiability(vecs, labels)
    assert distinct["accuracy"] == 1.0 and distinct["chance"] == 0.25
    assert distinct["per_label"] == {n: 1.0 for n in names}
    collapsed = M.identifiability(rng.normal(0, 1, (20, 16)) + 10, labels)  # everyone sounds alike
    assert collapsed["accuracy"] < 0.5
    assert M.identifiability(np.ones((20, 16)), labels)["accuracy"] == 0.0  # identical replies
    # a speaker with a single reply cannot be held out, so it takes no part
    assert M.identifiability(vecs[:6], labels[:6])["accuracy"] is None


def test_identifiability_is_not_fooled_by_the_topic_a_round_shares():
    # two scenarios; in each, everyone talks about that scenario's topic (a big component) in
    # their own voice (a small one). Held out by scenario, each voice is still recognised.
    topic = {"s1": np.eye(8)[0] * 3, "s2": np.eye(8)[1] * 3}
    voice = {n: np.eye(8)[2 + k] for k, n in enumerate(["Mia", "Theo", "Juno"])}
    vecs, labels, groups = [], [], []
    for sid in topic:
        for n in voice:
            vecs.append(topic[sid] + voice[n])
            labels.append(n)
            groups.append(sid)
    assert M.identifiability(np.array(vecs), labels, groups)["accuracy"] == 1.0
    assert M.identifiability(np.array(vecs), labels)["accuracy"] == 0.0  # the topic leak


def test_speaking_balance_is_one_when_even_and_zero_when_one_companion_talks():
    members = ["Mia", "Theo", "Juno", "Ruth"]
    assert M.speaking_balance(members * 3, members) == pytest.approx(1.0)
    assert M.speaking_balance(["Mia"] * 6, members) == pytest.approx(0.0)
    assert 0.0 < M.speaking_balance(["Mia", "Mia", "Theo"], members) < 0.7  # two never spoke
    assert M.speaking_balance([], members) is None


def test_role_confusion_is_counted_when_a_companion_speaks_for_someone_else():
    others = ["Theo", "Juno"]
    assert M.role_confused("I hear you. Theo: and here is a plan.", "Mia", others)
    assert M.role_confused("That hurts.\nUser: yes it does", "Mia", others)
    assert M.role_confused("(Theo smiles) We can do this.", "Mia", others)
    assert M.role_confused("(Juno's eyes light up.) Oh, nice!", "Mia", others)
    assert M.role_confused("(Theo: (a little bit of Mia) I'm here", "Mia", others)
    assert not M.role_confused("(Mia smiles) I'm glad you told us.", "Mia", others)  # herself
    assert M.role_confused("anything", "Mia", others, flagged=True)  # the engine cut such a line
    assert not M.role_confused("I agree with what Theo said, one step at a time.", "Mia", others)
    assert not M.role_confused("Mia here, and I'm listening.", "Mia", others)


def test_a_reply_that_repeats_its_instructions_is_a_prompt_echo():
    assert M.prompt_echo("Mia, briefly and in character.")
    assert M.prompt_echo("(Director's note for Theo: ask a question)")
    assert M.prompt_echo("(I nod, and I'm back in character.) You're right.")
    assert not M.prompt_echo("I'm glad you told us. How are you holding up?")


def test_director_validity_counts_only_the_models_own_decisions():
    decisions = [
        {"source": "director", "valid": True},
        {"source": "director", "valid": False},
        {"source": "director", "valid": True},
        {"source": "rules", "valid": True},
        {"source": "addressed", "valid": True},
    ]
    assert M.director_validity(decisions) == pytest.approx(2 / 3)
    assert M.director_validity([{"source": "round-robin", "valid": True}]) is None


def test_confidence_intervals_are_reproducible_and_sane():
    assert M.mean_ci([2.0, 2.0, 2.0]) == (2.0, 2.0, 2.0, 3)
    xs = [1.0, 2.0, 3.0, 4.0, 5.0, None]
    mean, lo, hi, n = M.mean_ci(xs, seed=1)
    assert (mean, n) == (3.0, 5) and lo < 3.0 < hi
    assert M.mean_ci(xs, seed=1) == M.mean_ci(xs, seed=1)
    t_mean, t_lo, t_hi, _ = M.mean_ci(xs, method="t")
    assert t_lo < lo < hi < t_hi  # t is wider than the bootstrap on five points
    assert M.mean_ci([4.0]) == (4.0, None, None, 1)
    assert M.mean_ci([]) == (None, None, None, 0)
    assert (M.to_100(1.0), M.to_100(3.0), M.to_100(5.0)) == (0.0, 50.0, 100.0)
    lo, hi = wilson(8, 10)
    assert 0.4 < lo < 0.8 < hi < 1.0


# -- configurations and trained models -----------------------------------------------------------


def test_trained_configurations_are_skipped_with_a_reason_when_no_model_exists():
    configs, skipped = resolve(
        ["single", "round-robin", "director", "mascot-p", "mascot-c", "mascot"], TrainedModels()
    )
    assert [c.name for c in configs] == ["single", "round-robin", "director"]
    assert set(skipped) == {"mascot-p", "mascot-c", "mascot"}
    assert "Director" in skipped["mascot-p"] and "persona" in skipped["mascot-c"]


def test_trained_models_are_found_from_their_manifests(tmp_path):
    class Info:
        def __init__(self, name, path, added):
            self.name, self.path, self.added, self.bundled = name, str(path), added, False

    for folder, manifest in (
        ("mia", {"persona": "Mia", "group": "support", "base_model": "smollm2"}),
        ("dir", {"kind": "director", "base_model": "smollm2"}),
    ):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "model.gguf").write_bytes(b"GGUF")
        (tmp_path / folder / "manifest.json").write_text(json.dumps(manifest))
    (tmp_path / "plain.gguf").write_bytes(b"GGUF")
    found = discover_trained(
        [
            Info("mia-rl", tmp_path / "mia" / "model.gguf", "1"),
            Info("director-grpo", tmp_path / "dir" / "model.gguf", "2"),
            Info("someone-elses", tmp_path / "plain.gguf", "3"),
        ]
    )
    assert found.persona == {"support:Mia": "mia-rl"} and found.director == "director-grpo"
    configs, skipped = resolve(["mascot-p", "mascot-c", "mascot"], found)
    assert not skipped
    by = {c.name: c for c in configs}
    assert by["mascot-p"].director_model == "director-grpo" and not by["mascot-p"].persona_models
    assert (
        by["mascot-c"].persona_models == {"support:Mia": "mia-rl"}
        and by["mascot-c"].director_model is None
    )
    from engine.persona_files import load_set

    group = by["mascot"].group_for(load_set("support"))
    assert group.member("Mia").model == "mia-rl" and group.member("Theo").model is None
    assert all(p.model is None for p in by["mascot"].group_for(load_set("workplace")).members)
    assert manifest_role({"persona": {"name": "Juno"}}) == ("persona", "Juno")


def test_sft_only_persona_models_make_their_own_ablation_and_never_replace_the_rl_ones(tmp_path):
    class Info:
        def __init__(self, name, path, added):
            self.name, self.path, self.added, self.bundled = name, str(path), added, False

    infos = []
    for n, (folder, manifest) in enumerate(
        (
            (
                "rl",
                {"persona": "Mia", "group": "support", "config": {"policy": {"sft_only": False}}},
            ),
            (
                "sft",
                {"persona": "Mia", "group": "support", "config": {"policy": {"sft_only": True}}},
            ),
            ("dir", {"kind": "director"}),
        )
    ):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "model.gguf").write_bytes(b"GGUF")
        (tmp_path / folder / "manifest.json").write_text(json.dumps(manifest))
        infos.append(Info(f"mia-{folder}", tmp_path / folder / "model.gguf", str(n)))
    found = discover_trained(
        infos
    )  # the SFT-only model is the newest: it must still not become "mascot"
    assert found.persona == {"support:Mia": "mia-rl"} and found.persona_sft == {
        "support:Mia": "mia-sft"
    }
    by = {c.name: c for c in resolve(["mascot", "mascot-sft"], found)[0]}
    assert by["mascot"].persona_models == {"support:Mia": "mia-rl"}
    assert by["mascot-sft"].persona_models == {"support:Mia": "mia-sft"}
    assert by["mascot-sft"].director_model == by["mascot"].director_model == "mia-dir"
    _, skipped = resolve(["mascot-sft"], TrainedModels(persona={"Mia": "m"}, director="d"))
    assert "SFT-only" in skipped["mascot-sft"]


def test_single_agent_configuration_is_one_generic_assistant():
    from engine.persona_files import load_set

    group = BASELINES["single"].group_for(load_set("support"))
    assert group.names == ["Assistant"] and BASELINES["single"].max_speakers == 1
    assert BASELINES["single-member"].group_for(load_set("support")).names == ["Mia"]


# -- comparisons ------------------------------------------------------------------------------------


def _rows(group, picks_by_order):
    import itertools

    rows = []
    for sid in ("s1", "s2"):
        for order in itertools.permutations(group):
            slot = picks_by_order(order)
            rows.append(
                {
                    "scenario_id": sid,
                    "configs": list(group),
                    "order": list(order),
                    "choice": order[slot],
                    "slot": slot,
                }
            )
    return rows


def test_a_judge_that_always_picks_the_first_option_favours_nobody():
    group = ("single", "round-robin", "director")
    s = summarise(_rows(group, lambda order: 0))[group]
    assert all(v == pytest.approx([1 / 3, 1 / 3]) for v in s["share"].values())
    assert s["first_slot_rate"] == 1.0 and s["consistent"] == 0.0


def test_a_judge_that_always_picks_one_configuration_gives_it_every_order():
    group = ("director", "round-robin")
    s = summarise(_rows(group, lambda order: order.index("director")))[group]
    assert s["share"]["director"] == [1.0, 1.0] and s["share"]["round-robin"] == [0.0, 0.0]
    assert s["first_slot_rate"] == 0.5 and s["consistent"] == 1.0


def test_comparison_plan():
    pairs, triples = plan(["single", "round-robin", "all", "director"], "quick")
    assert triples == [("single", "round-robin", "director")] and pairs == [
        ("director", "round-robin")
    ]
    pairs, _ = plan(["single", "round-robin", "director", "mascot"], "full")
    assert pairs == [("mascot", "single"), ("mascot", "round-robin"), ("mascot", "director")]
    assert plan(["single", "director"], "none") == ([], [])


# -- database and report ----------------------------------------------------------------------------


def test_results_database_migrates_and_keeps_runs_apart(tmp_path):
    db = ResultsDB(tmp_path / "r.db")
    assert db.migrate() == []  # already at the newest schema
    db.start_run("a", "mascot-eval --quick", {"configs": ["director"]}, {"python": "3"})
    db.put_results("a", [{"config": "director", "metric": "redundancy", "value": 0.5, "n": 3}])
    db.start_run("b", "mascot-eval --quick", {"configs": ["director"]}, {"python": "3"})
    db.put_results("b", [{"config": "director", "metric": "redundancy", "value": 0.4, "n": 3}])
    db.finish_run("a")
    assert [r["value"] for r in db.results("a")] == [0.5]
    assert {r["id"]: r["status"] for r in db.runs()} == {"a": "done", "b": "running"}
    db.close()
    cols = {r[1] for r in sqlite3.connect(tmp_path / "r.db").execute("PRAGMA table_info(results)")}
    assert {"run_id", "config", "metric", "value", "ci_low", "ci_high", "n", "created"} <= cols


def test_report_document_renders_tables_in_markdown_and_escaped_html():
    d = Doc()
    d.h(2, "Headline")
    d.table(["Config", "Score"], [["a|b", "<3.0>"]])
    md, page = d.markdown(), d.html("t")
    assert "| a\\|b | <3.0> |" in md and "## Headline" in md
    assert "&lt;3.0&gt;" in page and "<th>Config</th>" in page
    rows = Rows(
        [
            {
                "config": "d",
                "metric": "m",
                "domain": "all",
                "persona": "",
                "value": 2.0,
                "ci_low": 1.5,
                "ci_high": 2.5,
            }
        ]
    )
    assert rows.fmt("d", "m") == "2.00 [1.50, 2.50]" and rows.fmt("d", "x") == "–"


def test_cli_errors_are_one_line(tmp_path, capsys):
    from evaluation.cli import main

    assert main(["compare", "--db", str(tmp_path / "none.db")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("mascot-eval: ") and err.count("\n") == 1
    with pytest.raises(SystemExit) as e:
        main(["--out", str(tmp_path), "--config", "nonsense"])
    assert e.value.code == 2


# -- real runs on the bundled model -----------------------------------------------------------------


def _options(out, **kw):
    from evaluation.pipeline import EvalOptions

    base = dict(
        out=out,
        configs=["single"],
        domains=["support"],
        limit=1,
        judges=["heuristic"],
        compare="none",
        max_tokens=8,
        seed=3,
        progress=False,
        command="pytest",
    )
    return EvalOptions(**{**base, **kw})


@pytest.mark.model
def test_tiny_real_run_writes_report_and_rows_and_resumes_without_generating(
    tmp_path, real_backend_for, store
):
    from evaluation.pipeline import run

    out = tmp_path / "eval"
    # the full MASCOT configuration needs trained models, which this fresh store lacks: it is
    # skipped with the reason, and the run goes on with the rest
    first = run(
        _options(out, configs=["single", "mascot"]), backend_for=real_backend_for, store=store
    )
    assert (first.generated, first.judged) == (1, 1)
    assert set(first.skipped) == {"mascot"}
    assert "mascot-train" in first.skipped["mascot"] and "Director" in first.skipped["mascot"]
    for name in (
        "report.md",
        "report.html",
        "results.json",
        "results.db",
        "figures/judge_dimensions.png",
        "figures/automatic_metrics.png",
        "figures/by_domain.png",
    ):
        assert (out / name).stat().st_size > 0, name
    md = (out / "report.md").read_text()
    assert "## Headline" in md and "| Single agent |" in md and "pytest" in md  # the exact command
    db = sqlite3.connect(out / "results.db")
    rows = db.execute(
        "SELECT config, metric, value, created FROM results WHERE run_id = ?", [first.run_id]
    ).fetchall()
    got = {(c, m): v for c, m, v, _ in rows if v is not None}
    assert 1.0 <= got[("single", "judge.mean")] <= 5.0
    assert 0.0 <= got[("single", "judge.mean_100")] <= 100.0
    assert ("single", "distinct_2") in got and got[("single", "seconds_per_round")] > 0
    assert ("single", "redundancy") not in got  # one reply: nothing to be redundant with
    assert all(created for *_, created in rows)
    second = run(
        _options(out, configs=["single", "mascot"]), backend_for=real_backend_for, store=store
    )
    assert (second.generated, second.judged) == (0, 0)  # resumed: nothing generated or judged again
    assert second.run_id != first.run_id
    assert [s for (s,) in db.execute("SELECT status FROM runs ORDER BY started")] == [
        "done",
        "done",
    ]
    md = (out / "report.md").read_text()
    assert first.run_id in md and second.run_id in md  # the history section lists both runs


def test_pooling_seeds_averages_each_scenario_before_the_paired_difference():
    from evaluation.pool import pool, table

    def run(seed, rr, mascot):
        return {
            "seed": seed,
            "units": [
                u
                for sid in rr
                for u in (
                    {"config": "round-robin", "scenario": sid, "values": {"judge.mean": rr[sid]}},
                    {"config": "mascot", "scenario": sid, "values": {"judge.mean": mascot[sid]}},
                )
            ],
        }

    runs = [
        run(7, {"a": 2.0, "b": 3.0}, {"a": 3.0, "b": 3.0}),
        run(8, {"a": 2.0, "b": 3.0}, {"a": 2.0, "b": 4.0}),
    ]
    rows = {(r["config"], r["metric"]): r for r in pool(runs, ("judge.mean",))}
    # per scenario over seeds: rr a 2.0, b 3.0; mascot a 2.5, b 3.5 -> +0.5 on both scenarios
    assert rows[("mascot", "diff_rr:judge.mean")]["value"] == pytest.approx(0.5)
    assert rows[("mascot", "diff_rr:judge.mean")]["n"] == 2  # scenarios, not scenario-seed pairs
    assert rows[("mascot", "judge.mean")]["value"] == pytest.approx(3.0)
    assert ("round-robin", "diff_rr:judge.mean") not in rows
    assert "(+0.500 [" in table(list(rows.values()), {"mascot": "MASCOT (full)"})


@pytest.mark.model
def test_two_seeds_pool_into_paired_differences_with_the_exemplar_metric(
    tmp_path, real_backend_for, store, capsys
):
    from evaluation.cli import main
    from evaluation.pipeline import run

    outs = []
    for seed in (3, 4):
        out = tmp_path / f"s{seed}"
        run(
            _options(out, configs=["round-robin", "all"], seed=seed, max_tokens=12),
            backend_for=real_backend_for,
            store=store,
        )
        units = json.loads((out / "units.json").read_text())
        assert units["seed"] == seed and {u["config"] for u in units["units"]} == {
            "round-robin",
            "all",
        }
        rates = [u["values"]["identifiability_exemplar"] for u in units["units"]]
        assert all(r is None or 0.0 <= r <= 1.0 for r in rates) and any(
            r is not None for r in rates
        )
        outs.append(str(out))
    assert main(["pool", *outs, "--json", str(tmp_path / "pooled.json")]) == 0
    printed = capsys.readouterr().out
    assert "seeds 3, 4" in printed and "| All respond |" in printed
    rows = json.loads((tmp_path / "pooled.json").read_text())
    assert any(
        r["config"] == "all" and r["metric"] == "diff_rr:judge.mean" and r["seeds"] == 2
        for r in rows
    )
    assert main(["pool", str(tmp_path / "nothing-here")]) == 1
    assert "units.json" in capsys.readouterr().err


@pytest.mark.model
@pytest.mark.slow
def test_director_run_with_local_judge_and_debiased_comparisons(tmp_path, real_backend_for, store):
    from evaluation.pipeline import run

    out = tmp_path / "eval"
    res = run(
        _options(
            out,
            configs=["single", "round-robin", "director"],
            judges=["combined"],
            compare="quick",
            max_tokens=10,
        ),
        backend_for=real_backend_for,
        store=store,
    )
    rows = Rows(res.rows)
    assert res.generated == 3
    assert rows.get("director", "director_validity")["value"] >= 0.5
    assert 0.0 <= rows.get("round-robin", "redundancy")["value"] <= 1.0
    assert rows.get("round-robin", "balance") is not None
    share = [
        rows.get(c, "compare:single/round-robin/director:share")["value"]
        for c in ("single", "round-robin", "director")
    ]
    assert sum(share) == pytest.approx(1.0)  # every order asked once, one pick each
    assert rows.get("-", "compare:single/round-robin/director:first_slot_rate") is not None
    assert rows.get("round-robin", "judge[local].mean") and rows.get(
        "round-robin", "judge[heuristic].mean"
    )
    assert "position bias" in (out / "report.md").read_text()
    assert (out / "figures" / "by_persona.png").is_file() and (
        out / "figures" / "comparisons.png"
    ).is_file()


# -- the voices model and the held-out invented companions ---------------------------------------


def test_voices_configurations_run_every_companion_on_the_voices_model_or_say_why_not():
    configs, skipped = resolve(["round-robin", "voices", "voices-director"], TrainedModels())
    assert [c.name for c in configs] == ["round-robin"]
    assert set(skipped) == {"voices", "voices-director"} and "voices model" in skipped["voices"]
    configs, skipped = resolve(
        ["voices", "voices-director"], TrainedModels(voices="mascot-voices-135m")
    )
    by = {c.name: c for c in configs}
    assert not skipped
    assert by["voices"].policy == "round-robin" and by["voices-director"].policy == "director"
    assert by["voices"].model == by["voices-director"].model == "mascot-voices-135m"
    assert by["voices-director"].director_model is None  # the Director follows the companions
    assert by["voices"].key() != BASELINES["round-robin"].key()  # its own cached rounds


def test_invented_companions_are_scored_only_against_lines_from_other_situations():
    from evaluation.invented import invented_domain
    from training.corpus import Corpus

    scenarios, sets, exemplars = invented_domain()
    test_groups = {r.group for r in Corpus("test").rounds if r.invented}
    assert {s.group for s in scenarios} == set(sets) == test_groups and len(test_groups) >= 2
    asked = {s.id.removeprefix("invented:") for s in scenarios}
    assert asked and not asked & {e.situation_id for e in exemplars}
    train_names = set(Corpus("train").personas)
    for group, pset in sets.items():
        assert not set(pset.names) & train_names  # companions no training saw
        per = {n: sum(e.group == group and e.persona == n for e in exemplars) for n in pset.names}
        assert min(per.values()) >= 8, per
    assert len(invented_domain(limit=2)[0]) == 2 * len(test_groups)


def test_a_voices_run_on_an_invented_group_uses_the_voices_model(
    tmp_path, real_backend_for, store, voices_ready
):
    from evaluation.invented import invented_domain
    from evaluation.pipeline import run

    def backend_for(model=None):  # registered names to their files, as the engine's factory does
        row = store.model(model) if model else None
        return real_backend_for(row["path"] if row else model)

    res = run(
        _options(tmp_path / "eval", configs=["voices"], domains=["invented"]),
        backend_for=backend_for,
        store=store,
    )
    groups = {s.group for s in invented_domain(limit=1)[0]}
    assert res.generated == len(groups) and not res.skipped  # one situation per invented group
    db = sqlite3.connect(tmp_path / "eval" / "results.db")
    records = [json.loads(r) for (r,) in db.execute("SELECT data FROM rounds")]
    assert {r["group"] for r in records} == groups
    for record in records:
        assert record["domain"] == "invented" and record["messages"], record["errors"]
        assert all("mascot-voices-135m" in (m["model"] or "") for m in record["messages"])
    md = (tmp_path / "eval" / "report.md").read_text()
    assert "Round-robin, voices model" in md


def test_a_bad_reply_is_one_a_user_would_see_as_broken():
    earlier = ["I finally told my manager I need a week off, and she said yes to all of it."]
    assert not M.bad_reply("That took courage. What will you do with the week?", "Mia", earlier)
    assert not M.bad_reply("She said yes, and you asked. Both matter.", "Mia", earlier)
    for text in (
        "",
        "Hmm",
        "*smiles warmly* That is great news.",
        "(Mia nods) Good for you.",
        "Mia smiled and said that was lovely.",
        "She smiled warmly and added: well done.",
        "Mia: well done!",
        "Mia, briefly and in character: well done.",
        "You told your manager you need a week off, and she said yes to all of it. Nice.",
    ):
        assert M.bad_reply(text, "Mia", earlier), text
    # another member's name narrated is role confusion, not this speaker's narration
    assert not M.narrated("Theo said it well: rest counts.", "Mia")
    # a word that merely contains a fragment, and a line the reply quotes, are not echoes
    assert not M.bad_reply("Why not make the detective the main character?", "Iris", earlier)
    quoted = 'You wrote "I finally told my manager I need a week off" and that line is the story.'
    assert not M.bad_reply(quoted, "Iris", earlier)
