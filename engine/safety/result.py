"""The screen's verdict and its constants (shared by the rules, the learned layer and the app)."""

from __future__ import annotations

from dataclasses import dataclass

CATEGORIES = ("suicide", "self_harm", "violence_from_others", "violence_to_others")
# "emergency": behaviour in progress (an overdose taken, an injury that needs care, at a height
# now); "urgent": method, means, plan, intent or preparation; "concern": passive ideation.
LEVELS = ("none", "concern", "urgent", "emergency")
URGENT_AT = 0.8
CONCERN_AT = 0.4
# A message's rule score that counts as a weak signal for the conversation-level screen
# (conversation.py); a message the learned layer vetoes still counts as one.
WEAK = 0.25


@dataclass(frozen=True)
class SafetyResult:
    """The outcome of ``assess``.

    ``risk`` is true for *concern*, *urgent* and *emergency*; ``category`` is one of
    ``CATEGORIES`` or None; ``evidence`` is the matched phrase (normalised) for logs and the UI;
    ``score`` is in [0, 1]; ``source`` says which layer decided ("rules", "learned",
    "conversation", or "" when nothing fired).
    """

    risk: bool
    category: str | None
    level: str
    evidence: str
    score: float
    source: str = ""

    @property
    def urgent(self) -> bool:
        """At least urgent: the round steps out of the role-play."""
        return self.level in ("urgent", "emergency")

    @property
    def emergency(self) -> bool:
        return self.level == "emergency"


NO_RISK = SafetyResult(False, None, "none", "", 0.0)
