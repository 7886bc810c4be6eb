"""``mascot-bench``'s side measurements: raw llama.cpp speed (the yardstick for the group's turns),
cold start, batched decoding, the Director's lane and LoRA adapters."""

from __future__ import annotations

import dataclasses
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from engine.llm.adapters import adapter_costs, mem_kb, synthetic_adapter
from engine.llm.backend import GenRequest, director_lane_ctx
from engine.llm.batch import batch_throughput
from engine.llm.runtime import LlamaRuntime
from engine.models.registry import bundled_model_path
from engine.personas import DEFAULT_SAMPLING

USER_LINES = [
    "I had a rough week at work and I can't switch off.",
    "My manager moved the deadline again.",
    "I keep replaying a meeting where I froze.",
    "I haven't been sleeping well.",
    "My friend says I should just quit.",
    "I like the people there though.",
    "Maybe I need a holiday.",
    "Money is tight, so quitting is scary.",
    "What would you do?",
    "I tried a walk at lunch today.",
    "It helped a little.",
    "Tomorrow I have a review.",
    "I'm worried they'll say I'm slow.",
    "Last year they said I was thorough.",
    "How do I prepare tonight without spiralling?",
    "Okay, I'll write three wins down.",
    "One: I fixed the invoice bug.",
    "Two: I trained the new hire.",
    "Three: I shipped on time in May.",
    "That actually looks decent.",
    "My sister called, she's proud of me.",
    "I'm still nervous.",
    "Should I bring notes?",
    "Alright, notes it is.",
    "I'll go to bed early.",
    "Thanks, all of you.",
    "Quick one: what do I say if they ask about the freeze?",
    "That's fair.",
    "Good night!",
    "Back again, the review went well!",
]


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def raw_speed(
    model_path: str,
    n_ctx: int,
    threads: int,
    prompt_tokens: int = 400,
    gen_tokens: int = 96,
    decode_context: int = 64,
) -> dict[str, float]:
    """Plain llama.cpp: prefill and decode tokens/s with the same settings as the app
    (decode measured after ``decode_context`` tokens of context, like an app turn)."""
    llm = _raw_llama(model_path, n_ctx, threads)
    text = " ".join(USER_LINES) * 16
    long = llm.tokenize(text.encode())
    toks = long[:prompt_tokens]
    llm.reset()
    t = time.perf_counter()
    llm.eval(toks)
    prefill = len(toks) / (time.perf_counter() - t)
    ctx = long[: max(2, min(decode_context, n_ctx - gen_tokens - 8, len(long)))]
    llm.reset()
    llm.eval(ctx[:-1])  # once: each run below reuses it (generate() matches the prefix)
    decode_runs = [_decode_tps(llm, ctx, gen_tokens, seed) for seed in (1, 2, 3)]
    del llm
    return {"prefill_tps": prefill, "decode_tps": median(decode_runs)}


def _raw_llama(model_path: str, n_ctx: int, threads: int) -> Any:
    """A plain ``llama_cpp.Llama`` with the app runtime's settings (engine.llm.runtime.LlamaRuntime)."""
    import llama_cpp

    return llama_cpp.Llama(
        model_path=model_path,
        n_ctx=n_ctx,
        n_batch=256,
        n_threads=threads,
        n_threads_batch=threads,
        seed=1,
        verbose=False,
    )


def _decode_tps(llm: Any, ctx: list[int], gen_tokens: int, seed: int) -> float:
    """Plain llama.cpp decode after ``ctx`` with the companions' sampler settings, tokens/s from
    the first sampled token (generate() evaluates only what ``ctx`` adds to the cache)."""
    s = DEFAULT_SAMPLING
    llm.set_seed(seed)
    n, t = 0, None
    for tok in llm.generate(
        ctx,
        temp=s["temperature"],
        top_k=s["top_k"],
        top_p=s["top_p"],
        repeat_penalty=s["repeat_penalty"],
    ):
        if t is None:
            t = time.perf_counter()  # from the first sampled token: decode only
        n += 1
        if n > gen_tokens or tok == llm.token_eos():
            break
    return (n - 1) / max(1e-9, time.perf_counter() - t) if t is not None and n > 1 else 0.0


