"""Fit the learned judge (training/judges/learned.py) and measure it on the held-out test split.

::

    mascot-train judge-fit                         # fit on train (+ twins), pick L2 on dev, write
                                                   # assets/judge/learned.json, print dev/test agreement
    mascot-train judge-fit --out /tmp/judge.json   # somewhere else
    mascot-train judge-agreement --set test --judge learned --judge heuristic --judge longer-wins

Training data: the train split of ``assets/judge/preferences.jsonl`` and, for each of its good
replies, automatically made flawed twins whose word count is within ±20% of the good reply's:
another member's reply to the same scenario (wrong voice), a near-copy of an earlier companion
turn or of a reply earlier in the round, the reply rewritten in the user's first person, a line
written as another member ("Theo: ..."), a generic template, and the same persona's reply to a
different scenario, and a restatement of what was already said ("So ..."). The dev split
chooses the L2 strength; the test split is only measured.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from engine.persona_files import load_set
from training.judges.heuristic import HeuristicJudge
from training.judges.learned import (
    FEATURES,
    FeatureMaker,
    LearnedJudge,
    audit_path,
    load_preferences,
    weights_path,
)
from training.judges.rubric import DIMENSIONS, PreferencePair, agreement
from training.scenarios import load_scenarios

# Twin kinds and the MASCOT dimension each one offends.
TWIN_CRITERION = {
    "twin-voice": "persona_consistency",
    "twin-copy": "social_contribution",
    "twin-as-user": "persona_consistency",
    "twin-as-member": "persona_consistency",
    "twin-generic": "empathetic_support",
    "twin-other-scenario": "response_relevance",
    "twin-repeat": "social_contribution",
}
# Generic replies for twins (kept apart from the judge's own anchor sentences in training/judges/learned.py).
TEMPLATES = (
    "Thank you for sharing that with us.",
    "I hear you.",
    "That is a lot to deal with.",
    "It's completely understandable to feel that way.",
    "Everyone goes through things like this sometimes.",
    "Try to be kind to yourself.",
    "Things usually have a way of working out.",
    "Let us know if there is anything we can do.",
    "That's a really good point to raise.",
    "There are many ways to look at this.",
    "It's important to keep an open mind.",
    "I think it could go either way, honestly.",
    "Let's keep that in mind going forward.",
    "Good luck with everything.",
    "Stay positive and keep going.",
    "That sounds like a lot.",
)
_PRONOUNS = [
    (r"\byou're\b", "I'm"),
    (r"\byou've\b", "I've"),
    (r"\byou'd\b", "I'd"),
    (r"\byou'll\b", "I'll"),
    (r"\byourself\b", "myself"),
    (r"\byour\b", "my"),
    (r"\byou\b", "I"),
]


def n_words(text: str) -> int:
    return len(text.split())


def matched(good: str, twin: str) -> bool:
    a, b = n_words(good), n_words(twin)
    return a > 0 and 0.8 <= b / a <= 1.2


def as_user(text: str) -> str:
    """The reply rewritten in the user's first person (you -> I, your -> my)."""
    for pat, rep in _PRONOUNS:
        text = re.sub(
            pat,
            lambda m, rep=rep: rep[0].upper() + rep[1:] if m.group(0)[0].isupper() else rep,
            text,
            flags=re.IGNORECASE,
        )
    return text.replace("I are", "I am").replace("I were", "I was")


def near_copy(text: str, rng: random.Random) -> str:
    """An earlier reply with one small edit (a dropped or duplicated word)."""
    ws = text.split()
    if len(ws) > 4:
        i = rng.randrange(1, len(ws) - 1)
        ws = ws[:i] + ws[i + 1 :] if rng.random() < 0.5 else ws[:i] + [ws[i]] + ws[i:]
    return " ".join(ws)


@dataclass
class Good:
    scenario: str
    persona: str
    text: str
    others: list[dict] = field(default_factory=list)


