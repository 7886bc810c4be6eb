"""The chat-template families of the model catalog, as test data (tests/templates/*.jinja).

``strategy``: how ``ChatFormat`` must shape a group conversation for the template;
``generation_prompt``: how a rendered prompt ends; ``end_of_turn``: the token that ends a reply
(llama.cpp must treat it as end-of-generation); ``chatml``: the template writes ChatML itself."""

from pathlib import Path

TEMPLATES = Path(__file__).parent / "templates"

FAMILY_TEMPLATES = {
    "llama3.2": {
        "strategy": "as-is",
        "generation_prompt": "<|start_header_id|>assistant<|end_header_id|>\n\n",
        "end_of_turn": "<|eot_id|>",
        "chatml": False,
    },
    "qwen2.5": {
        "strategy": "as-is",
        "generation_prompt": "<|im_start|>assistant\n",
        "end_of_turn": "<|im_end|>",
        "chatml": True,
    },
    "gemma3": {
        "strategy": "merged",
        "generation_prompt": "<start_of_turn>model\n",
        "end_of_turn": "<end_of_turn>",
        "chatml": False,
    },
    "phi3.5-mini": {
        "strategy": "as-is",
        "generation_prompt": "<|assistant|>\n",
        "end_of_turn": "<|end|>",
        "chatml": False,
    },
    "phi4-mini": {
        "strategy": "as-is",
        "generation_prompt": "<|assistant|>",
        "end_of_turn": "<|end|>",
        "chatml": False,
    },
    "smollm2": {
        "strategy": "as-is",
        "generation_prompt": "<|im_start|>assistant\n",
        "end_of_turn": "<|im_end|>",
        "chatml": True,
    },
    "mistral-small-3.1": {
        "strategy": "merged",
        "generation_prompt": "[/INST]",
        "end_of_turn": "</s>",
        "chatml": False,
    },
}


def template_text(family: str) -> str:
    return (TEMPLATES / f"{family}.jinja").read_text(encoding="utf-8")
