"""Per-persona LoRA adapters: PEFT -> llama.cpp GGUF conversion, adapters switched per request on
one shared runtime, the registry/persona hook, refusals, and the cost measurement."""

import dataclasses
import json
import re
import threading
from unittest import mock

import numpy as np
import pytest

from engine.errors import ModelError
from training.common import TrainError

# peft 0.21 calls a transformers API that transformers deprecates (not ours to fix)
pytestmark = pytest.mark.filterwarnings(
    "ignore:`is_gradient_checkpointing` is deprecated:FutureWarning"
)

ALL_MODULES = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def one_line(err):
    msg = str(err.value)
    assert "\n" not in msg and len(msg) < 300, msg
    return msg


def randomize_lora(peft_model, seed, b_scale, qk_boost=1.0):
    """PEFT starts B at zero (a no-op adapter); give A and B random values so it changes outputs."""
    import torch

    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in peft_model.named_parameters():
            if "lora_B" in name:
                boost = qk_boost if re.search(r"\.(q|k)_proj\.", name) else 1.0
                p.copy_(torch.randn(p.shape, generator=g) * b_scale * boost)
            elif "lora_A" in name:
                p.copy_(torch.randn(p.shape, generator=g) / p.shape[1] ** 0.5)


# -- conversion, checked against llama.cpp's own converter (tiny random Llama, no llama.cpp) -----


def tiny_adapter(folder, **lora):
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=64,
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    base = folder / "base"
    config.save_pretrained(str(base))
    settings = {"r": 4, "lora_alpha": 8, "target_modules": ALL_MODULES, "lora_dropout": 0.0, **lora}
    model = get_peft_model(LlamaForCausalLM(config), LoraConfig(task_type="CAUSAL_LM", **settings))
    randomize_lora(model, seed=1, b_scale=0.5)
    model.save_pretrained(str(folder / "adapter"))
    return folder / "adapter", base, model, config


def gguf_deltas(path):
    """{(layer, llama.cpp tensor): alpha / r * B @ A} as llama.cpp computes it, plus the metadata."""
    from gguf import GGUFReader

    r = GGUFReader(str(path))
    meta = {
        k: r.fields[k].contents()
        for k in ("general.type", "general.architecture", "adapter.type", "adapter.lora.alpha")
    }
    t = {x.name: np.asarray(x.data, dtype=np.float32) for x in r.tensors}
    out = {}
    for name, a in t.items():
        if name.endswith(".lora_a"):
            b = t[name[:-1] + "b"]
            m = re.match(r"blk\.(\d+)\.(\w+)\.weight\.lora_a", name)
            out[(int(m[1]), m[2])] = meta["adapter.lora.alpha"] / a.shape[0] * (b @ a)
    return out, meta


@pytest.mark.parametrize(
    "lora",
    [
        {},
        {"use_rslora": True},
        {"rank_pattern": {"v_proj": 2}, "alpha_pattern": {"down_proj": 3.0}},
    ],
    ids=["plain", "rslora", "patterns"],
)
def test_gguf_update_equals_the_hf_update_as_llama_cpp_converts_it(tmp_path, lora):
    """llama.cpp's HF converter permutes q/k rows (conversion.llama.LlamaModel.permute); the
    adapter's update B @ A must arrive permuted the same way, with the same scale."""
    import torch
    from conversion.llama import LlamaModel
    from peft.tuners.lora import Linear as LoraLinear

    from training.adapter_gguf import MODULES, write_lora_gguf

    adapter, base, model, config = tiny_adapter(tmp_path, **lora)
    out = write_lora_gguf(adapter, tmp_path / "tiny-lora.gguf", base=base, dtype="f32")
    deltas, meta = gguf_deltas(out)
    assert meta == {
        "general.type": "adapter",
        "general.architecture": "llama",
        "adapter.type": "lora",
        "adapter.lora.alpha": 8.0,
    }
    checked = 0
    for name, module in model.named_modules():
        if not isinstance(module, LoraLinear):
            continue
        m = re.search(r"layers\.(\d+)\.(\w+\.\w+)$", name)
        with torch.no_grad():
            hf = module.get_delta_weight("default").float()
        if m[2] == "self_attn.q_proj":
            hf = LlamaModel.permute(hf, config.num_attention_heads, config.num_attention_heads)
        elif m[2] == "self_attn.k_proj":
            hf = LlamaModel.permute(hf, config.num_attention_heads, config.num_key_value_heads)
        np.testing.assert_allclose(
            deltas[(int(m[1]), MODULES[m[2]])], hf.numpy(), rtol=1e-4, atol=1e-6
        )
        checked += 1
    assert checked == len(deltas) == 2 * 7


