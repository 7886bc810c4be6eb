"""Batched generation: several independent sequences decoded together on one loaded model.

Evaluation and training generate many replies that do not depend on each other (K sampled
replies per training context, rollouts of the Director, replies for a list of scenarios). A chat
round cannot be batched (each speaker reads the previous one), but these can:
``BatchGenerator`` decodes up to ``n_seq`` sequences with **one** ``llama_decode`` per step (a
batch that holds the next token of every live sequence), so the weights are read once per step
instead of once per sequence and token.

How it works:

* **A second llama.cpp context on the same weights.** ``llama_init_from_model`` on the
  runtime's already loaded model: nothing is loaded again, and the app's own context (its KV
  slots, see ``engine.llm.runtime``) is never touched. The context has ``n_seq`` KV streams
  (``kv_unified = False``) of ``n_ctx`` cells each, one per sequence.
* **Shared prompts are evaluated once.** When a request's prompt shares at least
  ``MIN_SHARE`` leading tokens with a sequence already in the cache (the usual case: K samples
  for one context), that stream is copied (``llama_memory_seq_cp``; across streams llama.cpp
  copies the whole stream, a memcpy) and only the rest of the prompt is evaluated. A request
  waits while another sequence is still evaluating a prompt it could share.
* **Continuous refill.** More requests than ``n_seq`` are queued; a slot freed by a finished
  sequence takes the next request at the next step (its stale cells are reused when the new
  prompt starts the same way).
* **Sampling in numpy, per sequence**, in llama-cpp-python's order (the chain that
  ``LlamaRuntime.generate`` uses): repeat penalty over the sequence's last 64 generated tokens,
  then greedy (temperature 0) or top-k -> top-p -> min-p 0.05 -> temperature -> draw with the
  request's own ``numpy`` generator (``seed``; ``None`` = fresh entropy). Same seed, same text.
* **Same stopping rules as the app**: end-of-generation token, stop strings (the text is cut
  before them), ``max_tokens``; text is assembled with an incremental UTF-8 decoder.

Exactness (``exact=True``, the default): every sequence keeps its own KV stream laid out as in
``LlamaRuntime`` and its prompt is evaluated in the same chunks. llama.cpp attends over as
many cells as the longest stream in a batch, and the rounding of its attention sums depends on
that number, so in exact mode only streams of the same length share a step: shorter streams
take a few steps alone to catch up (at most ``CATCH_UP`` behind a larger group), then run
together. K samples of one prompt are always in step. Greedy results then equal
``runtime.generate`` token for token (tested). With ``exact=False`` every live stream shares
every step; results differ from ``runtime.generate`` only by that rounding, which can flip a
near-tie (docs/performance.md, batched generation). Sampled texts
follow the same distribution as ``runtime.generate`` but not its random draws (llama.cpp's RNG
is not reproduced); with a seed they are reproducible, whatever the batch composition.

Limits, stated honestly:

* No ``json_schema`` (grammar), ``choices`` or per-request LoRA ``adapter``: ``generate_many``
  sends those to ``backend.generate`` one by one; ``BatchGenerator.generate`` refuses them. A
  generator can instead hold one adapter for all its sequences (``adapter=``, set on its own
  context), which is how an ``AdapterBackend`` persona's replies are batched.
* Memory: the KV cache holds ``n_seq * n_ctx`` cells (their size: docs/performance.md),
  allocated up front; size ``n_ctx`` to the prompts (``generate_many``
  does).
* On a CPU the gain is modest: a step of several sequences costs much more than a step of one
  (at this model size the matrix products are mostly compute-bound, not limited by reading the
  weights); measure with ``batch_throughput``.
* Tested on transformer models only. Recurrent/hybrid models (Mamba, RWKV, ...) cannot trim a
  sequence, so there every prompt is evaluated whole, and exactness is not claimed.

Thread safety: the generator owns its llama.cpp context and shares only the (read-only) weights
and vocabulary with the runtime, so it does **not** take ``runtime.lock``; it can run while the
app generates (both compete for the same CPU cores). One ``generate`` call runs at a time per
generator (an internal lock). Close the generator (``close()`` or ``with``) before the runtime's
model is closed.
"""

from __future__ import annotations

import codecs
import ctypes
import math
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from engine import cpu
from engine.errors import ModelError
from engine.llm.backend import GenRequest
from engine.llm.runtime import LlamaRuntime

