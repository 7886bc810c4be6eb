"""PNG figures for the report (matplotlib, headless Agg backend).

Every figure draws means with 95% confidence intervals as error bars, one colour per
configuration (the same colour in every figure).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np

from training.judges.rubric import DIMENSIONS

PALETTE = ["#7f7f7f", "#bcbd22", "#17becf", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"]

AUTO_METRICS = [
    ("distinct_2", "Distinct-2 (higher: more varied words)"),
    ("redundancy", "Redundancy (lower: companions say different things)"),
    ("identifiability", "Persona identifiability (higher: you can tell who spoke)"),
    ("identifiability_exemplar", "Identifiability, held-out exemplars (independent)"),
    ("balance", "Speaking balance (1 = even turns)"),
    ("role_confusion", "Role confusion rate (lower is better)"),
    ("director_validity", "Director validity"),
    ("seconds_per_round", "Seconds per round"),
    ("completion_tokens_per_round", "Generated tokens per round"),
]


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def colours(configs: list[str]) -> dict[str, str]:
    return {c: PALETTE[i % len(PALETTE)] for i, c in enumerate(configs)}


Lookup = Callable[..., "dict | None"]


def _err(row: dict | None) -> tuple[float, float, float]:
    if not row or row["value"] is None:
        return np.nan, 0.0, 0.0
    v = row["value"]
    lo = v - row["ci_low"] if row.get("ci_low") is not None else 0.0
    hi = row["ci_high"] - v if row.get("ci_high") is not None else 0.0
    return v, max(0.0, lo), max(0.0, hi)


def grouped_bars(
    ax,
    groups: list[str],
    configs: list[str],
    get: Callable[[str, str], dict | None],
    cols: dict[str, str],
    labels: dict[str, str],
) -> None:
    width = 0.8 / max(1, len(configs))
    x = np.arange(len(groups))
    for k, c in enumerate(configs):
        vals = [_err(get(g, c)) for g in groups]
        ax.bar(
            x + (k - (len(configs) - 1) / 2) * width,
            [v[0] for v in vals],
            width,
            yerr=np.array([[v[1] for v in vals], [v[2] for v in vals]]),
            capsize=2,
            color=cols[c],
            label=labels.get(c, c),
        )
    ax.set_xticks(x)
    ax.set_xticklabels(groups, rotation=0, fontsize=8)
    ax.grid(axis="y", alpha=0.3)


def judge_dimensions(path: Path, configs: list[str], look: Lookup, labels: dict[str, str]) -> None:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(10, 4))
    dims = list(DIMENSIONS) + ["mean"]
    grouped_bars(
        ax,
        [d.replace("_", "\n") for d in dims],
        configs,
        lambda g, c: look(c, "judge." + g.replace("\n", "_")),
        colours(configs),
        labels,
    )
    ax.set_ylim(1, 5)
    ax.set_ylabel("judge score (1-5)")
    ax.set_title("Judge scores per dimension (mean over scenarios, 95% CI)")
    ax.legend(fontsize=8, ncol=min(4, len(configs)))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def automatic(path: Path, configs: list[str], look: Lookup, labels: dict[str, str]) -> None:
    plt = _plt()
    cols = colours(configs)
    fig, axes = plt.subplots(3, 3, figsize=(13, 9))
    for ax, (metric, title) in zip(axes.flat, AUTO_METRICS):
        vals = [_err(look(c, metric)) for c in configs]
        x = np.arange(len(configs))
        ax.bar(
            x,
            [v[0] for v in vals],
            yerr=np.array([[v[1] for v in vals], [v[2] for v in vals]]),
            capsize=3,
            color=[cols[c] for c in configs],
        )
        ax.set_xticks(x)
        ax.set_xticklabels(configs, rotation=30, ha="right", fontsize=7)
        ax.set_title(title, fontsize=8)
        ax.grid(axis="y", alpha=0.3)
        for xi, v in zip(x, vals):
            if np.isnan(v[0]):
                ax.text(
                    xi,
                    0.5,
                    "n/a",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="#666",
                    transform=ax.get_xaxis_transform(),
                )
        if metric in ("identifiability", "identifiability_exemplar"):
            chance = [
                look(c, f"{metric}_chance", domain=d)
                for c in configs
                for d in ("support", "workplace", "creative")
            ]
            chance = [r["value"] for r in chance if r]
            if chance:
                ax.axhline(float(np.mean(chance)), color="k", ls="--", lw=0.8)
    fig.suptitle("Automatic metrics per configuration (95% CI; dashed: chance)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def by_domain(
    path: Path, configs: list[str], domains: list[str], look: Lookup, labels: dict[str, str]
) -> None:
    plt = _plt()
    cols = colours(configs)
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    for ax, (metric, title) in zip(
        axes,
        [
            ("judge.mean", "Judge mean (1-5)"),
            ("redundancy", "Redundancy (lower is better)"),
            ("identifiability", "Persona identifiability"),
        ],
    ):
        grouped_bars(ax, domains, configs, lambda g, c: look(c, metric, domain=g), cols, labels)
        ax.set_title(title, fontsize=9)
    axes[0].set_ylim(1, 5)
    axes[0].legend(fontsize=7)
    fig.suptitle("Per domain (creative = the out-of-domain writers' room)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def by_persona(
    path: Path,
    configs: list[str],
    personas: dict[str, list[str]],
    look: Lookup,
    labels: dict[str, str],
    all_configs: list[str],
) -> None:
    """One panel per domain: each member's judge mean per configuration."""
    plt = _plt()
    cols = colours(all_configs)
    fig, axes = plt.subplots(
        1, max(1, len(personas)), figsize=(5 * max(1, len(personas)), 4), squeeze=False
    )
    for ax, (dom, names) in zip(axes.flat, personas.items()):
        grouped_bars(
            ax,
            names,
            configs,
            lambda g, c: look(c, "judge.mean", domain=dom, persona=g),
            cols,
            labels,
        )
        ax.set_ylim(1, 5)
        ax.set_title(f"{dom}: judge mean per persona", fontsize=9)
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def comparisons(
    path: Path,
    groups: list[tuple[str, ...]],
    look: Lookup,
    labels: dict[str, str],
    all_configs: list[str],
) -> None:
    plt = _plt()
    cols = colours(all_configs)
    fig, axes = plt.subplots(1, len(groups), figsize=(4.5 * len(groups), 3.6), squeeze=False)
    for ax, group in zip(axes.flat, groups):
        metric = "compare:" + "/".join(group) + ":share"
        vals = [_err(look(c, metric)) for c in group]
        x = np.arange(len(group))
        ax.bar(
            x,
            [v[0] for v in vals],
            yerr=np.array([[v[1] for v in vals], [v[2] for v in vals]]),
            capsize=3,
            color=[cols.get(c, "#888") for c in group],
        )
        ax.axhline(1 / len(group), color="k", ls="--", lw=0.8)
        ax.set_xticks(x)
        ax.set_xticklabels(group, fontsize=8)
        ax.set_ylim(0, 1)
        ax.set_title(" vs ".join(group) + "\n(share of orders picked; dashed: tie)", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
