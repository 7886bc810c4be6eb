"""Batched generation (engine.llm.batch): exactness against LlamaRuntime, seeds, stops, refill,
cancel, errors; plus the sampler and generate_many's fallback without a model."""

import os
import threading

import numpy as np
import pytest

from engine.errors import ModelError
from engine.llm.backend import FakeBackend, GenRequest
from engine.llm.batch import BatchGenerator, common_prefix, generate_many, sample_token

SYSTEM = {"role": "system", "content": "You are Mia, a cheerful friend who loves the seaside."}
PROMPTS = [
    "Tell me about your weekend plans.",
    "What is your favourite food, and why?",
    "I can't sleep. Any advice for tonight?",
]


def chat(user):
    return [SYSTEM, {"role": "user", "content": user}]


def greedy(user, slot, max_tokens=20, stop=()):
    return GenRequest(
        slot=slot, messages=chat(user), max_tokens=max_tokens, temperature=0.0, stop=list(stop)
    )


def assert_same_replies(batched: list[str], sequential: list[str]) -> None:
    """Batched greedy replies belong to their own prompts and start as the sequential ones do.

    llama.cpp does not promise bit-equal logits across batch shapes: on some CPUs (AVX-512
    kernels) greedy text drifts after ~15 tokens, so only the start is compared, and each reply
    must match its own prompt's reply better than any other prompt's (no crossed sequences).
    """
    assert all(batched) and all(sequential)
    for i, text in enumerate(batched):
        own = common_prefix(text, sequential[i])
        assert own >= min(12, len(text), len(sequential[i])), (text, sequential[i])
        assert all(
            own > common_prefix(text, other)
            for j, other in enumerate(sequential)
            if j != i and other != sequential[i]
        ), (text, sequential)


@pytest.fixture(scope="module")
def runtime(bundled_path):
    """Its own runtime with one thread: a busy 2-core machine runs these far faster so."""
    from engine.llm.runtime import LlamaRuntime

    rt = LlamaRuntime(bundled_path, n_ctx=1024, n_threads=1)
    yield rt
    rt.llm.close()


@pytest.fixture(scope="module")
def gen(runtime):
    with BatchGenerator(runtime, n_seq=4, n_ctx=512, n_threads=1) as g:
        yield g


@pytest.fixture(scope="module")
def reference(runtime):
    """Sequential greedy texts from LlamaRuntime.generate (the app's own path)."""
    out = {}
    for i, p in enumerate(PROMPTS):
        out[p] = runtime.generate(greedy(p, f"batch-ref-{i}")).text()
        runtime.drop_slot(f"batch-ref-{i}")
    return out


@pytest.mark.model
def test_greedy_batched_equals_sequential(gen, reference):
    results = gen.generate([greedy(p, "b") for p in PROMPTS])
    assert_same_replies([r.text for r in results], [reference[p] for p in PROMPTS])
    assert all(r.text and r.completion_tokens > 0 and r.prompt_tokens > 10 for r in results)
    # the same batch again gives the same texts: batching is deterministic on one machine
    assert [r.text for r in gen.generate([greedy(p, "b") for p in PROMPTS])] == [
        r.text for r in results
    ]
    # the shared system prompt is evaluated once, not three times
    assert sum(r.prefilled_tokens for r in results) < sum(r.prompt_tokens for r in results)


@pytest.mark.model
def test_long_prompts_batched_equal_sequential(gen, runtime):
    """Prompts read in several chunks (one ~100 tokens: one batch; one ~220: 64 + 64 + ~90)
    give the same greedy replies batched as through the app's runtime."""
    story = (
        "Last week I started a new job at a bakery, and the early mornings are hard, but the "
        "people are kind and the bread smells wonderful. "
    )
    prompts = [story * 3 + "What should I do this weekend?", story * 7 + "How do I keep going?"]
    sizes = [runtime.count_tokens(p) for p in prompts]
    assert 80 < sizes[0] < 128 and 192 < sizes[1] < 300, sizes
    ref = []
    for i, p in enumerate(prompts):
        ref.append(runtime.generate(greedy(p, f"batch-long-{i}", max_tokens=12)).text())
        runtime.drop_slot(f"batch-long-{i}")
    results = gen.generate([greedy(p, "b", max_tokens=12) for p in prompts])
    assert_same_replies([r.text for r in results], ref)


@pytest.mark.model
def test_seeds_differ_and_reproduce(runtime):
    reqs = [
        GenRequest(
            slot="s",
            messages=chat(PROMPTS[0]),
            max_tokens=16,
            temperature=1.0,
            top_p=0.95,
            top_k=0,
            seed=seed,
        )
        for seed in (11, 22, 33, 44)
    ]
    with BatchGenerator(runtime, n_seq=4, n_ctx=256, n_threads=1) as g:
        first = g.generate(reqs)
        # same seeds, other order and another batch size: the same texts
        again = g.generate(reqs[::-1])[::-1]
    with BatchGenerator(runtime, n_seq=2, n_ctx=256, n_threads=1) as g:
        third = g.generate(reqs)
    texts = [r.text for r in first]
    assert len(set(texts)) == 4, texts
    assert [r.text for r in again] == texts
    assert [r.text for r in third] == texts
    # one prompt for four samples: evaluated once, copied to the other sequences
    assert sorted(r.prefilled_tokens for r in first) == [1, 1, 1, first[0].prompt_tokens]