class RawDecodeProbe:
    """Plain llama.cpp (its own context, the app's settings and sampler) decoding at a given
    context length, interleaved with the conversation's rounds. The synthetic context is one
    long token list; llama.cpp's prefix match means each call reads only what its longer
    context adds."""

    def __init__(self, model_path: str | None, n_ctx: int, threads: int, gen_tokens: int = 32):
        self.llm = _raw_llama(str(model_path or bundled_model_path()), n_ctx, threads)
        self.long = self.llm.tokenize((" ".join(USER_LINES) * 24).encode())
        self.gen_tokens = gen_tokens
        self.n_ctx = n_ctx

    def decode_tps(self, context: int) -> float:
        ctx = self.long[: max(2, min(context, self.n_ctx - self.gen_tokens - 8, len(self.long)))]
        return _decode_tps(self.llm, ctx, self.gen_tokens, seed=1)

    def close(self) -> None:
        self.llm.close()


def cold_start(threads: int, n_ctx: int) -> float:
    code = (
        "import time,sys,os;t=float(sys.argv[1]);os.environ['MASCOT_THREADS']=sys.argv[2]\n"
        "from engine.chat.group import GroupChat\nfrom engine.chat.settings import ChatSettings\n"
        "from engine.chat.backends import default_backend_factory\n"
        "from engine.persona_files import load_set\n"
        f"c=GroupChat(load_set('support'),settings=ChatSettings(max_tokens=16),backend_for=default_backend_factory(None,n_ctx={n_ctx}))\n"
        "for e in c.send('Hello everyone'):\n"
        "    if e.type=='token': print(time.time()-t); break\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, repr(time.time()), str(threads)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    return float(out.stdout.strip().splitlines()[-1])


def batch_speed(model: str, threads: int) -> dict[str, Any]:
    """Batched vs one-after-the-other generation of 4 independent replies (engine.llm.batch):
    4 different prompts, and 4 samples of one prompt (the training case)."""
    rt = LlamaRuntime(model, n_ctx=2048, n_threads=threads)
    try:
        return {
            "different_prompts": batch_throughput(rt, n_seq=4, max_tokens=48),
            "one_prompt": batch_throughput(rt, n_seq=4, max_tokens=48, shared_prompt=True),
        }
    finally:
        rt.close()


def lane_cost(model: str, threads: int, n_ctx: int, context_tokens: int = 1000) -> dict[str, Any]:
    """What the Director's own lane costs (``LlamaRuntime.lane``: a second context on the same
    file) and what it saves: PSS/RSS growth when the lane is created and used for a
    ``context_tokens`` prompt, and the time of one KV slot switch in the shared context (save the
    live slot, load another) with slots of that size, the copy the lane avoids twice per decision.
    The lane gets the size ``GroupChat`` gives the Director's lane (half the context)."""
    rt = LlamaRuntime(model, n_ctx=n_ctx, n_threads=threads)
    try:
        line = "User: I keep thinking about what my friend said at dinner, and I can't let it go. "
        text = line * max(1, context_tokens // max(1, rt.count_tokens(line)))
        req = GenRequest(
            slot="a", messages=[{"role": "user", "content": text}], max_tokens=1, temperature=0.0
        )
        rt.generate(req).text()
        rt.generate(dataclasses.replace(req, slot="b")).text()
        t0 = time.perf_counter()
        for i in range(10):
            with rt.lock:
                rt._switch_to("a" if i % 2 == 0 else "b")
        switch_ms = (time.perf_counter() - t0) * 100
        before = mem_kb()
        rt.lane("director", director_lane_ctx(n_ctx)).generate(
            dataclasses.replace(req, slot="__director__")
        ).text()
        after = mem_kb()
        return {
            "context_tokens": rt.count_tokens(text),
            "slot_switch_ms": round(switch_ms, 2),
            "lane_pss_mb": round((after["pss"] - before["pss"]) / 1024, 1),
            "lane_rss_mb": round((after["rss"] - before["rss"]) / 1024, 1),
        }
    finally:
        rt.close()


def adapter_speed(model: str, threads: int) -> dict[str, Any]:
    """Per-persona LoRA adapters over one shared base (engine.llm.adapters): memory and switch cost,
    with a synthetic rank-16 adapter written for the model (bench only; real adapters come from
    ``mascot-train``)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = synthetic_adapter(model, Path(tmp) / "bench-lora.gguf", rank=16)
        rt = LlamaRuntime(model, n_ctx=2048, n_threads=threads)
        try:
            return adapter_costs(rt, path)
        finally:
            rt.close()
