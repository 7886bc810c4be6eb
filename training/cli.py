"""``mascot-train``: persona alignment (RLAIF) for Mascot, one sub-command per stage.

    mascot-train pipeline --tiny --out runs/tiny                 # smoke test, a few minutes on CPU
    mascot-train pipeline --out runs/mia --sample.personas Mia   # the bundled 135M model
    mascot-train pipeline --config my.yaml                       # options from a YAML file

    mascot-train base      --out runs/mia      # HF weights (+ f16 GGUF) of the base model
    mascot-train sample    --out runs/mia      # K replies per (context, persona), judged
    mascot-train prefs     --out runs/mia      # preference pairs (margin >= 0.5)
    mascot-train reward    --out runs/mia      # Bradley-Terry reward model (trl, LoRA)
    mascot-train policy    --out runs/mia      # GRPO / RLOO per persona (LoRA, KL anchor)
    mascot-train export    --out runs/mia      # merge, GGUF f16/Q8_0/Q4_K_M, LoRA GGUF, register
    mascot-train evaluate  --out runs/mia      # held-out reward before vs after
    mascot-train judge-agreement --judge heuristic --judge local   # judges vs hand-written pairs
    mascot-train judge-agreement --set test --judge learned       # ... on the length-matched test split
    mascot-train judge-fit                       # refit the learned judge (assets/judge/learned.json)
    mascot-train director --tiny --out runs/dir   # the Director, GRPO on group rewards

Every stage writes ``OUT/<stage>/`` (training/layout.py) with its resolved ``config.json`` and a
``DONE`` marker; a finished stage is skipped, so an interrupted run resumes with the same command
(delete a stage's folder to redo it). For GPUs:
``accelerate launch -m training.cli reward --out ...``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from engine.errors import MascotError
from training import voices
from training.common import (
    progress,
    quiet_libraries,
    read_json,
    require_train_extra,
    set_threads,
    write_json,
)
from training.config import (
    STAGES,
    TOP_LEVEL,
    PipelineConfig,
    VoicesConfig,
    add_options,
    from_dict,
    merge,
    namespace_to_nested,
    read_yaml,
    save_config,
    tiny_preset,
    to_dict,
)
from training.director_config import DirectorConfig, resolve_config
from training.director_grpo import run as run_director
from training.judge_fit import run as fit_judge
from training.judges.factory import make_judge
from training.judges.learned import LongerWins, load_preferences
from training.judges.rubric import agreement, load_pairs
from training.layout import MANIFEST, METRICS, export_dir, reward_dir

STAGE_INFO = {
    "base": ("training.base_model", "HF weights of the base model (+ its f16 GGUF)"),
    "sample": (
        "training.sample",
        "sample K replies per (context, persona) with llama.cpp and judge them",
    ),
    "prefs": ("training.prefs", "turn judged replies into preference pairs"),
    "reward": (
        "training.reward_model",
        "train the Bradley-Terry reward model (trl RewardTrainer, LoRA)",
    ),
    "policy": (
        "training.persona_rl",
        "optimise each persona against the reward model (GRPO/RLOO, LoRA)",
    ),
    "export": (
        "training.export",
        "merge, convert to GGUF, quantize, LoRA GGUF, manifest, register",
    ),
    "evaluate": ("training.evaluate", "held-out reward before vs after"),
}
SECTION = {stage: stage for stage in STAGE_INFO}  # sub-command -> PipelineConfig section


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config", metavar="FILE.yaml", help="Options from a YAML file (command-line options win)."
    )
    p.add_argument(
        "--out", default=argparse.SUPPRESS, help="Output folder (default: runs/persona)."
    )
    p.add_argument("--seed", default=argparse.SUPPRESS, help="Random seed (default: 0).")
    p.add_argument(
        "--threads", default=argparse.SUPPRESS, help="CPU threads (default: library default)."
    )
    p.add_argument(
        "--tiny",
        action="store_true",
        help="Tiny random Llama and minimal sizes: the whole "
        "pipeline in minutes on CPU (smoke tests).",
    )


def make_parser() -> argparse.ArgumentParser:
    import typing

    hints = typing.get_type_hints(PipelineConfig)
    parser = argparse.ArgumentParser(
        prog="mascot-train",
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="See docs/training.md.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for stage, (_mod, help_text) in STAGE_INFO.items():
        sp = sub.add_parser(stage, help=help_text, description=help_text)
        _common(sp)
        add_options(sp, hints[SECTION[stage]])
    pp = sub.add_parser(
        "pipeline",
        help="run every stage in order (finished ones are skipped)",
        description="Run every stage; options are prefixed by stage, e.g. --sample.k 4.",
    )
    _common(pp)
    for stage in STAGES:
        add_options(pp, hints[stage], prefix=stage + ".")
    dp = sub.add_parser(
        "director",
        help="train the Director with GRPO on group rewards, export, register",
        description="Train the Director with GRPO on group-level rewards (docs/director.md).",
    )
    _common(dp)
    add_options(dp, DirectorConfig)
    bp = sub.add_parser(
        "bundled",
        help="teach the bundled model the companions' voices from the persona corpus (SFT)",
        description="Supervised fine-tuning of the bundled model on assets/corpus/train with "
        "the app's own prompts; a shared run writes the adapter the app ships "
        "(assets/models/voices/). Stop it at any point; run it again to resume. "
        "See docs/voices.md.",
    )
    _common(bp)
    add_options(bp, VoicesConfig)
    ja = sub.add_parser(
        "judge-agreement", help="measure judges on the hand-written preference pairs"
    )
    ja.add_argument(
        "--judge",
        action="append",
        default=None,
        help="Judge spec (repeatable): learned, learned:PATH.json, heuristic, local, local:PATH.gguf, "
        "openai:URL#MODEL, combined, longer-wins (the length baseline).",
    )
    ja.add_argument(
        "--set",
        dest="pair_set",
        default="smoke",
        choices=("smoke", "train", "dev", "test"),
        help="smoke: the 48 length-biased pairs of assets/judge/pairs.jsonl; train/dev/test: a split "
        "of the length-matched assets/judge/preferences.jsonl (docs/judge.md).",
    )
    ja.add_argument("--json", metavar="FILE", help="Also write the results as JSON.")
    jf = sub.add_parser(
        "judge-fit",
        help="fit the learned judge on the train split (+ flawed twins); "
        "L2 chosen on dev; prints dev and test agreement",
    )
    jf.add_argument(
        "--out", default=None, help="Weights file (default: assets/judge/learned.json)."
    )
    jf.add_argument("--seed", type=int, default=0, help="Seed of the twin generator.")
    jf.add_argument(
        "--no-twins", action="store_true", help="Fit on the hand-written train pairs only."
    )
    jf.add_argument(
        "--audit",
        action="store_true",
        help="Fit the audit judge instead (dev split only, no twins; "
        "assets/judge/audit.json): an evaluation signal that "
        "training never optimises.",
    )
    return parser


def resolve(args: argparse.Namespace, stage: str | None) -> PipelineConfig:
    """Defaults < --tiny preset < YAML < command line."""
    data = to_dict(PipelineConfig())
    if args.tiny:
        data = merge(data, tiny_preset())
    if args.config:
        raw = read_yaml(args.config)
        yaml_data: dict[str, Any] = {}
        for key, value in raw.items():
            if key in TOP_LEVEL or key in STAGES:
                yaml_data[key] = value
            elif key == "tiny":
                if value:
                    data = merge(data, tiny_preset())
            elif stage is not None:  # a single stage's options at the top level
                yaml_data.setdefault(SECTION[stage], {})[key] = value
            else:
                raise MascotError(
                    f"{args.config}: unknown option '{key}'; put stage options under a "
                    f"section ({', '.join(STAGES)})."
                )
        data = merge(data, yaml_data)
    cli = namespace_to_nested(args, skip=("command", "config", "tiny"))
    top = {k: cli.pop(k) for k in list(cli) if k in TOP_LEVEL}
    if stage is not None:
        cli = {SECTION[stage]: cli} if cli else {}
    data = merge(merge(data, cli), top)
    return from_dict(PipelineConfig, data, "config")


def run_stage(stage: str, cfg: PipelineConfig) -> Path:
    import importlib

    module = importlib.import_module(STAGE_INFO[stage][0])
    return module.run(getattr(cfg, SECTION[stage]), Path(cfg.out), cfg.seed)


def run_pipeline(cfg: PipelineConfig) -> dict[str, Any]:
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    save_config(out, cfg)
    import time

    timings_path = out / "timings.json"
    timings = read_json(timings_path) if timings_path.is_file() else {}
    for stage in STAGES:
        print(f"== {stage}", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        run_stage(stage, cfg)
        seconds = round(time.perf_counter() - t0, 1)
        if seconds > 1 or stage not in timings:  # a skipped (finished) stage keeps its first time
            timings[stage] = seconds
        write_json(timings_path, timings)
    result = summary(out)
    write_json(out / "summary.json", result)
    return result


def summary(out: Path) -> dict[str, Any]:
    """The headline numbers of a finished run."""
    s: dict[str, Any] = {"out": str(out)}
    if (out / "timings.json").is_file():
        s["seconds"] = read_json(out / "timings.json")
    rm = reward_dir(out) / METRICS
    if rm.is_file():
        m = read_json(rm)
        s["reward_model_eval_accuracy"] = m.get("eval_accuracy")
        s["reward_model_eval_pairs"] = m.get("eval_pairs")
    for manifest in sorted(export_dir(out).glob("*/" + MANIFEST)):
        m = read_json(manifest)
        s.setdefault("exports", {})[m["persona"]] = {
            "name": m["name"],
            "fidelity": m["metrics"].get("fidelity"),
            "heldout": m["metrics"].get("heldout"),
            "registered": m.get("registered"),
            "files": {k: v["path"] for k, v in m["files"].items()},
        }
    return s


def run_bundled(args: argparse.Namespace) -> dict[str, Any]:
    """``mascot-train bundled``: defaults < YAML < command line; OUT defaults to runs/bundled."""
    data = to_dict(VoicesConfig())
    if args.config:
        data = merge(data, read_yaml(args.config))
    cli = namespace_to_nested(args, skip=("command", "config", "tiny"))
    out = Path(cli.pop("out", "runs/bundled"))
    if "threads" in cli and not int(cli["threads"]):
        cli.pop("threads")
    cfg = from_dict(VoicesConfig, merge(data, cli), "config")
    return voices.run(cfg, out, tiny=args.tiny)


def judge_agreement(
    specs: list[str], json_path: str | None, pair_set: str = "smoke"
) -> list[dict[str, Any]]:
    pairs = load_pairs() if pair_set == "smoke" else load_preferences(pair_set)
    results = []
    for spec in specs:
        judge = LongerWins() if spec == "longer-wins" else make_judge(spec)
        with progress(total=len(pairs), desc=f"judge {spec}", unit="pair") as bar:
            r = agreement(judge, pairs, progress=bar.update)
        r["spec"], r["set"] = spec, pair_set
        results.append(r)
        print(json.dumps(r), flush=True)
    if json_path:
        Path(json_path).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return results


def main(argv: list[str] | None = None) -> int:
    args = make_parser().parse_args(argv)
    try:
        require_train_extra()
        quiet_libraries()
        if args.command == "judge-agreement":
            judge_agreement(args.judge or ["learned"], args.json, args.pair_set)
            return 0
        if args.command == "judge-fit":
            print(
                json.dumps(
                    fit_judge(args.out, seed=args.seed, twins=not args.no_twins, audit=args.audit),
                    indent=2,
                )
            )
            return 0
        if args.command == "bundled":
            print(json.dumps(run_bundled(args), indent=2))
            return 0
        if args.command == "director":
            dcfg = resolve_config(args)
            set_threads(dcfg.threads)
            print(json.dumps(run_director(dcfg), indent=2))
            return 0
        stage = None if args.command == "pipeline" else args.command
        cfg = resolve(args, stage)
        set_threads(cfg.threads)
        if stage is None:
            print(json.dumps(run_pipeline(cfg), indent=2))
        else:
            folder = run_stage(stage, cfg)
            print(f"{stage}: done -> {folder}")
        return 0
    except MascotError as e:
        print(f"mascot-train: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("mascot-train: interrupted; run the same command again to resume.", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