PENALTY_LAST_N = 64  # llama-cpp-python's ``last_n_tokens_size`` (LlamaRuntime.generate uses it)
MIN_P = 0.05  # llama-cpp-python's default ``min_p``, part of LlamaRuntime.generate's chain
MIN_SHARE = 16  # shortest common prompt prefix worth copying a KV stream for
CATCH_UP = 8  # exact mode: steps a shorter stream may take alone to join a larger group


@dataclass
class BatchResult:
    text: str
    completion_tokens: int  # generated tokens (the end-of-generation token not counted)
    prompt_tokens: int
    stopped: str  # "stop", "length", "cancelled"
    prefilled_tokens: int = 0  # prompt tokens this sequence evaluated (the rest were shared)


# -- sampling ---------------------------------------------------------------------------------


def sample_token(
    logits: np.ndarray, req: GenRequest, history: Sequence[int], rng: np.random.Generator
) -> int:
    """One token from ``logits`` (modified in place) with the request's settings.

    The order follows the llama.cpp sampler chain that llama-cpp-python builds for
    ``Llama.generate``: penalties, then greedy, or top-k, top-p, min-p, temperature, draw."""
    if req.repeat_penalty != 1.0 and len(history):
        recent = np.unique(np.asarray(history[-PENALTY_LAST_N:], dtype=np.intp))
        v = logits[recent]
        logits[recent] = np.where(v <= 0, v * req.repeat_penalty, v / req.repeat_penalty)
    temp = req.temperature
    if temp == 0:
        return int(np.argmax(logits))
    if temp < 0:  # llama-cpp-python: plain draw from the softmax, no truncation
        p = np.exp(logits.astype(np.float64) - float(logits.max()))
        return int(_draw(p, rng))
    n = logits.size
    idx = None
    cand = logits
    if 0 < req.top_k < n:
        idx = np.argpartition(logits, n - req.top_k)[n - req.top_k :]
        cand = logits[idx]
    top = float(cand.max())
    # min-p (after top-p in the chain) keeps the tokens whose logit is within log(MIN_P) of the
    # best one; top-p keeps a prefix of the same sorted order, so only that set is sorted.
    keep = np.flatnonzero(cand >= top + math.log(MIN_P))
    order = keep[np.argsort(-cand[keep], kind="stable")]
    if req.top_p < 1.0:
        e = np.exp(cand.astype(np.float64) - top)  # top-p's softmax is over all candidates
        cum = np.cumsum(e[order]) / e.sum()
        order = order[: int(np.searchsorted(cum, req.top_p)) + 1]
    z = (cand[order].astype(np.float64) - top) / temp
    j = int(order[_draw(np.exp(z - z.max()), rng)])
    return int(idx[j]) if idx is not None else j


def _draw(weights: np.ndarray, rng: np.random.Generator) -> int:
    cum = np.cumsum(weights)
    return min(int(np.searchsorted(cum, rng.random() * cum[-1], side="right")), len(cum) - 1)