def test_q_and_k_are_really_permuted_and_f16_is_the_default(tmp_path):
    from training.adapter_gguf import write_lora_gguf

    adapter, base, model, _ = tiny_adapter(tmp_path)
    deltas, _ = gguf_deltas(write_lora_gguf(adapter, tmp_path / "a.gguf", base=base))
    with mock.patch("training.adapter_gguf._permute", lambda w, n_head, n_kv: w):
        unpermuted, _ = gguf_deltas(write_lora_gguf(adapter, tmp_path / "b.gguf", base=base))
    for (layer, name), d in deltas.items():
        same = np.allclose(d, unpermuted[(layer, name)])
        assert same == (name not in ("attn_q", "attn_k")), name
    from gguf import GGUFReader

    assert {t.tensor_type.name for t in GGUFReader(str(tmp_path / "a.gguf")).tensors} == {"F16"}


def _edit_config(adapter, **changes):
    f = adapter / "adapter_config.json"
    f.write_text(json.dumps({**json.loads(f.read_text()), **changes}))


@pytest.mark.parametrize(
    "case,needle",
    [
        ("missing", "no such adapter folder"),
        ("no-config", "no adapter_config.json"),
        ("bad-json", "unreadable adapter config"),
        ("dora", "DoRA"),
        ("no-base", "base model is needed"),
        ("no-weights", "no adapter_model.safetensors"),
        ("damaged-weights", "cannot read the adapter weights"),
        ("extra-module", "full modules"),
        ("foreign-tensor", "unsupported tensor"),
        ("wrong-base", "not a multiple"),
    ],
)
def test_bad_adapters_are_refused_with_one_line(tmp_path, case, needle):
    from safetensors.torch import load_file, save_file

    from training.adapter_gguf import write_lora_gguf

    adapter, base, _, _ = tiny_adapter(tmp_path)
    weights = adapter / "adapter_model.safetensors"
    kwargs = {"base": base}
    if case == "missing":
        adapter = tmp_path / "nowhere"
    elif case == "no-config":
        (adapter / "adapter_config.json").unlink()
    elif case == "bad-json":
        (adapter / "adapter_config.json").write_text("{not json")
    elif case == "dora":
        _edit_config(adapter, use_dora=True)
    elif case == "no-base":
        kwargs = {}
        _edit_config(adapter, base_model_name_or_path="some/hub-model")
    elif case == "no-weights":
        weights.unlink()
    elif case == "damaged-weights":
        weights.write_bytes(b"\x00" * 100)
    elif case == "extra-module":
        _edit_config(adapter, modules_to_save=["lm_head"])
    elif case == "foreign-tensor":
        t = load_file(str(weights))
        t["base_model.model.lm_head.lora_A.weight"] = next(iter(t.values())).clone()
        save_file(t, str(weights))
    elif case == "wrong-base":
        cfg = json.loads((base / "config.json").read_text())
        (base / "config.json").write_text(
            json.dumps({**cfg, "num_attention_heads": 3, "num_key_value_heads": 3})
        )
    with pytest.raises(TrainError) as e:
        write_lora_gguf(adapter, tmp_path / "out.gguf", **kwargs)
    assert needle in one_line(e)
    assert not (tmp_path / "out.gguf").exists() and not (tmp_path / "out.gguf.part").exists()


# -- the bundled model -------------------------------------------------------------------------------

FIDELITY_TEXTS = [
    "<|im_start|>system\nYou are Mia, a warm listener.<|im_end|>\n<|im_start|>user\nI had a rough week at "
    "work and I can't switch off. What should I do?<|im_end|>\n<|im_start|>assistant\nIt sounds like the "
    "week has been heavy. Maybe start with a short walk tonight.",
    "The quick brown fox jumps over the lazy dog. In the morning the market opens at nine and the bakers "
    "bring fresh bread to every stall along the river.",
    "def fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)\n",
]


