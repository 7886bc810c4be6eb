"""One message through the screen: the rules, then the learned layer where it is installed."""

from __future__ import annotations

from . import learned as learned_layer
from .result import SafetyResult
from .screen import assess_rules


def assess(text: str, *, learned: bool = True, _shortcut: bool = True) -> SafetyResult:
    """Screen one user message (rules, then the learned layer when it is installed)."""
    result = assess_rules(text, _shortcut=_shortcut)
    if result.risk:
        result = _with_source(result, "rules")
    if not learned or not text or not text.strip() or result.emergency:  # nothing to raise
        return result
    return learned_layer.combine(text, result)


def _with_source(result: SafetyResult, source: str) -> SafetyResult:
    return SafetyResult(
        result.risk, result.category, result.level, result.evidence, result.score, source
    )
