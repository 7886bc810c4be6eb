"""A companion's prompt, as pure functions of the transcript and a token counter.

The app, training and evaluation build prompts with these, so a trained model reads the prompt
the app sends. Shape: system prompt (persona, stable), the transcript (own replies as assistant
turns after the turn note they answered, others' lines as "Name: text"), then the note
(lorebook entries, remembered facts) and the turn note last. The context policy keeps the
prompt's start stable so llama.cpp prefills only what is new (docs/architecture.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

from engine.llm.backend import GenRequest

Count = Callable[[str], int]
Message = dict[str, str]

NOTE_TAIL = "briefly and in character"  # the end of every turn note (cleanup cuts an echo of it)
MESSAGE_OVERHEAD = 6  # tokens a chat template adds around a message (about)


@dataclass
class TranscriptItem:
    role: str  # user | companion | safety
    speaker: str
    text: str
    id: int | None = None
    directive: str = ""  # what the Director told the speaker (kept: it is part of its KV prefix)
    context: str = (
        ""  # the note (lorebook entries, facts) it read before this turn (kept: the same)
    )


def from_history(
    history: Iterable[dict[str, Any]], user_name: str = "User"
) -> list[TranscriptItem]:
    """Transcript items from {speaker, text} dicts (scenarios, training states): the user's
    lines by ``user_name``, everyone else's as companion turns."""
    return [
        TranscriptItem(
            "user" if h["speaker"] == user_name else "companion", h["speaker"], h["text"]
        )
        for h in history
    ]


def turn_note(name: str, directive: str, proper_names: tuple[str, ...] = ()) -> Message:
    """The user-role note right before a companion's turn: "(Mia, ask User one gentle
    question.) Reply now as Mia, briefly and in character." or, without a directive, "(It is
    Mia's turn.) ...". Small models follow the last user turn far better than a system note
    (docs/director.md, "How a directive reaches the companion"). The directive's first letter is
    lowered unless it starts with a name (``proper_names``), "I" or an acronym."""
    if not directive:
        note = f"It is {name}'s turn."
    else:
        text = " ".join(directive.split())
        first = text.split()[0]
        if first not in proper_names and first != "I" and not first.isupper():
            text = text[:1].lower() + text[1:]
        note = f"{name}, {text}" + ("" if text.endswith((".", "!", "?")) else ".")
    return {"role": "user", "content": f"({note}) Reply now as {name}, {NOTE_TAIL}."}


def note_head(name: str) -> str:
    return f"(Notes for {name}; use them only where they fit, never read them out:)"


def note_text(name: str, lines: list[str]) -> str:
    """The note a companion reads right before its turn: lorebook entries and remembered facts.
    It stays in the companion's transcript at that turn, so its KV prefix stays valid."""
    return "\n".join([note_head(name), *(f"- {x}" for x in lines)])


def note_lines(name: str, content: str) -> list[str]:
    """The lines of a note (``note_text``); [] for any other message."""
    head = note_head(name) + "\n"
    return [x[2:] for x in content[len(head) :].split("\n")] if content.startswith(head) else []


def note_of(name: str, messages: list[Message]) -> str:
    """The note of a prompt built by ``companion_messages`` ("" when it has none)."""
    if len(messages) >= 2 and note_lines(name, messages[-2]["content"]):
        return messages[-2]["content"]
    return ""