def make_twins(
    pairs: Sequence[PreferencePair], scenarios: dict[str, Any], seed: int = 0, per_good: int = 4
) -> list[PreferencePair]:
    """Length-matched flawed twins of the good replies in ``pairs`` (see the module docstring)."""
    rng = random.Random(seed)
    goods: dict[tuple[str, str, str], Good] = {}
    for p in pairs:
        goods.setdefault(
            (p.scenario, p.persona, p.better), Good(p.scenario, p.persona, p.better, list(p.others))
        )
    by_scenario: dict[str, list[Good]] = {}
    by_persona: dict[str, list[Good]] = {}
    for g in goods.values():
        by_scenario.setdefault(g.scenario, []).append(g)
        by_persona.setdefault(g.persona, []).append(g)
    out: list[PreferencePair] = []
    for g in goods.values():
        sc = scenarios[g.scenario]
        cands: list[tuple[str, str, list[dict]]] = []
        peers = [q for q in by_scenario[g.scenario] if q.persona != g.persona]
        for q in peers:
            cands.append(("twin-voice", q.text, g.others))
            cands.append(("twin-as-member", f"{q.persona}: {q.text}", g.others))
            # q spoke earlier in this round; g repeats it
            cands.append(
                (
                    "twin-copy",
                    near_copy(q.text, rng),
                    [*g.others, {"speaker": q.persona, "text": q.text}],
                )
            )
        for h in [h for h in sc.history if h.get("speaker") != "User"] + list(g.others):
            cands.append(("twin-copy", near_copy(h["text"], rng), g.others))
        cands.append(("twin-as-user", as_user(g.text), g.others))
        user_text = (
            " ".join(h["text"] for h in sc.history if h.get("speaker") == "User")
            + " "
            + sc.user_message
        )
        cands.append(("twin-as-user", user_text.strip(), g.others))
        # a facilitator who only restates what was said
        said = [sc.user_message, *(h["text"] for h in sc.history), *(o["text"] for o in g.others)]
        for t in said:
            cands.append(("twin-repeat", "So " + t[0].lower() + t[1:], g.others))
        if len(said) > 1:
            cands.append(("twin-repeat", "So far: " + " ".join(said[-2:]), g.others))
        for q in by_persona[g.persona]:
            if q.scenario != g.scenario:
                cands.append(("twin-other-scenario", q.text, g.others))
        for _ in range(6):
            k = rng.randint(2, 4)
            cands.append(("twin-generic", " ".join(rng.sample(TEMPLATES, k)), g.others))
        cands = [c for c in cands if matched(g.text, c[1]) and c[1].strip() != g.text.strip()]
        rng.shuffle(cands)
        seen: dict[str, int] = {}
        for kind, twin, others in cands:
            if seen.get(kind, 0) >= 1 or sum(seen.values()) >= per_good:
                continue
            seen[kind] = seen.get(kind, 0) + 1
            out.append(
                PreferencePair(
                    g.scenario,
                    g.persona,
                    kind,
                    g.text,
                    twin,
                    list(others),
                    TWIN_CRITERION[kind],
                    "twin",
                )
            )
    return out


# -- features and the pairwise logistic fit --------------------------------------------------------

DEFAULT_L2_GRID = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
AUDIT_L2 = 30.0  # fixed for the audit judge: it has no dev split of its own to choose one on


def pair_features(
    pairs: Sequence[PreferencePair],
    maker: FeatureMaker,
    scenarios: dict[str, Any],
    members: dict[tuple[str, str], Any],
) -> tuple[list[list[float]], list[list[float]]]:
    better, worse = [], []
    for p in pairs:
        sc = scenarios[p.scenario]
        persona = members[(sc.group, p.persona)]
        better.append(maker(sc, persona, p.better, p.others or None))
        worse.append(maker(sc, persona, p.worse, p.others or None))
    return better, worse


def fit_head(diffs: Any, weights: Any, l2: float, iters: int = 200) -> Any:
    """Bradley-Terry: minimise sum_i w_i * log(1 + exp(-theta . d_i)) + l2/2 |theta|^2 (Newton)."""
    import numpy as np

    theta = np.zeros(diffs.shape[1])
    for _ in range(iters):
        z = diffs @ theta
        p = 1.0 / (1.0 + np.exp(-z))
        grad = -(diffs * (weights * (1 - p))[:, None]).sum(0) + l2 * theta
        h = (diffs * (weights * p * (1 - p))[:, None]).T @ diffs + l2 * np.eye(len(theta))
        step = np.linalg.solve(h, grad)
        theta -= step
        if np.abs(step).max() < 1e-8:
            break
    return theta


def _agree(u_b: Any, u_w: Any) -> Any:
    import numpy as np

    return np.where(u_b > u_w, 1.0, np.where(u_b == u_w, 0.5, 0.0))


@dataclass
class FitResult:
    mean: list[float]
    std: list[float]
    heads: dict[str, list[float]]
    bias: dict[str, float]
    meta: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "features": list(FEATURES),
            "mean": self.mean,
            "std": self.std,
            "heads": self.heads,
            "bias": self.bias,
            "meta": self.meta,
        }


def scores_1_5(heads: dict[str, Any], bias: dict[str, float], z: Any) -> Any:
    """Mean over the five dimensions of 1 + 4 sigmoid(head . z + bias), one row per reply."""
    import numpy as np

    total = 0.0
    for d in DIMENSIONS:
        total = total + 1.0 + 4.0 / (1.0 + np.exp(-(z @ heads[d] + bias[d])))
    return total / len(DIMENSIONS)


