"""Text generation with llama.cpp behind the ``Backend`` interface (``engine.llm.backend``).

Design for speed:

* **One loaded file, many agents.** ``RuntimePool`` loads each GGUF file once; every agent (and
  the Director) that uses that file shares the same ``Llama`` object, so the weights are mapped
  into memory once.
* **A KV slot per agent.** Each agent's prompt is ``persona (stable) + transcript (appended) +
  directive (last)``. Before an agent's turn its saved KV state is restored, so llama.cpp only
  prefills what is new to that agent since its last turn (the longest common token prefix is
  kept). After the turn the state is saved again. Slot states hold only the used cells.
* **Constrained choices without per-token grammar cost.** When the answer must be one of a
  known list of strings (the Director's menu decisions), the runtime walks a token trie of the
  options: runs of tokens that every remaining option shares are evaluated together as one
  batch ("jump-forward"), and the model's logits are consulted only where options diverge.
  A decision costs a few batched evaluations instead of ~20 grammar-sampled decode steps.
* **Cancellable.** Prefill runs in chunks and decoding checks the cancel flag after each token,
  so a round stops well within a second.

Simplification, stated honestly: all agents on one file share one llama.cpp context and take
turns (a round is sequential by nature: each speaker reads the previous one). Slot states are
copied in and out of that context rather than kept as parallel sequences in one KV cache.
"""

from __future__ import annotations

import codecs
import ctypes
import json
import os
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, Iterator

from engine import cpu
from engine.errors import Cancelled, ModelError
from engine.llm.backend import Generation, GenRequest, GenStats
from engine.llm.chat_format import ChatFormat
from engine.llm.check import ensure_llama_works, probe_model
from engine.llm.choices import ChoiceDecoding
from engine.models import registry


def default_threads() -> int:
    env = os.environ.get("MASCOT_THREADS")
    if env and env.isdigit():
        return max(1, int(env))
    return max(1, min(8, os.cpu_count() or 2))


def token_counter(model_path: str | Path) -> Callable[[str], int]:
    """A model's tokenizer alone (no weights, no compute) as a token counter, counting as
    ``LlamaRuntime.count_tokens`` does."""
    from llama_cpp import Llama

    llm = Llama(model_path=str(model_path), vocab_only=True, verbose=False)
    return lambda text: len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))


def stop_prefix_len(text: str, stops: list[str]) -> int:
    """Length of the longest end of ``text`` that is the start of some stop string: the only part
    of a streamed text that may still turn out to be a stop, so the only part held back."""
    longest = max((len(x) for x in stops), default=1) - 1
    for k in range(min(longest, len(text)), 0, -1):
        tail = text[-k:]
        if any(x.startswith(tail) for x in stops):
            return k
    return 0


