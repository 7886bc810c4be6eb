"""The learned judge (training/judges/learned.py) and its length-matched preference set
(assets/judge/preferences.jsonl): the set is what docs/judge.md says it is, the shipped weights
meet the target on the held-out test split, and the length shortcut does not."""

import json

import pytest

from engine.errors import InputError
from engine.persona_files import load_set
from training.judge_fit import TWIN_CRITERION, as_user, make_twins, matched
from training.judges.factory import make_judge
from training.judges.learned import LearnedJudge, LongerWins, load_preferences, preferences_path
from training.judges.rubric import DIMENSIONS, agreement
from training.scenarios import load_scenarios

# The acceptance target of the learned judge (docs/judge.md): overall and per flaw, on the test split.
TARGET_OVERALL = 0.85
TARGET_PER_FLAW = 0.75
FLAWS = {
    "advice-first",
    "copy",
    "as-user",
    "as-member",
    "persona-drift",
    "generic",
    "repeat-only",
    "off-topic",
    "dismissive",
    "ai-speak",
    "weaker",
}


@pytest.fixture(scope="module")
def pairs():
    return load_preferences()


@pytest.fixture(scope="module")
def learned():
    return LearnedJudge()


def test_preference_set_is_length_matched_and_covers_every_flaw_persona_and_domain(pairs):
    assert len(pairs) >= 300
    scenarios = {s.id: s for s in load_scenarios()}
    seen_members = set()
    for p in pairs:
        sc = scenarios[p.scenario]
        load_set(sc.group).member(p.persona)
        seen_members.add((sc.group, p.persona))
        a, b = len(p.better.split()), len(p.worse.split())
        assert 0.8 <= b / a <= 1.2, (p.better, p.worse)
        assert (
            p.criterion in DIMENSIONS
            and p.split in ("train", "dev", "test")
            and p.better != p.worse
        )
    assert {p.kind for p in pairs} == FLAWS
    assert {scenarios[p.scenario].domain for p in pairs} == {"support", "workplace", "creative"}
    for group in ("support", "workplace", "writers-room"):
        assert {(group, m.name) for m in load_set(group).members} <= seen_members
    # the split is fixed per scenario, so no test scenario was seen in training
    split_of = {}
    for p in pairs:
        assert split_of.setdefault(p.scenario, p.split) == p.split
    test = [p for p in pairs if p.split == "test"]
    assert len(test) >= 100 and {p.kind for p in test} == FLAWS
    # the better reply is the longer one in well under all pairs (the old smoke set: 47 of 48)
    longer = sum(len(p.better.split()) > len(p.worse.split()) for p in pairs) / len(pairs)
    assert longer < 0.6


def test_every_row_has_the_documented_fields():
    for line in preferences_path().read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        assert set(row) == {
            "id",
            "split",
            "scenario",
            "persona",
            "others",
            "chosen",
            "rejected",
            "flaw",
            "criterion",
        }


def test_shipped_learned_judge_meets_the_target_on_the_test_split(pairs, learned):
    result = agreement(learned, [p for p in pairs if p.split == "test"])
    assert result["agreement"] >= TARGET_OVERALL, result
    low = {k: v for k, v in result["per_kind"].items() if v < TARGET_PER_FLAW}
    assert not low, result
    assert result["mean_margin"] > 0


def test_longer_reply_wins_is_near_chance_on_the_test_split(pairs):
    result = agreement(LongerWins(), [p for p in pairs if p.split == "test"])
    assert 0.35 <= result["agreement"] <= 0.65, result


def test_learned_scores_five_dimensions_in_range_and_punish_copies_and_empty(pairs, learned):
    scenarios = {s.id: s for s in load_scenarios()}
    p = next(p for p in pairs if p.kind == "copy" and p.split == "test")
    sc = scenarios[p.scenario]
    persona = load_set(sc.group).member(p.persona)
    good = learned.score(sc, persona, p.better, p.others or None)
    assert set(good.values) == set(DIMENSIONS) and all(
        1.0 <= v <= 5.0 for v in good.values.values()
    )
    earlier = (p.others or [{"text": h["text"]} for h in sc.history if h["speaker"] != "User"])[-1][
        "text"
    ]
    copied = learned.score(
        sc, persona, earlier, [*p.others, {"speaker": "Someone", "text": earlier}]
    )
    assert copied.values["social_contribution"] < good.values["social_contribution"]
    assert learned.score(sc, persona, "  ").mean == 1.0