def f32_copy(src, dest):
    """The same model as ``src`` with every tensor dequantized to F32 (same layout, same metadata):
    llama.cpp on it computes what the dequantized HF model computes, without the Q4_1 x Q8_1
    activation rounding that makes the quantized file disagree with HF at ~2% of positions."""
    import gguf

    r = gguf.GGUFReader(str(src))
    w = gguf.GGUFWriter(str(dest), str(r.fields["general.architecture"].contents()))
    for name, f in r.fields.items():
        if name.startswith("GGUF.") or name in ("general.architecture", "general.file_type"):
            continue
        sub = f.types[-1] if f.types[0] == gguf.GGUFValueType.ARRAY else None
        w.add_key_value(name, f.contents(), f.types[0], sub_type=sub)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    for t in r.tensors:
        shape = tuple(int(x) for x in reversed(t.shape.tolist()))
        w.add_tensor(
            t.name, gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32).reshape(shape)
        )
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return dest


@pytest.fixture(scope="module")
def lora(tmp_path_factory):
    """A random r=4 LoRA on all seven projections of the (dequantized) bundled model, as PEFT
    writes it, converted with write_lora_gguf; plus the HF reference argmaxes."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the CPU is shared; spinning threads only slow everyone down
    try:
        return _make_lora(tmp_path_factory.mktemp("lora"))
    finally:
        torch.set_num_threads(threads)


def _make_lora(folder):
    import torch
    from llama_cpp import Llama
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from engine.models.registry import bundled_model_path
    from training.adapter_gguf import write_lora_gguf

    gguf_path = bundled_model_path()
    base_f32 = f32_copy(gguf_path, folder / "base-f32.gguf")
    llm = Llama(model_path=str(gguf_path), n_ctx=64, n_threads=1, verbose=False)
    ids = [llm.tokenize(t.encode(), add_bos=False, special=True) for t in FIDELITY_TEXTS]
    llm.close()
    # transformers' GGUF loader dequantizes and undoes llama.cpp's q/k permutation on its own
    model = AutoModelForCausalLM.from_pretrained(
        str(gguf_path.parent), gguf_file=gguf_path.name, dtype=torch.float32
    ).eval()

    def argmax(m):
        with torch.inference_mode():
            return [m(torch.tensor([x])).logits[0].argmax(-1).numpy() for x in ids]

    ref_base = argmax(model)
    torch.manual_seed(0)
    peft_model = get_peft_model(
        model,
        LoraConfig(
            r=4, lora_alpha=8, target_modules=ALL_MODULES, lora_dropout=0.0, task_type="CAUSAL_LM"
        ),
    )
    randomize_lora(peft_model, seed=0, b_scale=0.15, qk_boost=3.0)
    peft_model.save_pretrained(
        str(folder / "adapter"), save_embedding_layers=False
    )  # no Hub lookup
    path = write_lora_gguf(folder / "adapter", folder / "mia-lora.gguf", base=gguf_path)
    with mock.patch("training.adapter_gguf._permute", lambda w, n_head, n_kv: w):
        unpermuted = write_lora_gguf(
            folder / "adapter", folder / "unpermuted-lora.gguf", base=gguf_path
        )
    ref_merged = argmax(peft_model.merge_and_unload().eval())
    return {
        "path": path,
        "unpermuted": unpermuted,
        "base_f32": base_f32,
        "ids": ids,
        "ref_base": ref_base,
        "ref_merged": ref_merged,
        "folder": folder,
    }


def agreement(a, b):
    return float(np.mean(np.concatenate([x == y for x, y in zip(a, b)])))


def llama_argmax(model_path, ids, lora_path=None):
    from llama_cpp import Llama

    llm = Llama(
        model_path=str(model_path),
        n_ctx=256,
        n_batch=256,
        n_threads=1,
        logits_all=True,
        verbose=False,
        lora_path=str(lora_path) if lora_path else None,
    )
    try:
        out = []
        for x in ids:
            llm.reset()
            llm.eval(x)
            out.append(np.asarray(llm.scores[: len(x)]).argmax(-1))
        return out
    finally:
        llm.close()


@pytest.mark.model
@pytest.mark.timeout(1800)  # the fixture counts too; minutes on a busy shared CPU
def test_adapter_in_llama_cpp_reproduces_the_merged_hf_model(lora):
    ids, merged = lora["ids"], lora["ref_merged"]
    fidelity = agreement(llama_argmax(lora["base_f32"], ids, lora["path"]), merged)
    changed = agreement(lora["ref_base"], merged)  # the adapter really changes the predictions
    wrong = agreement(llama_argmax(lora["base_f32"], ids, lora["unpermuted"]), merged)
    print(
        f"positions {sum(map(len, ids))}: adapter {fidelity:.4f}, base without adapter {changed:.4f}, "
        f"adapter without the q/k permutation {wrong:.4f}"
    )
    assert fidelity >= 0.98
    assert changed <= 0.9
    assert wrong <= fidelity - 0.1  # the permutation is needed, and it is the right one


def chat_request(slot, turns, adapter=None, max_tokens=12):
    from engine.llm.backend import GenRequest

    msgs = [
        {
            "role": "system",
            "content": f"You are {slot}, a friend in a small group chat. Reply briefly.",
        }
    ]
    for i, t in enumerate(turns):
        msgs.append({"role": "user" if i % 2 == 0 else "assistant", "content": t})
    return GenRequest(
        slot=slot,
        messages=msgs,
        max_tokens=max_tokens,
        temperature=0.0,
        repeat_penalty=1.0,
        seed=1,
        adapter=adapter,
    )


def run(rt, req):
    gen = rt.generate(req)
    return gen.text(), gen.stats


FIRST = "User: My week was long. Any idea for tonight?"
THANKS = "User: Thanks! And for the weekend?"


def two_turns(rt, slot, adapter):
    """``slot``'s two turns alone on ``rt``: (replies, stats, prompt turns of the second)."""
    turns, outs, stats = [FIRST], [], []
    for _ in range(2):
        text, st = run(rt, chat_request(slot, turns, adapter))
        outs.append(text)
        stats.append(st)
        second, turns = turns, turns + [text, THANKS]
    return outs, stats, second


