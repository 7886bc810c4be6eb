"""What the companions remember about the user: facts per group, shown and editable by the user.

A fact comes from the user typing it (memory panel), from the user pinning a message ("Remember
this"), or from automatic extraction, which is deliberately conservative: it keeps only a
clause the user wrote in a first-person statement of a known shape ("my dog is called Rex", "I
live in Leeds", "I'm allergic to peanuts"), word for word, and skips questions, negations,
hypotheticals, reported speech and anything the safety screen flags (a crisis message becomes a
fact only if the user pins it). Facts live in the history database (``memories`` table, which
conversation and message each came from) and never leave the computer.

Before a companion's turn, the pinned facts and the facts that share a word with the user's last
message are put in its note (engine.chat), within ``FACT_BUDGET`` tokens.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from engine.errors import InputError
from engine.user_text import sanitize_user_text

FACT_BUDGET = 160  # tokens of facts in one companion note
MAX_FACT_CHARS = 500
SOURCES = ("typed", "pinned", "auto")

# a clause ends at these; a fact never spans two sentences
_SENTENCES = re.compile(r"[^.!?\n;]+[.!?]*")
_LEAD = r"^(?i:(?:and|so|also|oh|well|btw|by the way|anyway|actually|fun fact)[,:]?\s+)*"
_NAME = r"[A-Z][\w'’-]{1,30}(?: [A-Z][\w'’-]{1,30})?"
_NOUN = r"[a-z][a-z'’-]{1,20}(?: [a-z][a-z'’-]{1,20})?"
_PLACE = r"[A-Z][\w'’.-]{1,30}(?:,? [A-Z][\w'’.-]{1,30}){0,2}"
_THING = r"[a-z][\w'’-]{1,25}(?: [a-z][\w'’-]{1,25}){0,2}"
PATTERNS = [
    re.compile(_LEAD + p)
    for p in (
        rf"(?:M|m)y {_NOUN}(?:'s|’s)? name is {_NAME}",
        rf"(?:M|m)y {_NOUN} is (?:called|named) {_NAME}",
        rf"(?:M|m)y name is {_NAME}",
        rf"I (?:have|own|got) an? {_NOUN} (?:called|named) {_NAME}",
        rf"I live in {_PLACE}",
        rf"I(?:'m| am) from {_PLACE}",
        rf"I work as an? {_THING}",
        rf"I(?:'m| am) allergic to {_THING}",
        r"(?:M|m)y birthday is (?:on )?[\w ]{3,20}",
        rf"(?:M|m)y favou?rite {_NOUN} is {_THING}",
    )
]
# a sentence with any of these is not a plain statement of fact about the user
_SKIP = re.compile(
    r"\?|n['’]t\b|\b(?:not|no|never|dont|cant|wont|isnt|if|would|could|might|maybe|perhaps|wish|"
    r"imagine|pretend|suppose|supposed|dream|dreamt|dreamed|was|were|used to|anymore|said|says|"
    r"told|thinks|thought|guess|joking|kidding|lol|jk|want|wanted|hope|should|will|going to)\b",
    re.IGNORECASE,
)
_STOP = set(
    """a an the and or but so of to in on at for with from by about as is are was were be been
am i me my mine you your we our they them their he she his her it its this that these those what
which who whom how why when where there here do does did have has had not no yes just very really
too also than then now today said say tell told called named name like know think""".split()
)


def extract_facts(text: str) -> list[str]:
    """Facts stated in a user's message, each a clause of the message as written (never
    reworded, so nothing is stored that the user did not say). Most messages give none."""
    out: list[str] = []
    for m in _SENTENCES.finditer(text):
        sentence = m.group(0).strip()
        if not sentence or _SKIP.search(sentence):
            continue
        for pattern in PATTERNS:
            hit = pattern.match(sentence)
            if hit:
                clause = hit.group(0).strip(" ,.;:!")
                clause = re.sub(_LEAD, "", clause, flags=re.IGNORECASE)
                if clause not in out:
                    out.append(clause)
                break
    return out


def words(text: str) -> set[str]:
    """Content words of a text (lower case, no stop words), for relevance."""
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2 and w not in _STOP}


def fact_line(fact: dict[str, Any], user_name: str) -> str:
    """A fact as a companion reads it."""
    text = " ".join(str(fact["text"]).split())
    if fact.get("source") == "typed":
        return f"About {user_name}: {text}"
    return f'{user_name} said: "{text}"'


def relevant_facts(
    facts: list[dict[str, Any]],
    recent: list[str],
    count: Callable[[str], int],
    user_name: str,
    budget: int = FACT_BUDGET,
) -> list[str]:
    """The lines for the facts a companion should have in mind now: pinned facts first, then
    facts sharing a content word with ``recent`` (the user's last message), newest first, within
    ``budget`` tokens."""
    topic = set().union(*(words(t) for t in recent)) if recent else set()
    pinned = [f for f in facts if f.get("pinned")]
    related = [f for f in reversed(facts) if not f.get("pinned") and words(f["text"]) & topic]
    out, left = [], budget
    for f in pinned + related:
        line = fact_line(f, user_name)
        cost = count(line) + 2
        if cost <= left:
            out.append(line)
            left -= cost
    return out


def check_fact(text: Any) -> str:
    """A fact's text as stored; raises InputError when it cannot be one."""
    text = " ".join(sanitize_user_text(text).split())
    if len(text) > MAX_FACT_CHARS:
        raise InputError(
            f"A remembered fact is at most {MAX_FACT_CHARS} characters; this one has "
            f"{len(text)}. Keep the part worth remembering."
        )
    return text
