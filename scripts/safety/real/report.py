"""The report on real messages: confusion per source against a reference level (the source's own
labels through a rough map, or the annotators' levels once they exist), the issue's rates,
latency, the thresholds' trade-off curve, and the annotators' agreement."""

from __future__ import annotations

import csv
import json
import random
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine import safety
from engine.safety import learned
from engine.safety.result import LEVELS

from . import batches as bt
from . import screening as sc
from . import sources as src

RANK = {lv: i for i, lv in enumerate(LEVELS)}
LONG_POST = 500  # words: the latency of the longest posts is reported apart


class LabelsError(Exception):
    """An annotator's file is not readable; the message names the file and line."""


def _pct(hits: int, total: int) -> str:
    return f"{hits}/{total} ({100 * hits / total:.1f}%)" if total else "-"


def _at_least(level: str, floor: str) -> bool:
    return RANK[level] >= RANK[floor]


# ---------------------------------------------------------------------------------------------
# Reference levels


def read_labels(root: Path) -> dict[str, dict[str, str]]:
    """Annotator -> batch id -> level, from ``root/annotation/labels/<annotator>/*.jsonl|csv``."""
    base = root / "annotation" / "labels"
    out: dict[str, dict[str, str]] = {}
    if not base.is_dir():
        return out
    for person in sorted(p for p in base.iterdir() if p.is_dir()):
        levels: dict[str, str] = {}
        for path in sorted(person.iterdir()):
            if path.suffix == ".jsonl":
                with open(path, encoding="utf-8") as f:
                    items = []
                    for n, line in enumerate(f, 1):
                        if not line.strip():
                            continue
                        try:
                            items.append((n, json.loads(line)))
                        except json.JSONDecodeError:
                            raise LabelsError(
                                f"{path}:{n}: not a JSON object; write one "
                                '{"id": ..., "level": ...} per line'
                            ) from None
            elif path.suffix == ".csv":
                with open(path, newline="", encoding="utf-8") as f:
                    items = list(enumerate(csv.DictReader(f), 2))
            else:
                continue
            for n, d in items:
                level = str(d.get("level", "")).strip().lower() if isinstance(d, dict) else ""
                if level not in LEVELS or not d.get("id"):
                    raise LabelsError(
                        f"{path}:{n}: needs an id and a level among {', '.join(LEVELS)}"
                    )
                levels[str(d["id"])] = level
        if levels:
            out[person.name] = levels
    return out


@dataclass(frozen=True)
class Reference:
    """The level each row is measured against, and what it is called in the report."""

    name: str
    level: Callable[[src.Row], str | None]


def rough_map() -> Reference:
    return Reference(
        "the source's labels, roughly mapped (docs/safety-realdata.md)",
        lambda r: src.mapped_level(src.SOURCES[r.source], r.source_label),
    )


def annotator(root: Path, person: str, labels: dict[str, str]) -> Reference:
    key = bt.read_key(root)
    by_row = {key[i]["row"]: lv for i, lv in labels.items() if i in key}
    return Reference(f"annotator {person}", lambda r: by_row.get(r.id))


def consensus(root: Path, labels: dict[str, dict[str, str]]) -> Reference:
    """The level of the messages the first two annotators gave the same level (others left out)."""
    (p1, l1), (p2, l2) = list(labels.items())[:2]
    agreed = {i: lv for i, lv in l1.items() if l2.get(i) == lv}
    ref = annotator(root, f"{p1} and {p2} where they agree", agreed)
    return Reference(f"{p1} and {p2} where they agree", ref.level)


# ---------------------------------------------------------------------------------------------
# Tables


def confusion(rows: list[src.Row], verdicts: dict[str, sc.Verdict], label_of) -> str:
    """Rows: ``label_of(row)`` (a source label or a reference level); columns: the screen."""
    table: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        table[label_of(r)][verdicts[r.id].level] += 1
    head = "| label | n | " + " | ".join(LEVELS) + " |"
    lines = [head, "|---|---:|" + "---:|" * len(LEVELS)]
    order = [lv for lv in LEVELS if lv in table] + sorted(k for k in table if k not in LEVELS)
    for label in order:
        c = table[label]
        lines.append(
            f"| {label} | {sum(c.values())} | " + " | ".join(str(c[lv]) for lv in LEVELS) + " |"
        )
    return "\n".join(lines)