@pytest.mark.model
@pytest.mark.timeout(1800)
def test_personas_with_and_without_adapter_alternate_on_one_runtime(lora, bundled_path):
    """Ben (no adapter) and Mia (adapter) alternate on one runtime; each gets exactly what it
    gets alone. "Alone" replays the same request sequence on a fresh runtime: llama.cpp's
    results for a token depend slightly on how the prompt was split into batches (KV reused
    from a previous turn vs one full prefill), so the reference must split it the same way."""
    from engine.llm.runtime import LlamaRuntime

    adapters = {"Ben": None, "Mia": str(lora["path"])}
    turns = {n: [FIRST] for n in adapters}
    outs: dict = {n: [] for n in adapters}
    stats: dict = {n: [] for n in adapters}
    rt = LlamaRuntime(bundled_path, n_ctx=1024, n_threads=1)
    try:
        for _ in range(2):
            for name, adapter in adapters.items():  # Ben, then Mia, then Ben, then Mia
                text, st = run(rt, chat_request(name, turns[name], adapter))
                outs[name].append(text)
                stats[name].append(st)
                turns[name] = turns[name] + [text, THANKS]
        for name in adapters:  # each slot kept its own KV: only its new turn was prefilled
            first, second = stats[name]
            assert second.prefilled_tokens <= second.prompt_tokens - first.prompt_tokens + 2, name
        # a slot is never reused under another adapter: Mia's slot without the adapter starts over
        mia_second = turns["Mia"][:3]
        mia_plain, mia_plain_stats = run(rt, chat_request("Mia", mia_second))
        assert mia_plain_stats.prefilled_tokens == mia_plain_stats.prompt_tokens
    finally:
        rt.close()
    alone = LlamaRuntime(bundled_path, n_ctx=1024, n_threads=1)
    try:
        assert two_turns(alone, "Mia", adapters["Mia"])[0] == outs["Mia"]
    finally:
        alone.close()
    plain = LlamaRuntime(bundled_path, n_ctx=1024, n_threads=1)  # never sees an adapter
    try:
        assert two_turns(plain, "Ben", None)[0] == outs["Ben"]
        assert (
            run(plain, chat_request("Zoe", mia_second))[0] == mia_plain
        )  # one full prefill, like Mia's
    finally:
        plain.close()
    assert all(outs["Mia"]) and all(outs["Ben"])
    assert outs["Mia"][1] != mia_plain  # the adapter is what made Mia's reply hers


