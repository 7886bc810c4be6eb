"""Configuration for every training stage: dataclasses with help text.

Precedence, lowest first: the dataclass defaults, ``--tiny`` presets, ``--config file.yaml``,
then command-line options. The resolved config is written as ``config.json`` into every output
folder, and later stages read the earlier stages' resolved configs instead of asking again.

A YAML file may hold the whole pipeline (one section per stage) or, for a single stage, its
keys at the top level::

    out: runs/mia
    sample:
      personas: [Mia]
      k: 4
    policy:
      steps: 40
      lora: {r: 16, alpha: 32}

On the command line a stage takes its own options (``mascot-train sample --k 4``); the
pipeline takes them prefixed by the stage (``mascot-train pipeline --sample.k 4``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.errors import InputError


def opt(default: Any, help: str, **kw: Any) -> Any:
    """A dataclass field with help text (lists and dicts get a default factory)."""
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda d=default: type(d)(d), metadata={"help": help, **kw})
    return field(default=default, metadata={"help": help, **kw})


# -- stage configs ----------------------------------------------------------------------------------


@dataclass
class LoraSettings:
    """LoRA, configured here only (reward model and policy both use it; see training/lora.py)."""

    r: int = opt(16, "LoRA rank.")
    alpha: int = opt(32, "LoRA alpha (the update is scaled by alpha / r).")
    dropout: float = opt(0.05, "LoRA dropout.")
    target_modules: list[str] = opt(
        ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
        "Linear layers that get adapters (Llama names).",
    )
    last_layers: int = opt(
        0,
        "Adapt only the last N transformer layers (0 = all). Backpropagation then "
        "stops below them, which makes a CPU training step several times cheaper.",
    )


@dataclass
class BaseConfig:
    source: str = opt(
        "bundled",
        "Base weights: 'bundled' (dequantize the bundled SmolLM2-135M GGUF), a "
        "path to a .gguf file, an HF model folder, or a Hub id (needs internet).",
    )
    tiny: bool = opt(
        False, "Build a tiny random Llama with the bundled tokenizer instead (smoke tests)."
    )
    tiny_hidden: int = opt(64, "Tiny model: hidden size.")
    tiny_layers: int = opt(2, "Tiny model: number of layers.")
    tiny_heads: int = opt(4, "Tiny model: attention heads.")


@dataclass
class SampleConfig:
    group: str = opt("support", "Persona set whose members are trained (bundled name or path).")
    personas: list[str] = opt([], "Members to train; empty = every member of the group.")
    max_personas: int = opt(
        0, "With an empty 'personas': train only the first N members (0 = all)."
    )
    domain: str = opt("", "Scenario domain; empty = the domain that belongs to the group.")
    max_contexts: int = opt(
        0, "Use at most this many training scenarios (0 = all of the train split)."
    )
    k: int = opt(4, "Replies sampled per (context, persona).")
    max_tokens: int = opt(64, "Longest sampled reply, in tokens.")
    temperature: float = opt(1.0, "Sampling temperature (higher = more diverse candidates).")
    top_p: float = opt(0.95, "Nucleus sampling.")
    judge: str = opt(
        "learned",
        "Judge spec: learned (the validated teacher), heuristic, local, local:PATH.gguf, "
        "openai:URL#MODEL, combined (see docs/judge.md for measured agreement).",
    )
    n_ctx: int = opt(2048, "llama.cpp context size for sampling.")


@dataclass
class PrefsConfig:
    min_margin: float = opt(
        0.5,
        "A pair becomes a preference when the judge's mean scores differ by at "
        "least this much (1-5 scale).",
    )
    max_pairs_per_context: int = opt(
        4, "At most this many pairs per (context, persona), widest margins first."
    )
    eval_fraction: float = opt(
        0.2,
        "Fraction of training contexts whose pairs are held out to measure "
        "the reward model (the scenario heldout split is never used).",
    )


@dataclass
class RewardModelConfig:
    epochs: float = opt(2.0, "Training epochs over the preference pairs.")
    learning_rate: float = opt(2e-4, "Learning rate (LoRA).")
    batch_size: int = opt(8, "Pairs per optimiser step.")
    micro_batch: int = opt(
        2,
        "Pairs per forward pass (memory: ~0.8 GB per pair of 640 tokens for a "
        "135M model on CPU); batch_size is reached by gradient accumulation.",
    )
    max_length: int = opt(
        384,
        "Longest reward-model input (compact context + reply) in tokens; longer "
        "contexts lose their oldest tokens.",
    )
    lora: LoraSettings = field(default_factory=LoraSettings)


@dataclass
class PolicyConfig:
    algorithm: str = opt(
        "grpo", "Policy optimiser: 'grpo' (trl GRPOTrainer) or 'rloo' (trl RLOOTrainer)."
    )
    steps: int = opt(30, "Optimiser steps per persona.")
    num_generations: int = opt(4, "Completions per prompt (the group for advantages).")
    prompts_per_step: int = opt(2, "Prompts per step (batch = prompts_per_step * num_generations).")
    learning_rate: float = opt(5e-5, "Learning rate (LoRA).")
    beta: float = opt(0.05, "KL anchor to the base model (0 disables the reference model).")
    max_completion_length: int = opt(48, "Longest generated reply during training, in tokens.")
    temperature: float = opt(0.9, "Sampling temperature during training.")
    reward: str = opt(
        "reward_model",
        "What the policy is optimised against: 'reward_model' (the Bradley-Terry model "
        "trained on the judge's preferences, as in MASCOT) or 'judge' (the sampling "
        "judge itself scores every completion: for when the reward model does not "
        "reproduce the judge's preferences on its held-out pairs).",
    )
    length_penalty: float = opt(
        0.0,
        "Optional extra reward term: minus this times the fraction of "
        "max_completion_length used (0 = off).",
    )
    sft_warmstart: bool = opt(
        False, "First fine-tune on the judge's best replies (SFT warm start)."
    )
    sft_epochs: float = opt(1.0, "SFT warm start epochs.")
    sft_only: bool = opt(
        False,
        "Stop after the SFT warm start, with no RL: the ablation that shows what RL "
        "itself adds (needs --sft-warmstart; use its own --out).",
    )
    lora: LoraSettings = field(default_factory=LoraSettings)


@dataclass
class ExportConfig:
    quantize: list[str] = opt(["Q8_0", "Q4_K_M"], "Quantized files to write besides the f16 GGUF.")
    fidelity_contexts: int = opt(8, "Held-out contexts used to measure export fidelity.")
    min_fidelity: float = opt(
        0.99, "Fail the export when next-token agreement with the HF model is lower."
    )
    register: bool = opt(
        True, "Register the exported model in the app's model registry (see --register-as)."
    )
    register_as: str = opt(
        "adapter",
        "What to register: 'adapter' (the LoRA GGUF over the base it was trained on, the "
        "bundled model for --base.source bundled: one shared base, an adapter per "
        "persona, as the app serves them) or 'model' (the merged Q8_0, else f16).",
    )
    name_prefix: str = opt("mascot", "Registered model names are PREFIX-GROUP-PERSONA.")


@dataclass
class EvalConfig:
    contexts: int = opt(
        0, "Held-out contexts for the before/after comparison (0 = all of the split)."
    )
    samples: int = opt(2, "Replies per context and model.")
    max_tokens: int = opt(64, "Longest reply, in tokens.")
    temperature: float = opt(
        0.7,
        "Sampling temperature (the persona's usual setting is not used, so "
        "both models are compared alike).",
    )
    judge: str = opt("", "Also score with this judge spec (empty = reward model only).")


@dataclass
class VoicesConfig:
    """``mascot-train bundled``: supervised fine-tuning on the persona corpus (training/voices.py)."""

    mode: str = opt("shared", "shared: one LoRA for every persona; full: full fine-tune.")
    persona: str = opt("", "Train on this persona's replies only (its own adapter); empty = all.")
    tag: str = opt("", "Run folder under OUT/voices/ (default: the mode, or the persona).")
    epochs: float = opt(1.0, "Passes over the training replies (ignored with --steps).")
    steps: int = opt(0, "Optimiser steps (0 = from --epochs).")
    batch: int = opt(8, "Replies per optimiser step (one companion's card per batch).")
    lr: float = opt(0.0, "Peak learning rate (0 = 3e-4 for LoRA, 2e-5 for full).")
    warmup: int = opt(10, "Warm-up steps (linear), then cosine decay to 0.")
    max_train: int = opt(0, "Use at most this many training replies, spread evenly (0 = all).")
    eval_examples: int = opt(120, "Test replies whose likelihood is measured.")
    contrast_examples: int = opt(48, "Test replies in the persona-contrast measurement.")
    eval_every: int = opt(0, "Measure test likelihood every N steps (0 = at the end only).")
    eval_before: bool = opt(True, "Measure test likelihood before the first step too.")
    checkpoint_every: int = opt(10, "Write a resumable checkpoint every N steps.")
    log_every: int = opt(5, "Print progress every N steps.")
    threads: int = opt(2, "CPU threads for torch.")
    seed: int = opt(0, "Seed of the batch order.")
    ship: bool = opt(
        True,
        "When a shared run finishes, write its adapter into assets/models/voices/ "
        "(the weights shipped with the app).",
    )
    lora: LoraSettings = field(default_factory=lambda: LoraSettings(dropout=0.0))


@dataclass
class PipelineConfig:
    out: str = opt("runs/persona", "Output folder; every stage writes a sub-folder here.")
    seed: int = opt(0, "Random seed for sampling and training.")
    threads: int = opt(0, "CPU threads for torch and llama.cpp (0 = library default).")
    base: BaseConfig = field(default_factory=BaseConfig)
    sample: SampleConfig = field(default_factory=SampleConfig)
    prefs: PrefsConfig = field(default_factory=PrefsConfig)
    reward: RewardModelConfig = field(default_factory=RewardModelConfig)
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    export: ExportConfig = field(default_factory=ExportConfig)
    evaluate: EvalConfig = field(default_factory=EvalConfig)


STAGES = ("base", "sample", "prefs", "reward", "policy", "export", "evaluate")
TOP_LEVEL = ("out", "seed", "threads")


def tiny_preset() -> dict[str, Any]:
    """Overrides for ``--tiny``: a random tiny Llama, a handful of contexts, few steps."""
    return {
        "base": {"tiny": True},
        "sample": {
            "max_contexts": 3,
            "k": 3,
            "max_tokens": 16,
            "max_personas": 1,
            "judge": "learned",
        },
        "prefs": {"min_margin": 0.1, "eval_fraction": 0.34},
        "reward": {"epochs": 1.0, "batch_size": 4, "lora": {"r": 4, "alpha": 8}},
        "policy": {
            "steps": 2,
            "num_generations": 2,
            "prompts_per_step": 1,
            "max_completion_length": 8,
            "sft_warmstart": True,
            "lora": {"r": 4, "alpha": 8},
        },
        "export": {"fidelity_contexts": 2},
        "evaluate": {"contexts": 2, "samples": 1, "max_tokens": 12},
    }


# -- dataclass <-> dict <-> argparse -----------------------------------------------------------------


def to_dict(cfg: Any) -> dict[str, Any]:
    return dataclasses.asdict(cfg)


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_dict(cls: type, data: dict[str, Any], where: str = "config") -> Any:
    """Build ``cls`` from a (partial) dict, checking names and types; nested dataclasses recurse."""
    if not isinstance(data, dict):
        raise InputError(f"{where}: expected a mapping of options, got {type(data).__name__}.")
    hints = _hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = set(data) - names
    if unknown:
        raise InputError(
            f"{where}: unknown option(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(names))}."
        )
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name not in data:
            continue
        typ, value = hints[f.name], data[f.name]
        if dataclasses.is_dataclass(typ):
            kwargs[f.name] = (
                value
                if isinstance(value, typ)
                else from_dict(typ, value or {}, f"{where}.{f.name}")
            )
        else:
            kwargs[f.name] = _coerce(typ, value, f"{where}.{f.name}")
    return cls(**kwargs)


def _coerce(typ: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(typ)
    if origin is list:
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, (list, tuple)):
            raise InputError(f"{where}: expected a list, got {value!r}.")
        return [str(v) for v in value]
    if typ is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in (
            "1",
            "true",
            "yes",
            "on",
            "0",
            "false",
            "no",
            "off",
        ):
            return value.lower() in ("1", "true", "yes", "on")
        raise InputError(f"{where}: expected true or false, got {value!r}.")
    try:
        return typ(value)
    except (TypeError, ValueError):
        raise InputError(
            f"{where}: expected {getattr(typ, '__name__', typ)}, got {value!r}."
        ) from None


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge ``over`` into a copy of ``base``."""
    out = dict(base)
    for k, v in over.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def read_yaml(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such config file.")
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as e:
        raise InputError(f"{path}: invalid YAML ({str(e).splitlines()[0]}).") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: the config must be a mapping of options.")
    return data


def add_options(parser: argparse.ArgumentParser, cls: type, prefix: str = "") -> None:
    """One ``--option`` per dataclass field (nested ones as ``--lora.r``); defaults are left out
    of the namespace so that only options given on the command line override the YAML file."""
    hints = _hints(cls)
    for f in dataclasses.fields(cls):
        typ = hints[f.name]
        name = prefix + f.name
        if dataclasses.is_dataclass(typ):
            add_options(parser, typ, name + ".")
            continue
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
        help_text = f"{f.metadata.get('help', '')} (default: {default!r})".replace("%", "%%")
        flag = "--" + name.replace("_", "-")
        if flag in parser._option_string_actions:  # e.g. base.tiny is the common --tiny
            continue
        if typ is bool:
            parser.add_argument(
                flag,
                dest=name,
                action=argparse.BooleanOptionalAction,
                default=argparse.SUPPRESS,
                help=help_text,
            )
        elif typing.get_origin(typ) is list:
            parser.add_argument(
                flag,
                dest=name,
                default=argparse.SUPPRESS,
                metavar="A,B",
                help=help_text + "; comma-separated",
            )
        else:
            parser.add_argument(
                flag,
                dest=name,
                type=str,
                default=argparse.SUPPRESS,
                metavar=getattr(typ, "__name__", "X").upper(),
                help=help_text,
            )


def namespace_to_nested(ns: argparse.Namespace, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """``{"lora.r": 8}`` -> ``{"lora": {"r": 8}}`` (values stay strings; from_dict coerces them)."""
    out: dict[str, Any] = {}
    for key, value in vars(ns).items():
        if key in skip or key.startswith("_"):
            continue
        node = out
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
    return out


def save_config(folder: Path, cfg: Any, extra: dict[str, Any] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "config.json"
    data = to_dict(cfg) if dataclasses.is_dataclass(cfg) else dict(cfg)
    if extra:
        data = {**data, **extra}
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
