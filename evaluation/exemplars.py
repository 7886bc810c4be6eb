"""Persona identifiability against held-out exemplars: a signal no training step ever optimised.

``assets/eval/persona_exemplars.jsonl`` holds 16 lines in the voice of each of the 12 bundled
personas, written for evaluation only (6 Dec 2026): the same 16 invented situations for the four
members of a group, none of them a scenario of ``assets/scenarios``, no line copied from a persona
card's ``example_lines`` or from the judge's preference pairs (docs/eval.md gives the overlap).
Neither training (persona RLAIF, the Director's rewards) nor the learned judges read this file;
``tests/test_exemplars.py`` checks that no module outside ``evaluation/`` names it.

The classifier is a nearest centroid over all-MiniLM-L6-v2 embeddings: one centroid per member,
the mean of that member's exemplars; a reply is attributed to the member whose centroid is the
most similar (cosine). ``identifiability_exemplar`` in the report is the share of replies
attributed to the companion who actually wrote them (chance: one over the group's size).

Validate it with ``python -m evaluation.exemplars``: leave-one-situation-out accuracy on the
exemplars themselves, and the persona-drift check on the judge's preference pairs (the chosen
reply keeps the persona's voice, the rejected one drifts towards another voice; the classifier
should name the intended persona for the chosen reply far more often than for the rejected one).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from engine.paths import assets_dir
from engine.persona_files import load_set
from evaluation import metrics as M
from evaluation.embed import Embedder
from training.judges.learned import load_preferences


@dataclass(frozen=True)
class Exemplar:
    group: str  # persona set: support, workplace, writers-room
    situation_id: str  # the four members of a group each have one line per situation
    situation: str
    persona: str
    text: str


def exemplars_path() -> Path:
    return assets_dir() / "eval" / "persona_exemplars.jsonl"


def load_exemplars(group: str | None = None, path: str | Path | None = None) -> list[Exemplar]:
    """The held-out exemplars (all groups, or one persona set's)."""
    out = []
    for line in Path(path or exemplars_path()).read_text(encoding="utf-8").splitlines():
        if line.strip():
            e = Exemplar(**json.loads(line))
            if group is None or e.group == group:
                out.append(e)
    return out


def centroids(vectors: np.ndarray, labels: Sequence[str]) -> dict[str, np.ndarray]:
    """One unit-length centroid per label: the mean of that label's (normalised) vectors."""
    v = M.unit_rows(vectors)
    out = {}
    for c in sorted(set(labels)):
        m = v[[i for i, lab in enumerate(labels) if lab == c]].mean(axis=0)
        out[c] = m / (np.linalg.norm(m) or 1.0)
    return out


def fit(
    embed: Callable[[list[str]], np.ndarray],
    group: str,
    members: Sequence[str] | None = None,
    exemplars: Sequence[Exemplar] | None = None,
) -> dict[str, np.ndarray]:
    """Centroids for one persona set's members (those with exemplars; ``members`` narrows them)."""
    rows = [
        e
        for e in (exemplars if exemplars is not None else load_exemplars(group))
        if e.group == group
    ]
    if members is not None:
        keep = set(members)
        rows = [e for e in rows if e.persona in keep]
    if not rows:
        return {}
    return centroids(embed([e.text for e in rows]), [e.persona for e in rows])


# -- validation ---------------------------------------------------------------------------------


def validate(
    embed: Callable[[list[str]], np.ndarray],
    exemplars: Sequence[Exemplar] | None = None,
    pairs: Sequence | None = None,
) -> dict[str, dict]:
    """Per group: cross-validated accuracy on the exemplars and the persona-drift check.

    ``loso``: leave-one-situation-out (the held-out line's situation is dropped from every
    centroid, so a topic the four members share does not count); ``loo``: leave-one-line-out
    (the other members' lines on the same situation stay in, which pulls towards topic).
    ``card_lines_on_exemplars``: how often centroids of the cards' own example lines name the
    exemplar's persona (the exemplars should speak in the voices the cards define).
    ``drift``: over the preference pairs with flaw ``persona-drift`` for the group's members,
    how often the intended persona is predicted for the chosen and for the rejected reply, and
    how often the chosen reply's margin (own centroid minus the best other) is the larger."""
    ex = list(exemplars if exemplars is not None else load_exemplars())
    if pairs is None:
        pairs = load_preferences()
    out: dict[str, dict] = {}
    for group in sorted({e.group for e in ex}):
        rows = [e for e in ex if e.group == group]
        vecs = embed([e.text for e in rows])
        labels = [e.persona for e in rows]
        loso = M.identifiability(vecs, labels, groups=[e.situation_id for e in rows])
        loo = M.identifiability(vecs, labels)
        cents = centroids(vecs, labels)
        res = {
            "exemplars": len(rows),
            "members": sorted(cents),
            "chance": 1.0 / len(cents),
            "loso": loso["accuracy"],
            "loso_per_persona": loso["per_label"],
            "loo": loo["accuracy"],
        }
        # cross-check that the exemplars speak in the voices the cards define: centroids of each
        # card's three example lines (what the learned judge compares with) name the exemplar's persona
        members = load_set(group).members
        card = centroids(
            embed([x for m in members for x in m.example_lines]),
            [m.name for m in members for _ in m.example_lines],
        )
        res["card_lines_on_exemplars"] = M.identifiability_exemplar(vecs, labels, card)["accuracy"]
        for flaw in ("persona-drift", "as-member", "copy", "generic"):
            sel = [p for p in pairs if p.kind == flaw and p.persona in cents]
            if not sel:
                continue
            chosen = M.exemplar_scores(
                embed([p.better for p in sel]), [p.persona for p in sel], cents
            )
            rejected = M.exemplar_scores(
                embed([p.worse for p in sel]), [p.persona for p in sel], cents
            )
            res[flaw] = {
                "pairs": len(sel),
                "chosen_identified": float(np.mean([c["hit"] for c in chosen])),
                "rejected_identified": float(np.mean([r["hit"] for r in rejected])),
                "chosen_margin_larger": float(
                    np.mean([c["margin"] > r["margin"] for c, r in zip(chosen, rejected)])
                ),
            }
        out[group] = res
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m evaluation.exemplars [--json PATH]``: print the validation numbers."""
    argv = list(sys.argv[1:] if argv is None else argv)
    res = validate(Embedder())
    for group, r in res.items():
        print(
            f"{group}: {r['exemplars']} exemplars, chance {r['chance']:.2f}; leave-one-situation-out "
            f"{r['loso']:.3f} ({', '.join(f'{k} {v:.2f}' for k, v in r['loso_per_persona'].items())}); "
            f"leave-one-line-out {r['loo']:.3f}; card-line centroids on the exemplars "
            f"{r['card_lines_on_exemplars']:.3f}"
        )
        for flaw in ("persona-drift", "as-member", "copy", "generic"):
            if flaw in r:
                d = r[flaw]
                print(
                    f"  {flaw} ({d['pairs']} pairs): intended persona named for chosen "
                    f"{d['chosen_identified']:.2f}, for rejected {d['rejected_identified']:.2f}; "
                    f"chosen margin larger {d['chosen_margin_larger']:.2f}"
                )
    if argv[:1] == ["--json"] and len(argv) > 1:
        Path(argv[1]).write_text(json.dumps(res, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