@pytest.mark.model
@pytest.mark.timeout(1800)
def test_a_batch_context_with_the_adapter_decodes_what_the_persona_says_alone(lora, bundled_path):
    """Director rollouts batch an adapter persona's replies (BatchGenerator(adapter=...)): greedy,
    they equal the persona's own replies through runtime.generate with the adapter, and differ
    from the base model's."""
    from engine.llm.batch import BatchGenerator
    from engine.llm.runtime import LlamaRuntime

    asks = [
        [FIRST],
        ["User: I failed my driving test again."],
        ["User: My sister is visiting tomorrow."],
    ]
    rt = LlamaRuntime(bundled_path, n_ctx=512, n_threads=1)
    try:
        alone = [
            run(rt, chat_request(f"Mia{i}", t, str(lora["path"])))[0] for i, t in enumerate(asks)
        ]
        plain = [run(rt, chat_request(f"Ben{i}", t))[0] for i, t in enumerate(asks)]
        with BatchGenerator(rt, n_seq=3, n_ctx=512, adapter=lora["path"]) as gen:
            batched = [
                r.text
                for r in gen.generate([chat_request(f"Mia{i}", t) for i, t in enumerate(asks)])
            ]
        with BatchGenerator(rt, n_seq=3, n_ctx=512) as gen:
            batched_plain = [
                r.text
                for r in gen.generate([chat_request(f"Ben{i}", t) for i, t in enumerate(asks)])
            ]
    finally:
        rt.close()
    assert all(alone) and batched == alone
    assert batched_plain == plain and batched != batched_plain


@pytest.mark.model
@pytest.mark.timeout(1800)
def test_a_persona_uses_a_registered_adapter_over_the_shared_base(lora, store):
    from engine.chat.backends import default_backend_factory
    from engine.chat.group import GroupChat
    from engine.chat.settings import ChatSettings
    from engine.llm.adapters import AdapterBackend
    from engine.llm.backend import Generation
    from engine.llm.runtime import LlamaRuntime
    from engine.models.registry import BUNDLED_NAME, ModelRegistry
    from engine.personas import PersonaSet, persona_from_dict

    info = ModelRegistry(store).add_adapter(lora["path"], base=BUNDLED_NAME, name="mia-lora")
    assert (info.kind, info.base) == ("lora", BUNDLED_NAME)
    stored = ModelRegistry(store).get("mia-lora")
    assert (stored.kind, stored.base, stored.path) == ("lora", BUNDLED_NAME, str(lora["path"]))

    factory = default_backend_factory(store, n_ctx=1024, n_threads=1)
    assert isinstance(factory("mia-lora"), AdapterBackend)
    assert factory("mia-lora").runtime is factory(None)  # one loaded base model for both personas
    calls = []

    def recording(model):
        backend = factory(model)

        class Recorder:
            name, n_ctx, count_tokens = backend.name, backend.n_ctx, backend.count_tokens

            def generate(self, req, cancel=None):
                gen = backend.generate(req, cancel)
                pieces = []
                calls.append((model, dataclasses.replace(req), pieces))

                def it():
                    try:
                        for p in gen:
                            pieces.append(p)
                            yield p
                    finally:
                        gen.close()

                return Generation(it(), gen.stats)

        return Recorder()

    members = [
        persona_from_dict(
            {
                "name": n,
                "role": "a friend",
                "traits": ["kind"],
                "speaking_style": "Short and warm.",
                "model": m,
            }
        )
        for n, m in (("Ben", None), ("Mia", "mia-lora"))
    ]
    group = PersonaSet(name="duo", title="Duo", description="test", members=members)
    chat = GroupChat(
        group,
        settings=ChatSettings(
            policy="round-robin", max_speakers=2, temperature=0.0, max_tokens=16, seed=1
        ),
        store=store,
        backend_for=recording,
    )
    events = list(chat.send("Any idea for a quiet evening?", threading.Event()))
    # both turns ran, Ben's on the plain base model and Mia's on her adapter (whether a reply is
    # then posted or dropped as a copy depends on the words, which differ between CPUs)
    models_in_order = list(dict.fromkeys(c[0] for c in calls))  # a copy may be retried once
    assert models_in_order == [None, "mia-lora"], [e.to_dict() for e in events]
    assert any(e.type == "message" for e in events)
    members = {p.name: p.model for p in group.members}
    for row in store.messages(chat.conversation_id):
        if row["role"] == "companion":  # every stored reply names the model that wrote it
            assert (row["model"] == "mia-lora") == (members[row["speaker"]] == "mia-lora"), row
    # Mia spoke after Ben on the shared runtime; her raw reply is what she gets alone
    model, req, pieces = [c for c in calls if c[0] == "mia-lora"][-1]
    fresh = LlamaRuntime(factory(None).path, n_ctx=1024, n_threads=1)
    try:
        alone = AdapterBackend(fresh, lora["path"]).generate(req).text()
    finally:
        fresh.close()
    assert "".join(pieces) and alone.startswith("".join(pieces))