def clip(text: str, count: Count, n_ctx: int) -> str:
    """A message longer than a quarter of the context, with its middle cut out."""
    limit = max(64, n_ctx // 4)
    n = count(text)
    if n <= limit:
        return text
    keep = int(len(text) * (limit / n) * 0.9) // 2
    return text[:keep].rstrip() + " […] " + text[-keep:].lstrip()


def transcript_messages(
    items: list[TranscriptItem],
    speaker: str,
    names: list[str],
    user_name: str,
    count: Count,
    n_ctx: int,
) -> list[Message]:
    """The transcript as ``speaker`` sees it: its own replies as assistant turns, each after
    the note and turn note it answered, exactly as generated (its KV cache after a turn is a
    strict prefix of its next prompt); everyone else's lines as "Name: text"."""
    proper = (*names, user_name)
    out = []
    for item in items:
        if item.role == "companion" and item.speaker == speaker:
            if item.context:
                out.append({"role": "user", "content": item.context})
            out.append(turn_note(speaker, item.directive, proper))
            out.append({"role": "assistant", "content": clip(item.text, count, n_ctx)})
        else:
            who = user_name if item.role == "user" else item.speaker
            out.append({"role": "user", "content": f"{who}: {clip(item.text, count, n_ctx)}"})
    return out


def first_item(items: list[TranscriptItem], speaker: str, start: int) -> int:
    """The index of the first transcript item in ``speaker``'s window when its window starts at
    prompt message ``start`` (``transcript_messages`` writes 2-3 messages for each of its own turns)."""
    seen = 0
    for i, t in enumerate(items):
        if seen >= start:
            return i
        seen += 2 + bool(t.context) if t.role == "companion" and t.speaker == speaker else 1
    return len(items)


def trim_start(start: int, costs: list[int], budget: int) -> int:
    """The context policy for one reader: the index of the oldest item it sees. It moves only
    when the items from ``start`` would overflow ``budget``; then it jumps so the kept part
    uses about half the budget (a stable prefix for many turns after each trim)."""
    start = min(start, len(costs))
    if sum(costs[start:]) > budget:
        start, used = len(costs), 0
        while start > 0 and used + costs[start - 1] <= budget // 2:
            start -= 1
            used += costs[start]
    return start


def fit(
    head: list[Message],
    body: list[Message],
    tail: list[Message],
    count: Count,
    n_ctx: int,
    reserve: int,
    history_tokens: int,
    start: int,
) -> tuple[list[Message], int]:
    """``head + body[start:] + tail`` within the context (``reserve`` tokens kept for the reply)
    and the recent-history window (``history_tokens``; 0 = all that fits). Returns the messages
    and the new start."""

    def cost(m: Message) -> int:
        return count(m["content"]) + MESSAGE_OVERHEAD

    budget = n_ctx - reserve - 16 - sum(map(cost, head)) - sum(map(cost, tail))
    if history_tokens > 0:
        budget = min(budget, history_tokens)
    start = trim_start(start, [cost(m) for m in body], budget)
    return head + body[start:] + tail, start


def companion_messages(
    speaker: str,
    system: str,
    body: list[Message],
    directive: str,
    proper_names: tuple[str, ...],
    *,
    count: Count,
    n_ctx: int,
    reserve: int,
    history_tokens: int,
    start: int,
    lines: list[str] = (),  # type: ignore[assignment]
    context: str | None = None,
) -> tuple[list[Message], int]:
    """A companion's prompt: system prompt, transcript ``body`` (from ``start``, trimmed by the
    context policy), its note and the turn note last. The note is ``context`` as given, or made
    of ``lines`` less those it already reads in its window. Returns (messages, new start)."""
    tail = [turn_note(speaker, directive, proper_names)]
    if context is None and lines:
        context = note_text(speaker, list(lines))
    if context:
        tail.insert(0, {"role": "user", "content": context})
    messages, start = fit(
        [{"role": "system", "content": system}],
        body,
        tail,
        count,
        n_ctx,
        reserve,
        history_tokens,
        start,
    )
    if lines:
        seen = {x for m in messages[1:-2] for x in note_lines(speaker, m["content"])}
        fresh = [x for x in lines if x not in seen]
        if fresh:
            messages[-2]["content"] = note_text(speaker, fresh)
        else:
            del messages[-2]
    return messages, start


def stop_strings(speaker: str, names: list[str], user_name: str) -> list[str]:
    """Where a companion's generation stops: a line that starts as someone else, or a special token."""
    others = [n for n in names if n != speaker] + [user_name]
    return sorted(
        {f"\n{n}:" for n in others}
        | {f"\n**{n}" for n in others}
        | {"\nUser:", "<|im_end|>", "<|im_start|>", "<|endoftext|>"}
    )


def companion_request(
    speaker: str,
    messages: list[Message],
    names: list[str],
    user_name: str,
    sampling: dict[str, Any],
    *,
    max_tokens: int,
    temperature: float | None = None,
    seed: int | None = None,
) -> GenRequest:
    """The generation request for a companion's prompt (``sampling``: the persona's settings)."""
    return GenRequest(
        slot=speaker,
        messages=messages,
        max_tokens=max_tokens,
        temperature=float(temperature if temperature is not None else sampling["temperature"]),
        top_p=float(sampling["top_p"]),
        top_k=int(sampling["top_k"]),
        repeat_penalty=float(sampling["repeat_penalty"]),
        stop=stop_strings(speaker, names, user_name),
        seed=seed,
    )