class LlamaRuntime(ChoiceDecoding):
    """One GGUF file loaded once in llama.cpp, serving any number of agents via KV slots."""

    PREFILL_CHUNK = 64

    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        seed: int = 1234,
        max_slots: int = 16,
    ):
        info = registry.inspect_gguf(
            model_path, compute_hash=False
        )  # refuse broken files before C code
        # the template is checked before loading: one that cannot render a group chat is refused
        # with what failed (never replaced by ChatML; engine/llm/chat_format.py)
        self.format = ChatFormat(info.chat_template or None, name=Path(model_path).name)
        if self.format.check() is not None:
            raise self.format.failure(self.format.error or "its chat template failed")
        try:
            import llama_cpp
        except ImportError:
            raise ModelError(
                "llama-cpp-python is not installed; run `make run` or "
                "`pip install llama-cpp-python`."
            ) from None
        ensure_llama_works(
            probe_model(model_path)
        )  # a CPU that refuses the build: one line, no SIGILL
        n_ctx = min(n_ctx, info.context_length) if info.context_length else n_ctx
        threads = n_threads or default_threads()
        try:
            self.llm = llama_cpp.Llama(
                model_path=str(model_path),
                n_ctx=n_ctx,
                n_batch=256,
                n_threads=threads,
                n_threads_batch=threads,
                seed=seed,
                verbose=False,
            )
        except Exception as e:  # noqa: BLE001 - any load failure becomes one line for the user
            raise ModelError(f"{model_path}: llama.cpp could not load this model ({e}).") from None
        self._llama_cpp = llama_cpp
        self.info = info
        self.name = Path(model_path).name
        self.path = str(model_path)
        # a model with a LoRA merged into its weights names it (engine.models.voices)
        self.merged_adapter = registry.merged_adapter(model_path)
        self.n_ctx = self.llm.n_ctx()
        self.lock = threading.RLock()
        self._slots: OrderedDict[str, Any] = OrderedDict()
        self._active: str | None = None
        self._max_slots = max_slots
        self._grammars: dict[str, Any] = {}
        self.adapters: dict[str, Any] = {}  # adapter path -> llama_adapter_lora handle
        self._adapter: str | None = None  # adapter set on the context now
        self._slot_adapters: dict[str, str | None] = {}  # slot -> adapter its KV was computed with
        self._tries: OrderedDict[tuple[str, ...], tuple[dict, list[list[int]]]] = OrderedDict()
        self.shifted_tokens = 0  # tokens kept by context shifts instead of being evaluated again
        self._threads = threads
        self._seed = seed
        self._lanes: dict[str, LlamaRuntime] = {}
        tok = self.llm
        eos = (
            tok.detokenize([tok.token_eos()]).decode("utf-8", "ignore")
            if tok.token_eos() >= 0
            else ""
        )
        self.format.eos = eos

    # tokens ----------------------------------------------------------------------------------
    def tokenize(self, text: str) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=True, special=True)

    def count_tokens(self, text: str) -> int:
        return len(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    # slots -----------------------------------------------------------------------------------
    SLOT_HEADROOM = 1.25  # a saved slot's buffer has room to grow before it is reallocated

    def _save_slot(self) -> tuple[Any, Any, int, int] | None:
        """Copy the active sequence's KV cells (only the used ones) and its token ids.

        The copy goes into the buffer this slot was saved in last time when it still fits
        (allocated with ``SLOT_HEADROOM``; the unused end is never written, so the OS does not
        back it with memory): a fresh buffer's page faults cost more than the copy itself
        (docs/performance.md). A buffer only ever holds its own slot's state."""
        import numpy as np

        llm, lc = self.llm, self._llama_cpp
        n = llm.n_tokens
        if n <= 0:
            return None
        ctx = llm._ctx.ctx
        size = lc.llama_state_seq_get_size(ctx, 0)
        old = self._slots.get(self._active) if self._active is not None else None
        buf = old[0] if old is not None and old[0].nbytes >= size else None
        if buf is None:
            buf = np.empty(int(size * self.SLOT_HEADROOM) + 4096, dtype=np.uint8)
        ptr = buf.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8))
        written = lc.llama_state_seq_get_data(ctx, ptr, size, 0)
        if written != size:
            if self._active is not None:
                self._slots.pop(self._active, None)  # its buffer may be half overwritten
            return None
        return buf, llm.input_ids[:n].copy(), n, size

    def _load_slot(self, saved: tuple[Any, Any, int, int]) -> None:
        llm, lc = self.llm, self._llama_cpp
        buf, ids, n, size = saved
        llm._ctx.kv_cache_clear()
        ptr = buf.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8))
        if lc.llama_state_seq_set_data(llm._ctx.ctx, ptr, size, 0) != size:
            self._clear_live()
            return
        llm.input_ids[:n] = ids
        llm.n_tokens = n
        llm._requires_eval = True

    def _clear_live(self) -> None:
        """Empty the live sequence: no cached tokens, no KV cells."""
        self.llm.reset()
        self.llm._ctx.kv_cache_clear()

    def _switch_to(self, slot: str) -> None:
        """Make ``slot``'s KV state the live one (saving the previous slot's first)."""
        if self._active == slot:
            return
        if self._active is not None:
            saved = self._save_slot()
            if saved is not None:
                self._slots[self._active] = saved
                self._slots.move_to_end(self._active)
                while len(self._slots) > self._max_slots:
                    self._slots.popitem(last=False)
        saved = self._slots.get(slot)
        if saved is not None:
            self._load_slot(saved)
        else:
            self._clear_live()
        self._active = slot

    def slot_bytes(self) -> int:
        """Memory held by saved (inactive) KV slots (the used part of their buffers)."""
        return sum(size + ids.nbytes for _b, ids, _n, size in self._slots.values())

    def drop_slot(self, slot: str) -> None:
        with self.lock:
            self._slots.pop(slot, None)
            if self._active == slot:
                self._active = None
                self._clear_live()

    def clear_slots(self) -> None:
        """Forget every cached KV slot (lanes included): nothing of past conversations stays in
        memory, and the next turn of every agent starts from an empty cache."""
        with self.lock:
            self._slots.clear()
            self._slot_adapters.clear()
            self._active = None
            self._clear_live()
            for rt in self._lanes.values():
                rt.clear_slots()

    @property
    def weights(self) -> object:
        return self

    @property
    def model_file(self) -> str:
        return self.path

    @property
    def parameters(self) -> int:
        return self.info.parameters or 0

    # lanes -----------------------------------------------------------------------------------
    def lane(self, name: str, n_ctx: int | None = None) -> "LlamaRuntime":
        """A runtime with its own llama.cpp context on the same model file, for one role that
        decides often (the Director). Its KV slot then stays live between decisions instead of
        being copied out of and back into the shared context around every companion turn (two
        copies of the whole used KV per switch). The file is mapped again, so the weights'
        pages are shared through the page cache: the lane adds its own context (KV cells it
        uses, compute buffers), not a second copy of the weights. llama.cpp clears the whole KV
        buffer when it creates a context, so the lane's memory is its full ``n_ctx`` of KV cells
        (docs/performance.md): give it only the context its role needs
        (default: this runtime's). Created once per name; closed with this runtime."""
        with self.lock:
            rt = self._lanes.get(name)
            if rt is None:
                rt = LlamaRuntime(
                    self.path,
                    n_ctx=n_ctx or self.n_ctx,
                    n_threads=self._threads,
                    seed=self._seed,
                    max_slots=4,
                )
                self._lanes[name] = rt
            return rt

    # LoRA adapters -----------------------------------------------------------------------------
    # Adapters are applied per request through the low-level API (the high-level ``Llama`` takes
    # one ``lora_path`` at load time and cannot switch): every adapter over this model file shares
    # the one copy of the base weights; each adds only its own A/B matrices.

    def load_adapter(self, path: str | Path) -> Any:
        """Load a LoRA adapter GGUF for this model (once per path; freed by ``close``)."""
        key = str(Path(path).expanduser().resolve())
        with self.lock:
            handle = self.adapters.get(key)
            if handle is None:
                info = registry.inspect_adapter(
                    key, compute_hash=False
                )  # refuse broken files before C code
                if info.architecture != self.info.architecture:
                    raise ModelError(
                        f"{key}: the adapter is for '{info.architecture}' models, not "
                        f"{self.name} ({self.info.architecture})."
                    )
                handle = self._llama_cpp.llama_adapter_lora_init(
                    self.llm.model, key.encode("utf-8")
                )
                if not handle:
                    raise ModelError(
                        f"{key}: llama.cpp could not load this adapter over {self.name} "
                        "(was it made for another base model?)."
                    )
                self.adapters[key] = handle
            return handle

    def _apply_adapter(self, path: str | None) -> None:
        """Set ``path``'s adapter on the context (None clears it); a no-op when it is set already."""
        key = str(Path(path).expanduser().resolve()) if path else None
        if key == self._adapter:
            return
        lc, ctx = self._llama_cpp, self.llm._ctx.ctx
        if key is None:
            rc = lc.llama_set_adapters_lora(ctx, None, 0, None)
        else:
            handles = (lc.llama_adapter_lora_p_ctypes * 1)(self.load_adapter(key))
            rc = lc.llama_set_adapters_lora(ctx, handles, 1, (ctypes.c_float * 1)(1.0))
        if rc != 0:
            raise ModelError(
                f"llama.cpp could not {'set the adapter ' + key if key else 'clear the adapter'} "
                f"on {self.name} (error {rc})."
            )
        self._adapter = key

    def _use_adapter(self, req: GenRequest) -> None:
        """After ``_switch_to(req.slot)``: apply the request's adapter. A slot's cached KV was
        computed with the adapter of its previous request, so when that differs the live slot
        starts from empty (never reuse KV across adapters)."""
        key = str(Path(req.adapter).expanduser().resolve()) if req.adapter else None
        self._apply_adapter(key)
        if self._slot_adapters.get(req.slot, key) != key:
            self._clear_live()
        self._slot_adapters[req.slot] = key

    def close(self) -> None:
        """Free the adapters, then the model and context. The runtime is unusable afterwards."""
        with self.lock:
            for rt in self._lanes.values():
                rt.close()
            self._lanes.clear()
            if self.adapters:
                self._llama_cpp.llama_set_adapters_lora(self.llm._ctx.ctx, None, 0, None)
                for handle in self.adapters.values():
                    self._llama_cpp.llama_adapter_lora_free(handle)
                self.adapters.clear()
                self._adapter = None
            self._slots.clear()
            self._active = None
            self.llm.close()

    def _grammar(self, schema: dict[str, Any]) -> Any:
        key = json.dumps(schema)  # property order matters: the grammar emits keys in this order
        g = self._grammars.get(key)
        if g is None:
            g = self._llama_cpp.LlamaGrammar.from_json_schema(key, verbose=False)
            self._grammars[key] = g
        return g

    # generation --------------------------------------------------------------------------------
    def generate(self, req: GenRequest, cancel: threading.Event | None = None) -> Generation:
        if req.adapter:
            adapter = Path(req.adapter).name
        else:
            adapter = f"{self.merged_adapter} (merged)" if self.merged_adapter else ""
        stats = GenStats(model=self.name, adapter=adapter)
        return Generation(self._run(req, cancel, stats), stats)

    def _prefill(
        self, tokens: list[int], cancel: threading.Event | None, keep_last: bool = True
    ) -> int:
        """Evaluate what is not already in the KV cache, in chunks (cancellable).
        Leaves the last token for the sampler to evaluate (it needs its logits), unless
        ``keep_last`` is False: then the last token is evaluated too (always, even when cached)
        and its logits are ready."""
        llm = self.llm
        cached = llm._input_ids[: llm.n_tokens].tolist()
        common = 0
        for a, b in zip(cached, tokens):
            if a != b:
                break
            common += 1
        common = self._context_shift(cached, tokens, common)
        common = min(common, len(tokens) - 1)
        todo = tokens[common:-1] if keep_last else tokens[common:]
        llm.n_tokens = common
        llm._ctx.kv_cache_seq_rm(-1, common, -1)
        # chunks of PREFILL_CHUNK (a Stop is checked between them); a shorter tail is folded into
        # the chunk before it: one batch costs less than two (docs/performance.md)
        step = self.PREFILL_CHUNK
        starts = list(range(0, len(todo), step))
        if len(starts) > 1 and len(todo) - starts[-1] < step:
            starts.pop()
        for a, b in zip(starts, starts[1:] + [len(todo)]):
            if cancel is not None and cancel.is_set():
                raise Cancelled("Round cancelled.")
            llm.eval(todo[a:b])
        return len(tokens) - common

    SHIFT_MIN_TOKENS = 64  # reuse a shifted span only when it saves at least this much work

    def _context_shift(self, cached: list[int], tokens: list[int], common: int) -> int:
        """When the chat trimmed the oldest turns (the new prompt is the shared head followed by
        a *later* part of what is cached), drop the trimmed turns' KV cells and shift the rest
        left (llama.cpp's context shift: RoPE positions are re-rotated in place) instead of
        evaluating the kept turns again. Returns how many leading tokens of ``tokens`` the
        cache now holds (``common`` when no shift applies)."""
        n = len(cached)
        if common >= len(tokens) - self.SHIFT_MIN_TOKENS or n - common < self.SHIFT_MIN_TOKENS:
            return common
        lc, llm = self._llama_cpp, self.llm
        try:
            if not lc.llama_memory_can_shift(llm._ctx.memory):
                return common
        except AttributeError:
            return common
        window = tokens[common : common + 16]
        best_i, best_m = -1, 0
        for i in range(
            common + 1, n - len(window) + 1
        ):  # repeated text can match in several places
            if cached[i] != window[0] or cached[i : i + len(window)] != window:
                continue
            m = 0
            while (
                common + m < len(tokens) - 1 and i + m < n and cached[i + m] == tokens[common + m]
            ):
                m += 1
            if m > best_m:
                best_i, best_m = i, m
        if best_m < self.SHIFT_MIN_TOKENS:
            return common
        i, m = best_i, best_m
        d = i - common
        llm._ctx.kv_cache_seq_rm(0, common, i)  # the trimmed turns
        llm._ctx.kv_cache_seq_rm(0, i + m, -1)  # whatever no longer matches
        llm._ctx.kv_cache_seq_shift(0, i, i + m, -d)  # the kept turns move left
        llm._input_ids[common : common + m] = cached[i : i + m]
        llm.n_tokens = common + m
        self.shifted_tokens += m
        return common + m

    def prefill(self, req: GenRequest, cancel: threading.Event | None = None) -> int:
        """Evaluate a prompt into ``req.slot``'s KV cache without generating (warm-up).
        Returns the number of tokens evaluated; stops early when ``cancel`` is set."""
        with self.lock, cpu.generating():
            self._switch_to(req.slot)
            self._use_adapter(req)
            render = self.format.render_open if req.open_last else self.format.render
            tokens = self.tokenize(render(req.messages))
            if len(tokens) > self.n_ctx - req.max_tokens:
                return 0
            try:
                return self._prefill(tokens, cancel)
            except Cancelled:
                return 0

    def _run(
        self, req: GenRequest, cancel: threading.Event | None, stats: GenStats
    ) -> Iterator[str]:
        t0 = time.perf_counter()
        with self.lock, cpu.generating():
            self._switch_to(req.slot)
            self._use_adapter(req)
            prompt = self.format.render(req.messages)
            tokens = self.tokenize(prompt)
            budget = self.n_ctx - req.max_tokens
            if len(tokens) > budget:
                raise ModelError(
                    f"The prompt ({len(tokens)} tokens) does not fit the context "
                    f"({self.n_ctx}); the conversation must be trimmed first."
                )
            stats.prompt_tokens = len(tokens)
            node, forced = None, []
            if req.choices:  # the options' common start is evaluated with the prompt, in one batch
                forced, node = self._forced_run(self._trie(req.choices))
            try:
                stats.prefilled_tokens = self._prefill(
                    tokens + forced, cancel, keep_last=node is None
                )
            except Cancelled:
                stats.stopped = "cancelled"
                self.llm.reset()
                return
            if node is not None:
                yield from self._choose(node, forced, req, cancel, stats, t0)
                return
            if req.seed is not None:
                self.llm.set_seed(req.seed)
            grammar = self._grammar(req.json_schema) if req.json_schema is not None else None
            is_eog = self._llama_cpp.llama_vocab_is_eog
            vocab = self.llm._model.vocab
            decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
            stops = [x for x in req.stop if x]
            text, sent, n, finish = "", 0, 0, "closed"
            # llm.generate (not create_completion): per-token work stays minimal, so the app
            # decodes at raw llama.cpp speed; stop strings and UTF-8 are handled here.
            try:
                for tok in self.llm.generate(
                    tokens,
                    temp=req.temperature,
                    top_k=req.top_k,
                    top_p=req.top_p,
                    repeat_penalty=req.repeat_penalty,
                    grammar=grammar,
                ):
                    if is_eog(vocab, tok):
                        finish = "stop"
                        break
                    n += 1
                    text += decoder.decode(self.llm.detokenize([tok]))
                    cut = min((i for i in (text.find(x) for x in stops) if i >= 0), default=-1)
                    if cut >= 0:
                        text, finish = text[:cut], "stop"
                        break
                    if cancel is not None and cancel.is_set():
                        finish = "cancelled"
                        break
                    safe = len(text) - stop_prefix_len(
                        text, stops
                    )  # hold only a possible stop's start
                    if safe > sent:
                        if not stats.ttft:
                            stats.ttft = time.perf_counter() - t0
                        yield text[sent:safe]
                        sent = safe
                        if cancel is not None and cancel.is_set():  # set while we were paused
                            finish = "cancelled"
                            break
                    if n >= req.max_tokens:
                        finish = "length"
                        break
                text += decoder.decode(b"", final=True) if finish != "stop" else ""
                if len(text) > sent and finish != "cancelled":
                    if not stats.ttft:
                        stats.ttft = time.perf_counter() - t0
                    yield text[sent:]
            finally:
                stats.completion_tokens = n
                stats.stopped = finish
                stats.seconds = time.perf_counter() - t0


class RuntimePool:
    """Loads each model file once and hands out the shared runtime."""

    def __init__(self, *, n_ctx: int = 4096, n_threads: int | None = None):
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self._runtimes: dict[str, LlamaRuntime] = {}
        self._lock = threading.Lock()

    def get(self, model_path: str | Path) -> LlamaRuntime:
        key = str(Path(model_path).resolve())
        with self._lock:
            rt = self._runtimes.get(key)
            if rt is None:
                rt = LlamaRuntime(key, n_ctx=self.n_ctx, n_threads=self.n_threads)
                self._runtimes[key] = rt
            return rt

    def loaded(self) -> list[str]:
        return list(self._runtimes)

    def clear_slots(self) -> None:
        """Forget the cached KV of every loaded runtime (after "delete all data")."""
        with self._lock:
            for rt in self._runtimes.values():
                rt.clear_slots()