@pytest.mark.model
def test_non_adapter_files_are_refused_with_one_line(lora, bundled_path, tmp_path, store, capsys):
    import os

    from engine.llm.runtime import LlamaRuntime
    from engine.models.registry import BUNDLED_NAME, ModelRegistry, inspect_adapter, inspect_gguf
    from mascot_cli.main import main

    junk = tmp_path / "junk.gguf"
    junk.write_bytes(os.urandom(50_000))
    with pytest.raises(ModelError) as e:
        inspect_adapter(bundled_path)
    assert "not a LoRA adapter" in one_line(e)
    with pytest.raises(ModelError) as e:
        ModelRegistry(store).add_adapter(junk, base=BUNDLED_NAME)
    assert "not a GGUF" in one_line(e)
    with pytest.raises(ModelError) as e:  # and the other way round: an adapter is not a model
        inspect_gguf(lora["path"])
    assert "a LoRA adapter, not a model" in one_line(e)
    assert main(["models", "add-adapter", str(bundled_path), "--base", BUNDLED_NAME]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("Error:") and "not a LoRA adapter" in err and "\n" not in err
    rt = LlamaRuntime(bundled_path, n_ctx=256, n_threads=1)
    try:
        for bad in (bundled_path, junk):
            with pytest.raises(ModelError) as e:
                rt.load_adapter(bad)
            one_line(e)
        # a real adapter of another model: llama.cpp refuses it, we say so in one line
        from training.adapter_gguf import write_lora_gguf

        adapter, base, _, _ = tiny_adapter(tmp_path)
        other = write_lora_gguf(adapter, tmp_path / "tiny-lora.gguf", base=base)
        with pytest.raises(ModelError) as e:
            rt.load_adapter(other)
        assert "another base model" in one_line(e)
        assert rt.adapters == {}
    finally:
        rt.close()


@pytest.mark.model
def test_cli_registers_and_lists_an_adapter(lora, capsys):
    from engine.models.registry import BUNDLED_NAME
    from mascot_cli.main import main

    assert (
        main(["models", "add-adapter", str(lora["path"]), "--base", BUNDLED_NAME, "--name", "mia"])
        == 0
    )
    assert "Added adapter mia: LoRA on " + BUNDLED_NAME in capsys.readouterr().out
    assert main(["models", "list"]) == 0
    assert re.search(r"^mia .* LoRA on " + re.escape(BUNDLED_NAME), capsys.readouterr().out, re.M)
    assert main(["models", "verify", "mia"]) == 0


@pytest.mark.model
def test_adapter_costs_reports_memory_and_switch_times(lora, bundled_path):
    from engine.llm.adapters import adapter_costs
    from engine.llm.runtime import LlamaRuntime

    rt = LlamaRuntime(bundled_path, n_ctx=512, n_threads=1)
    try:
        costs = adapter_costs(rt, lora["path"], switches=5, turns=1, decode_tokens=4)
        assert costs["adapter_file_mb"] == pytest.approx(
            lora["path"].stat().st_size / 1e6, abs=1e-3
        )
        assert not costs["loaded_before"] and costs["switch_ms"] > 0
        for k in (
            "rss_load_mb",
            "pss_load_mb",
            "rss_used_mb",
            "first_token_ms_plain",
            "first_token_ms_to_adapter",
            "first_token_ms_from_adapter",
            "decode_tps_adapter",
        ):
            assert isinstance(costs[k], float), k
        assert rt._adapter is None and not any(s.startswith("__cost") for s in rt._slots)
        assert adapter_costs(rt, lora["path"], switches=1, turns=1, decode_tokens=2)[
            "loaded_before"
        ]
    finally:
        rt.close()
