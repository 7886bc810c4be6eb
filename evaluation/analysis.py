"""From generated rounds, judge scores and comparisons to result rows (mean, 95% CI, n).

The unit of analysis is the scenario: every per-round metric is computed once per (configuration,
scenario) and averaged over scenarios, with a percentile-bootstrap 95% interval (fixed seed).
Metrics that only exist for a whole set of rounds are handled as stated:

* speaking balance: normalised entropy of turns per member over all rounds of a domain; the
  interval bootstraps scenarios within each domain; ``all`` is the mean over domains;
* persona identifiability: leave-one-scenario-out nearest-centroid accuracy over all replies of a
  domain (its group's members as classes); ``all`` pools the domains; Wilson 95% interval over
  replies;
* exemplar identifiability (``identifiability_exemplar``): the same replies attributed by a
  nearest-centroid classifier fitted on the held-out persona exemplars
  (``evaluation.exemplars``), which neither training nor any judge saw; per domain and pooled,
  Wilson interval over replies, chance in ``identifiability_exemplar_chance``;
* per-persona rows average that persona's replies (interval over replies).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Callable, Sequence

import numpy as np

from evaluation import exemplars as X
from evaluation import metrics as M
from evaluation.judging import WeightedJudge, combine, scored_messages
from training.judges.rubric import DIMENSIONS
from training.scenarios import Scenario

ROUND_METRICS = (
    "judge.mean",
    *(f"judge.{d}" for d in DIMENSIONS),
    "distinct_1",
    "distinct_2",
    "redundancy",
    "role_confusion",
    "prompt_echo",
    "bad_reply",
    "director_validity",
    "seconds_per_round",
    "first_reply_seconds",
    "completion_tokens_per_round",
    "prompt_tokens_per_round",
    "prefilled_tokens_per_round",
    "replies_per_round",
)


def round_values(
    record: dict,
    scores: dict[int, dict[str, dict[str, float]]],
    judges: list[WeightedJudge],
    history_speakers: list[str],
    embed: Callable[[list[str]], np.ndarray],
    earlier: Sequence[str] = (),
) -> dict[str, float | None]:
    """Every per-round metric for one (configuration, scenario) round. ``earlier``: the texts
    the companions read before the round (history and the user's message), for ``bad_reply``."""
    msgs = [m for _, m in scored_messages(record)]
    texts = [m["text"] for m in msgs]
    v: dict[str, float | None] = {}
    combined = [combine(scores[i], judges) for i, _ in scored_messages(record) if i in scores]
    for d in DIMENSIONS:
        v[f"judge.{d}"] = float(np.mean([c[d] for c in combined])) if combined else None
    v["judge.mean"] = (
        float(np.mean([np.mean(list(c.values())) for c in combined])) if combined else None
    )
    for w in judges:
        own = [
            scores[i][w.name]
            for i, _ in scored_messages(record)
            if i in scores and w.name in scores[i]
        ]
        v[f"judge[{w.name}].mean"] = (
            float(np.mean([np.mean([s[d] for d in DIMENSIONS]) for s in own])) if own else None
        )
    v["distinct_1"] = M.distinct_n(texts, 1)
    v["distinct_2"] = M.distinct_n(texts, 2)
    v["redundancy"] = M.redundancy(embed(texts)) if len(texts) >= 2 else None
    names = list(dict.fromkeys(list(record["members"]) + history_speakers))
    confused = [
        M.role_confused(
            m["text"],
            m["speaker"],
            [n for n in names if n != m["speaker"]],
            "User",
            bool(m.get("role_confusion")),
        )
        for m in msgs
    ]
    v["role_confusion"] = float(np.mean(confused)) if confused else None
    v["prompt_echo"] = float(np.mean([M.prompt_echo(t) for t in texts])) if texts else None
    before = list(earlier)
    bad = []
    for m in msgs:
        bad.append(M.bad_reply(m["text"], m["speaker"], before))
        before.append(m["text"])
    v["bad_reply"] = float(np.mean(bad)) if bad else None
    v["director_validity"] = M.director_validity(record["directors"])
    v["seconds_per_round"] = record.get("seconds")
    first = record["messages"][0] if record["messages"] else None
    if first is not None and first.get("ttft_ms") is not None:
        before = (record["directors"][0].get("seconds") or 0.0) if record["directors"] else 0.0
        v["first_reply_seconds"] = before + first["ttft_ms"] / 1000.0
    else:
        v["first_reply_seconds"] = None
    for k in ("completion_tokens", "prompt_tokens", "prefilled_tokens"):
        v[f"{k}_per_round"] = float(sum(m.get(k) or 0 for m in record["messages"]))
    v["replies_per_round"] = float(len(msgs))
    return v


BASELINE = "round-robin"


def paired_differences(
    units: dict[tuple[str, str], dict[str, float | None]],
    config_names: list[str],
    scenario_ids: list[str],
    metric_names: list[str],
    ci: Callable[[list[float | None]], tuple],
) -> list[dict]:
    """Rows ``diff_rr:<metric>``: each configuration minus round-robin, per scenario (paired), with a
    bootstrap interval over the scenarios' differences rather than two independent intervals."""
    rows = []
    for c in config_names:
        if c == BASELINE:
            continue
        for metric in metric_names:
            diffs = [
                units[(c, i)][metric] - units[(BASELINE, i)][metric]  # type: ignore[operator]
                for i in scenario_ids
                if (c, i) in units
                and (BASELINE, i) in units
                and units[(c, i)].get(metric) is not None
                and units[(BASELINE, i)].get(metric) is not None
            ]
            stat = ci(diffs)
            if stat[3]:
                rows.append(_row(c, f"diff_rr:{metric}", stat))
    return rows


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float | None, float | None]:
    if n == 0:
        return None, None
    p = hits / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return centre - half, centre + half