def test_twins_are_length_matched_and_of_every_kind(pairs):
    scenarios = {s.id: s for s in load_scenarios()}
    train = [p for p in pairs if p.split == "train"]
    twins = make_twins(train, scenarios, seed=0)
    assert twins and {t.kind for t in twins} == set(TWIN_CRITERION)
    for t in twins:
        assert (
            matched(t.better, t.worse)
            and t.better != t.worse
            and t.criterion == TWIN_CRITERION[t.kind]
        )
    # twins come from the train split only (nothing of dev or test leaks into fitting)
    assert {scenarios[t.scenario].id for t in twins} <= {p.scenario for p in train}
    assert (
        as_user("You did well to say it, and your sister knows.")
        == "I did well to say it, and my sister knows."
    )


def test_make_judge_defaults_to_the_learned_teacher(tmp_path):
    assert isinstance(make_judge(), LearnedJudge) and make_judge().name == "learned"
    assert make_judge("heuristic").name == "heuristic"
    with pytest.raises(InputError, match="do not exist"):
        make_judge(f"learned:{tmp_path / 'missing.json'}")
    stale = tmp_path / "stale.json"
    stale.write_text(json.dumps({"features": ["something_else"]}), encoding="utf-8")
    with pytest.raises(InputError, match="other features"):
        make_judge(f"learned:{stale}")


def test_teacher_is_the_default_of_training_and_the_director():
    from training.config import SampleConfig, tiny_preset
    from training.director_config import DirectorConfig

    assert SampleConfig().judge == "learned" and DirectorConfig().judge == "learned"
    assert tiny_preset()["sample"]["judge"] == "learned"


def test_eval_report_marks_training_rewards_apart_from_independent_signals():
    from evaluation.report import reward_provenance

    text = reward_provenance(["learned", "audit"])
    trained, independent = text.split("**Not a training reward")
    assert "`learned`" in trained and "`audit`" not in trained
    assert "`audit`" in independent and "`learned`" not in independent


def test_judge_agreement_command_measures_a_split(tmp_path, capsys):
    from training.cli import main

    out = tmp_path / "agreement.json"
    assert (
        main(["judge-agreement", "--set", "dev", "--judge", "longer-wins", "--json", str(out)]) == 0
    )
    (row,) = json.loads(out.read_text(encoding="utf-8"))
    assert row["set"] == "dev" and row["pairs"] == len(load_preferences("dev"))
    assert set(row["per_criterion"]) <= set(DIMENSIONS) and row["per_kind"]


def test_differences_to_round_robin_are_paired_by_scenario():
    from evaluation import metrics as M
    from evaluation.analysis import paired_differences

    # director beats round-robin by exactly 0.1 on every scenario, while scenarios vary a lot:
    # unpaired intervals would overlap, the paired interval is tight around 0.1
    units = {}
    for k, base in enumerate([1.0, 3.0, 5.0, 2.0, 4.0]):
        units[("round-robin", f"s{k}")] = {"judge.mean": base}
        units[("director", f"s{k}")] = {"judge.mean": base + 0.1}
    units[("director", "s9")] = {"judge.mean": 9.0}  # no round-robin round: not paired, left out
    (row,) = paired_differences(
        units,
        ["round-robin", "director"],
        [f"s{k}" for k in (0, 1, 2, 3, 4, 9)],
        ["judge.mean"],
        lambda xs: M.mean_ci(xs, seed=0),
    )
    assert row["config"] == "director" and row["metric"] == "diff_rr:judge.mean" and row["n"] == 5
    assert row["value"] == pytest.approx(0.1) and row["ci_low"] == pytest.approx(0.1)
    assert row["ci_high"] == pytest.approx(0.1)


def test_a_context_whose_sampled_replies_are_all_empty_does_not_stop_sampling():
    """`mascot-train sample` warms the judge with the batch's non-empty replies; when cleanup
    emptied every one of them the judge gets nothing to embed (crashed a 4-persona run)."""
    judge = make_judge("learned")
    judge.warm(["", "   "])
    assert judge.embedder.embed([]).shape[0] == 0
