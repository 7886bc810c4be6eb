"""One companion turn: a prompt in, a ``ReplyResult`` out. The app, the Director's rollouts and
evaluation all generate replies here, streamed (``stream_reply``) or batched (``batch_replies``),
with the same cleanup, copy guard and retry policy."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Iterator

from engine.llm.backend import Backend, GenRequest, GenStats
from engine.reply.cleanup import PARAGRAPH_END, clean_reply, finish_reply, stream_safe
from engine.reply.copyguard import DEFAULT_RULE, CopyRule, copy_key
from engine.reply.prompts import Message, turn_note

RETRY_SEED_STEP = 101
RETRY_MIN_TEMPERATURE = 0.8  # lets the one retry leave a greedy dead end


@dataclass
class ReplyResult:
    text: str  # as the chat keeps it ("" when nothing usable came out)
    confused: bool = False  # the model wrote as someone else (that part was cut)
    stats: GenStats = field(default_factory=GenStats)
    copies: int = 0  # copies of a recent reply dropped on the way
    echoes: int = 0  # sentences dropped from the kept text as echoes (recent replies, own prompt)
    free_retry: bool = False  # the kept text is a copy's retry, written without the directive


@dataclass
class Speaker:
    """Who a reply is written as, and whom it must not be written as."""

    name: str
    names: list[str]  # every member of the group, this speaker included
    user_name: str
    framing: str = (
        ""  # its instructions (``Persona.instructions``): a reply must not read them back
    )

    @property
    def others(self) -> list[str]:
        return [n for n in self.names if n != self.name]

    def free_turn(self) -> Message:
        return turn_note(self.name, "", (*self.names, self.user_name))

    def echo_source(self, req: GenRequest) -> str:
        """What a sentence of its reply must not echo, ``copy_key``-ed: its instructions and the
        turn note it answers (the Director's directive)."""
        note = (
            req.messages[-1]["content"]
            if req.messages and req.messages[-1].get("role") == "user"
            else ""
        )
        return copy_key(f"{self.framing}\n{note}", self.names)


def retry_request(req: GenRequest, free_turn: Message | None = None) -> GenRequest:
    """Change ``req`` in place for the one retry of a reply that came out empty or as a copy:
    another seed, at least ``RETRY_MIN_TEMPERATURE``; for a copy, ``free_turn`` (the turn note
    without a directive) replaces the last message (docs/copy-guard.md: why a free turn)."""
    req.seed = (req.seed or 0) + RETRY_SEED_STEP
    req.temperature = max(RETRY_MIN_TEMPERATURE, req.temperature)
    if free_turn is not None and req.messages:
        req.messages = [*req.messages[:-1], free_turn]
    return req


def stream_reply(
    backend: Backend,
    req: GenRequest,
    who: Speaker,
    *,
    recent: list[str] = (),  # type: ignore[assignment]
    free_retry: bool = False,
    cancel: threading.Event | None = None,
    rule: CopyRule = DEFAULT_RULE,
) -> Iterator[str | ReplyResult]:
    """Generate one reply, yielding the text to show as it settles (``str`` pieces) and last the
    ``ReplyResult``. A reply that comes out empty after cleanup, or repeats one of ``recent``
    (``copy_key``-ed; held back while it may, so none of it is shown), is generated once more;
    with ``free_retry`` a copy's retry is a free turn. A second copy is dropped (empty text).
    ``req`` is changed in place by a retry."""
    cancel = cancel or threading.Event()
    recent = list(recent)
    result = ReplyResult("")
    t0 = time.perf_counter()
    first_token = t_first = t_last = 0.0
    prefilled = 0
    gen: Any = None
    for _attempt in range(2):
        framing = who.echo_source(req)  # a copy's retry answers another turn note
        gen = backend.generate(req, cancel)
        raw, shown, copied = "", "", False
        t_first = t_last = 0.0
        for piece in gen:
            t_last = time.perf_counter()
            t_first = t_first or t_last
            raw += piece
            end = PARAGRAPH_END.search(raw)
            if end:  # one message is one paragraph: stop generating
                raw = raw[: end.start()]
                break
            visible, _ = clean_reply(raw, who.name, who.others, who.user_name)
            if recent and not shown and rule.may_become_copy(visible, recent, who.names):
                if rule.copies(visible, recent, who.names):
                    copied = True  # a copy: stop here, nothing of it was shown
                    break
                continue
            # a sentence echoing a recent reply or the prompt is held while it may, then dropped
            visible, _ = rule.drop_echoes(
                visible, recent, framing, who.names, partial=True, shown=shown
            )
            safe = stream_safe(visible)  # nothing that may still be cut is shown
            if safe.startswith(shown) and len(safe) > len(shown):
                first_token = first_token or time.perf_counter() - t0
                yield safe[len(shown) :]
                shown = safe
        gen.close()
        prefilled += gen.stats.prefilled_tokens
        text, confused = (
            ("", False)
            if copied
            else finish_reply(raw, who.name, who.others, who.user_name, gen.stats.stopped)
        )
        if (
            not shown and text and rule.copies(text, recent, who.names)
        ):  # short, and whole: "I'm here."
            text, copied = "", True
        text, echoes = rule.drop_echoes(text, recent, framing, who.names, shown=shown)
        result.echoes += echoes
        if echoes and not text:  # nothing but echoes: a copy
            copied = True
        result.copies += copied
        result.text, result.confused = text, confused
        if text.startswith(shown) and len(text) > len(shown):
            yield text[len(shown) :]
        if text or cancel.is_set():
            break
        free = free_retry and copied and rule.retry_as_free_turn
        retry_request(req, who.free_turn() if free else None)
        result.free_retry = free
    stats = gen.stats
    stats.prefilled_tokens = prefilled
    if stats.completion_tokens > 1 and t_last > t_first:  # tokens/s as the caller received them
        stats.decode_tps = (stats.completion_tokens - 1) / (t_last - t_first)
    stats.ttft = first_token or time.perf_counter() - t0  # what the user waited
    result.stats = stats
    yield result


def generate_reply(backend: Backend, req: GenRequest, who: Speaker, **kw: Any) -> ReplyResult:
    """``stream_reply`` to the end: the ``ReplyResult`` alone."""
    out: Any = None
    for out in stream_reply(backend, req, who, **kw):
        pass
    return out


@dataclass
class ReplyJob:
    """One reply of a batch: its request, speaker and what it must not repeat."""

    req: GenRequest
    who: Speaker
    recent: list[str] = field(default_factory=list)
    free_retry: bool = True


def batch_replies(
    gen: Any,
    jobs: list[ReplyJob],
    cancel: threading.Event | None = None,
    rule: CopyRule = DEFAULT_RULE,
) -> list[ReplyResult]:
    """Several replies decoded together (``engine.llm.batch.BatchGenerator``), each kept and
    retried as ``stream_reply`` keeps and retries one; the retries are batched too. Texts
    differ from streamed ones in the random draws and in one case: a reply that opens with
    words of its own and then copies a recent reply is kept when streamed (shown text is never
    taken back) but dropped here, where nothing was shown."""
    results = [ReplyResult("") for _ in jobs]

    def keep(i: int, r: Any) -> None:
        job, res = jobs[i], results[i]
        text, confused = finish_reply(
            r.text, job.who.name, job.who.others, job.who.user_name, r.stopped
        )
        copied = bool(text) and rule.copies(text, job.recent, job.who.names)
        if not copied:
            text, echoes = rule.drop_echoes(
                text, job.recent, job.who.echo_source(job.req), job.who.names
            )
            res.echoes += echoes
            copied = echoes > 0 and not text  # nothing but echoes: a copy
        res.copies += copied
        res.text, res.confused = ("", False) if copied else (text.strip(), confused)
        res.stats = GenStats(
            prompt_tokens=r.prompt_tokens,
            prefilled_tokens=res.stats.prefilled_tokens + r.prefilled_tokens,
            completion_tokens=r.completion_tokens,
            stopped=r.stopped,
        )

    for i, r in enumerate(gen.generate([j.req for j in jobs], cancel)):
        keep(i, r)
    again = [i for i, res in enumerate(results) if not res.text]
    if again and not (cancel is not None and cancel.is_set()):
        for i in again:
            free = jobs[i].free_retry and results[i].copies > 0 and rule.retry_as_free_turn
            retry_request(jobs[i].req, jobs[i].who.free_turn() if free else None)
            results[i].free_retry = free
        for i, r in zip(again, gen.generate([jobs[i].req for i in again], cancel)):
            keep(i, r)
    return results