def _row(config: str, metric: str, stat: tuple, domain: str = "all", persona: str = "") -> dict:
    mean, lo, hi, n = stat
    return {
        "config": config,
        "metric": metric,
        "domain": domain,
        "persona": persona,
        "value": mean,
        "ci_low": lo,
        "ci_high": hi,
        "n": n,
    }


def analyse(
    config_names: list[str],
    scenarios: list[Scenario],
    records: dict[tuple[str, str], dict],
    scores: dict[tuple[str, str, int], dict],
    judges: list[WeightedJudge],
    embed: Callable[[list[str]], np.ndarray],
    comparison_summary: dict[tuple[str, ...], dict],
    seed: int = 0,
    exemplars: list[X.Exemplar] | None = None,
) -> tuple[list[dict], dict[str, Any]]:
    """Result rows for the database and report, plus per-unit values (for plots and examples).

    ``exemplars``: the held-out persona exemplars (default: ``assets/eval/persona_exemplars.jsonl``)."""
    rows: list[dict] = []
    exemplars = X.load_exemplars() if exemplars is None else exemplars

    def ci(xs: list[float]) -> Any:
        return M.mean_ci(xs, seed=seed)

    units: dict[tuple[str, str], dict[str, float | None]] = {}
    cents: dict[tuple[str, tuple[str, ...]], dict[str, np.ndarray]] = {}
    domains = list(dict.fromkeys(s.domain for s in scenarios))
    for s in scenarios:
        hist = [h["speaker"] for h in s.history if h["speaker"] != "User"]
        for c in config_names:
            rec = records.get((c, s.id))
            if rec is None:
                continue
            per = {
                i: scores[(c, s.id, i)] for i, _ in scored_messages(rec) if (c, s.id, i) in scores
            }
            units[(c, s.id)] = round_values(
                rec, per, judges, hist, embed, [h["text"] for h in s.history] + [s.user_message]
            )
            units[(c, s.id)]["identifiability_exemplar"] = _round_exemplar_rate(
                rec, s, embed, exemplars, cents
            )
    metric_names = (
        list(ROUND_METRICS)
        + ["identifiability_exemplar"]
        + [f"judge[{w.name}].mean" for w in judges]
    )
    for c in config_names:
        for dom in ["all", *domains]:
            ids = [s.id for s in scenarios if dom in ("all", s.domain)]
            for metric in metric_names:
                vals = [units[(c, i)].get(metric) for i in ids if (c, i) in units]
                stat = ci(vals)
                if stat[3]:
                    rows.append(_row(c, metric, stat, dom))
            jm = [units[(c, i)].get("judge.mean") for i in ids if (c, i) in units]
            stat = ci([M.to_100(x) for x in jm if x is not None])
            if stat[3]:
                rows.append(_row(c, "judge.mean_100", stat, dom))
        rows.extend(_group_rows(c, scenarios, records, scores, judges, embed, seed, exemplars))
    if BASELINE in config_names:
        rows.extend(
            paired_differences(units, config_names, [s.id for s in scenarios], metric_names, ci)
        )
    for w in judges:  # a judge that gives every reply the same score cannot rank anything
        means = [
            float(np.mean([per[w.name][d] for d in DIMENSIONS]))
            for per in scores.values()
            if w.name in per
        ]
        if means:
            rows.append(
                _row("-", f"judge[{w.name}].spread", (float(np.std(means)), None, None, len(means)))
            )
    for group, summ in comparison_summary.items():
        name = "compare:" + "/".join(group)
        for c, shares in summ["share"].items():
            rows.append(_row(c, name + ":share", ci(shares)))
        if summ["first_slot_rate"] is not None:
            rows.append(
                _row(
                    "-",
                    name + ":first_slot_rate",
                    (summ["first_slot_rate"], None, None, summ["scenarios"]),
                )
            )
            rows.append(
                _row("-", name + ":consistent", (summ["consistent"], None, None, summ["scenarios"]))
            )
    return rows, {"units": units}