@dataclass
class Rates:
    urgent: tuple[int, int] = (0, 0)  # reference >= urgent flagged >= urgent
    emergency: tuple[int, int] = (0, 0)  # reference emergency flagged emergency
    concern: tuple[int, int] = (0, 0)  # reference >= concern flagged at all
    false_any: tuple[int, int] = (0, 0)  # reference none flagged at all
    false_urgent: tuple[int, int] = (0, 0)  # reference none flagged >= urgent
    precision_urgent: tuple[int, int] = (0, 0)  # flagged >= urgent whose reference is >= urgent


def rates(pairs: list[tuple[str, str]]) -> Rates:
    """The issue's rates over (reference, screen) pairs."""

    def count(keep, hit) -> tuple[int, int]:
        chosen = [(ref, got) for ref, got in pairs if keep(ref, got)]
        return sum(hit(ref, got) for ref, got in chosen), len(chosen)

    urgent_refs = any(_at_least(ref, "urgent") for ref, _ in pairs)
    return Rates(
        count(lambda ref, _: _at_least(ref, "urgent"), lambda _, got: _at_least(got, "urgent")),
        count(lambda ref, _: ref == "emergency", lambda _, got: got == "emergency"),
        count(lambda ref, _: _at_least(ref, "concern"), lambda _, got: got != "none"),
        count(lambda ref, _: ref == "none", lambda _, got: got != "none"),
        count(lambda ref, _: ref == "none", lambda _, got: _at_least(got, "urgent")),
        # precision means nothing where the reference has no urgent level at all
        count(
            lambda _, got: urgent_refs and _at_least(got, "urgent"),
            lambda ref, _: _at_least(ref, "urgent"),
        ),
    )


RATE_HEAD = (
    "| source | n | >= urgent flagged >= urgent | emergency recognised | >= concern flagged "
    "| none flagged | none flagged >= urgent | precision of >= urgent |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|"
)


def rate_row(name: str, pairs: list[tuple[str, str]]) -> str:
    r = rates(pairs)
    cells = (r.urgent, r.emergency, r.concern, r.false_any, r.false_urgent, r.precision_urgent)
    return f"| {name} | {len(pairs)} | " + " | ".join(_pct(*c) for c in cells) + " |"


def per_group(rows: list[src.Row], verdicts: dict[str, sc.Verdict], complete: set[str]) -> str:
    """The C-SSRS set's labels are a user's: each user's label against the highest level the
    screen gave any of the user's posts (users with all their posts in ``rows`` only)."""
    users: dict[str, tuple[str, str]] = {}
    for r in rows:
        if r.group not in complete:
            continue
        lv = verdicts[r.id].level
        label, best = users.get(r.group, (r.source_label, "none"))
        users[r.group] = (label, lv if RANK[lv] > RANK[best] else best)
    table: dict[str, Counter] = defaultdict(Counter)
    for label, best in users.values():
        table[label][best] += 1
    lines = ["| user's label | users | " + " | ".join(LEVELS) + " |", "|---|---:|" + "---:|" * 4]
    for label in ("Supportive", "Indicator", "Ideation", "Behavior", "Attempt"):
        c = table.get(label)
        if c:
            lines.append(
                f"| {label} | {sum(c.values())} | " + " | ".join(str(c[lv]) for lv in LEVELS) + " |"
            )
    return "\n".join(lines)


def latency(rows: list[src.Row], verdicts: dict[str, sc.Verdict], layer_on: bool = True) -> str:
    lines = ["| messages | n | median words | p50 ms | p95 ms | max ms | not read by the layer |"]
    lines.append("|---|---:|---:|---:|---:|---:|---:|")
    groups = {"all": rows, f">= {LONG_POST} words": []}
    groups[f">= {LONG_POST} words"] = [r for r in rows if verdicts[r.id].words >= LONG_POST]
    for name, group in groups.items():
        if not group:
            continue
        vs = [verdicts[r.id] for r in group]
        ms = sorted(v.ms for v in vs)
        p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
        unread = sum(v.z is None and v.rules_level != "emergency" for v in vs)
        words = statistics.median(v.words for v in vs)
        lines.append(
            f"| {name} | {len(vs)} | {words:.0f} | {statistics.median(ms):.0f} | {p95:.0f} "
            f"| {ms[-1]:.0f} | {_pct(unread, len(vs)) if layer_on else '-'} |"
        )
    return "\n".join(lines)


HIGH_SHIFTS = (-1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0)
RISK_SHIFTS = (-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 4.0)
EMER_SHIFTS = (-1.0, -0.5, 0.0, 0.5, 1.0, 2.0)


