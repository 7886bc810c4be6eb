"""Stage ``policy``: per persona, optimise the policy against the reward model (LoRA, KL anchor).

    mascot-train policy --out runs/mia --steps 30 --beta 0.05
    mascot-train policy --out runs/mia --algorithm rloo --sft-warmstart
    accelerate launch -m training.cli policy --out runs/mia        # one or several GPUs

For each persona (the ones sampled in ``sample``) on the training contexts:

1. optional SFT warm start (trl SFTTrainer) on the judge's best reply per context;
2. trl GRPO (default) or RLOO with LoRA on the same adapter. The KL anchor (``beta``) is to the
   base model: with a PEFT model, trl computes reference log-probs with the adapter disabled.
   Rewards come from the registry in training/rewards.py: the reward model on the cleaned reply,
   minus role confusion, optionally minus length.

Output ``OUT/policy/<persona>/adapter/`` (PEFT LoRA relative to the base), ``metrics.json``
(reward per logged step), ``config.json``, ``DONE`` (each persona resumes independently).

Simplification: one round of feedback (samples from the base model, a fixed reward model); the
paper iterates. Generation during GRPO/RLOO runs in HF transformers (slow on CPU; the
``accelerate launch`` path is how this scales).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from training.common import (
    TrainError,
    grpo_history,
    need,
    read_json,
    read_jsonl,
    sha256_files,
    write_json,
)
from training.config import PolicyConfig, save_config
from training.contexts import build_contexts, chat_template_of
from training.judges.factory import make_judge
from training.layout import (
    CONFIG,
    METRICS,
    base_gguf,
    hf_dir,
    is_done,
    mark_done,
    policy_dir,
    prefs_file,
    reward_dir,
    reward_model_dir,
    samples_dir,
    samples_file,
    trained_personas,
)
from training.lora import peft_config
from training.reward_model import RewardScorer
from training.rewards import make_rewards


def _sft_rows(out: Path, persona: str, contexts: dict[str, Any]) -> list[dict[str, str]]:
    best: dict[str, dict[str, Any]] = {}
    for row in read_jsonl(samples_file(out)):
        if row["persona"] == persona and row["reply"].strip() and row["context"] in contexts:
            if row["context"] not in best or row["mean"] > best[row["context"]]["mean"]:
                best[row["context"]] = row
    return [
        {"prompt": contexts[c].prompt, "completion": r["reply"].strip()} for c, r in best.items()
    ]


def run(cfg: PolicyConfig, out: Path, seed: int = 0) -> Path:
    if cfg.sft_only and not cfg.sft_warmstart:
        raise TrainError("--sft-only keeps the SFT warm start alone; add --sft-warmstart.")
    if cfg.reward == "reward_model" and not cfg.sft_only:
        need(reward_dir(out), "reward")
    for persona in trained_personas(out):
        run_persona(cfg, out, persona, seed)
    mark_done(policy_dir(out), {"personas": trained_personas(out)})
    return policy_dir(out)


def run_persona(cfg: PolicyConfig, out: Path, persona: str, seed: int = 0) -> Path:
    import torch
    from datasets import Dataset
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = policy_dir(out, persona)
    if is_done(folder):
        return folder
    if cfg.algorithm not in ("grpo", "rloo"):
        raise TrainError(f"Unknown policy algorithm '{cfg.algorithm}'; use grpo or rloo.")
    scfg = read_json(samples_dir(out) / CONFIG)
    contexts = {
        c.id: c
        for c in build_contexts(
            scfg["group"],
            [persona],
            split="train",
            domain=scfg["domain"],
            limit=scfg["max_contexts"],
            chat_template=chat_template_of(base_gguf(out)),
        )
    }
    torch.manual_seed(seed)
    tok = AutoTokenizer.from_pretrained(str(hf_dir(out)))
    tok.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(str(hf_dir(out)), dtype=torch.float32)
    model = get_peft_model(model, peft_config(cfg.lora, "CAUSAL_LM"))
    common = dict(
        report_to=[],
        save_strategy="no",
        seed=seed,
        bf16=False,
        fp16=False,
        activation_checkpointing=False,
        dataloader_pin_memory=False,
        dataloader_num_workers=0,
        logging_steps=1,
        disable_tqdm=False,
    )
    metrics: dict[str, Any] = {"persona": persona, "algorithm": cfg.algorithm}

    if cfg.sft_warmstart:
        from trl import SFTConfig, SFTTrainer

        rows = _sft_rows(out, persona, contexts)
        if rows:
            sft = SFTTrainer(
                model=model,
                processing_class=tok,
                train_dataset=Dataset.from_list(rows),
                args=SFTConfig(
                    output_dir=str(folder / "sft"),
                    num_train_epochs=cfg.sft_epochs,
                    per_device_train_batch_size=4,
                    learning_rate=cfg.learning_rate * 4,
                    max_length=None,
                    packing=False,
                    completion_only_loss=True,
                    **common,
                ),
            )
            res = sft.train()
            model = sft.model
            metrics["sft"] = {"examples": len(rows), "loss": round(float(res.training_loss), 4)}
        if cfg.sft_only:  # the ablation: the warm-started adapter, no reward model, no RL
            if not rows:
                raise TrainError(
                    f"--sft-only: no replies of {persona} good enough to fine-tune on; "
                    "sample more (--k, --max-contexts)."
                )
            metrics["algorithm"] = "sft-only"
            model.save_pretrained(str(folder / "adapter"))
            tok.save_pretrained(str(folder / "adapter"))
            write_json(folder / METRICS, metrics)
            save_config(
                folder,
                cfg,
                {"persona": persona, "data_sha256": sha256_files([prefs_file(out, "train")])},
            )
            mark_done(folder, metrics)
            return folder

    if cfg.reward not in ("reward_model", "judge"):
        raise TrainError(f"--reward must be 'reward_model' or 'judge', not '{cfg.reward}'.")
    resources: dict[str, Any] = {"max_completion_length": cfg.max_completion_length}
    if cfg.reward == "judge":
        resources.update(judge=make_judge(scfg["judge"]), contexts=contexts)
    else:
        rcfg = read_json(reward_dir(out) / CONFIG)
        resources["scorer"] = RewardScorer.load(
            reward_model_dir(out), max_length=int(rcfg["max_length"])
        )
    metrics["reward"] = cfg.reward if cfg.reward == "reward_model" else f"judge:{scfg['judge']}"
    fns, weights = make_rewards(
        {cfg.reward: 1.0, "role_confusion": 1.0, "length": cfg.length_penalty}, resources
    )
    ds = Dataset.from_list(
        [
            {
                "prompt": c.prompt,
                "rm_prompt": c.rm_prompt,
                "persona": persona,
                "stop": c.stop,
                "others": c.others,
                "recent": c.recent,
                "context": c.id,
            }
            for c in contexts.values()
        ]
    )
    batch = cfg.prompts_per_step * cfg.num_generations
    shared = dict(
        output_dir=str(folder / "checkpoints"),
        max_steps=cfg.steps,
        learning_rate=cfg.learning_rate,
        per_device_train_batch_size=batch,
        num_generations=cfg.num_generations,
        max_completion_length=cfg.max_completion_length,
        temperature=cfg.temperature,
        top_p=1.0,
        beta=cfg.beta,
        reward_weights=weights,
        remove_unused_columns=False,
        **common,
    )
    if cfg.algorithm == "grpo":
        from trl import GRPOConfig, GRPOTrainer

        trainer = GRPOTrainer(
            model=model,
            reward_funcs=fns,
            args=GRPOConfig(**shared),
            train_dataset=ds,
            processing_class=tok,
        )
    else:
        from trl import RLOOConfig, RLOOTrainer

        trainer = RLOOTrainer(
            model=model,
            reward_funcs=fns,
            args=RLOOConfig(**shared),
            train_dataset=ds,
            processing_class=tok,
        )
    trainer.train()
    history, summary = grpo_history(trainer.state.log_history)
    metrics["history"] = history
    metrics.update(summary)
    trainer.model.save_pretrained(str(folder / "adapter"))
    tok.save_pretrained(str(folder / "adapter"))
    write_json(folder / METRICS, metrics)
    save_config(
        folder, cfg, {"persona": persona, "data_sha256": sha256_files([prefs_file(out, "train")])}
    )
    mark_done(folder, {k: v for k, v in metrics.items() if k != "history"})
    return folder
