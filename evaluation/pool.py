"""``mascot-eval pool OUT1 OUT2 ...``: runs of the same configurations and scenarios made with
different seeds, pooled. Each (configuration, scenario) value is first averaged over the runs'
seeds, then each configuration minus round-robin is taken per scenario (paired) with a bootstrap
interval over scenarios, so the seeds narrow the noise of a round without counting as scenarios."""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from engine.errors import InputError
from evaluation import metrics as M
from evaluation.analysis import BASELINE

HEADLINE = (
    "judge.mean",
    "judge[audit].mean",
    "judge[learned].mean",
    "judge.persona_consistency",
    "judge.social_contribution",
    "identifiability_exemplar",
    "redundancy",
    "role_confusion",
    "distinct_2",
    "replies_per_round",
)


def load_units(folder: str | Path) -> dict[str, Any]:
    path = Path(folder) / "units.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise InputError(
            f"{path} cannot be read ({e}); give output folders of `mascot-eval` runs "
            "made since it writes units.json."
        ) from None


def pool(
    runs: list[dict[str, Any]], metrics: tuple[str, ...] = HEADLINE, seed: int = 0
) -> list[dict[str, Any]]:
    """Rows {config, metric, value, ci_low, ci_high, n, seeds}: the configuration's mean over
    scenarios (``metric``) and its paired difference to round-robin (``diff_rr:metric``)."""
    vals: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for run in runs:
        for u in run["units"]:
            for m in metrics:
                v = u["values"].get(m)
                if v is not None:
                    vals[(u["config"], u["scenario"], m)].append(float(v))
    mean = {k: sum(v) / len(v) for k, v in vals.items()}
    configs = list(dict.fromkeys(u["config"] for run in runs for u in run["units"]))
    scenarios = sorted({k[1] for k in mean})
    rows = []
    for c in configs:
        for m in metrics:
            xs = [mean[(c, s, m)] for s in scenarios if (c, s, m) in mean]
            if xs:
                rows.append(_row(c, m, M.mean_ci(xs, seed=seed), len(runs)))
            if c != BASELINE:
                d = [
                    mean[(c, s, m)] - mean[(BASELINE, s, m)]
                    for s in scenarios
                    if (c, s, m) in mean and (BASELINE, s, m) in mean
                ]
                if d:
                    rows.append(_row(c, f"diff_rr:{m}", M.mean_ci(d, seed=seed), len(runs)))
    return rows


def _row(config: str, metric: str, stat: tuple, seeds: int) -> dict[str, Any]:
    value, lo, hi, n = stat
    return {
        "config": config,
        "metric": metric,
        "value": value,
        "ci_low": lo,
        "ci_high": hi,
        "n": n,
        "seeds": seeds,
    }


def table(rows: list[dict[str, Any]], labels: dict[str, str]) -> str:
    """Markdown: per configuration, each metric's mean and, beside it, minus round-robin [95% CI]."""
    by = {(r["config"], r["metric"]): r for r in rows}
    configs = list(dict.fromkeys(r["config"] for r in rows))
    metrics = list(
        dict.fromkeys(r["metric"] for r in rows if not r["metric"].startswith("diff_rr:"))
    )
    fmt = lambda x: "–" if x is None else f"{x:.3f}"  # noqa: E731
    out = ["| configuration | " + " | ".join(metrics) + " |", "|---|" + "---|" * len(metrics)]
    for c in configs:
        cells = []
        for m in metrics:
            r, d = by.get((c, m)), by.get((c, f"diff_rr:{m}"))
            cell = fmt(r["value"]) if r else "–"
            if d:
                cell += f" ({d['value']:+.3f} [{fmt(d['ci_low'])}, {fmt(d['ci_high'])}])"
            cells.append(cell)
        out.append(f"| {labels.get(c, c)} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="mascot-eval pool", description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", help="output folders of mascot-eval runs (their units.json)")
    p.add_argument(
        "--metric",
        action="append",
        dest="metrics",
        help=f"metric (repeatable; default: {', '.join(HEADLINE)})",
    )
    p.add_argument("--json", help="also write the rows to this file")
    a = p.parse_args(argv)
    runs = [load_units(r) for r in a.runs]
    rows = pool(runs, tuple(a.metrics) if a.metrics else HEADLINE)
    if not rows:
        raise InputError("The runs have no values for these metrics.")
    labels = {k: v for run in runs for k, v in run.get("labels", {}).items()}
    seeds = ", ".join(str(r.get("seed")) for r in runs)
    print(
        f"{len(runs)} runs (seeds {seeds}); mean over scenarios, in brackets minus round-robin per "
        "scenario with a bootstrap 95% interval over scenarios\n"
    )
    print(table(rows, labels))
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0
