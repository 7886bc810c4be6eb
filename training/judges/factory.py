"""Judges by name: the spec strings of ``--judge`` and the stage options, turned into judges.

::

    from training.judges.factory import make_judge
    judge = make_judge()                  # the default: "learned", the teacher
    judge = make_judge("learned:PATH")    # weights from another fit (``mascot-train judge-fit``)
    judge = make_judge("heuristic")       # or "local", "local:PATH", "openai:URL#MODEL", "combined"

``make_judge`` knows every spec; ``make_rubric_judge`` knows the rubric judges alone (all but
the learned ones) and defaults to ``heuristic``. docs/judge.md compares the judges.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.errors import InputError
from training.judges.heuristic import HeuristicJudge
from training.judges.learned import LearnedJudge, audit_path
from training.judges.llm import LocalJudge, OpenAIJudge
from training.judges.rubric import DEFAULT_WEIGHTS, CombinedJudge, Judge

# The teacher: the judge training uses unless told otherwise (docs/judge.md).
DEFAULT_TEACHER = "learned"
# The default of ``make_rubric_judge``, the best of the rubric judges on the hand-written pairs
# (docs/judge.md). With a larger GGUF or an endpoint, use e.g.
# "combined:local:/path/big.gguf+heuristic".
DEFAULT_RUBRIC_JUDGE = "heuristic"


def make_judge(spec: str | None = None, *, embedder: Any = None) -> Any:
    """A judge from a spec: ``learned`` (the default teacher), ``learned:PATH.json``, ``audit``
    (never a training reward; for evaluation) or any ``make_rubric_judge`` spec (``heuristic``,
    ``local``, ``openai:URL#MODEL``, ...). ``embedder`` (a ``HeuristicJudge``) lets several
    learned judges share one loaded MiniLM and its text cache."""
    spec = (spec or DEFAULT_TEACHER).strip()
    if spec == "learned":
        return LearnedJudge(embedder=embedder)
    if spec == "audit":
        return LearnedJudge(audit_path(), embedder=embedder)
    if spec.startswith("learned:"):
        return LearnedJudge(Path(spec[len("learned:") :]).expanduser(), embedder=embedder)
    return make_rubric_judge(spec)


def make_rubric_judge(spec: str | None = None) -> Judge:
    """A rubric judge from a short spec:

    ``local`` (the bundled model), ``local:/path/model.gguf``, ``openai:BASE_URL#MODEL``
    (e.g. ``openai:http://127.0.0.1:8080/v1#qwen2.5-7b``), ``heuristic`` (the default),
    ``combined`` (bundled local + heuristic weighted as in ``DEFAULT_WEIGHTS``), or
    ``combined:SPEC+SPEC[+...]`` for equal-weight combinations of other specs.
    """
    spec = (spec or DEFAULT_RUBRIC_JUDGE).strip()
    if spec == "local":
        return LocalJudge()
    if spec.startswith("local:"):
        path = Path(spec[len("local:") :]).expanduser()
        if not path.is_file():
            raise InputError(f"Judge model '{path}' does not exist; give the path of a .gguf file.")
        return LocalJudge(path)
    if spec.startswith("openai:"):
        rest = spec[len("openai:") :]
        if "#" not in rest:
            raise InputError(
                "An OpenAI-compatible judge is written openai:BASE_URL#MODEL, e.g. "
                "openai:http://127.0.0.1:8080/v1#my-model."
            )
        url, model = rest.rsplit("#", 1)
        return OpenAIJudge(url, model)
    if spec == "heuristic":
        return HeuristicJudge()
    if spec == "combined":
        return CombinedJudge(
            [LocalJudge(), HeuristicJudge()],
            [DEFAULT_WEIGHTS["local"], DEFAULT_WEIGHTS["heuristic"]],
        )
    if spec.startswith("combined:"):
        parts = [s for s in spec[len("combined:") :].split("+") if s]
        return CombinedJudge([make_rubric_judge(s) for s in parts])
    raise InputError(
        f"Unknown judge '{spec}'; use local, local:PATH.gguf, openai:URL#MODEL, "
        "heuristic or combined."
    )
