"""Persona identifiability against held-out exemplars (evaluation/exemplars.py): the exemplar set is
what docs/eval.md says it is and stays apart from everything training and the judges read, the
classifier tells the personas apart on exemplars it did not see and is not fooled by a persona
swap, a persona-collapsed set of replies scores chance, and mascot-eval reports it (real MiniLM,
no llama.cpp)."""

import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from engine.persona_files import load_set
from evaluation import exemplars as X
from evaluation import metrics as M
from training.judges.heuristic import HeuristicJudge
from training.judges.learned import load_preferences
from training.scenarios import GROUP_FOR_DOMAIN, load_scenarios

ROOT = Path(__file__).resolve().parent.parent

# Measured on 6 Dec 2026 (docs/eval.md): leave-one-situation-out accuracy 0.83 support, 0.80
# workplace, 0.83 writers-room (chance 0.25); on the persona-drift pairs the chosen reply's margin
# was the larger in 0.91 / 0.80 / 0.98 of pairs. The bounds leave room for numeric differences
# across machines and library versions, not for a classifier that lost its signal.
MIN_LOSO = 0.65
MIN_DRIFT_MARGIN_WIN = 0.70
MIN_DRIFT_GAP = 0.25  # intended persona named for chosen minus for rejected (measured 0.37-0.63)


@pytest.fixture(scope="module")
def embed():
    return HeuristicJudge().embed  # the same offline all-MiniLM-L6-v2 mascot-eval uses


@pytest.fixture(scope="module")
def exemplars():
    return X.load_exemplars()


_W = re.compile(r"[a-z0-9']+")
_STOP = set(
    "a an the and or but if so to of in on at for with from by as is are was were be been i you he "
    "she it we they me him her us them my your his its our their this that what which who how when "
    "where why not no do does did have has had will would can could should just then than there "
    "here too also about into out up one two it's that's i'm you're let's don't".split()
)


def _content(text):
    return {w for w in _W.findall(text.lower()) if w not in _STOP}


def test_exemplars_cover_every_bundled_persona_in_shared_situations(exemplars):
    for group in GROUP_FOR_DOMAIN.values():
        names = load_set(group).names
        rows = [e for e in exemplars if e.group == group]
        per = Counter(e.persona for e in rows)
        assert set(per) == set(names) and min(per.values()) >= 15, (group, per)
        # every situation has one line per member, so topic cannot stand in for the persona
        by_sit = Counter(e.situation_id for e in rows)
        assert set(by_sit.values()) == {len(names)}
    scenario_situations = {s.situation.lower() for s in load_scenarios()}
    assert not {e.situation.lower() for e in exemplars} & scenario_situations


def test_exemplars_do_not_copy_the_cards_or_the_judge_pairs(exemplars):
    refs = [
        line
        for g in GROUP_FOR_DOMAIN.values()
        for m in load_set(g).members
        for line in m.example_lines
    ]
    for p in load_preferences():
        refs += [p.better, p.worse] + [o["text"] for o in p.others]
    ref_sets = [_content(r) for r in refs]
    worst = max(
        len(_content(e.text) & r) / len(_content(e.text) | r) for e in exemplars for r in ref_sets
    )
    assert worst < 0.35  # measured 0.24: at most a few shared content words with any one line
    assert not {e.text for e in exemplars} & set(refs)


def test_no_training_or_judge_code_reads_the_exemplars():
    # the independence claim of the report: only evaluation/ (and tests, docs) name the file
    for folder in ("training", "engine", "app", "mascot_cli"):
        for path in (ROOT / folder).rglob("*.py"):
            assert "persona_exemplars" not in path.read_text(encoding="utf-8"), path


def test_classifier_identifies_held_out_exemplars_and_is_not_fooled_by_a_persona_swap(
    embed, exemplars
):
    res = X.validate(embed, exemplars)
    assert set(res) == set(GROUP_FOR_DOMAIN.values())
    for group, r in res.items():
        assert r["chance"] == 0.25
        assert r["loso"] >= MIN_LOSO, (group, r["loso"])
        drift = r["persona-drift"]
        assert drift["pairs"] >= 20
        # the chosen reply keeps the persona's voice, the rejected one drifts: the classifier
        # must name the intended persona far more often for the chosen one
        assert drift["chosen_margin_larger"] >= MIN_DRIFT_MARGIN_WIN, (group, drift)
        assert drift["chosen_identified"] - drift["rejected_identified"] >= MIN_DRIFT_GAP, (
            group,
            drift,
        )


GENERIC = [
    "That is a really good point, thanks for sharing it with us.",
    "I hear you. Let's keep talking about it together.",
    "Great question! There are many ways to look at this.",
    "I'm sure it will all work out in the end, don't worry.",
    "Thanks for bringing this up, it's important to discuss.",
    "Sounds good to me. What does everyone else think?",
]