@pytest.mark.model
def test_stop_strings_and_max_tokens(gen, runtime, reference):
    ref = reference[PROMPTS[0]]
    stop = ref[12:16]
    assert stop.strip() and ref.find(stop) >= 0
    batched = gen.generate(
        [greedy(PROMPTS[0], "b", stop=[stop]), greedy(PROMPTS[1], "b", max_tokens=5)]
    )
    seq = runtime.generate(greedy(PROMPTS[0], "batch-stop", stop=[stop])).text()
    runtime.drop_slot("batch-stop")
    assert batched[0].text == ref[: ref.find(stop)] == seq
    assert batched[0].stopped == "stop"
    assert batched[1].completion_tokens == 5 and batched[1].stopped == "length"
    assert reference[PROMPTS[1]].startswith(batched[1].text)


@pytest.mark.model
def test_more_requests_than_sequences(runtime, reference):
    prompts = PROMPTS * 2
    with BatchGenerator(runtime, n_seq=2, n_ctx=256, n_threads=1) as g:
        results = g.generate([greedy(p, "b") for p in prompts])
    assert_same_replies([r.text for r in results], [reference[p] for p in prompts])
    # exact=False: every live stream in every step (equal to the reference up to rounding)
    with BatchGenerator(runtime, n_seq=2, n_ctx=256, n_threads=1, exact=False) as g:
        loose = g.generate([greedy(p, "b", max_tokens=8) for p in prompts])
    assert len(loose) == 6
    assert all(
        r.completion_tokens > 0 and r.stopped in ("stop", "length") and r.text for r in loose
    )


@pytest.mark.model
def test_runs_beside_the_apps_runtime(gen, runtime, reference):
    """A separate context: it needs no runtime.lock and runs while the app generates."""
    held, release = threading.Event(), threading.Event()

    def hold():
        with runtime.lock:
            held.set()
            release.wait(60)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    try:
        assert gen.generate([greedy(PROMPTS[0], "b", max_tokens=4)])[0].completion_tokens == 4
    finally:
        release.set()
        holder.join()
    out = {}

    def app():
        out["app"] = runtime.generate(greedy(PROMPTS[2], "batch-app")).text()

    t = threading.Thread(target=app)
    t.start()
    batched = gen.generate([greedy(p, "b") for p in PROMPTS[:2]])
    t.join()
    runtime.drop_slot("batch-app")
    assert_same_replies([r.text for r in batched], [reference[p] for p in PROMPTS[:2]])
    assert out["app"] == reference[PROMPTS[2]]  # the app's own path, undisturbed by the batch


class CancelAfter(threading.Event):
    """Becomes set after being asked ``n`` times (the generator asks once per step)."""

    def __init__(self, n):
        super().__init__()
        self.n = n

    def is_set(self):
        self.n -= 1
        return self.n < 0 or super().is_set()


@pytest.mark.model
def test_cancel_stops_and_generator_stays_usable(gen, reference):
    reqs = [greedy(p, "b", max_tokens=200) for p in PROMPTS] + [greedy(PROMPTS[0], "b")] * 3
    results = gen.generate(reqs, CancelAfter(6))
    assert len(results) == len(reqs)
    assert all(r.stopped == "cancelled" for r in results)
    assert all(r.completion_tokens < 10 for r in results)
    assert results[-1].text == "" and results[-1].completion_tokens == 0  # never started
    done = threading.Event()
    done.set()
    assert all(r.stopped == "cancelled" for r in gen.generate(reqs[:2], done))
    assert_same_replies(
        [r.text for r in gen.generate([greedy(p, "b") for p in PROMPTS])],
        [reference[p] for p in PROMPTS],
    )


@pytest.mark.model
def test_prompt_longer_than_context_is_one_clear_line(gen):
    long = " ".join(f"Line {i}: the tide came in and the gulls were loud." for i in range(60))
    with pytest.raises(ModelError) as err:
        gen.generate([greedy(PROMPTS[0], "b"), greedy(long, "b")])
    msg = str(err.value)
    assert "\n" not in msg and "does not fit the context (512)" in msg
    assert gen.generate([greedy(PROMPTS[0], "b", max_tokens=3)])[0].completion_tokens == 3


