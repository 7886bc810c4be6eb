"""``mascot-eval``: compare Mascot's configurations on the bundled scenario sets.

Examples::

    mascot-eval --quick --out docs/eval          # ~15 min on a laptop CPU, bundled model
    mascot-eval --out eval-full                  # every held-out scenario, every configuration
    mascot-eval --out eval-full                  # again: resumes, generates only what is missing
    mascot-eval --out e --judge learned --judge local   # the default judges + the bundled model (comparisons)
    mascot-eval --out e --judge heuristic --judge openai:http://127.0.0.1:8080/v1#qwen2.5-7b
    mascot-eval compare --out eval-full          # the runs stored in eval-full/results.db
    mascot-eval pool eval-s7 eval-s8             # runs made with other seeds, paired vs round-robin

Errors are one line on stderr and exit code 1 (2 for bad options).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from engine.errors import MascotError
from evaluation import pipeline
from evaluation.configs import ALL_CONFIGS
from evaluation.db import ResultsDB
from evaluation.pipeline import EvalOptions
from evaluation.pool import main as pool_main
from evaluation.report import Rows


def run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mascot-eval",
        description="Evaluate Mascot's configurations (baselines, prompt-only Director, "
        "MASCOT ablations when trained models exist) and write a Markdown/HTML report with plots. "
        "`mascot-eval compare --help` compares stored runs.",
    )
    p.add_argument(
        "--out", required=True, type=Path, help="Output folder (report, figures, results.db)."
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="2 held-out scenarios per domain, 48-token replies, fewer comparisons "
        "(about 15 minutes on CPU with the bundled model).",
    )
    p.add_argument(
        "--config",
        dest="configs",
        action="append",
        choices=ALL_CONFIGS,
        metavar="NAME",
        help=f"A configuration to run (repeatable; default: all that can run). One of: "
        f"{', '.join(ALL_CONFIGS)}.",
    )
    p.add_argument(
        "--domain",
        dest="domains",
        action="append",
        choices=["support", "workplace", "creative", "invented"],
        help="Scenario domain (repeatable; default: the three bundled ones; creative is "
        "out-of-domain; invented: the corpus' held-out invented companions, read as imported "
        "cards, on their own situations).",
    )
    p.add_argument(
        "--split",
        default="heldout",
        choices=["heldout", "train"],
        help="Scenario split (default: heldout, never seen by training).",
    )
    p.add_argument(
        "--limit",
        type=int,
        default=None,
        help="Scenarios per domain (default: all; 2 with --quick).",
    )
    p.add_argument(
        "--judge",
        dest="judges",
        action="append",
        metavar="SPEC",
        help="Judge spec (repeatable; several are averaged). Default: learned (training's "
        "teacher) and audit (a learned judge no training used). Others: combined (the bundled "
        "model + the heuristic judge), local, local:PATH.gguf, heuristic, openai:URL#MODEL, "
        "learned:PATH.json. Position-debiased comparisons need an LLM judge (local or openai).",
    )
    p.add_argument(
        "--compare",
        choices=["none", "quick", "full"],
        default=None,
        help="Position-debiased comparisons: quick (Director vs round-robin, and single vs "
        "round-robin vs Director), full (the best Director configuration against every "
        "other), none. Default: quick with --quick, else full.",
    )
    p.add_argument("--seed", type=int, default=7, help="Sampling seed for every round (default 7).")
    p.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        help="Longest reply in tokens (default 48 with --quick, else 64).",
    )
    p.add_argument(
        "--db",
        type=Path,
        default=None,
        help="Results database (default: OUT/results.db). Share one across output folders "
        "to compare runs over time.",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="llama.cpp threads (sets MASCOT_THREADS; default: the engine's choice). Use 1 "
        "on a machine whose cores are busy with other work: oversubscribed threads "
        "spin-wait and run many times slower.",
    )
    p.add_argument("--no-progress", action="store_true", help="No progress bars.")
    return p


def compare_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mascot-eval compare",
        description="Headline metrics of the runs stored in a results database.",
    )
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument(
        "--out", type=Path, help="An output folder of mascot-eval (uses OUT/results.db)."
    )
    g.add_argument("--db", type=Path, help="A results database.")
    p.add_argument("runs", nargs="*", help="Run ids to show (default: every run).")
    p.add_argument(
        "--metric",
        action="append",
        dest="metrics",
        help="Metric to show (repeatable; default: judge.mean, redundancy, identifiability, "
        "identifiability_exemplar, role_confusion, seconds_per_round).",
    )
    return p


def compare(argv: list[str]) -> int:
    import json

    a = compare_parser().parse_args(argv)
    path = a.db or a.out / "results.db"
    if not path.is_file():
        raise MascotError(f"{path}: no results database there; run mascot-eval --out first.")
    metrics = a.metrics or [
        "judge.mean",
        "redundancy",
        "identifiability",
        "identifiability_exemplar",
        "role_confusion",
        "seconds_per_round",
    ]
    db = ResultsDB(path)
    try:
        runs = [r for r in db.runs() if not a.runs or r["id"] in a.runs]
        missing = set(a.runs) - {r["id"] for r in runs}
        if missing:
            raise MascotError(
                f"No run {', '.join(sorted(missing))} in {path}; `mascot-eval compare "
                f"--db {path}` lists them."
            )
        header = ["run", "started", "status", "config"] + metrics
        lines = [header]
        for run in runs:
            rows = Rows(db.results(run["id"]))
            for c in json.loads(run["settings"] or "{}").get("configs", []):
                lines.append(
                    [run["id"], run["started"], run["status"], c]
                    + [rows.fmt(c, m, "{:.3f}", ci=False) for m in metrics]
                )
    finally:
        db.close()
    widths = [max(len(str(r[i])) for r in lines) for i in range(len(header))]
    for r in lines:
        print("  ".join(str(x).ljust(w) for x, w in zip(r, widths)).rstrip())
    return 0


def busy() -> bool:
    """True when other work already keeps every core busy. llama.cpp's threads spin-wait for each
    other, so on an oversubscribed CPU two threads run many times slower than one (measured here:
    a judge call took 85-115 s with 2 threads and 5-10 s with 1, at load average 7 on 2 cores)."""
    try:
        return os.getloadavg()[0] >= (os.cpu_count() or 1)
    except (AttributeError, OSError):  # no load average on Windows
        return False


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv[:1] == ["compare"]:
            return compare(argv[1:])
        if argv[:1] == ["pool"]:
            return pool_main(argv[1:])
        a = run_parser().parse_args(argv)
        if a.threads is not None:
            if a.threads < 1:
                raise MascotError("--threads must be at least 1.")
            os.environ["MASCOT_THREADS"] = str(a.threads)
        elif "MASCOT_THREADS" not in os.environ and busy():
            os.environ["MASCOT_THREADS"] = "1"
            print(
                "mascot-eval: the CPU is already busy (load average ≥ cores); using 1 llama.cpp "
                "thread (override with --threads).",
                file=sys.stderr,
            )
        command = "mascot-eval " + " ".join(shlex.quote(x) for x in argv)
        opts = EvalOptions(
            out=a.out,
            quick=a.quick,
            configs=a.configs,
            domains=a.domains or ["support", "workplace", "creative"],
            split=a.split,
            limit=a.limit,
            compare=a.compare,
            seed=a.seed,
            max_tokens=a.max_tokens,
            db=a.db,
            command=command,
            progress=not a.no_progress,
            **({"judges": a.judges} if a.judges else {}),
        )  # default: judging.DEFAULT_JUDGES
        result = pipeline.run(opts)
    except MascotError as e:
        print(f"mascot-eval: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("mascot-eval: interrupted; run the same command again to resume.", file=sys.stderr)
        return 130
    print(
        f"run {result.run_id}: {result.generated} rounds generated, {result.judged} judge calls, "
        f"{result.compared} comparisons (the rest from the cache)"
    )
    for c, why in result.skipped.items():
        print(f"skipped {c}: {why}")
    print(f"report: {result.paths['md']}  and  {result.paths['html']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
