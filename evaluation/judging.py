"""Judge scores for every generated reply, through ``training.judges.rubric`` (the interface training uses).

Several judges are averaged when available: each ``--judge`` spec is one judge of weight 1. The
default is ``learned`` (training's teacher) and ``audit`` (a learned judge fitted on a disjoint
split, never a training reward), see ``DEFAULT_JUDGES``; the report shows each judge's own scores
beside the average. ``combined`` expands to its parts (the bundled model as a ``local`` judge and
the ``heuristic`` judge, weighted as in ``training.judges.rubric.DEFAULT_WEIGHTS``). Scores
are cached per (judge, scenario,
persona, reply, other replies of the round) in the results database.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from engine.errors import InputError
from engine.personas import Persona, PersonaSet
from evaluation.configs import EvalConfig
from evaluation.db import ResultsDB, code_fingerprint, digest
from training.judges import heuristic as heuristic_judge
from training.judges import llm as llm_judges
from training.judges import rubric as engine_judge
from training.judges.factory import make_judge as make_teacher
from training.judges.heuristic import HeuristicJudge
from training.judges.learned import LearnedJudge
from training.judges.llm import LocalJudge
from training.judges.rubric import DEFAULT_WEIGHTS, DIMENSIONS
from training.scenarios import Scenario

# mascot-eval's judges when none is given: the teacher and the judge no training used.
DEFAULT_JUDGES = ("learned", "audit")


@dataclass
class WeightedJudge:
    judge: Any
    weight: float

    @property
    def name(self) -> str:
        return self.judge.name


def build_judges(specs: list[str], backend_for: Callable[[str | None], Any]) -> list[WeightedJudge]:
    """Judges for the given specs. Local GGUF judges share the run's llama.cpp runtimes (one
    loaded copy of each file); ``combined`` is split into its weighted parts."""
    out: list[WeightedJudge] = []

    def add(spec: str, weight: float) -> None:
        spec = spec.strip()
        if spec == "combined":
            add("local", DEFAULT_WEIGHTS["local"] * weight)
            add("heuristic", DEFAULT_WEIGHTS["heuristic"] * weight)
            return
        if spec.startswith("combined:"):
            parts = [s for s in spec[len("combined:") :].split("+") if s]
            for s in parts:
                add(s, weight / len(parts))
            return
        if spec == "local":
            judge: Any = LocalJudge(runtime=backend_for(None))
        elif spec.startswith("local:"):
            path = Path(spec[len("local:") :]).expanduser()
            if not path.is_file():
                raise InputError(
                    f"Judge model '{path}' does not exist; give the path of a .gguf file."
                )
            judge = LocalJudge(path, runtime=backend_for(str(path)))
        elif spec == "heuristic":
            judge = _heuristic()
        elif spec in ("learned", "audit") or spec.startswith("learned:"):
            judge = make_teacher(
                spec, embedder=_heuristic()
            )  # one MiniLM and text cache for the run
        else:
            judge = make_teacher(
                spec
            )  # learned (training's judge) or any training.judges.rubric spec
        for w in out:
            if w.name == judge.name:
                w.weight += weight
                return
        out.append(WeightedJudge(judge, weight))

    for s in specs:
        add(s, 1.0)
    if not out:
        raise InputError("Give at least one --judge.")
    total = sum(w.weight for w in out)
    for w in out:
        w.weight /= total
    return out


_HEURISTIC: list[HeuristicJudge] = []


def _heuristic() -> HeuristicJudge:
    """One heuristic judge per process: its MiniLM model and embedding cache serve every run."""
    if not _HEURISTIC:
        _HEURISTIC.append(HeuristicJudge())
    return _HEURISTIC[0]


def heuristic_of(judges: list[WeightedJudge]) -> HeuristicJudge | None:
    return next((w.judge for w in judges if isinstance(w.judge, HeuristicJudge)), None)


def embedder_of(judges: list[WeightedJudge]) -> HeuristicJudge | None:
    """A MiniLM loader the judges already hold (the heuristic judge's, which learned judges share)."""
    for w in judges:
        if isinstance(w.judge, HeuristicJudge):
            return w.judge
        if isinstance(w.judge, LearnedJudge):
            return w.judge.embedder
    return None


def persona_for(config: EvalConfig, pset: PersonaSet, speaker: str) -> Persona:
    return config.group_for(pset).member(speaker)


def scored_messages(record: dict) -> list[tuple[int, dict]]:
    """The replies a judge scores: generated ones (the reviewed crisis text is left out)."""
    return [
        (i, m) for i, m in enumerate(record["messages"]) if not m.get("safety") and m.get("text")
    ]


def score_all(
    db: ResultsDB,
    judges: list[WeightedJudge],
    records: dict[tuple[str, str], dict],
    configs: dict[str, EvalConfig],
    scenarios: dict[str, Scenario],
    sets: dict[str, PersonaSet],
    progress: Any = None,
) -> tuple[dict[tuple[str, str, int], dict[str, dict[str, float]]], int]:
    """Scores per reply: ``{(config, scenario_id, message_index): {judge_name: {dim: 1-5}}}``.

    Returns the scores and how many judge calls were not in the cache."""
    out: dict[tuple[str, str, int], dict[str, dict[str, float]]] = {}
    made = 0
    # Order the calls by (scenario, speaker) so consecutive prompts share a long prefix (rubric,
    # persona, conversation) and a local judge's KV cache is reused.
    code = code_fingerprint(engine_judge, heuristic_judge, llm_judges)
    tasks = sorted(
        (
            (sid, m["speaker"], cname, i)
            for (cname, sid), record in records.items()
            for i, m in scored_messages(record)
        ),
        key=lambda t: (t[0], t[1]),
    )
    for sid, speaker, cname, i in tasks:
        scenario = scenarios[sid]
        msgs = records[(cname, sid)]["messages"]
        persona = persona_for(configs[cname], sets[scenario.group], speaker)
        others = [
            {"speaker": o["speaker"], "text": o["text"]} for o in msgs[:i] if not o.get("safety")
        ]
        per: dict[str, dict[str, float]] = {}
        for w in judges:
            key = digest(
                {
                    "judge": w.name,
                    "code": code + getattr(w.judge, "fingerprint", ""),
                    "scenario": scenario.to_dict(),
                    "persona": persona.to_dict(),
                    "reply": msgs[i]["text"],
                    "others": others,
                }
            )
            values = db.get_judgment(key)
            if values is None:
                values = dict(
                    w.judge.score(scenario, persona, msgs[i]["text"], others or None).values
                )
                db.put_judgment(key, w.name, values)
                made += 1
            per[w.name] = values
            if progress is not None:
                progress.update(1)
        out[(cname, sid, i)] = per
    return out, made


def combine(
    per_judge: dict[str, dict[str, float]], judges: list[WeightedJudge]
) -> dict[str, float]:
    """The weighted average over judges, per dimension."""
    total = sum(w.weight for w in judges if w.name in per_judge)
    return {
        d: sum(per_judge[w.name][d] * w.weight for w in judges if w.name in per_judge) / total
        for d in DIMENSIONS
    }


def count_calls(records: dict[tuple[str, str], dict], judges: list[WeightedJudge]) -> int:
    return sum(len(scored_messages(r)) for r in records.values()) * len(judges)
