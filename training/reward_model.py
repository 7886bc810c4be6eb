"""Stage ``reward``: a Bradley-Terry reward model on the preference pairs (trl RewardTrainer, LoRA).

    mascot-train reward --out runs/mia --epochs 2
    accelerate launch -m training.cli reward --out runs/mia      # one or several GPUs

The reward model is the base model with a scalar head (``AutoModelForSequenceClassification``,
``num_labels=1``), LoRA on its linear layers (training/lora.py) and a fully trained head. Inputs
are a compact view of the context (persona name, role, traits and style, the last turns, the
user's message; ``Context.rm_prompt``) + reply + EOS, tokenized here (inputs longer than
``max_length`` lose their oldest tokens, never the reply). The policy is still trained on the full
app prompt; only the reward model reads the compact view, which is much cheaper on CPU
(docs/training.md, "Where this simplifies the paper"). Pairwise accuracy is measured on the
held-out pairs (contexts set aside by ``prefs``) before and after training.

Output ``OUT/reward/model/`` (LoRA merged, ready to score), ``metrics.json``, ``config.json``.
One reward model serves every persona: the persona's description is part of the prompt.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from training.common import need, read_jsonl, sha256_files, write_json
from training.config import RewardModelConfig, save_config
from training.layout import (
    METRICS,
    hf_dir,
    is_done,
    mark_done,
    prefs_dir,
    prefs_file,
    reward_dir,
    reward_model_dir,
)
from training.lora import peft_config


def encode_pair(tok: Any, prompt: str, reply: str, max_length: int) -> list[int]:
    """Token ids of prompt + reply + EOS, cutting the prompt's oldest tokens to fit."""
    p = tok(prompt, add_special_tokens=False)["input_ids"]
    r = tok(reply.strip() + tok.eos_token, add_special_tokens=False)["input_ids"]
    r = r[-max_length // 2 :] if len(r) > max_length // 2 else r
    keep = max_length - len(r)
    return p[-keep:] + r


class RewardScorer:
    """Scores (prompt, reply) pairs with a trained reward model folder (batched, no grad)."""

    def __init__(self, model: Any, tok: Any, max_length: int = 384, batch_size: int = 8):
        self.model, self.tok = model, tok
        self.max_length = max_length
        self.batch_size = batch_size

    @classmethod
    def load(cls, path: str | Path, max_length: int = 384, batch_size: int = 8) -> "RewardScorer":
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(str(path))
        model = AutoModelForSequenceClassification.from_pretrained(
            str(path), dtype=torch.float32
        ).eval()
        return cls(model, tok, max_length, batch_size)

    def __call__(self, prompts: Sequence[str], replies: Sequence[str]) -> list[float]:
        import torch
        from torch.nn.utils.rnn import pad_sequence

        pad = self.tok.pad_token_id if self.tok.pad_token_id is not None else self.tok.eos_token_id
        self.model.eval()
        out: list[float] = []
        items = list(zip(prompts, replies))
        for i in range(0, len(items), self.batch_size):
            ids = [
                torch.tensor(encode_pair(self.tok, p, r, self.max_length))
                for p, r in items[i : i + self.batch_size]
            ]
            x = pad_sequence(ids, batch_first=True, padding_value=pad)
            mask = pad_sequence(
                [torch.ones_like(t) for t in ids], batch_first=True, padding_value=0
            )
            with torch.inference_mode():
                out.extend(
                    self.model(input_ids=x, attention_mask=mask).logits[:, 0].float().tolist()
                )
        return out


def pairwise_accuracy(scorer: Any, pairs: list[dict[str, Any]]) -> float:
    if not pairs:
        return float("nan")
    a = scorer([p["prompt"] for p in pairs], [p["chosen"] for p in pairs])
    b = scorer([p["prompt"] for p in pairs], [p["rejected"] for p in pairs])
    return round(
        sum(1.0 if x > y else 0.5 if x == y else 0.0 for x, y in zip(a, b)) / len(pairs), 4
    )


def run(cfg: RewardModelConfig, out: Path, seed: int = 0) -> Path:
    import torch
    from datasets import Dataset
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from trl import RewardConfig, RewardTrainer

    folder = reward_dir(out)
    if is_done(folder):
        return folder
    need(prefs_dir(out), "prefs")
    train = read_jsonl(prefs_file(out, "train"))
    evals = read_jsonl(prefs_file(out, "eval"))
    base = hf_dir(out)
    tok = AutoTokenizer.from_pretrained(str(base))
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    ds = Dataset.from_list(
        [
            {
                "chosen_ids": encode_pair(tok, p["prompt"], p["chosen"], cfg.max_length),
                "rejected_ids": encode_pair(tok, p["prompt"], p["rejected"], cfg.max_length),
            }
            for p in train
        ]
    )
    torch.manual_seed(seed)
    model = AutoModelForSequenceClassification.from_pretrained(
        str(base), num_labels=1, dtype=torch.float32
    )
    model.config.pad_token_id = tok.pad_token_id
    before = pairwise_accuracy(RewardScorer(model, tok, cfg.max_length), evals)
    args = RewardConfig(
        output_dir=str(folder / "checkpoints"),
        num_train_epochs=cfg.epochs,
        per_device_train_batch_size=min(cfg.micro_batch, cfg.batch_size),
        gradient_accumulation_steps=max(1, cfg.batch_size // max(1, cfg.micro_batch)),
        learning_rate=cfg.learning_rate,
        max_length=None,
        logging_steps=5,
        save_strategy="no",
        report_to=[],
        seed=seed,
        bf16=False,
        fp16=False,
        activation_checkpointing=False,
        dataloader_pin_memory=False,
        disable_dropout=True,
        dataloader_num_workers=0,
        lr_scheduler_type="cosine",
        warmup_steps=0,
    )
    trainer = RewardTrainer(
        model=model,
        args=args,
        train_dataset=ds,
        processing_class=tok,
        peft_config=peft_config(cfg.lora, "SEQ_CLS"),
    )
    result = trainer.train()
    model = trainer.model.merge_and_unload()
    model.eval()
    scorer = RewardScorer(model, tok, cfg.max_length)
    after = pairwise_accuracy(scorer, evals)
    train_acc = pairwise_accuracy(scorer, train[:200])
    dest = reward_model_dir(out)
    model.save_pretrained(str(dest))
    tok.save_pretrained(str(dest))
    metrics = {
        "eval_pairs": len(evals),
        "train_pairs": len(train),
        "eval_accuracy_before": before,
        "eval_accuracy": after,
        "train_accuracy": train_acc,
        "train_loss": round(float(result.training_loss), 4),
        "steps": int(result.global_step),
    }
    write_json(folder / METRICS, metrics)
    save_config(folder, cfg, {"data_sha256": sha256_files([prefs_file(out, "train")])})
    mark_done(folder, metrics)
    return folder
