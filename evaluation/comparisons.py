"""Pairwise and three-way comparisons of configurations, with position bias controlled.

For one scenario, an LLM judge sees two or three configurations' rounds as options A, B (, C)
and picks the one that serves the person best (a JSON-schema grammar allows only the labels).
LLM judges favour a position (small models often always say "A"), so every comparison is asked
in **all orders** (2 for a pair, 6 for three) and each configuration's preference is the share
of orders in which it was picked. A judge that always picks the first slot thus gives every
configuration the same share, instead of crowning whichever was listed first. The report also
shows the judge's raw first-slot rate, so that bias is visible.

Only LLM judges compare (the local GGUF judge, or an OpenAI-compatible endpoint); the heuristic
judge scores each reply alone and has no position to be biased by.
"""

from __future__ import annotations

import itertools
import json
import string
from typing import Any

from engine.llm.backend import GenRequest
from evaluation.db import ResultsDB, digest
from training.judges.llm import LocalJudge, OpenAIJudge
from training.scenarios import Scenario

REPLY_CHARS = 220  # each reply is cut to this in the comparison prompt (small context windows)


def comparable(judge: Any) -> bool:
    return isinstance(judge, (LocalJudge, OpenAIJudge))


def comparison_messages(scenario: Scenario, rounds: list[list[dict]]) -> list[dict[str, str]]:
    labels = string.ascii_uppercase[: len(rounds)]
    history = "\n".join(f"{h['speaker']}: {h['text']}" for h in scenario.history)
    blocks = []
    for label, msgs in zip(labels, rounds):
        lines = [f"{m['speaker']}: {_cut(m['text'])}" for m in msgs] or ["(no reply)"]
        blocks.append(f"Option {label}:\n" + "\n".join(lines))
    system = (
        "You compare ways a group of AI companions answered a person in a group chat. Pick the "
        "option that serves the person best: supportive and relevant to what they said, each "
        "companion in character, no companion repeating another, nobody speaking for others. "
        "Answer with JSON only."
    )
    user = (
        f"Situation: {scenario.situation}\n\nConversation so far:\n{history}\n"
        f"User: {scenario.user_message}\n\n"
        + "\n\n".join(blocks)
        + f"\n\nWhich option is best: {', '.join(labels)}? JSON:"
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= REPLY_CHARS else text[:REPLY_CHARS].rsplit(" ", 1)[0] + " …"


def ask(judge: Any, messages: list[dict[str, str]], labels: str) -> str:
    """One comparison by one LLM judge; returns the chosen label ('' if unreadable)."""
    schema = {
        "type": "object",
        "properties": {"best": {"type": "string", "enum": list(labels)}},
        "required": ["best"],
    }
    if isinstance(judge, LocalJudge):
        req = GenRequest(
            slot="__compare__",
            messages=messages,
            max_tokens=16,
            temperature=0.0,
            top_k=1,
            top_p=1.0,
            repeat_penalty=1.0,
            json_schema=schema,
            seed=judge.seed,
        )
        with judge._lock:
            text = judge.runtime.generate(req).text()
    else:
        # OpenAIJudge.complete() asks for the score schema; the comparison needs its own format.
        data = judge._post(
            {
                "model": judge.model,
                "messages": messages,
                "temperature": 0.0,
                "max_tokens": 20,
                "response_format": {"type": "json_object"},
            }
        )
        text = str(data["choices"][0]["message"]["content"] or "")
    try:
        best = (
            str(json.loads(text[text.find("{") : text.rfind("}") + 1]).get("best", ""))
            .strip()
            .upper()
        )
    except (ValueError, AttributeError):
        best = text.strip()[:1].upper()
    return best if best in labels else ""


def plan(
    config_names: list[str], mode: str
) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
    """Which pairs and triples to compare. ``mode``: ``none``, ``quick`` (the Director against
    round-robin; single agent vs round-robin vs Director) or ``full`` (the best available
    Director configuration against every other configuration, and the three-way)."""
    if mode == "none":
        return [], []
    have = set(config_names)
    top = next((c for c in ("mascot", "mascot-c", "mascot-p", "director") if c in have), None)
    triples = (
        [("single", "round-robin", "director")]
        if {"single", "round-robin", "director"} <= have
        else []
    )
    if top is None:
        return [], triples
    if mode == "quick":
        pairs = [(top, "round-robin")] if "round-robin" in have and top != "round-robin" else []
        if top != "director" and "director" in have:
            pairs.append((top, "director"))
        return pairs, triples
    return [(top, c) for c in config_names if c != top], triples


def run_comparisons(
    db: ResultsDB,
    judges: list[Any],
    records: dict[tuple[str, str], dict],
    scenarios: list[Scenario],
    groups: list[tuple[str, ...]],
    progress: Any = None,
) -> tuple[list[dict], int]:
    """Every comparison in every order. Returns rows ``{judge, scenario_id, domain, configs,
    order, choice}`` (``choice`` is a config name, '' if unreadable) and the new calls made."""
    rows: list[dict] = []
    made = 0
    for judge in judges:
        for scenario in scenarios:
            for group in groups:
                if any((c, scenario.id) not in records for c in group):
                    continue
                for order in itertools.permutations(group):
                    labels = string.ascii_uppercase[: len(order)]
                    rounds = [
                        [m for m in records[(c, scenario.id)]["messages"] if not m.get("safety")]
                        for c in order
                    ]
                    messages = comparison_messages(scenario, rounds)
                    key = digest({"judge": judge.name, "messages": messages, "v": 1})
                    label = db.get_comparison(key)
                    if label is None:
                        label = ask(judge, messages, labels)
                        db.put_comparison(key, judge.name, label)
                        made += 1
                    choice = order[labels.index(label)] if label else ""
                    rows.append(
                        {
                            "judge": judge.name,
                            "scenario_id": scenario.id,
                            "domain": scenario.domain,
                            "configs": list(group),
                            "order": list(order),
                            "choice": choice,
                            "slot": labels.index(label) if label else -1,
                        }
                    )
                    if progress is not None:
                        progress.update(1)
    return rows, made


def count_calls(judges: list[Any], scenarios: list[Scenario], groups: list[tuple[str, ...]]) -> int:
    import math

    return len(judges) * len(scenarios) * sum(math.factorial(len(g)) for g in groups)


def summarise(rows: list[dict]) -> dict[tuple[str, ...], dict]:
    """Per compared group: each config's per-scenario preference share, and position statistics.

    ``{group: {"share": {config: [per-scenario share]}, "first_slot_rate": float,
    "expected_first": float, "consistent": float (share of scenarios picked identically in
    every order), "unreadable": int}}``"""
    out: dict[tuple[str, ...], dict] = {}
    by_group: dict[tuple[str, ...], list[dict]] = {}
    for r in rows:
        by_group.setdefault(tuple(r["configs"]), []).append(r)
    for group, rs in by_group.items():
        per_scn: dict[str, list[dict]] = {}
        for r in rs:
            per_scn.setdefault(r["scenario_id"], []).append(r)
        share: dict[str, list[float]] = {c: [] for c in group}
        consistent = 0
        for srs in per_scn.values():
            picks = [r["choice"] for r in srs]
            for c in group:
                share[c].append(sum(p == c for p in picks) / len(picks))
            consistent += int(len(set(picks)) == 1 and picks[0] != "")
        readable = [r for r in rs if r["slot"] >= 0]
        out[group] = {
            "share": share,
            "first_slot_rate": (sum(r["slot"] == 0 for r in readable) / len(readable))
            if readable
            else None,
            "expected_first": 1.0 / len(group),
            "consistent": consistent / len(per_scn) if per_scn else None,
            "unreadable": len(rs) - len(readable),
            "scenarios": len(per_scn),
        }
    return out
