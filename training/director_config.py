"""The Director run's settings (``mascot-train director`` options and YAML), checked before any work."""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.director.policies import BALANCE_PRIOR
from engine.persona_files import load_set
from training.common import TrainError
from training.config import (
    BaseConfig,
    LoraSettings,
    from_dict,
    merge,
    namespace_to_nested,
    opt,
    read_yaml,
    to_dict,
)


@dataclass
class RewardWeights:
    relevance: float = opt(1.0, "Relevance of the speaker's reply to the user's message.")
    diversity: float = opt(1.0, "Distance of the reply from the other replies of the round.")
    non_redundancy: float = opt(1.0, "Distance of the reply from the earlier companion turns.")
    social: float = opt(1.0, "The judge's social contribution score.")
    persona: float = opt(1.0, "The judge's persona consistency score of the speaker.")
    balance: float = opt(1.0, "Balance of participation (speakers who spoke less score higher).")
    format: float = opt(2.0, "Valid decision in the app's format (1) or not (0).")


@dataclass
class DirectorConfig:
    out: str = opt("runs/director", "Output folder.")
    seed: int = opt(0, "Random seed.")
    threads: int = opt(0, "CPU threads for torch and llama.cpp (0 = library default).")
    tiny: bool = opt(False, "Tiny random Llama and minimal sizes (smoke tests).")
    group: str = opt("support", "Persona set the Director is trained for.")
    domain: str = opt("", "Scenario domain; empty = the group's own domain.")
    persona_model: str = opt(
        "", "GGUF that plays the companions in rollouts (empty = the bundled model)."
    )
    persona_models: str = opt(
        "",
        "Companions with their own model in rollouts, as NAME=GGUF pairs separated by "
        "commas (e.g. Mia=runs/toy-mia/export/Mia/...-lora-f16.gguf, a LoRA adapter over --persona-model, "
        "run as the app runs it; or a whole model such as ...-q8_0.gguf, a persona model "
        "from `mascot-train pipeline`, as the paper rolls out its aligned persona "
        "models); the others use --persona-model.",
    )
    judge: str = opt(
        "learned",
        "Judge spec for the social and persona components (learned: the validated "
        "teacher, docs/judge.md; or heuristic, local, openai:URL#MODEL, ...).",
    )
    max_states: int = opt(0, "At most this many training scenarios (0 = all of the train split).")
    eval_states: int = opt(0, "At most this many held-out scenarios (0 = all).")
    states_per_scenario: int = opt(2, "1 = round start only; 2 = also after the first reply.")
    directive_mode: str = opt("auto", "auto (menu below 1B parameters, as the app), menu or free.")
    steps: int = opt(20, "GRPO optimiser steps.")
    num_generations: int = opt(6, "Decisions sampled per state (the GRPO group).")
    prompts_per_step: int = opt(1, "States per step.")
    learning_rate: float = opt(5e-5, "Learning rate (LoRA).")
    beta: float = opt(0.0, "KL anchor to the base model (0 = no reference model, cheaper).")
    temperature: float = opt(
        1.5,
        "Sampling temperature during training (above 1 so a small model's peaked "
        "choice still explores other speakers and directives; identical "
        "decisions in a GRPO group give no gradient).",
    )
    max_completion_length: int = opt(40, "Longest decision, in tokens.")
    rollout_max_tokens: int = opt(48, "Longest rolled-out companion reply, in tokens.")
    end_reward: float = opt(0.5, "Content components of an END decision.")
    rollout_samples: int = opt(
        1,
        "Replies rolled out per decision (different seeds); its reward is their mean "
        "(an estimate of the expected reward; one 135M reply is a noisy draw).",
    )
    reward_table: bool = opt(
        False,
        "Before GRPO, roll out and score every decision the rules allow in every "
        "training state (one batched pass): steps become lookups, and the table "
        "shows the headroom (best decision vs round-robin's) per state.",
    )
    eval_samples: int = opt(
        0,
        "Replies rolled out per decision in the held-out comparison (0 = rollout_samples). "
        "Each policy makes one decision per state there, so more samples are cheap "
        "and make the comparison less noisy.",
    )
    eval_table: bool = opt(
        False,
        "Also score every allowed decision on the held-out states, to report the "
        "best possible (oracle) and the average (random) decision next to the policies.",
    )
    gradient_checkpointing: bool = opt(
        False,
        "Recompute activations in the backward pass (saves memory, "
        "costs a second forward; off for CPU toy runs).",
    )
    warm_start_epochs: int = opt(
        0,
        "Before GRPO (menu mode, needs --reward-table): passes of the exact policy gradient over "
        "the table, i.e. every allowed decision of each training state weighed by its "
        "probability under the constrained policy (GRPO's group = all decisions). 0 = off.",
    )
    warm_start_lr: float = opt(3e-4, "Learning rate of the table warm start (LoRA).")
    init_adapter: str = opt(
        "",
        "Start GRPO from this saved LoRA adapter folder (e.g. OUT/director/adapter of an "
        "earlier run on the same base) instead of a fresh LoRA: continue a run in parts.",
    )
    balance_prior: float = opt(
        BALANCE_PRIOR,
        "The app's participation prior (engine.director.policies.BALANCE_PRIOR, nats per reply "
        "beyond the quietest allowed companion), applied to the Director's choice in "
        "training and evaluation as in the app. 0 = off. It is written to the export's "
        "manifest, and the app decodes the exported Director with it.",
    )
    max_train_minutes: float = opt(
        0.0,
        "Stop GRPO after this many minutes even before 'steps' (0 = no limit; "
        "for CPU toy runs on shared machines).",
    )
    quantize: list[str] = opt(["Q8_0"], "Quantized files besides the f16 GGUF.")
    min_fidelity: float = opt(
        0.99, "Fail the export below this next-token agreement with the HF model."
    )
    register: bool = opt(True, "Register the exported Director in the app's model registry.")
    name_prefix: str = opt("director", "Registered name: PREFIX-GROUP-grpo.")
    evaluate: bool = opt(True, "Run the held-out comparison after the export.")
    base: BaseConfig = field(default_factory=BaseConfig)
    # only the top layers adapt: the Director's choice is a late decision, and a CPU step is cheaper
    lora: LoraSettings = field(default_factory=lambda: LoraSettings(last_layers=8))
    weights: RewardWeights = field(default_factory=RewardWeights)


