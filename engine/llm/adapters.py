"""Per-persona LoRA adapters over one shared base model, and what they cost.

A persona whose ``model`` is a registered adapter (``mascot models add-adapter FILE --base
NAME``) runs on the base model's ``LlamaRuntime``: the base weights are mapped once, each adapter
adds only its A/B matrices, and the adapter is switched per request through llama.cpp's
low-level API (``llama_set_adapters_lora``), so personas with and without adapters take turns on
one loaded model. ``AdapterBackend`` is that persona's view of the runtime.

``adapter_costs`` measures the price: memory added by loading an adapter, the cost of setting and
clearing it, and the time from a persona switch to the first token with and without an adapter.
"""

from __future__ import annotations

import dataclasses
import statistics
import threading
import time
from pathlib import Path
from typing import Any

from engine.llm.backend import Generation, GenRequest
from engine.llm.runtime import LlamaRuntime


class AdapterBackend:
    """A ``Backend`` that runs every request on ``runtime`` with the adapter at ``adapter_path``."""

    def __init__(self, runtime: LlamaRuntime, adapter_path: str | Path, name: str | None = None):
        self.runtime = runtime
        self.adapter = str(Path(adapter_path).expanduser().resolve())
        runtime.load_adapter(self.adapter)  # a broken or mismatched adapter fails here, in one line
        self.name = name or f"{runtime.name}+{Path(self.adapter).name}"

    @property
    def n_ctx(self) -> int:
        return self.runtime.n_ctx

    @property
    def info(self) -> Any:
        """The base model's GGUF info (its size decides the Director's directive mode)."""
        return self.runtime.info

    @property
    def weights(self) -> object:
        return self.runtime

    @property
    def model_file(self) -> str:
        return self.adapter

    @property
    def parameters(self) -> int:
        return self.runtime.parameters

    def lane(self, name: str, n_ctx: int | None = None) -> "AdapterBackend":
        """The same adapter on the base runtime's lane ``name`` (see ``LlamaRuntime.lane``)."""
        return AdapterBackend(self.runtime.lane(name, n_ctx), self.adapter, self.name)

    def count_tokens(self, text: str) -> int:
        return self.runtime.count_tokens(text)

    def generate(self, req: GenRequest, cancel: threading.Event | None = None) -> Generation:
        gen = self.runtime.generate(dataclasses.replace(req, adapter=self.adapter), cancel)
        gen.stats.model = self.name
        return gen

    def prefill(self, req: GenRequest, cancel: threading.Event | None = None) -> int:
        return self.runtime.prefill(dataclasses.replace(req, adapter=self.adapter), cancel)


def mem_kb() -> dict[str, int]:
    """Rss and Pss of this process in kB, from /proc/self/smaps_rollup (zeros where absent)."""
    out = {"rss": 0, "pss": 0}
    try:
        for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
            key, _, rest = line.partition(":")
            if key in ("Rss", "Pss"):
                out[key.lower()] = int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return out


COST_MESSAGES = [
    {
        "role": "system",
        "content": "You are Mia, a warm and practical friend in a small group chat.",
    },
    {
        "role": "user",
        "content": "User: I had a long day at work and I can't switch off. Any ideas?",
    },
]


