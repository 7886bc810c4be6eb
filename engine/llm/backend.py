"""What the engine asks of a text generator: requests, streamed results and their stats, the
``Backend`` protocol every model runner implements, and a scripted backend for unit tests."""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Protocol

# -- requests and results ---------------------------------------------------------------------


@dataclass
class GenRequest:
    slot: str  # whose KV state this is (agent name, "director")
    messages: list[dict[str, str]]  # chat messages (role, content)
    max_tokens: int = 96
    temperature: float = 0.7
    top_p: float = 0.9
    top_k: int = 40
    repeat_penalty: float = 1.1
    stop: list[str] = field(default_factory=list)
    json_schema: dict[str, Any] | None = None
    seed: int | None = None
    # The completion must be exactly one of these strings (constrained choice; see
    # ``LlamaRuntime._choose``). Overrides ``json_schema``, ``stop`` and ``max_tokens``.
    choices: list[str] | None = None
    # With ``choices``: a log-weight per choice added to the model's scores (a prior; the choice
    # becomes pi(choice) * exp(bias)). Applied at the branch points, exact where the bias is the
    # same for every choice below a branch (e.g. one bias per speaker, speakers branching first).
    choice_bias: list[float] | None = None
    # A LoRA adapter GGUF applied over this runtime's model for this request (None = the plain
    # model); see ``LlamaRuntime.load_adapter``. A slot's KV cache belongs to one adapter.
    adapter: str | None = None
    # Prefill only: the last message is the opening of one still being written (rendered
    # without its end and without the generation prompt; ``ChatFormat.render_open``).
    open_last: bool = False


@dataclass
class GenStats:
    prompt_tokens: int = 0  # tokens in the whole prompt
    prefilled_tokens: int = 0  # tokens llama.cpp actually had to evaluate (not cached)
    completion_tokens: int = 0
    ttft: float = 0.0  # seconds to the first generated text
    seconds: float = 0.0
    model: str = ""
    # the LoRA adapter that shaped the reply: the file applied at decode time, or the one
    # merged into the model's weights ("NAME (merged)"); "" for a plain model
    adapter: str = ""
    stopped: str = ""  # "stop", "length", "cancelled"
    decode_tps: float = 0.0  # generated tokens/s after the first, as the caller received them


class Generation:
    """An iterator over text pieces; ``stats`` is complete once iteration ends (or after
    ``close()``, which stops generation early and releases the model)."""

    def __init__(self, pieces: Iterator[str], stats: GenStats):
        self._pieces = pieces
        self.stats = stats

    def __iter__(self) -> Iterator[str]:
        return self._pieces

    def close(self) -> None:
        close = getattr(self._pieces, "close", None)
        if close is not None:
            close()

    def text(self) -> str:
        return "".join(self)


def director_lane_ctx(n_ctx: int) -> int:
    """Context of the Director's own lane next to companions with ``n_ctx``: a quarter of it,
    at least 1,024 tokens (see ``GroupChat._director_lane``)."""
    return max(1024, n_ctx // 4)


class Backend(Protocol):
    """Everything the engine uses of a model runner (``LlamaRuntime``, ``AdapterBackend``,
    ``FakeBackend``)."""

    name: str
    n_ctx: int

    def generate(self, req: GenRequest, cancel: threading.Event | None = None) -> Generation: ...

    def count_tokens(self, text: str) -> int: ...

    def prefill(self, req: GenRequest, cancel: threading.Event | None = None) -> int:
        """Evaluate ``req``'s prompt into its slot's KV cache ahead of time; returns the tokens read."""
        ...

    def lane(self, name: str, n_ctx: int | None = None) -> Backend:
        """The same weights with a context of their own for one role (the Director)."""
        ...

    @property
    def weights(self) -> object:
        """What identifies the loaded weights: two backends with the same ``weights`` share them."""
        ...

    @property
    def model_file(self) -> str:
        """The GGUF this backend runs (a LoRA adapter's file, if it applies one); "" if none."""
        ...

    @property
    def parameters(self) -> int:
        """The model's parameter count (0: unknown); the Director's directive mode depends on it."""
        ...


# -- fake backend for fast unit tests of orchestration logic ----------------------------------


def _same_json(a: str, b: str) -> bool:
    try:
        return json.loads(a) == json.loads(b)
    except ValueError:
        return False


class FakeBackend:
    """Replies from a queue (or a function of the request); streams word by word.

    For unit tests of orchestration rules only; every feature also has tests on llama.cpp.
    """

    def __init__(
        self,
        replies: list[str] | Callable[[GenRequest], str] | None = None,
        n_ctx: int = 2048,
        delay: float = 0.0,
    ):
        self.name = "fake"
        self.n_ctx = n_ctx
        self.parameters = (
            0  # unknown (a test may set a model size: the Director's mode depends on it)
        )
        self.delay = delay
        self.requests: list[GenRequest] = []
        self._replies = replies if replies is not None else []

    def count_tokens(self, text: str) -> int:
        return len(text.split()) + text.count("\n")

    def lane(self, name: str, n_ctx: int | None = None) -> FakeBackend:
        return self

    @property
    def weights(self) -> object:
        return self

    @property
    def model_file(self) -> str:
        return ""

    def prefill(self, req: GenRequest, cancel: threading.Event | None = None) -> int:
        self.requests.append(req)
        return sum(self.count_tokens(m["content"]) for m in req.messages)

    def generate(self, req: GenRequest, cancel: threading.Event | None = None) -> Generation:
        self.requests.append(req)
        stats = GenStats(model=self.name)
        if callable(self._replies):
            text = self._replies(req)
        elif self._replies:
            text = self._replies.pop(0)
        else:
            text = "…"
        if req.choices and text not in req.choices:  # the same JSON written differently counts
            text = next((c for c in req.choices if _same_json(c, text)), req.choices[0])
        prompt = sum(self.count_tokens(m["content"]) for m in req.messages)

        def pieces() -> Iterator[str]:
            t0 = time.perf_counter()
            stats.prompt_tokens = stats.prefilled_tokens = prompt
            out = ""
            for word in re.findall(r"\S+\s*", text):
                if cancel is not None and cancel.is_set():
                    stats.stopped = "cancelled"
                    return
                if self.delay:
                    time.sleep(self.delay)
                out += word
                hit = next((s for s in req.stop if s in out), None)
                if hit:
                    yield word[: len(word) - (len(out) - out.index(hit))]
                    break
                if not stats.ttft:
                    stats.ttft = time.perf_counter() - t0
                stats.completion_tokens += 1
                yield word
            stats.stopped = stats.stopped or "stop"
            stats.seconds = time.perf_counter() - t0

        return Generation(pieces(), stats)
