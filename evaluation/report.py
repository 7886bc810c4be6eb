"""The report: Markdown and HTML from the same blocks, with the PNG figures beside them.

``report.md`` / ``report.html`` in the output folder; ``figures/*.png``; ``results.json`` (every
row); the SQLite ``results`` table holds the same rows under the run id.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation import plots
from training.judges.rubric import DIMENSIONS

# (metric, header, lower_is_better, format)
HEADLINE = [
    ("judge.mean", "Judge mean (1–5)", False, "{:.2f}"),
    ("judge.mean_100", "Judge (0–100)", False, "{:.0f}"),
    ("judge.persona_consistency", "Persona consistency", False, "{:.2f}"),
    ("judge.social_contribution", "Social contribution", False, "{:.2f}"),
    ("distinct_2", "Distinct-2", False, "{:.2f}"),
    ("redundancy", "Redundancy ↓", True, "{:.2f}"),
    ("identifiability", "Identifiability", False, "{:.2f}"),
    ("identifiability_exemplar", "Identifiability (exemplars)", False, "{:.2f}"),
    ("balance", "Balance", False, "{:.2f}"),
    ("role_confusion", "Role confusion ↓", True, "{:.2f}"),
    ("director_validity", "Director valid", False, "{:.2f}"),
    ("seconds_per_round", "s / round", True, "{:.1f}"),
    ("completion_tokens_per_round", "tokens / round", True, "{:.0f}"),
]
AUTO = [
    ("distinct_1", "Distinct-1", "{:.3f}"),
    ("distinct_2", "Distinct-2", "{:.3f}"),
    ("redundancy", "Redundancy ↓", "{:.3f}"),
    ("identifiability", "Identifiability", "{:.2f}"),
    ("identifiability_exemplar", "Identifiability (held-out exemplars)", "{:.2f}"),
    ("balance", "Speaking balance", "{:.2f}"),
    ("role_confusion", "Role confusion ↓", "{:.2f}"),
    ("prompt_echo", "Prompt echo ↓", "{:.2f}"),
    ("director_validity", "Director validity", "{:.2f}"),
    ("replies_per_round", "Replies / round", "{:.1f}"),
    ("seconds_per_round", "Seconds / round", "{:.1f}"),
    ("first_reply_seconds", "s to first reply", "{:.2f}"),
    ("completion_tokens_per_round", "Generated tokens / round", "{:.0f}"),
    ("prompt_tokens_per_round", "Prompt tokens / round", "{:.0f}"),
    ("prefilled_tokens_per_round", "Prefilled tokens / round", "{:.0f}"),
]


class Rows:
    """Index of result rows: ``rows.get(config, metric, domain="all", persona="")``."""

    def __init__(self, rows: list[dict]):
        self._ix = {
            (r["config"], r["metric"], r.get("domain", "all"), r.get("persona", "")): r
            for r in rows
        }

    def get(self, config: str, metric: str, domain: str = "all", persona: str = "") -> dict | None:
        return self._ix.get((config, metric, domain, persona))

    def fmt(
        self,
        config: str,
        metric: str,
        spec: str = "{:.2f}",
        domain: str = "all",
        persona: str = "",
        ci: bool = True,
    ) -> str:
        r = self.get(config, metric, domain, persona)
        if not r or r["value"] is None:
            return "–"
        s = spec.format(r["value"])
        if ci and r.get("ci_low") is not None and r.get("ci_high") is not None:
            s += f" [{spec.format(r['ci_low'])}, {spec.format(r['ci_high'])}]"
        return s


# -- a tiny document model rendered to Markdown and HTML -----------------------------------------


@dataclass
class Doc:
    blocks: list[tuple[str, Any]] = field(default_factory=list)

    def h(self, level: int, text: str) -> None:
        self.blocks.append(("h", (level, text)))

    def p(self, text: str) -> None:
        self.blocks.append(("p", text))

    def ul(self, items: list[str]) -> None:
        self.blocks.append(("ul", items))

    def table(self, header: list[str], rows: list[list[str]]) -> None:
        self.blocks.append(("table", (header, rows)))

    def img(self, src: str, alt: str) -> None:
        self.blocks.append(("img", (src, alt)))

    def code(self, text: str) -> None:
        self.blocks.append(("code", text))

    def markdown(self) -> str:
        out: list[str] = []
        for kind, b in self.blocks:
            if kind == "h":
                out.append("#" * b[0] + " " + b[1])
            elif kind == "p":
                out.append(b)
            elif kind == "ul":
                out.append("\n".join(f"- {x}" for x in b))
            elif kind == "table":
                header, rows = b

                def esc(s: object) -> str:
                    return str(s).replace("|", "\\|").replace("\n", " ")

                lines = [
                    "| " + " | ".join(map(esc, header)) + " |",
                    "|" + "|".join("---" for _ in header) + "|",
                ]
                lines += ["| " + " | ".join(map(esc, r)) + " |" for r in rows]
                out.append("\n".join(lines))
            elif kind == "img":
                out.append(f"![{b[1]}]({b[0]})")
            elif kind == "code":
                out.append("```\n" + b + "\n```")
        return "\n\n".join(out) + "\n"

    def html(self, title: str) -> str:
        e = html.escape
        out = [
            f"<!doctype html><html><head><meta charset='utf-8'><title>{e(title)}</title>",
            "<style>body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;"
            "line-height:1.45}table{border-collapse:collapse;font-size:13px;margin:1em 0}"
            "td,th{border:1px solid #ccc;padding:3px 7px;text-align:left}th{background:#f3f3f3}"
            "img{max-width:100%}pre{background:#f6f6f6;padding:.8em;overflow-x:auto}</style></head><body>",
        ]
        for kind, b in self.blocks:
            if kind == "h":
                out.append(f"<h{b[0]}>{e(b[1])}</h{b[0]}>")
            elif kind == "p":
                out.append(f"<p>{_inline(b)}</p>")
            elif kind == "ul":
                out.append("<ul>" + "".join(f"<li>{_inline(x)}</li>" for x in b) + "</ul>")
            elif kind == "table":
                header, rows = b
                out.append(
                    "<table><tr>"
                    + "".join(f"<th>{e(str(h))}</th>" for h in header)
                    + "</tr>"
                    + "".join(
                        "<tr>" + "".join(f"<td>{_inline(str(c))}</td>" for c in r) + "</tr>"
                        for r in rows
                    )
                    + "</table>"
                )
            elif kind == "img":
                out.append(f"<p><img src='{e(b[0])}' alt='{e(b[1])}'></p>")
            elif kind == "code":
                out.append(f"<pre>{e(b)}</pre>")
        out.append("</body></html>")
        return "\n".join(out)


def _inline(text: str) -> str:
    """Escape, then render `code` and **bold** spans."""
    import re

    s = html.escape(text)
    s = re.sub(r"`([^`]+)`", r"<code>\1</code>", s)
    return re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", s)


# -- the report ------------------------------------------------------------------------------------

# Which report numbers were part of a training reward (training/director_rewards.py, persona RLAIF).
TRAINING_REWARD_JUDGES = {
    "learned": "the teacher of persona RLAIF and of the Director's social and persona "
    "reward components"
}
TRAINING_REWARD_METRICS = {
    "redundancy": "MiniLM cosine between replies (the Director's diversity and "
    "non-redundancy components use the same embeddings)",
    "balance": "the Director's balance component",
    "role confusion": "a penalty in persona RLAIF",
}


# Report metrics that no training step and no judge ever used, by construction (not only with
# the current defaults): their inputs are files training does not read.
INDEPENDENT_METRICS = {
    "identifiability_exemplar": "persona identifiability against a classifier fitted on "
    "held-out persona exemplars (assets/eval/persona_exemplars.jsonl), "
    "which neither training nor the learned judges read"
}


def reward_provenance(judge_names: list[str]) -> str:
    """One paragraph that marks which judges and metrics were training rewards and which never were."""
    trained = [
        f"judge `{j}` ({TRAINING_REWARD_JUDGES[j]})"
        for j in judge_names
        if j in TRAINING_REWARD_JUDGES
    ]
    independent = [f"`{j}`" for j in judge_names if j not in TRAINING_REWARD_JUDGES]
    parts = trained + [f"{m} ({why})" for m, why in TRAINING_REWARD_METRICS.items()]
    text = (
        "**Training rewards (not independent of training):** " + "; ".join(parts) + ". "
        "A judge average that includes a training-reward judge is partly one too. "
    )
    text += (
        "**Not a training reward with the current defaults** (models trained before the learned "
        "teacher used the heuristic judge instead): "
        + (", ".join(independent) + " (judges), " if independent else "")
        + "identifiability, prompt echo and distinct-n. "
        "The `audit` judge (`--judge audit`) is fitted on a disjoint split with no corruptions "
        "(docs/judge.md). "
    )
    text += (
        "**Independent of training by construction:** "
        + "; ".join(f"`{m}` ({why})" for m, why in INDEPENDENT_METRICS.items())
        + "."
    )
    return text


def _exemplar_chance(rows: "Rows", configs: list[str]) -> str:
    """The chance level of ``identifiability_exemplar`` per domain in this run (1 / members)."""
    found: dict[str, float] = {}
    for c in configs:
        for dom in ("all", "support", "workplace", "creative"):
            r = rows.get(c, "identifiability_exemplar_chance", domain=dom)
            if r and r["value"] is not None:
                found.setdefault(dom, r["value"])
    if not found:
        return "1 / the group's size (0.25 for four members)"
    parts = [f"{dom} {v:.2f}" for dom, v in found.items() if dom != "all"]
    return f"{found.get('all', 0.0):.2f} pooled" + (f" ({', '.join(parts)})" if parts else "")


def headline_table(
    rows: Rows, configs: list[str], labels: dict[str, str], ci: bool = False
) -> tuple[list[str], list[list[str]]]:
    header = ["Configuration"] + [h for _, h, _, _ in HEADLINE]
    body = [
        [labels.get(c, c)] + [rows.fmt(c, m, f, ci=ci) for m, _, _, f in HEADLINE] for c in configs
    ]
    return header, body


def write(
    out: Path,
    *,
    meta: dict[str, Any],
    rows_list: list[dict],
    configs: list[str],
    labels: dict[str, str],
    skipped: dict[str, str],
    domains: list[str],
    personas: dict[str, list[str]],
    comparison_groups: list[tuple[str, ...]],
    examples: list[dict],
    history: list[dict],
    notes: list[str] | None = None,
) -> dict[str, Path]:
    """Write report.md, report.html, results.json and figures/*.png into ``out``."""
    out = Path(out)
    figs = out / "figures"
    figs.mkdir(parents=True, exist_ok=True)
    rows = Rows(rows_list)
    look = rows.get
    plots.judge_dimensions(figs / "judge_dimensions.png", configs, look, labels)
    plots.automatic(figs / "automatic_metrics.png", configs, look, labels)
    plots.by_domain(figs / "by_domain.png", configs, domains, look, labels)
    multi = [c for c in configs if not c.startswith("single")]
    if multi:
        plots.by_persona(figs / "by_persona.png", multi, personas, look, labels, configs)
    if comparison_groups:
        plots.comparisons(figs / "comparisons.png", comparison_groups, look, labels, configs)

    d = Doc()
    d.h(1, "Mascot evaluation report")
    d.p(
        f"Run **{meta['run_id']}**, {meta['started']} → {meta['finished']} ({meta['mode']} run). "
        f"{meta['n_scenarios']} scenarios ({', '.join(f'{k}: {v}' for k, v in meta['per_domain'].items())}; "
        f"split `{meta['split']}`), chat model `{meta['model']}`, seed {meta['seed']}, "
        f"max {meta['max_tokens']} tokens per reply. Judges: {meta['judges']}."
    )
    d.p(
        "Every number is a mean over scenarios with a 95% confidence interval in brackets "
        "(percentile bootstrap, 2,000 resamples, fixed seed), unless the table says otherwise. "
        "Judge scores are 1–5 (0–100 = (score − 1) / 4 × 100). ↓ marks metrics where lower is better."
    )
    d.p(reward_provenance(list(meta.get("judge_names", []))))
    if meta.get("work"):
        d.p(
            "Work in this run: "
            + "; ".join(meta["work"])
            + f" (llama.cpp threads: {meta.get('threads')})."
        )
    if skipped:
        d.h(2, "Skipped configurations")
        d.ul([f"**{c}**: {why}" for c, why in skipped.items()])
    if notes:
        d.ul(notes)
    trained = meta.get("trained") or {}
    if trained.get("persona") or trained.get("director"):
        d.p(
            "Trained models used: "
            + "; ".join(
                [f"persona {k} → `{v}`" for k, v in sorted(trained.get("persona", {}).items())]
                + ([f"Director → `{trained['director']}`"] if trained.get("director") else [])
            )
            + ". Companions without a trained model keep the chat model."
        )

    d.h(2, "Headline")
    h, b = headline_table(rows, configs, labels)
    d.table(h, b)
    d.p("Configurations: " + "; ".join(f"**{labels.get(c, c)}** (`{c}`)" for c in configs) + ".")
    vs_rr = [c for c in configs if rows.get(c, "diff_rr:judge.mean")]
    if vs_rr:
        d.h(3, "Difference to round-robin, paired by scenario")
        d.p(
            "Each configuration minus round-robin on the same scenarios, with a bootstrap 95% "
            "interval over the per-scenario differences (an interval that excludes 0 is a "
            "difference the scenarios support)."
        )
        d.table(
            ["Configuration"] + [h for m, h, _, _ in HEADLINE if m != "judge.mean_100"],
            [
                [labels.get(c, c)]
                + [
                    rows.fmt(c, f"diff_rr:{m}", f)
                    for m, _, _, f in HEADLINE
                    if m != "judge.mean_100"
                ]
                for c in vs_rr
            ],
        )

    d.h(2, "Judge scores by dimension")
    d.img("figures/judge_dimensions.png", "judge scores per dimension")
    header = (
        ["Configuration"] + [x.replace("_", " ") for x in DIMENSIONS] + ["mean", "mean (0–100)"]
    )
    d.table(
        header,
        [
            [labels.get(c, c)]
            + [rows.fmt(c, f"judge.{x}") for x in DIMENSIONS]
            + [rows.fmt(c, "judge.mean"), rows.fmt(c, "judge.mean_100", "{:.0f}")]
            for c in configs
        ],
    )
    judge_names = meta.get("judge_names", [])
    flat = [j for j in judge_names if (rows.get("-", f"judge[{j}].spread") or {}).get("value") == 0]
    if flat:
        d.p(
            "**Warning:** "
            + ", ".join(f"`{j}`" for j in flat)
            + " gave every reply the same scores in "
            "this run, so it cannot tell the configurations apart; its share of the average only shifts "
            "all configurations alike. Use a larger judge (`--judge local:BIG.gguf` or `--judge "
            "openai:URL#MODEL`) for judgements that mean something."
        )
    if len(judge_names) > 1:
        d.p(
            "Each judge alone (mean of the five dimensions); the table above is their weighted average "
            f"({meta['judges']})."
        )
        d.table(
            ["Configuration"] + judge_names,
            [
                [labels.get(c, c)] + [rows.fmt(c, f"judge[{j}].mean") for j in judge_names]
                for c in configs
            ],
        )

    d.h(2, "Automatic metrics")
    d.img("figures/automatic_metrics.png", "automatic metrics")
    d.table(
        ["Configuration"] + [h for _, h, _ in AUTO],
        [[labels.get(c, c)] + [rows.fmt(c, m, f) for m, _, f in AUTO] for c in configs],
    )
    d.ul(
        [
            "Distinct-n: unique n-grams / all n-grams over the replies of one round.",
            "Redundancy: mean pairwise cosine similarity (all-MiniLM-L6-v2) of the replies in one round; "
            "1.0 = the companions said the same thing.",
            "Identifiability: how often a reply's embedding is nearest to its own speaker's centroid, the "
            "centroids built from the other scenarios' replies (leave-one-scenario-out, so a shared topic "
            "in one round does not count), within each group; Wilson 95% interval over replies. Chance is "
            "0.25 for four members; near or below chance = persona collapse.",
            "Identifiability (held-out exemplars): the share of replies whose embedding is nearest "
            "to their own speaker's centroid, the centroids built from 16 held-out lines per "
            "persona that no training step "
            "or judge saw (assets/eval/persona_exemplars.jsonl; docs/eval.md validates the classifier). "
            "Independent of training; Wilson 95% interval over replies; chance "
            + _exemplar_chance(rows, configs)
            + "; near or below chance = the companions do not sound like their personas.",
            "Speaking balance: normalised entropy of turns per member over a domain's rounds (1 = even); "
            "interval bootstraps scenarios.",
            "Role confusion: share of replies in which a companion wrote as another member or as the user "
            "(the engine cut such lines, or a label or stage direction for someone else remains).",
            "Prompt echo: share of replies that repeat the engine's prompt framing (\"briefly and in "
            'character", "Director\'s note") instead of talking to the person.',
            "Director validity: share of the Director model's decisions that parsed and named an allowed "
            "speaker (rule-forced and user-addressed turns excluded).",
        ]
    )

    if comparison_groups:
        d.h(2, "Comparisons (position bias controlled)")
        d.p(
            "An LLM judge picks the best of two or three configurations' rounds for the same scenario. "
            "Each comparison is asked in every order (2 for a pair, 6 for three), and a configuration's "
            "share is the fraction of orders in which it was picked, averaged over scenarios. The "
            "first-slot rate shows the judge's raw position bias (unbiased: 1/2 or 1/3); 'consistent' is "
            "the share of scenarios where it picked the same configuration in every order."
        )
        d.img("figures/comparisons.png", "comparisons")
        crow = []
        for g in comparison_groups:
            name = "compare:" + "/".join(g)
            shares = ", ".join(f"{c}: {rows.fmt(c, name + ':share')}" for c in g)
            crow.append(
                [
                    " vs ".join(g),
                    shares,
                    rows.fmt("-", name + ":first_slot_rate", ci=False),
                    f"{1 / len(g):.2f}",
                    rows.fmt("-", name + ":consistent", ci=False),
                ]
            )
        d.table(
            ["Compared", "Share picked [95% CI]", "First-slot rate", "Unbiased", "Consistent"], crow
        )

    d.h(2, "By domain")
    d.img("figures/by_domain.png", "per-domain results")
    header = (
        ["Configuration"]
        + [f"{dom}: judge" for dom in domains]
        + [f"{dom}: redundancy ↓" for dom in domains]
        + [f"{dom}: identifiability" for dom in domains]
        + [f"{dom}: identifiability (exemplars)" for dom in domains]
    )
    d.table(
        header,
        [
            [labels.get(c, c)]
            + [rows.fmt(c, "judge.mean", domain=dom) for dom in domains]
            + [rows.fmt(c, "redundancy", domain=dom) for dom in domains]
            + [rows.fmt(c, "identifiability", domain=dom) for dom in domains]
            + [rows.fmt(c, "identifiability_exemplar", domain=dom) for dom in domains]
            for c in configs
        ],
    )

    if multi:
        d.h(2, "By persona")
        d.img("figures/by_persona.png", "per-persona judge scores")
        d.p(
            "Judge mean over each companion's replies (interval over replies), how often the embedding "
            "classifier recognised it (recall; leave-one-scenario-out / held-out exemplars), and its share "
            "of the turns."
        )
        prow = []
        for dom, names in personas.items():
            for n in names:
                prow.append(
                    [dom, n]
                    + [
                        f"{rows.fmt(c, 'judge.mean', domain=dom, persona=n, ci=False)} · "
                        f"{rows.fmt(c, 'identifiability', domain=dom, persona=n, ci=False)} / "
                        f"{rows.fmt(c, 'identifiability_exemplar', domain=dom, persona=n, ci=False)} · "
                        f"{rows.fmt(c, 'share', domain=dom, persona=n, ci=False)}"
                        for c in multi
                    ]
                )
        d.table(
            ["Domain", "Persona"] + [f"{labels.get(c, c)} (judge · recall · share)" for c in multi],
            prow,
        )

    if examples:
        d.h(2, "Example rounds")
        for ex in examples:
            d.h(3, f"{ex['scenario_id']} ({ex['domain']}): {ex['situation']}")
            d.p(f"User: {ex['user_message']}")
            for c, msgs in ex["rounds"].items():
                lines = [
                    f"**{m['speaker']}**"
                    + (f" (directive: {m['directive']})" if m.get("directive") else "")
                    + ": "
                    + " ⏎ ".join(m["text"].splitlines())
                    for m in msgs
                ] or ["(no reply)"]
                d.p(f"*{labels.get(c, c)}*")
                d.ul(lines)

    if history:
        d.h(2, "Compared with earlier runs in this database")
        cols = sorted({c for h in history for c in h["values"]})
        d.table(
            ["Run", "Started", "Mode", "Work (s)"] + [f"{c}: judge · redundancy" for c in cols],
            [
                [h["run_id"], h["started"], h["mode"], h.get("seconds", "–")]
                + [h["values"].get(c, "–") for c in cols]
                for h in history
            ],
        )

    d.h(2, "How far to trust the judges")
    jrows = []
    for j in judge_names:
        r = rows.get("-", f"judge[{j}].spread")
        jrows.append(
            [
                j,
                f"{r['value']:.2f}" if r and r["value"] is not None else "–",
                str(r["n"]) if r else "–",
            ]
        )
    d.table(["Judge", "Spread (std of per-reply means)", "Replies"], jrows)
    d.p(
        "A judge whose scores barely move between replies cannot rank configurations. The "
        "comparisons' first-slot rate (above) shows the LLM judge's position bias; the shares are "
        "corrected for it by asking every order, but a judge that picks by position adds no signal. "
        "docs/judge.md measures each judge's agreement with hand-written preference pairs."
    )

    d.h(2, "Reproduce")
    d.code(meta["command"])
    d.p("Package versions:")
    d.table(["Package", "Version"], [[k, v] for k, v in meta["versions"].items()])
    d.p(
        f"Results database: `{meta['db']}` (table `results`, run id `{meta['run_id']}`); all rows also in "
        "`results.json`. Compare runs with `mascot-eval compare`."
    )

    paths = {"md": out / "report.md", "html": out / "report.html", "json": out / "results.json"}
    paths["md"].write_text(d.markdown(), encoding="utf-8")
    paths["html"].write_text(d.html("Mascot evaluation report"), encoding="utf-8")
    paths["json"].write_text(
        json.dumps(
            {"meta": meta, "skipped": skipped, "rows": rows_list},
            indent=1,
            ensure_ascii=False,
            default=str,
        ),
        encoding="utf-8",
    )
    return paths


def history_rows(db: Any, current: str) -> list[dict]:
    """Judge mean and redundancy per configuration for every finished run in the database."""
    out = []
    for run in db.runs():
        rows = Rows(db.results(run["id"]))
        settings = json.loads(run["settings"] or "{}")
        values = {}
        for c in settings.get("configs", []):
            j, r = rows.get(c, "judge.mean"), rows.get(c, "redundancy")
            if j or r:
                values[c] = (
                    (f"{j['value']:.2f}" if j and j["value"] is not None else "–")
                    + " · "
                    + (f"{r['value']:.2f}" if r and r["value"] is not None else "–")
                )
        if values:
            secs = [rows.get("-", f"run.{k}_seconds") for k in ("generate", "judge", "compare")]
            wall = f"{sum(r['value'] for r in secs if r):.0f}" if any(secs) else "–"
            out.append(
                {
                    "run_id": run["id"] + (" (this run)" if run["id"] == current else ""),
                    "started": run["started"],
                    "mode": settings.get("mode", ""),
                    "values": values,
                    "seconds": wall,
                }
            )
    return out