def test_persona_collapsed_replies_score_chance_and_distinct_ones_score_well(embed, exemplars):
    names = load_set("support").names
    cents = X.fit(embed, "support", names, exemplars)
    # the same generic lines attributed to every member: whoever they sound like, one in four is right
    texts = [t for t in GENERIC for _ in names]
    labels = [n for _ in GENERIC for n in names]
    collapsed = M.identifiability_exemplar(embed(texts), labels, cents)
    assert collapsed["chance"] == 0.25 and collapsed["n"] == len(texts)
    assert abs(collapsed["accuracy"] - collapsed["chance"]) <= 0.05
    # new lines in each member's voice (written for this test, not exemplars) are mostly recognised
    voiced = {
        "Mia": [
            "It sounds like the whole week has worn you down. What has been sitting with you most?",
            "You don't have to tidy it up for us. How are you feeling about it right now?",
        ],
        "Theo": [
            "Let's make a short list: the call to the landlord, then the form. Which one first?",
            "Pick one thing for tomorrow morning, twenty minutes, nothing more. What will it be?",
        ],
        "Juno": [
            "My toaster and I have both had this exact week, and only one of us burned anything. "
            "Honestly, you handled it better than we did.",
            "If stress burned calories I'd be an Olympian by now. Still, I'm glad you said it out loud.",
        ],
        "Ruth": [
            "Rivers carve canyons slowly, and so do we. What would you say to a friend who felt this way?",
            "Over a long life I've seen that the quiet choices shape us most. What matters to you here?",
        ],
    }
    texts = [t for n in names for t in voiced[n]]
    labels = [n for n in names for _ in voiced[n]]
    distinct = M.identifiability_exemplar(embed(texts), labels, cents)
    assert distinct["accuracy"] >= 0.75


def test_exemplar_identifiability_metric_on_hand_made_vectors():
    cents = {"A": np.array([1.0, 0.0]), "B": np.array([0.0, 1.0])}
    r = M.identifiability_exemplar(
        np.array([[2.0, 0.1], [0.1, 3.0], [1.0, 1.0], [5.0, 5.0]]), ["A", "B", "A", "Z"], cents
    )
    # the tie (1, 1) is a miss; "Z" has no centroid and is not scored
    assert r == {
        "accuracy": pytest.approx(2 / 3),
        "chance": 0.5,
        "n": 3,
        "per_label": {"A": 0.5, "B": 1.0},
    }
    assert (
        M.identifiability_exemplar(np.ones((2, 2)), ["A", "A"], {"A": np.ones(2)})["accuracy"]
        is None
    )


def test_eval_analysis_reports_exemplar_identifiability_per_domain_and_overall(embed, exemplars):
    from evaluation.analysis import _group_rows

    scenarios = [s for s in load_scenarios("support", "heldout")][:2]
    names = load_set("support").names
    records = {
        ("all", s.id): {
            "members": names,
            "directors": [],
            "messages": [{"speaker": n, "text": g} for n, g in zip(names, GENERIC[i:])],
        }
        for i, s in enumerate(scenarios)
    }
    rows = _group_rows("all", scenarios, records, {}, [], embed, 0, exemplars)
    got = {(r["metric"], r["domain"], r["persona"]): r for r in rows}
    for dom in ("support", "all"):
        assert got[("identifiability_exemplar", dom, "")]["n"] == 8
        assert got[("identifiability_exemplar_chance", dom, "")]["value"] == 0.25
    assert got[("identifiability_exemplar", "support", "")]["ci_low"] is not None
    assert ("identifiability_exemplar", "support", "Mia") in got


def test_report_marks_exemplar_identifiability_as_independent_of_training():
    from evaluation.report import AUTO, HEADLINE, reward_provenance

    text = reward_provenance(["learned", "audit"])
    trained, independent = text.split("**Not a training reward")
    assert "identifiability_exemplar" not in trained and "`identifiability_exemplar`" in independent
    assert "Independent of training by construction" in independent
    assert any(m == "identifiability_exemplar" for m, *_ in HEADLINE)
    assert any(m == "identifiability_exemplar" for m, *_ in AUTO)
    # the report states the chance level the run's rows carry
    from evaluation.report import Rows, _exemplar_chance

    rows = Rows(
        [
            {
                "config": "all",
                "metric": "identifiability_exemplar_chance",
                "domain": d,
                "persona": "",
                "value": v,
            }
            for d, v in (("all", 0.3), ("support", 0.25), ("creative", 1 / 3))
        ]
    )
    assert _exemplar_chance(rows, ["single", "all"]) == "0.30 pooled (support 0.25, creative 0.33)"


def test_mascot_eval_defaults_to_the_teacher_and_the_independent_judge(tmp_path, monkeypatch):
    from evaluation import cli, judging
    from evaluation.pipeline import EvalOptions

    assert judging.DEFAULT_JUDGES == ("learned", "audit")
    assert EvalOptions(out=tmp_path).judges == ["learned", "audit"]
    judges = judging.build_judges(list(judging.DEFAULT_JUDGES), lambda path: None)
    assert [w.name for w in judges] == ["learned", "audit"] and [w.weight for w in judges] == [
        0.5,
        0.5,
    ]
    # both share one MiniLM loader, which the analysis uses too
    assert judges[0].judge.embedder is judges[1].judge.embedder is judging.embedder_of(judges)
    seen = {}

    def fake_run(opts):
        seen["judges"] = opts.judges
        raise judging.InputError("stop here")

    monkeypatch.setattr("evaluation.pipeline.run", fake_run)
    monkeypatch.setenv("MASCOT_THREADS", "1")  # main() would otherwise set it when the CPU is busy
    assert cli.main(["--out", str(tmp_path), "--quick"]) == 1
    assert seen["judges"] == ["learned", "audit"]
    assert cli.main(["--out", str(tmp_path), "--judge", "heuristic"]) == 1
    assert seen["judges"] == ["heuristic"]