def _round_exemplar_rate(
    record: dict,
    scenario: Scenario,
    embed: Callable[[list[str]], np.ndarray],
    exemplars: list[X.Exemplar],
    cache: dict,
) -> float | None:
    """One round's share of replies whose nearest held-out exemplar centroid is their speaker's
    (the per-scenario unit of ``identifiability_exemplar``, so it gets paired intervals)."""
    msgs = [m for _, m in scored_messages(record)]
    members = tuple(record.get("members") or ())
    if len(members) < 2 or not msgs:
        return None
    key = (scenario.group, members)
    if key not in cache:
        cache[key] = X.fit(embed, scenario.group, members, exemplars)
    if len(cache[key]) < 2:
        return None
    ident = M.identifiability_exemplar(
        embed([m["text"] for m in msgs]), [m["speaker"] for m in msgs], cache[key]
    )
    return ident["accuracy"]


def _group_rows(
    c: str,
    scenarios: list[Scenario],
    records: dict[tuple[str, str], dict],
    scores: dict[tuple[str, str, int], dict],
    judges: list[WeightedJudge],
    embed: Callable[[list[str]], np.ndarray],
    seed: int,
    exemplars: list[X.Exemplar] | None = None,
) -> list[dict]:
    """Balance, identifiability (both kinds) and per-persona rows for one configuration."""
    rows: list[dict] = []
    by_dom: dict[str, list[Scenario]] = defaultdict(list)
    for s in scenarios:
        if (c, s.id) in records:
            by_dom[s.domain].append(s)
    balances: dict[str, float] = {}
    boot: dict[str, np.ndarray] = {}
    all_hits = all_n = 0
    ex_hits = ex_n = 0
    ex_chance: list[tuple[float, int]] = []
    for dom, scs in by_dom.items():
        recs = [records[(c, s.id)] for s in scs]
        members = recs[0]["members"]
        speakers_per = [[m["speaker"] for _, m in scored_messages(r)] for r in recs]
        if len(members) > 1:
            b = M.speaking_balance([x for sp in speakers_per for x in sp], members)
            if b is not None:
                rng = np.random.default_rng(seed)
                samples = []
                for _ in range(1000):
                    pick = rng.integers(0, len(recs), size=len(recs))
                    samples.append(
                        M.speaking_balance([x for j in pick for x in speakers_per[j]], members)
                        or 0.0
                    )
                balances[dom] = b
                boot[dom] = np.asarray(samples)
                lo, hi = np.quantile(samples, [0.025, 0.975])
                rows.append(_row(c, "balance", (b, float(lo), float(hi), len(recs)), dom))
                counts = defaultdict(int)
                for sp in speakers_per:
                    for x in sp:
                        counts[x] += 1
                total = sum(counts.values())
                for m in members:
                    rows.append(
                        _row(
                            c,
                            "share",
                            (counts[m] / total if total else 0.0, None, None, total),
                            dom,
                            m,
                        )
                    )
        # identifiability over this domain's replies
        msgs = [(s.id, m) for s, r in zip(scs, recs) for _, m in scored_messages(r)]
        if len(members) > 1 and msgs:
            ident = M.identifiability(
                embed([m["text"] for _, m in msgs]),
                [m["speaker"] for _, m in msgs],
                groups=[sid for sid, _ in msgs],
            )
            if ident["accuracy"] is not None:
                hits = round(ident["accuracy"] * ident["n"])
                all_hits += hits
                all_n += ident["n"]
                rows.append(
                    _row(
                        c,
                        "identifiability",
                        (ident["accuracy"], *wilson(hits, ident["n"]), ident["n"]),
                        dom,
                    )
                )
                rows.append(
                    _row(
                        c, "identifiability_chance", (ident["chance"], None, None, ident["n"]), dom
                    )
                )
                for p, recall in ident["per_label"].items():
                    rows.append(_row(c, "identifiability", (recall, None, None, None), dom, p))
        # the same replies against centroids of held-out exemplars (never a training signal)
        cents = (
            X.fit(embed, scs[0].group, members, exemplars or [])
            if len(members) > 1 and msgs
            else {}
        )
        if len(cents) > 1:
            ident = M.identifiability_exemplar(
                embed([m["text"] for _, m in msgs]), [m["speaker"] for _, m in msgs], cents
            )
            if ident["accuracy"] is not None:
                hits = round(ident["accuracy"] * ident["n"])
                ex_hits += hits
                ex_n += ident["n"]
                ex_chance.append((ident["chance"], ident["n"]))
                rows.append(
                    _row(
                        c,
                        "identifiability_exemplar",
                        (ident["accuracy"], *wilson(hits, ident["n"]), ident["n"]),
                        dom,
                    )
                )
                rows.append(
                    _row(
                        c,
                        "identifiability_exemplar_chance",
                        (ident["chance"], None, None, ident["n"]),
                        dom,
                    )
                )
                for p, recall in ident["per_label"].items():
                    rows.append(
                        _row(c, "identifiability_exemplar", (recall, None, None, None), dom, p)
                    )
        # per persona judge scores
        per_p: dict[str, list[dict[str, float]]] = defaultdict(list)
        for s, r in zip(scs, recs):
            for i, m in scored_messages(r):
                if (c, s.id, i) in scores:
                    per_p[m["speaker"]].append(combine(scores[(c, s.id, i)], judges))
        for p, vals in per_p.items():
            for d in DIMENSIONS:
                rows.append(
                    _row(c, f"judge.{d}", M.mean_ci([v[d] for v in vals], seed=seed), dom, p)
                )
            rows.append(
                _row(
                    c,
                    "judge.mean",
                    M.mean_ci([float(np.mean(list(v.values()))) for v in vals], seed=seed),
                    dom,
                    p,
                )
            )
    if balances:
        mean_b = float(np.mean(list(balances.values())))
        stacked = np.mean(np.stack(list(boot.values())), axis=0)
        lo, hi = np.quantile(stacked, [0.025, 0.975])
        rows.append(
            _row(c, "balance", (mean_b, float(lo), float(hi), sum(len(v) for v in by_dom.values())))
        )
    if all_n:
        rows.append(_row(c, "identifiability", (all_hits / all_n, *wilson(all_hits, all_n), all_n)))
    if ex_n:
        rows.append(
            _row(c, "identifiability_exemplar", (ex_hits / ex_n, *wilson(ex_hits, ex_n), ex_n))
        )
        chance = (
            sum(ch * n for ch, n in ex_chance) / ex_n
        )  # replies-weighted, as the pooled accuracy
        rows.append(_row(c, "identifiability_exemplar_chance", (chance, None, None, ex_n)))
    return rows
