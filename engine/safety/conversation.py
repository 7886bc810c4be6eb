"""Conversation-level risk: weak signals spread over several recent user messages add up.

Each message alone may stay below *concern* ("I feel like a burden", then "nothing matters",
then "thanks for everything, bye"); a screen that reads one message at a time misses that. Here
the newest message's own verdict comes first; if it is below *concern* but carries a signal of
its own (a rule score of at least ``WEAK``), the signals of the last ``WINDOW`` user messages
are combined like the rules combine hits (``1 - prod(1 - s)``), and at ``CONCERN_AT`` or more the
result is a *concern* (a check-in) with ``source="conversation"``. It never produces *urgent*:
several vague messages call for a question, not a crisis script. Requiring a signal in the
newest message keeps the check-in from repeating on every later, unrelated message.
"""

from __future__ import annotations

from .message import assess
from .result import CONCERN_AT, WEAK, SafetyResult
from .screen import assess_rules

WINDOW = 6  # user messages looked at, the newest included


def assess_recent(texts: list[str], *, learned: bool = True) -> SafetyResult:
    texts = [t for t in texts if t and t.strip()][-WINDOW:]
    if not texts:
        return assess("")
    newest = assess(texts[-1], learned=learned)
    if newest.risk or newest.score < WEAK:
        return newest
    scores = [newest.score] + [_signal(assess_rules(t)) for t in texts[:-1]]
    weak = [s for s in scores if s >= WEAK]
    miss = 1.0
    for s in weak:
        miss *= 1.0 - s
    total = 1.0 - miss
    if len(weak) < 2 or total < CONCERN_AT:
        return newest
    return SafetyResult(
        True,
        "suicide",
        "concern",
        f"{len(weak)} of the last {len(texts)} messages",
        round(total, 3),
        "conversation",
    )


def _signal(result: SafetyResult) -> float:
    # an earlier message that was itself flagged counts as a weak signal, not at full weight:
    # it already had its own response
    return min(result.score, WEAK + 0.1) if result.risk else result.score