@pytest.mark.model
def test_generate_many_on_runtime_and_close(runtime, reference):
    assert_same_replies(
        generate_many(runtime, [greedy(p, "b") for p in PROMPTS], n_seq=2),
        [reference[p] for p in PROMPTS],
    )
    g = BatchGenerator(runtime, n_seq=1, n_ctx=128, n_threads=1)
    g.close()
    g.close()
    with pytest.raises(ModelError):
        g.generate([greedy(PROMPTS[0], "b")])


def test_generate_many_falls_back_to_sequential_backend():
    backend = FakeBackend(lambda req: f"reply to {req.messages[-1]['content']}")
    reqs = [greedy(p, "x") for p in PROMPTS]
    assert generate_many(backend, reqs) == [f"reply to {p}" for p in PROMPTS]
    assert backend.requests == reqs


def test_sampler_settings():
    rng = np.random.default_rng(0)
    logits = np.array([1.0, 3.0, 2.9, -1.0, 0.5], dtype=np.float32)
    req = GenRequest(slot="x", messages=[], temperature=0.0, repeat_penalty=1.0)
    assert sample_token(logits.copy(), req, [], rng) == 1
    # the repeat penalty applies to generated tokens (3.0 / 1.5 < 2.9)
    req.repeat_penalty = 1.5
    assert sample_token(logits.copy(), req, [1], rng) == 2
    # top_k = 1 is greedy whatever the temperature
    req = GenRequest(slot="x", messages=[], temperature=5.0, top_k=1, repeat_penalty=1.0)
    assert {sample_token(logits.copy(), req, [], rng) for _ in range(20)} == {1}
    # min-p 0.05 drops tokens far below the best one; top-p 0.4 keeps only the best here
    req = GenRequest(slot="x", messages=[], temperature=1.0, top_k=0, top_p=1.0, repeat_penalty=1.0)
    assert {sample_token(logits.copy(), req, [], rng) for _ in range(200)} == {0, 1, 2, 4}
    req.top_p = 0.4
    assert {sample_token(logits.copy(), req, [], rng) for _ in range(50)} == {1}
    # same seed, same draws
    req.top_p = 1.0
    a = [sample_token(logits.copy(), req, [], np.random.default_rng(7)) for _ in range(5)]
    b = [sample_token(logits.copy(), req, [], np.random.default_rng(7)) for _ in range(5)]
    assert a == b


@pytest.mark.model
def test_training_sample_batches_k_replies(runtime, monkeypatch):
    from training.sample import batch_generator, generate_replies

    reqs = [
        GenRequest(
            slot="sample",
            messages=chat(PROMPTS[1]),
            max_tokens=8,
            temperature=1.0,
            top_p=0.95,
            top_k=0,
            seed=100 + i,
        )
        for i in range(3)
    ]
    batch = batch_generator(runtime, 3, 256)
    assert isinstance(batch, BatchGenerator) and batch.n_seq == 3
    try:
        texts = generate_replies(runtime, batch, reqs)
        assert generate_replies(runtime, batch, reqs) == texts  # seeded: reproducible
    finally:
        batch.close()
    assert len(texts) == 3 and all(isinstance(t, str) and t for t in texts)
    monkeypatch.setenv("MASCOT_BATCH", "0")
    assert batch_generator(runtime, 3, 256) is None
    assert len(generate_replies(runtime, None, reqs)) == 3  # one by one through runtime.generate
    runtime.drop_slot("sample")


def test_unbatchable_requests_are_refused_or_routed():
    from engine.llm.batch import batchable

    plain = greedy(PROMPTS[0], "x")
    schema = GenRequest(slot="x", messages=chat(PROMPTS[0]), json_schema={"type": "object"})
    assert batchable(plain) and not batchable(schema)
    backend = FakeBackend(lambda req: "ok")
    assert generate_many(backend, [plain, schema]) == ["ok", "ok"]


def test_a_model_job_keeps_the_crisis_screen_to_one_core(runtime, gen):
    """While the model decodes (one request or a batch), the crisis screen's encoder keeps to one
    BLAS thread for a long message; before and after it may take both cores (engine.cpu)."""
    from engine import cpu
    from engine.safety import learned

    two = 2 if (os.cpu_count() or 1) >= 2 else 1
    assert not cpu.busy() and learned.blas_threads(500) == two
    during = []
    g = runtime.generate(greedy(PROMPTS[0], "batch-busy", max_tokens=6))
    for _piece in g:
        during.append((cpu.busy(), learned.blas_threads(500)))
    runtime.drop_slot("batch-busy")
    assert during and all(d == (True, 1) for d in during)
    assert not cpu.busy() and learned.blas_threads(500) == two
    g = runtime.generate(greedy(PROMPTS[0], "batch-busy", max_tokens=20))
    next(iter(g))
    g.close()  # a reply stopped early releases the mark too
    runtime.drop_slot("batch-busy")
    assert not cpu.busy()
    gen.generate([greedy(PROMPTS[1], "b", max_tokens=4)])
    assert not cpu.busy()
