"""The benchmark conversation: the scripted group rounds that ``mascot-bench`` and
``mascot-bench --shape`` measure (per-turn prefill and time to first token, round time, the
Director's share), on the app's own ``GroupChat`` and backends."""

from __future__ import annotations

import os
import time
from typing import Any, Iterator

from engine.chat.backends import default_backend_factory
from engine.chat.group import GroupChat
from engine.chat.settings import DEFAULT_HISTORY_TOKENS, ChatSettings
from engine.persona_files import load_set
from mascot_cli.bench_parts import USER_LINES, RawDecodeProbe, median

# With --memory: a group lorebook keyed on the scripted conversation's words, and remembered facts
# (one pinned), so companions read notes before their turns as they would in the app.
BENCH_LOREBOOK = {
    "name": "bench",
    "token_budget": 160,
    "scan_depth": 2,
    "entries": [
        {
            "keys": ["work", "manager"],
            "content": "{{user}} works at a logistics firm; the manager is Dana.",
        },
        {"keys": ["sleep", "sleeping", "bed"], "content": "{{user}} sleeps badly before big days."},
        {"keys": ["review"], "content": "{{user}}'s annual review is on Friday at 10."},
        {"keys": ["sister"], "content": "{{user}}'s sister Hannah is a nurse."},
        {"keys": ["money", "quit", "quitting"], "content": "{{user}} is saving for a flat."},
        {"keys": [], "constant": True, "content": "{{user}} likes short, practical replies."},
    ],
}
BENCH_FACTS = [
    {"text": "I live in Leeds", "source": "auto", "pinned": True},
    {"text": "My dog is called Rex", "source": "auto", "pinned": False},
    {"text": "I'm allergic to peanuts", "source": "auto", "pinned": False},
]


def conversation(
    rounds: int,
    threads: int,
    n_ctx: int,
    max_tokens: int = 48,
    history_tokens: int = DEFAULT_HISTORY_TOKENS,
    memory: bool = False,
) -> dict[str, Any]:
    """A long 3-companion conversation with the Director; per-turn prefill and TTFT. With
    ``memory``, companions also read lorebook entries and remembered facts (``BENCH_LOREBOOK``,
    ``BENCH_FACTS``) in notes before their turns; without it, memory is off."""
    steps = conversation_rounds(rounds, threads, n_ctx, max_tokens, history_tokens, memory)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