def fit(
    train: Sequence[PreferencePair],
    dev: Sequence[PreferencePair],
    maker: FeatureMaker,
    scenarios: dict[str, Any],
    members: dict[tuple[str, str], Any],
    *,
    seed: int = 0,
    own_weight: float = 1.0,
    other_weight: float = 0.3,
    l2_grid: Sequence[float] = DEFAULT_L2_GRID,
    twins: bool = True,
) -> FitResult:
    import numpy as np

    twin_pairs = make_twins(train, scenarios, seed=seed) if twins else []
    data = list(train) + twin_pairs
    b, w = pair_features(data, maker, scenarios, members)
    db, dw = pair_features(dev, maker, scenarios, members)
    B, W, DB, DW = (np.array(x, dtype=float).reshape(-1, len(FEATURES)) for x in (b, w, db, dw))
    allx = np.vstack([B, W])
    mean, std = allx.mean(0), allx.std(0)
    std[std < 1e-6] = 1.0
    zb, zw, zdb, zdw = ((x - mean) / std for x in (B, W, DB, DW))
    diffs = zb - zw
    crit = np.array([p.criterion for p in data])
    best: tuple[float, float, dict[str, Any]] | None = None
    for l2 in l2_grid:
        heads = {}
        for d in DIMENSIONS:
            sw = np.where(crit == d, own_weight, other_weight)
            heads[d] = fit_head(diffs, sw, l2)
        bias = {d: float(-np.median(np.vstack([zb, zw]) @ heads[d])) for d in DIMENSIONS}
        acc = (
            float(_agree(scores_1_5(heads, bias, zdb), scores_1_5(heads, bias, zdw)).mean())
            if len(dev)
            else 0.0
        )
        if best is None or acc > best[0] + 1e-9:
            best = (acc, l2, {"heads": heads, "bias": bias})
    assert best is not None
    acc, l2, chosen = best
    meta = {
        "train_pairs": len(train),
        "twin_pairs": len(twin_pairs),
        "dev_pairs": len(dev),
        "l2": l2,
        "dev_agreement": round(acc, 4) if len(dev) else None,
        "seed": seed,
        "own_weight": own_weight,
        "other_weight": other_weight,
        "twin_kinds": sorted({p.kind for p in twin_pairs}),
    }
    return FitResult(
        [float(x) for x in mean],
        [float(x) for x in std],
        {d: [round(float(x), 6) for x in chosen["heads"][d]] for d in DIMENSIONS},
        {d: round(float(v), 6) for d, v in chosen["bias"].items()},
        meta,
    )


def context_maps(
    pairs: Sequence[PreferencePair],
) -> tuple[dict[str, Any], dict[tuple[str, str], Any]]:
    scenarios = {s.id: s for s in load_scenarios()}
    members: dict[tuple[str, str], Any] = {}
    for group in {scenarios[p.scenario].group for p in pairs}:
        for m in load_set(group).members:
            members[(group, m.name)] = m
    return scenarios, members


def run(
    out: str | Path | None = None, seed: int = 0, twins: bool = True, audit: bool = False
) -> dict[str, Any]:
    """Fit on train (+ twins), choose L2 on dev, write the weights, and report dev/test agreement.

    ``audit=True`` fits the audit judge instead: the dev split only, no twins, a fixed L2 (nothing
    is left to choose it on), written to assets/judge/audit.json unless ``out`` says otherwise."""
    pairs = load_preferences()
    train = [p for p in pairs if p.split == ("dev" if audit else "train")]
    dev = [] if audit else [p for p in pairs if p.split == "dev"]
    scenarios, members = context_maps(pairs)
    embedder = HeuristicJudge()
    embedder.warm([t for p in pairs for t in (p.better, p.worse)])
    maker = FeatureMaker(embedder.embed)
    result = fit(
        train,
        dev,
        maker,
        scenarios,
        members,
        seed=seed,
        twins=twins and not audit,
        l2_grid=(AUDIT_L2,) if audit else DEFAULT_L2_GRID,
    )
    path = Path(out) if out else audit_path() if audit else weights_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result.to_json(), indent=1) + "\n", encoding="utf-8")
    judge = LearnedJudge(path, embedder=embedder)
    report = {"weights": str(path), **result.meta}
    for split in ("test",) if audit else ("dev", "test"):
        r = agreement(judge, [p for p in pairs if p.split == split])
        report[split] = {k: r[k] for k in ("agreement", "mean_margin", "per_kind", "per_criterion")}
    return report


__all__ = [
    "TWIN_CRITERION",
    "FitResult",
    "as_user",
    "fit",
    "make_twins",
    "matched",
    "near_copy",
    "run",
]