def common_prefix(a: Sequence[Any], b: Sequence[Any]) -> int:
    """How many leading items ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


# -- the generator ----------------------------------------------------------------------------


class _Seq:
    """One request in a slot: its prompt, what is still to be evaluated, and its text."""

    def __init__(self, index: int, req: GenRequest, prompt: list[int]):
        self.index = index
        self.req = req
        self.prompt = prompt
        self.pending: list[int] = []
        self.prefilled = 0
        self.generated: list[int] = []
        self.text = ""
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.stops = [x for x in req.stop if x]
        self.rng = np.random.default_rng(None if req.seed is None else req.seed % 2**64)

    def result(self, stopped: str) -> BatchResult:
        return BatchResult(
            self.text, len(self.generated), len(self.prompt), stopped, self.prefilled
        )


class BatchGenerator:
    """Decodes up to ``n_seq`` independent requests in parallel on ``runtime``'s weights.

    ``n_ctx`` is the window of **each** sequence (prompt + max_tokens must fit, as in
    ``LlamaRuntime``); the context holds ``n_seq * n_ctx`` cells. Threads: the runtime's unless
    ``n_threads`` is given. ``exact``: see the module docstring."""

    def __init__(
        self,
        runtime: LlamaRuntime,
        n_seq: int = 4,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        exact: bool = True,
        adapter: str | Path | None = None,
    ):
        if n_seq < 1:
            raise ValueError("n_seq must be at least 1")
        lc = runtime._llama_cpp
        self._lc = lc
        self.runtime = runtime
        if runtime.info.context_length:
            n_ctx = min(n_ctx, runtime.info.context_length)
        self.n_seq = n_seq
        self.exact = exact
        self.chunk = runtime.PREFILL_CHUNK  # the runtime's prefill chunks (same numerics)
        # the runtime's own settings (threads, flash attention, KV types, RoPE), then ours
        cp = lc.llama_context_params.from_buffer_copy(runtime.llm.context_params)
        cp.n_ctx = n_ctx * n_seq
        cp.n_seq_max = n_seq
        cp.kv_unified = False
        cp.n_batch = cp.n_ubatch = max(512, n_seq * 2 * self.chunk)
        if n_threads:
            cp.n_threads = cp.n_threads_batch = n_threads
        self.n_threads = int(cp.n_threads)
        self.n_batch = cp.n_batch
        self._ctx = lc.llama_init_from_model(runtime.llm.model, cp)
        if not self._ctx:
            raise ModelError(
                f"{runtime.name}: llama.cpp could not create a context for {n_seq} "
                f"sequences of {n_ctx} tokens (not enough memory?); lower n_seq or n_ctx."
            )
        self.n_ctx = min(n_ctx, int(lc.llama_n_ctx_seq(self._ctx)))
        self.adapter = str(Path(adapter).expanduser().resolve()) if adapter else None
        if self.adapter:  # every sequence of this context runs with it (adapters are per context)
            handles = (lc.llama_adapter_lora_p_ctypes * 1)(runtime.load_adapter(self.adapter))
            if lc.llama_set_adapters_lora(self._ctx, handles, 1, (ctypes.c_float * 1)(1.0)) != 0:
                lc.llama_free(self._ctx)
                self._ctx = None
                raise ModelError(
                    f"llama.cpp could not set the adapter {self.adapter} on a batch context."
                )
        self._mem = lc.llama_get_memory(self._ctx)
        self._batch = lc.llama_batch_init(self.n_batch, 0, 1)
        self._vocab = runtime.llm._model.vocab
        self.n_vocab = int(lc.llama_vocab_n_tokens(self._vocab))
        self._resident: list[list[int]] = [[] for _ in range(n_seq)]  # tokens in each KV stream
        self._pieces: dict[int, bytes] = {}
        self._lock = threading.Lock()

    # lifecycle ----------------------------------------------------------------------------------
    def close(self) -> None:
        """Free the context (waits for a running ``generate``). Safe to call twice."""
        lock = getattr(self, "_lock", None)
        if lock is None:  # __init__ failed before the context existed
            return
        with lock:
            ctx, self._ctx = self._ctx, None
            if ctx is None:
                return
            self._lc.llama_batch_free(self._batch)
            # a context must not outlive its model: if the runtime's model was closed first, the
            # context is left to the process exit rather than freed against released weights
            if getattr(self.runtime.llm._model, "model", None) is not None:
                self._lc.llama_free(ctx)

    def __enter__(self) -> "BatchGenerator":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - a destructor never raises
            pass

    # helpers ------------------------------------------------------------------------------------
    def _piece(self, tok: int) -> bytes:
        p = self._pieces.get(tok)
        if p is None:
            p = self._pieces[tok] = self.runtime.llm.detokenize([tok])
        return p

    def _clear(self) -> None:
        self._lc.llama_memory_clear(self._mem, True)
        self._resident = [[] for _ in range(self.n_seq)]

    def _decode(self, items: list[tuple[int, int, int, bool]]) -> None:
        b = self._batch
        b.n_tokens = len(items)
        for i, (tok, pos, seq, out) in enumerate(items):
            b.token[i] = tok
            b.pos[i] = pos
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = seq
            b.logits[i] = out
        rc = self._lc.llama_decode(self._ctx, b)
        if rc != 0:
            raise ModelError(
                f"{self.runtime.name}: llama.cpp could not decode a batch of "
                f"{len(items)} tokens (code {rc})."
            )

    def _logits(self, i: int) -> np.ndarray:
        ptr = self._lc.llama_get_logits_ith(self._ctx, i)
        if not ptr:
            raise ModelError(f"{self.runtime.name}: llama.cpp returned no logits for a batch row.")
        return np.ctypeslib.as_array(ptr, shape=(self.n_vocab,)).copy()

    def _place(
        self,
        seq: _Seq,
        slot: int,
        slots: list[_Seq | None],
        copied_from: set[int],
        copied_to: set[int],
    ) -> bool:
        """Put ``seq`` into free ``slot``, reusing the longest cached prefix of its prompt.
        Returns False when it should wait a step for a prompt that is still being evaluated."""
        toks, res = seq.prompt, self._resident
        limit = len(toks) - 1  # the last prompt token is evaluated for its logits
        own = min(common_prefix(res[slot], toks), limit)
        src, best = slot, own
        for q in range(self.n_seq):
            if q == slot or q in copied_to:  # no copy chains within one step
                continue
            c = min(common_prefix(res[q], toks), limit)
            if c > best:
                src, best = q, c
        for q, other in enumerate(slots):  # a prompt still being evaluated may serve better
            if other is not None and len(other.pending) > 1 and q not in copied_to:
                if min(common_prefix(res[q] + other.pending, toks), limit) >= best + MIN_SHARE:
                    return False
        lc, mem = self._lc, self._mem
        if src != slot and best - own >= MIN_SHARE and slot not in copied_from:
            lc.llama_memory_seq_cp(mem, src, slot, -1, -1)  # whole stream (the only kind allowed
            res[slot] = list(res[src])  # across streams), then trimmed
            copied_from.add(src)
            copied_to.add(slot)
            own = best
        if not lc.llama_memory_seq_rm(mem, slot, own, -1):
            lc.llama_memory_seq_rm(mem, slot, -1, -1)  # recurrent memory: start over
            own = 0
        del res[slot][own:]
        seq.pending = toks[own:]
        seq.prefilled = len(seq.pending)
        slots[slot] = seq
        return True

    def _one_length(
        self, parts: dict[int, list[int]], slots: list[_Seq | None]
    ) -> dict[int, list[int]]:
        """The streams that share this step in exact mode: llama.cpp attends over as many cells as
        the longest stream in the batch, and the rounding of its sums depends on that number, so
        only streams that reach the same length share a step. Prompts being evaluated go first;
        then the shortest streams, so they catch up and run together, unless they are more than
        ``CATCH_UP`` tokens behind a larger group, which then goes first."""
        res = self._resident
        groups: dict[int, list[int]] = {}
        for q, part in parts.items():
            groups.setdefault(len(res[q]) + len(part), []).append(q)
        keys = sorted(groups)
        prompt = [k for k in keys if any(len(slots[q].pending) > 1 for q in groups[k])]  # type: ignore[union-attr]
        if prompt:
            pick = prompt[0]
        else:
            pick = keys[0]
            largest = max(keys, key=lambda k: (len(groups[k]), -k))
            if (
                len(keys) > 1
                and keys[1] - keys[0] > CATCH_UP
                and len(groups[largest]) > len(groups[pick])
            ):
                pick = largest
        return {q: parts[q] for q in groups[pick]}

    # generation ---------------------------------------------------------------------------------
    def generate(
        self, requests: Sequence[GenRequest], cancel: threading.Event | None = None
    ) -> list[BatchResult]:
        """Generate every request (in any number; up to ``n_seq`` at a time). Results are in the
        order of ``requests``. Raises ``ModelError`` (one line) for a prompt that does not fit."""
        rt = self.runtime
        seqs: list[_Seq] = []
        for i, req in enumerate(requests):
            if not batchable(req):
                raise ValueError(
                    "BatchGenerator does not take json_schema, choices or adapter "
                    "requests; use generate_many (it sends them to runtime.generate)."
                )
            toks = rt.tokenize(rt.format.render(req.messages))
            if len(toks) > self.n_ctx - req.max_tokens:
                raise ModelError(
                    f"The prompt ({len(toks)} tokens) does not fit the context "
                    f"({self.n_ctx}); the conversation must be trimmed first."
                )
            if not toks:
                raise ModelError("The prompt is empty; there is nothing to generate from.")
            seqs.append(_Seq(i, req, toks))
        with self._lock, cpu.generating():
            if self._ctx is None:
                raise ModelError("This batch generator is closed.")
            try:
                return self._run(seqs, cancel)
            except BaseException:
                self._clear()
                raise

    def _run(self, seqs: list[_Seq], cancel: threading.Event | None) -> list[BatchResult]:
        results: list[BatchResult | None] = [None] * len(seqs)
        queue = list(reversed(seqs))  # pop() takes the next request
        slots: list[_Seq | None] = [None] * self.n_seq
        is_eog = self._lc.llama_vocab_is_eog
        res = self._resident
        while queue or any(s is not None for s in slots):
            if cancel is not None and cancel.is_set():
                for s in slots:
                    if s is not None:
                        results[s.index] = s.result("cancelled")
                for s in queue:
                    results[s.index] = BatchResult("", 0, len(s.prompt), "cancelled", 0)
                return [r for r in results if r is not None]
            copied_from: set[int] = set()
            copied_to: set[int] = set()
            for slot in range(self.n_seq):
                if queue and slots[slot] is None:
                    if not self._place(queue[-1], slot, slots, copied_from, copied_to):
                        break
                    queue.pop()
            parts: dict[int, list[int]] = {}
            for slot, s in enumerate(slots):
                if s is not None and s.pending:
                    n = len(s.pending)
                    # the runtime's chunks: PREFILL_CHUNK each, a shorter tail folded into the last
                    take = n - 1 if n - 1 < 2 * self.chunk else self.chunk
                    parts[slot] = s.pending[:take] if n > 1 else s.pending
            if self.exact and parts:
                parts = self._one_length(parts, slots)
            items: list[tuple[int, int, int, bool]] = []
            outputs: list[tuple[int, int]] = []  # (slot, batch row) with logits
            taken: list[int] = [0] * self.n_seq
            for slot, part in parts.items():
                s = slots[slot]
                assert s is not None
                n = len(s.pending)
                pos = len(res[slot])
                for j, tok in enumerate(part):
                    items.append((tok, pos + j, slot, n == 1))
                if n == 1:
                    outputs.append((slot, len(items) - 1))
                taken[slot] = len(part)
            if not items:  # every free slot waits for a prompt that nothing is evaluating
                raise ModelError("Batched generation stalled (internal error).")
            self._decode(items)
            for slot, s in enumerate(slots):
                if s is not None and taken[slot]:
                    res[slot].extend(s.pending[: taken[slot]])
                    del s.pending[: taken[slot]]
            for slot, row in outputs:
                s = slots[slot]
                assert s is not None
                tok = sample_token(self._logits(row), s.req, s.generated, s.rng)
                finish = ""
                if is_eog(self._vocab, tok):
                    finish = "stop"
                else:
                    s.generated.append(tok)
                    s.text += s.decoder.decode(self._piece(tok))
                    cut = min((i for i in (s.text.find(x) for x in s.stops) if i >= 0), default=-1)
                    if cut >= 0:
                        s.text, finish = s.text[:cut], "stop"
                    elif len(s.generated) >= s.req.max_tokens:
                        finish = "length"
                    else:
                        s.pending = [tok]
                if finish:
                    if finish != "stop":
                        s.text += s.decoder.decode(b"", final=True)
                    results[s.index] = s.result(finish)
                    slots[slot] = None  # its cells stay for prefix reuse
        return [r for r in results if r is not None]


# -- helpers for callers ----------------------------------------------------------------------


def batchable(req: GenRequest) -> bool:
    """Whether ``BatchGenerator`` can serve ``req``: no grammar (``json_schema``), no constrained
    ``choices`` and no LoRA ``adapter`` (those go through ``LlamaRuntime.generate``)."""
    return (
        req.json_schema is None
        and not getattr(req, "choices", None)
        and not getattr(req, "adapter", None)
    )


def generate_many(
    backend: Any,
    requests: Sequence[GenRequest],
    cancel: threading.Event | None = None,
    n_seq: int = 4,
) -> list[str]:
    """Texts for independent ``requests``, in order.

    On a ``LlamaRuntime`` they are decoded ``n_seq`` at a time by a ``BatchGenerator`` sized to
    the requests (created and closed here); requests it cannot serve (``batchable``) go to
    ``backend.generate``. Any other backend (``FakeBackend``, an HTTP judge) is called one
    request after the other."""
    requests = list(requests)
    texts: list[str | None] = [None] * len(requests)
    batched = [i for i, r in enumerate(requests) if batchable(r)]
    if isinstance(backend, LlamaRuntime) and batched:
        lengths = [
            backend.count_tokens(backend.format.render(requests[i].messages))
            + 1
            + requests[i].max_tokens
            for i in batched
        ]
        n_ctx = min(backend.n_ctx, -(-max(lengths) // 256) * 256)
        with BatchGenerator(backend, n_seq=max(1, min(n_seq, len(batched))), n_ctx=n_ctx) as gen:
            for i, r in zip(batched, gen.generate([requests[i] for i in batched], cancel)):
                texts[i] = r.text
    for i, req in enumerate(requests):
        if texts[i] is None:
            texts[i] = backend.generate(req, cancel).text()
    return [t or "" for t in texts]


BENCH_PROMPTS = [
    "I had a rough week at work and I can't switch off.",
    "What's a good book for a long train ride?",
    "My sister is visiting this weekend, any ideas?",
    "I keep putting off the dentist. Talk me into it.",
    "Tell me something that made you laugh recently.",
    "How do I start running without hating it?",
    "I burned dinner again. Cheer me up.",
    "Should I learn the guitar or the piano?",
]


def batch_throughput(
    runtime: LlamaRuntime,
    n_seq: int = 4,
    max_tokens: int = 64,
    *,
    shared_prompt: bool = False,
    exact: bool = True,
) -> dict[str, Any]:
    """Aggregate tokens/s of ``n_seq`` requests decoded together by a ``BatchGenerator`` vs the
    same requests one after the other through ``runtime.generate`` (the app's path), and the
    speedup. Greedy, so both sides produce the same tokens (``same_text`` checks it in exact
    mode). Prompt evaluation is included on both sides; with ``shared_prompt`` every request has
    the same prompt (the K-samples case: batched evaluates it once, sequential reuses its slot's
    cache), otherwise each has its own prompt (the shared system prompt is reused on both sides)."""
    system = {"role": "system", "content": "You are Mia, a warm and chatty friend."}
    reqs = [
        GenRequest(
            slot="bench-batch" if shared_prompt else f"bench-batch-{i}",
            max_tokens=max_tokens,
            temperature=0.0,
            messages=[
                system,
                {
                    "role": "user",
                    "content": BENCH_PROMPTS[0 if shared_prompt else i % len(BENCH_PROMPTS)],
                },
            ],
        )
        for i in range(n_seq)
    ]
    warm = GenRequest(
        slot="bench-batch-warm",
        max_tokens=2,
        temperature=0.0,
        messages=[{"role": "user", "content": "Hello there."}],
    )
    t0 = time.perf_counter()
    gen = BatchGenerator(runtime, n_seq=n_seq, n_ctx=min(runtime.n_ctx, 1024), exact=exact)
    setup = time.perf_counter() - t0
    try:
        gen.generate([warm])
        gen._clear()
        t0 = time.perf_counter()
        batched = gen.generate(reqs)
        t_batch = time.perf_counter() - t0
    finally:
        gen.close()
    runtime.generate(warm).text()
    t0 = time.perf_counter()
    seq_texts, seq_tokens = [], 0
    for r in reqs:
        g = runtime.generate(r)
        seq_texts.append(g.text())
        seq_tokens += g.stats.completion_tokens
    t_seq = time.perf_counter() - t0
    for slot in {r.slot for r in reqs} | {warm.slot}:
        runtime.drop_slot(slot)
    b_tokens = sum(r.completion_tokens for r in batched)
    b_rate = b_tokens / t_batch if t_batch else 0.0
    s_rate = seq_tokens / t_seq if t_seq else 0.0
    return {
        "n_seq": n_seq,
        "max_tokens": max_tokens,
        "shared_prompt": shared_prompt,
        "exact": exact,
        "threads": gen.n_threads,
        "batched_tokens": b_tokens,
        "batched_seconds": round(t_batch, 3),
        "batched_tok_s": round(b_rate, 2),
        "sequential_tokens": seq_tokens,
        "sequential_seconds": round(t_seq, 3),
        "sequential_tok_s": round(s_rate, 2),
        "speedup": round(b_rate / s_rate, 3) if s_rate else 0.0,
        "same_text": [r.text for r in batched] == seq_texts,
        "context_setup_seconds": round(setup, 3),
    }