def adapter_costs(
    runtime: LlamaRuntime,
    adapter_path: str | Path,
    *,
    switches: int = 50,
    turns: int = 5,
    decode_tokens: int = 24,
) -> dict[str, Any]:
    """Measure what the adapter at ``adapter_path`` costs on ``runtime`` (its base model).

    Returns (times in milliseconds, memory in MB):

    * ``adapter_file_mb``; ``rss_load_mb`` / ``pss_load_mb``: growth of this process's RSS/PSS
      when llama.cpp loads the adapter (0 with ``loaded_before`` when it was loaded already);
      ``rss_used_mb`` / ``pss_used_mb``: growth from before loading to after the adapter
      persona's turns (adds the larger compute graph llama.cpp reserves with an adapter set).
      Plain personas have taken their turns before the first reading, so their own KV slots
      and buffers are not counted;
    * ``switch_ms``: one set + clear of the adapter on the context, averaged over ``switches``
      (bookkeeping only: llama.cpp rebuilds its graph at the next evaluation, which the
      first-token times below include);
    * ``first_token_ms_plain``: median time of a 1-token turn for a plain persona right after
      another plain persona (KV slot switch + first token, no adapter change);
      ``first_token_ms_to_adapter``: the same for the adapter persona right after a plain one;
      ``first_token_ms_from_adapter``: a plain persona right after the adapter persona;
    * ``decode_tps_plain`` / ``decode_tps_adapter``: greedy tokens/s over ``decode_tokens``.

    Uses three scratch slots (dropped afterwards); run it while no round is in progress."""
    key = str(Path(adapter_path).expanduser().resolve())
    out: dict[str, Any] = {
        "model": runtime.name,
        "adapter": Path(key).name,
        "adapter_file_mb": round(Path(key).stat().st_size / 1e6, 3),
        "loaded_before": key in runtime.adapters,
    }
    plain_a = GenRequest(
        slot="__cost_plain_a__",
        messages=COST_MESSAGES,
        max_tokens=1,
        temperature=0.0,
        repeat_penalty=1.0,
    )
    plain_b = dataclasses.replace(plain_a, slot="__cost_plain_b__")
    lora = dataclasses.replace(plain_a, slot="__cost_lora__", adapter=key)

    def turn(req: GenRequest) -> float:
        t0 = time.perf_counter()
        runtime.generate(req).text()
        return (time.perf_counter() - t0) * 1000

    def decode_tps(req: GenRequest) -> float:
        gen = runtime.generate(dataclasses.replace(req, max_tokens=decode_tokens))
        gen.text()
        s = gen.stats
        return round(max(0, s.completion_tokens - 1) / max(1e-9, s.seconds - s.ttft), 2)

    try:
        with runtime.lock:
            runtime._apply_adapter(None)
        for req in (plain_a, plain_b):  # plain personas first: their memory is not the adapter's
            turn(req)
        out["decode_tps_plain"] = decode_tps(plain_a)
        before = mem_kb()
        t = time.perf_counter()
        runtime.load_adapter(key)
        out["load_ms"] = round((time.perf_counter() - t) * 1000, 3)
        loaded = mem_kb()
        out["rss_load_mb"] = round((loaded["rss"] - before["rss"]) / 1024, 2)
        out["pss_load_mb"] = round((loaded["pss"] - before["pss"]) / 1024, 2)
        with runtime.lock:
            t = time.perf_counter()
            for _ in range(switches):
                runtime._apply_adapter(key)
                runtime._apply_adapter(None)
            out["switch_ms"] = round((time.perf_counter() - t) / max(1, switches) * 1000, 4)
        out["switches"] = switches
        turn(lora)  # prefill the adapter persona's slot once; later turns reuse its KV
        plain, to_lora, from_lora = [], [], []
        for _ in range(turns):
            plain.append(turn(plain_b))  # plain_a -> plain_b: slot switch only
            to_lora.append(turn(lora))  # plain_b -> lora: slot switch + adapter set
            from_lora.append(turn(plain_a))  # lora -> plain_a: slot switch + adapter clear
        out["first_token_ms_plain"] = round(statistics.median(plain), 2)
        out["first_token_ms_to_adapter"] = round(statistics.median(to_lora), 2)
        out["first_token_ms_from_adapter"] = round(statistics.median(from_lora), 2)
        out["turns"] = turns
        out["decode_tps_adapter"] = decode_tps(lora)
        used = mem_kb()
        out["rss_used_mb"] = round((used["rss"] - before["rss"]) / 1024, 2)
        out["pss_used_mb"] = round((used["pss"] - before["pss"]) / 1024, 2)
    finally:
        for req in (plain_a, plain_b, lora):
            runtime.drop_slot(req.slot)
            runtime._slot_adapters.pop(req.slot, None)
        with runtime.lock:
            runtime._apply_adapter(None)
    return out


def synthetic_adapter(
    model_path: str | Path,
    out_path: str | Path,
    *,
    rank: int = 16,
    alpha: float = 32.0,
    targets: tuple[str, ...] = (
        "attn_q",
        "attn_k",
        "attn_v",
        "attn_output",
        "ffn_gate",
        "ffn_up",
        "ffn_down",
    ),
    seed: int = 0,
    scale: float = 0.01,
) -> Path:
    """A random LoRA adapter GGUF shaped for ``model_path`` (for measuring adapter costs without
    a trained one; it changes outputs arbitrarily, more with a larger ``scale`` of B). Same
    layout as ``training/adapter_gguf.py`` writes: ``blk.N.<target>.weight.lora_a`` (rank x in)
    and ``.lora_b`` (out x rank), f16."""
    import gguf
    import numpy as np

    reader = gguf.GGUFReader(str(model_path))
    arch = bytes(reader.fields["general.architecture"].parts[-1]).decode()
    rng = np.random.default_rng(seed)
    out_path = Path(out_path)
    writer = gguf.GGUFWriter(str(out_path), arch)
    writer.add_string("general.type", "adapter")
    writer.add_string("adapter.type", "lora")
    writer.add_float32("adapter.lora.alpha", float(alpha))
    for t in reader.tensors:
        parts = t.name.split(".")
        if len(parts) == 4 and parts[0] == "blk" and parts[2] in targets and parts[3] == "weight":
            n_in, n_out = int(t.shape[0]), int(t.shape[1])  # GGUF shapes are (ne0 = in, ne1 = out)
            a = (rng.standard_normal((rank, n_in)) / np.sqrt(n_in)).astype(np.float16)
            b = (rng.standard_normal((n_out, rank)) * scale).astype(np.float16)
            writer.add_tensor(t.name + ".lora_a", a)
            writer.add_tensor(t.name + ".lora_b", b)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out_path
