"""LoRA, configured in exactly one place (reward model, SFT warm start and policy all call this)."""

from __future__ import annotations

from typing import Any

from training.config import LoraSettings


def peft_config(lora: LoraSettings, task: str = "CAUSAL_LM", n_layers: int = 0) -> Any:
    """A ``peft.LoraConfig`` for ``task`` (``CAUSAL_LM`` or ``SEQ_CLS``; the classification head
    of a reward model is trained fully and saved with the adapter). With ``lora.last_layers``
    and the model's ``n_layers``, only the top layers get adapters."""
    from peft import LoraConfig, TaskType

    layers = None
    if lora.last_layers and n_layers and lora.last_layers < n_layers:
        layers = list(range(n_layers - lora.last_layers, n_layers))
    return LoraConfig(
        r=lora.r,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        target_modules=list(lora.target_modules),
        bias="none",
        task_type=getattr(TaskType, task),
        layers_to_transform=layers,
        modules_to_save=["score"] if task == "SEQ_CLS" else None,
    )