def tiny_preset() -> dict[str, Any]:
    return {
        "tiny": True,
        "base": {"tiny": True},
        "max_states": 2,
        "eval_states": 2,
        "states_per_scenario": 1,
        "steps": 2,
        "num_generations": 2,
        "max_completion_length": 16,
        "rollout_max_tokens": 12,
        "lora": {"r": 4, "alpha": 8},
    }


def resolve_config(args: argparse.Namespace) -> DirectorConfig:
    """Defaults < --tiny < YAML < command line (the same precedence as the persona stages)."""
    data = to_dict(DirectorConfig())
    if args.tiny:
        data = merge(data, tiny_preset())
    if args.config:
        raw = read_yaml(args.config)
        if raw.get("tiny"):
            data = merge(data, tiny_preset())
        data = merge(data, raw)
    data = merge(data, namespace_to_nested(args, skip=("command", "config", "tiny")))
    cfg = from_dict(DirectorConfig, data, "config")
    if cfg.balance_prior < 0:
        raise TrainError(
            f"--balance-prior must be 0 or more (nats per extra reply; 0 = off), not {cfg.balance_prior}."
        )
    companion_models(cfg)  # refused with one line before any work
    return cfg


def companion_models(cfg: DirectorConfig) -> dict[str, str]:
    """``--persona-models`` as {companion: GGUF path}; a pair that is malformed, names no
    companion of the group or a file that does not exist is refused with one line."""
    out: dict[str, str] = {}
    if not cfg.persona_models.strip():
        return out
    names = {p.name.lower(): p.name for p in load_set(cfg.group).members}
    for pair in cfg.persona_models.split(","):
        name, sep, path = (x.strip() for x in pair.partition("="))
        if not pair.strip():
            continue
        if not sep or not name or not path:
            raise TrainError(
                f"--persona-models: '{pair.strip()}' is not NAME=GGUF; separate pairs with commas."
            )
        if name.lower() not in names:
            raise TrainError(
                f"--persona-models: no companion named '{name}' in group '{cfg.group}'; "
                f"members are: {', '.join(names.values())}."
            )
        if not Path(path).expanduser().is_file():
            raise TrainError(
                f"--persona-models: {path} (for {name}) is not a file; give the GGUF exported "
                "by `mascot-train pipeline` (export/<persona>/...-lora-f16.gguf, a LoRA "
                "adapter over --persona-model, or ...-q8_0.gguf)."
            )
        out[names[name.lower()]] = str(Path(path).expanduser().resolve())
    return out


def log(msg: str) -> None:
    """One progress line of the Director run on stderr, with the time."""
    print(f"[director] {time.strftime('%H:%M:%S')} {msg}", file=sys.stderr, flush=True)


def reward_weights(cfg: DirectorConfig) -> dict[str, float]:
    """The weight of each reward component (``cfg.weights``) as a plain dict."""
    return {k: float(v) for k, v in to_dict(cfg.weights).items()}