def curve(rows: list[src.Row], verdicts: dict[str, sc.Verdict], ref: Reference) -> tuple[str, int]:
    """The trade-off of each level's threshold (recall against false alarms) and the number of
    messages where the curve's model of the screen (``level_at`` at the shipped thresholds)
    differs from the screen."""
    heads = learned.classifier()
    if heads is None:
        return "The learned layer is off: no thresholds to trade.", 0
    scored = [(r, verdicts[r.id], ref.level(r)) for r in rows if ref.level(r) is not None]
    mismatch = sum(sc.level_at(v, heads) != v.level for _, v, _ in scored)
    kinds = [(v, lv, src.SOURCES[r.source].kind) for r, v, lv in scored]
    out = []

    def table(title: str, shifts, make, floor: str) -> None:
        out.append(f"**{title}**\n")
        out.append(
            f"| shift | reference >= {floor} flagged >= {floor} "
            f"| reference none flagged >= {floor}: risk sources | ...: everyday sources "
            f"| precision of >= {floor} |"
        )
        out.append("|---:|---:|---:|---:|---:|")
        for d in shifts:
            shift = make(d)
            got = [(sc.level_at(v, heads, shift), lv, kind) for v, lv, kind in kinds]
            hit = [(_at_least(g, floor), lv, kind) for g, lv, kind in got]
            rec = (
                sum(h for h, lv, _ in hit if _at_least(lv, floor)),
                sum(_at_least(lv, floor) for _, lv, _ in hit),
            )
            fa = {
                k: (
                    sum(h for h, lv, kind in hit if lv == "none" and kind == k),
                    sum(lv == "none" and kind == k for _, lv, kind in hit),
                )
                for k in ("risk", "everyday")
            }
            flagged = [lv for h, lv, _ in hit if h] if rec[1] else []
            prec = (sum(_at_least(lv, floor) for lv in flagged), len(flagged))
            mark = " (shipped)" if d == 0 and not shift.cap else ""
            out.append(
                f"| {d:+.1f}{mark} | {_pct(*rec)} | {_pct(*fa['risk'])} | {_pct(*fa['everyday'])} "
                f"| {_pct(*prec)} |"
            )
        out.append("")

    table(
        "urgent: `high` and `jump` moved together",
        HIGH_SHIFTS,
        lambda d: sc.Shift(high=d),
        "urgent",
    )
    table(
        "urgent, with the learned layer alone capped at concern (the rules' urgent kept)",
        (0.0,),
        lambda d: sc.Shift(high=d, cap=True),
        "urgent",
    )
    table("concern: `risk` moved", RISK_SHIFTS, lambda d: sc.Shift(risk=d), "concern")
    table("emergency: `emer` moved", EMER_SHIFTS, lambda d: sc.Shift(emer=d), "emergency")
    return "\n".join(out), mismatch


# ---------------------------------------------------------------------------------------------
# The whole report


def subset(rows: list[src.Row], limit: int, keep: set[str], name: str) -> list[src.Row]:
    """At most ``limit`` rows (0: all): the ``keep`` rows (the annotated ones), then whole groups
    (a user's posts, a conversation's turns) in a seeded order; in the file's order."""
    if not limit or len(rows) <= limit:
        return rows
    groups: dict[str, list[src.Row]] = defaultdict(list)
    for r in rows:
        groups[r.group or r.id].append(r)
    order = sorted(groups)
    random.Random(f"measure:{name}").shuffle(order)
    picked = {r.id for r in rows if r.id in keep}
    for g in order:
        if len(picked) >= limit:
            break
        picked.update(r.id for r in groups[g])
    return [r for r in rows if r.id in picked]


