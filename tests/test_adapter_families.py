"""LoRA adapter export for Qwen2 and Gemma 3 (besides Llama/Mistral, tests/test_adapters.py): the
GGUF update equals the PEFT update with Hugging Face's row order (their converters do not permute
q/k), and in llama.cpp the adapter over the family's tiny model (tests/tiny_models.py, converted
by llama.cpp's converter) gives the logits of the merged Hugging Face model."""

import re

import numpy as np
import pytest

from training.common import TrainError

pytestmark = pytest.mark.filterwarnings(
    "ignore:`is_gradient_checkpointing` is deprecated:FutureWarning"
)

MODULES = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
ARCH = {"qwen2.5": "qwen2", "gemma3": "gemma3"}


def peft_adapter(base_model, folder, seed=1, b_scale=0.5):
    """A random r=4 LoRA on all seven projections (PEFT starts B at zero: a no-op), saved."""
    import torch
    from peft import LoraConfig, get_peft_model

    model = get_peft_model(
        base_model,
        LoraConfig(
            r=4, lora_alpha=8, target_modules=MODULES, lora_dropout=0.0, task_type="CAUSAL_LM"
        ),
    )
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.copy_(torch.randn(p.shape, generator=g) * b_scale)
            elif "lora_A" in name:
                p.copy_(torch.randn(p.shape, generator=g) / p.shape[1] ** 0.5)
    model.save_pretrained(str(folder), save_embedding_layers=False)
    return model


def small_config(family):
    import transformers

    kw = dict(
        vocab_size=64,
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    if family == "gemma3":
        return transformers.Gemma3TextConfig(
            **kw, head_dim=16, sliding_window=32, query_pre_attn_scalar=16
        )
    return transformers.Qwen2Config(**kw)


@pytest.mark.parametrize("family", sorted(ARCH))
def test_the_gguf_update_is_the_peft_update_unpermuted(tmp_path, family):
    import torch
    from gguf import GGUFReader
    from peft.tuners.lora import Linear as LoraLinear
    from transformers import AutoModelForCausalLM

    from training.adapter_gguf import write_lora_gguf

    torch.manual_seed(0)
    config = small_config(family)
    config.save_pretrained(str(tmp_path / "base"))
    model = peft_adapter(AutoModelForCausalLM.from_config(config), tmp_path / "adapter")
    out = write_lora_gguf(
        tmp_path / "adapter", tmp_path / "a.gguf", base=tmp_path / "base", dtype="f32"
    )
    r = GGUFReader(str(out))
    assert r.fields["general.architecture"].contents() == ARCH[family]
    assert r.fields["general.type"].contents() == "adapter"
    t = {x.name: np.asarray(x.data, dtype=np.float32) for x in r.tensors}
    names = {
        "self_attn.q_proj": "attn_q",
        "self_attn.k_proj": "attn_k",
        "self_attn.v_proj": "attn_v",
        "self_attn.o_proj": "attn_output",
        "mlp.gate_proj": "ffn_gate",
        "mlp.up_proj": "ffn_up",
        "mlp.down_proj": "ffn_down",
    }
    checked = 0
    for name, module in model.named_modules():
        if not isinstance(module, LoraLinear):
            continue
        m = re.search(r"layers\.(\d+)\.(\w+\.\w+)$", name)
        stem = f"blk.{m[1]}.{names[m[2]]}.weight"
        delta = 8 / 4 * (t[stem + ".lora_b"] @ t[stem + ".lora_a"])
        with torch.no_grad():
            np.testing.assert_allclose(
                delta, module.get_delta_weight("default").float().numpy(), rtol=1e-4, atol=1e-6
            )
        checked += 1
    assert checked == 2 * 7


def test_an_unsupported_base_architecture_is_one_line(tmp_path):
    import json

    import torch
    from transformers import AutoModelForCausalLM

    from training.adapter_gguf import write_lora_gguf

    torch.manual_seed(0)
    config = small_config("qwen2.5")
    peft_adapter(AutoModelForCausalLM.from_config(config), tmp_path / "adapter")
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "config.json").write_text(
        json.dumps({"model_type": "phi3", "num_attention_heads": 4})
    )
    with pytest.raises(TrainError) as e:
        write_lora_gguf(tmp_path / "adapter", tmp_path / "x.gguf", base=tmp_path / "base")
    msg = str(e.value)
    assert "\n" not in msg and "a 'phi3' model" in msg and "gemma3, llama, qwen2" in msg
    assert not (tmp_path / "x.gguf").exists()


def hf_logits(model, ids):
    import torch

    with torch.inference_mode():
        return model(torch.tensor([ids])).logits[0].float().numpy()


def llama_logits(model_path, ids, lora_path=None):
    from llama_cpp import Llama

    llm = Llama(
        model_path=str(model_path),
        n_ctx=128,
        n_batch=128,
        n_threads=1,
        logits_all=True,
        verbose=False,
        lora_path=str(lora_path) if lora_path else None,
    )
    try:
        llm.eval(ids)
        return np.asarray(llm.scores[: len(ids)], dtype=np.float32)
    finally:
        llm.close()


@pytest.mark.model
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("family", sorted(ARCH))
def test_the_adapter_in_llama_cpp_gives_the_merged_models_logits(tmp_path, family, bundled_path):
    import torch
    from tiny_models import build, hf_folder
    from transformers import AutoModelForCausalLM

    from engine.models.registry import inspect_adapter
    from training.adapter_gguf import write_lora_gguf

    base_gguf = build(family, bundled_path, outtype="f32")
    base = AutoModelForCausalLM.from_pretrained(
        str(hf_folder(family, bundled_path)), dtype=torch.float32
    ).eval()
    ids = [int(x) for x in np.random.default_rng(0).integers(10, 40000, size=24)]
    ref_base = hf_logits(base, ids)
    model = peft_adapter(base, tmp_path / "adapter", b_scale=2.0)
    path = write_lora_gguf(tmp_path / "adapter", tmp_path / "lora.gguf", base=base_gguf)
    assert inspect_adapter(path).architecture == ARCH[family]  # Mascot registers it over this base
    merged = hf_logits(model.merge_and_unload().eval(), ids)
    plain = llama_logits(base_gguf, ids)
    adapted = llama_logits(base_gguf, ids, path)
    change = np.abs(merged - ref_base).max()
    print(
        f"{family}: base |llama - hf| {np.abs(plain - ref_base).max():.2e}, "
        f"adapter |llama - hf merged| {np.abs(adapted - merged).max():.2e}, change {change:.2e}"
    )
    assert np.abs(plain - ref_base).max() < 0.05 * change  # the converted base is the HF model
    assert np.abs(adapted - merged).max() < 0.05 * change  # and the adapter is the PEFT update