def conversation_rounds(
    rounds: int,
    threads: int,
    n_ctx: int,
    max_tokens: int = 48,
    history_tokens: int = DEFAULT_HISTORY_TOKENS,
    memory: bool = False,
    raw_probe: bool = True,
    model: str | None = None,
    keep_transcript: bool = False,
) -> Iterator[int]:
    """``conversation`` one round at a time: yields after each round (so two conditions can
    take turns, round by round, and share the machine's drift); returns its result.
    ``raw_probe=False``: no raw llama.cpp decode after each round (the memory comparison does
    not use it). ``model``: a GGUF for every companion and the Director (default: the bundled
    model). ``keep_transcript``: the result also has the transcript ((role, speaker, text)),
    the companions' names and their cards (system prompts), for replaying it elsewhere."""
    os.environ["MASCOT_THREADS"] = str(threads)
    factory = backend_factory(model, n_ctx)
    group = load_set("support")
    if memory:
        group.lorebook = BENCH_LOREBOOK
    chat = GroupChat(
        group,
        settings=ChatSettings(
            max_speakers=3,
            seed=5,
            max_tokens=max_tokens,
            history_tokens=history_tokens,
            memory=memory,
        ),
        backend_for=factory,
    )
    if memory:
        chat.extra_facts = list(BENCH_FACTS)
    # time the chat spends making notes (lorebook scan, facts, recall, its safety check): memory's
    # own cost besides prefilling the notes; the bench's own bookkeeping below is not counted
    note_s = [0.0]
    counting = [True]
    plain_note_lines = chat.memory.note_lines

    def timed_note_lines(*a: Any, **k: Any) -> list[str]:
        t = time.perf_counter()
        try:
            return plain_note_lines(*a, **k)
        finally:
            if counting[0]:
                note_s[0] += time.perf_counter() - t

    chat.memory.note_lines = timed_note_lines
    turns: list[dict[str, Any]] = []
    rounds_out: list[dict[str, Any]] = []
    last_seen: dict[str, int] = {}  # companion -> transcript length after its last turn
    read_ahead: dict[str, int] = {}  # companion -> tokens it read ahead since its last turn
    runtime = factory(None)
    probe = (
        RawDecodeProbe(runtime.path if hasattr(runtime, "path") else None, n_ctx, threads)
        if raw_probe
        else None
    )
    for r in range(rounds):
        # What the app does when a conversation opens and after each round, while the user
        # reads and types (ChatSession._warm_later): every companion and the Director read
        # what is new into their KV caches. Not part of the round's time; its tokens count
        # as prefilled (prefill_ratio); its time is reported (read_ahead_seconds_median).
        t0 = time.perf_counter()
        chat.warm()
        warm_s = time.perf_counter() - t0
        for name, n in chat.last_warm.items():
            read_ahead[name] = read_ahead.get(name, 0) + n
        t0 = time.perf_counter()
        director_s = 0.0
        decisions: list[
            dict[str, Any]
        ] = []  # the Director's choices this round (speaker, directive, time)
        book_s = 0.0  # the bench's own accounting inside the round: not round time
        note_s[0] = 0.0
        for ev in chat.send(USER_LINES[r % len(USER_LINES)]):
            if ev.type == "director":
                director_s += ev.data["seconds"]
                decisions.append(
                    {
                        "speaker": ev.data["speaker"],
                        "directive": ev.data["directive"],
                        "seconds": ev.data["seconds"],
                    }
                )
            elif ev.type == "message" and not ev.data.get("safety"):
                t_book = time.perf_counter()
                counting[0] = False
                name = ev.data["speaker"]
                # tokens new to this companion: everything after its previous reply, plus its note
                req = chat.speaker_request(chat.member(name), ev.data["directive"])
                idx = len(chat.transcript) - 1
                body = req.messages
                prev = last_seen.get(name)
                if prev is None:
                    new = ev.data["prompt_tokens"]
                else:
                    items = chat.transcript[prev:idx]
                    new = sum(runtime.count_tokens(f"{t.speaker}: {t.text}") + 5 for t in items)
                    new += runtime.count_tokens(body[-1]["content"]) + 8
                note = chat.transcript[idx].context  # the note it read: new to it too
                note_tokens = runtime.count_tokens(note) + 8 if note else 0
                if prev is not None:
                    new += note_tokens
                last_seen[name] = idx + 1
                turns.append(
                    {
                        "round": r + 1,
                        "speaker": name,
                        "prompt": ev.data["prompt_tokens"],
                        "prefilled": ev.data["prefilled_tokens"] + read_ahead.pop(name, 0),
                        "prefilled_in_turn": ev.data["prefilled_tokens"],
                        "new": new,
                        "note_tokens": note_tokens,
                        "ttft_ms": ev.data["ttft_ms"],
                        "tokens": ev.data["completion_tokens"],
                        "decode_tps": ev.data.get("decode_tps", 0.0),
                        "latency_ms": ev.data["latency_ms"],
                    }
                )
                counting[0] = True
                book_s += time.perf_counter() - t_book
        round_s = time.perf_counter() - t0 - book_s
        # raw llama.cpp decode at this round's context, right after the round (not round time):
        # app and raw are compared minutes apart otherwise, and this VM's speed drifts
        here = [t for t in turns if t["round"] == r + 1]
        if here and probe is not None:
            raw_tps = probe.decode_tps(int(median([t["prompt"] for t in here])))
            for t in here:
                t["raw_decode_tps_same_round"] = raw_tps
        rounds_out.append(
            {
                "round": r + 1,
                "seconds": round_s,
                "director_s": director_s,
                "read_ahead_s": warm_s,
                "note_s": note_s[0],
                "director": decisions,
            }
        )
        yield r + 1
    if probe is not None:
        probe.close()
    out: dict[str, Any] = {"turns": turns, "rounds": rounds_out}
    if keep_transcript:
        out["transcript"] = [
            (t.role, t.speaker, t.text) for t in chat.transcript if t.role in ("user", "companion")
        ]
        out["names"] = list(chat.names)
        out["cards"] = {p.name: p.system_prompt(chat.names) for p in group.members}
    return out


def backend_factory(model: str | None, n_ctx: int) -> Any:
    """The app's backend factory; with ``model``, every companion and the Director use that file."""
    factory = default_backend_factory(None, n_ctx=n_ctx)
    if not model:
        return factory
    return lambda name=None: factory(model)