def measure(
    root: Path,
    names: list[str],
    limits: dict[str, int] | None = None,
    with_curve: bool = False,
    use_learned: bool = True,
    cached_only: bool = False,
) -> str:
    labels = read_labels(root)
    key = bt.read_key(root)
    annotated = {k["row"] for k in key.values()}
    rows: list[src.Row] = []
    size: Counter = Counter()  # rows per group (a user, a conversation) in the whole source
    for name in names:
        every = src.load(name, root)
        size.update(r.group for r in every)
        limit = (limits or {}).get(name, (limits or {}).get("", 0))
        rows += subset(every, limit, annotated, name)
    verdicts = sc.screen_rows(rows, root / "cache", use_learned, cached_only)
    rows = [r for r in rows if r.id in verdicts]
    # the groups with every row measured
    complete = {g for g, n in Counter(r.group for r in rows).items() if n == size[g]}
    layer = "rules + learned layer" if use_learned and safety.learned_available() else "rules only"
    out = [
        f"# The crisis screen on real messages ({layer}; screen {sc.fingerprint(use_learned)})",
        "",
    ]
    refs = [rough_map()] + [annotator(root, p, lv) for p, lv in labels.items()]
    if len(labels) >= 2:
        refs.append(consensus(root, labels))
    by_source: dict[str, list[src.Row]] = defaultdict(list)
    for r in rows:
        by_source[r.source].append(r)
    for name, group in by_source.items():
        s = src.SOURCES[name]
        out += [f"## {name}: {s.title}", "", f"{len(group)} messages; licence: {s.licence}.", ""]
        out += [
            "Source label against the screen's level:",
            "",
            confusion(group, verdicts, lambda r: r.source_label),
            "",
        ]
        if name == "cssrs_reddit":
            users = len({r.group for r in group if r.group in complete})
            out += [
                "Per user (the labels are a user's; the highest level over the user's posts; "
                f"{users} users with all their posts measured):",
                "",
                per_group(group, verdicts, complete),
                "",
            ]
        for ref in refs[1:]:
            scored = [r for r in group if ref.level(r) is not None]
            if scored:
                out += [f"{ref.name} against the screen ({len(scored)} messages):", ""]
                out += [confusion(scored, verdicts, ref.level), ""]
        out += [
            "Latency (this machine, `nice -n 19`, shared cores):",
            "",
            latency(group, verdicts, use_learned and safety.learned_available()),
            "",
        ]
    for ref in refs:
        out += [f"## Rates against {ref.name}", "", RATE_HEAD]
        everyday_pairs = []
        for name, group in by_source.items():
            pairs = [
                (ref.level(r), verdicts[r.id].level) for r in group if ref.level(r) is not None
            ]
            if pairs:
                out.append(rate_row(name, pairs))
            if src.SOURCES[name].kind == "everyday":
                everyday_pairs += pairs
        allp = [(ref.level(r), verdicts[r.id].level) for r in rows if ref.level(r) is not None]
        out.append(rate_row("**all**", allp))
        if everyday_pairs:
            out.append(rate_row("everyday sources", everyday_pairs))
        out.append("")
    if with_curve:
        for ref in refs:
            text, mismatch = curve(rows, verdicts, ref)
            out += [f"## Trade-off curve against {ref.name}", ""]
            out += [
                f"The curve's model of the screen differs from `assess` on {mismatch} messages "
                "(0 means the curve is exact).",
                "",
                text,
            ]
    return "\n".join(out)


def kappa(a: list[str], b: list[str]) -> float:
    """Cohen's kappa of two annotators' labels (1: full agreement, 0: chance)."""
    n = len(a)
    if not n:
        return float("nan")
    po = sum(x == y for x, y in zip(a, b)) / n
    ca, cb = Counter(a), Counter(b)
    pe = sum(ca[k] * cb[k] for k in set(ca) | set(cb)) / (n * n)
    return 1.0 if pe == 1 else (po - pe) / (1 - pe)


def agreement(root: Path) -> str:
    labels = read_labels(root)
    if len(labels) < 2:
        raise LabelsError(
            f"agreement needs two annotators' labels under {root / 'annotation' / 'labels'}/<name>/ "
            f"({len(labels)} found); see the brief, {root / 'annotation' / 'BRIEF.md'}"
        )
    (p1, l1), (p2, l2) = list(labels.items())[:2]
    key = bt.read_key(root)
    common = sorted(set(l1) & set(l2))
    out = [f"# Agreement: {p1} and {p2}, {len(common)} messages labelled by both", ""]
    out += [
        "| source | n | same level | kappa (4 levels) | kappa (>= urgent) | kappa (>= concern) |"
    ]
    out += ["|---|---:|---:|---:|---:|---:|"]
    groups: dict[str, list[str]] = defaultdict(list)
    for i in common:
        groups[key.get(i, {}).get("source", "?")].append(i)
    groups["**all**"] = common
    for name, ids in groups.items():
        a, b = [l1[i] for i in ids], [l2[i] for i in ids]
        same = sum(x == y for x, y in zip(a, b))
        k4 = kappa(a, b)
        ku = kappa([_at_least(x, "urgent") for x in a], [_at_least(y, "urgent") for y in b])
        kc = kappa([x != "none" for x in a], [y != "none" for y in b])
        out.append(
            f"| {name} | {len(ids)} | {_pct(same, len(ids))} | {k4:.2f} | {ku:.2f} | {kc:.2f} |"
        )
    c = Counter((l1[i], l2[i]) for i in common)
    out += ["", f"{p1} (rows) against {p2} (columns):", "", "| | " + " | ".join(LEVELS) + " |"]
    out += ["|---|" + "---:|" * 4]
    for x in LEVELS:
        out.append(f"| {x} | " + " | ".join(str(c[(x, y)]) for y in LEVELS) + " |")
    return "\n".join(out)
