"""Reply text rules: what of a generated text the chat keeps and shows.

One message is one paragraph, written as its speaker only: ``finish_reply`` cuts what the model
wrote as someone else, echoes of the prompt's own framing and special tokens, and a sentence the
token limit cut off. ``stream_safe`` says how much of a growing reply cleanup can no longer cut,
so streaming never shows text that is later taken back.
"""

from __future__ import annotations

import re

from engine.reply.prompts import NOTE_TAIL

PARAGRAPH_END = re.compile(r"(?<=\S)[ \t]*\n[ \t]*\n")
# While a reply streams, only text that cleanup can no longer cut is shown (``stream_safe``):
# a start that may still become a label ("Mi…" of "Mia:", "(…" of "(Mia's reply)"), a last
# line or sentence that may still become "Theo:", and a "<|…" that may be a special token are
# held back until they are settled. Everything else is shown at once, so the first words appear
# about as soon as they are decoded (docs/performance.md, streaming without a fixed holdback).
# an echo ("(Mia's response)", "(Mia responds to the request for a reply)") names itself within this
_ECHO_LEAD = 80
_LEAD_ECHO = re.compile(r"\s*\(([^()\n]{0,%d})" % (_ECHO_LEAD + 90))
_ECHO_WORD = re.compile(r"[^()\n]{0,%d}(?:response|reply|note|turn)" % _ECHO_LEAD, re.IGNORECASE)
_LEAD_LABEL = re.compile(r"\s*(?:[-*•>]\s*)?\**[A-Za-z]{0,21}\**(?:\s*\([^()\n]{0,30}\)?)?\s*:?")
_LEAD_NAMES = re.compile(
    r"\s*[A-Z][a-z]{1,20}(?:\s*(?:,|&|a|an|and)\s*(?:[A-Z][a-z]{0,20})?)+\s*:?"
)
_TAIL_LABEL = re.compile(
    r"(?:[-*•>]\s*)?\**(?:[A-Z][A-Za-z]{0,20}(?: (?:[A-Z0-9][A-Za-z0-9]{0,20})?)?)?\**"
    r"(?:\s*\([^()\n]{0,30}\)?)?\s*:?"
)
_BOUNDARY = re.compile(r"\n\s*|(?<=[.!?…])\s+")
_NOTE_ECHO = re.compile(
    r"(?:^|(?<=[.!?…])\s+)\s*(?:(?:reply (?:now as|to) )?[^,.\n]{1,30},\s*)?%s\s*[.!]?" % NOTE_TAIL,
    re.IGNORECASE,
)


_TURN_ECHO = re.compile(
    r"\s*\((?:\s*(?:it is|it's|you are)\s+[A-Za-z]{1,20}'s turn\.?\s*|"
    r"[^()\n]{0,40}\bin character\b[^()\n]{0,80})\)",
    re.IGNORECASE,
)


def stream_safe(visible: str) -> str:
    """The longest start of ``visible`` (a cleaned, growing reply) that no later text can make
    cleanup cut (see ``clean_reply``)."""
    echo = _LEAD_ECHO.fullmatch(visible)  # an open "(…" is held while it may still be an echo
    if echo and (len(echo.group(1)) < _ECHO_LEAD + 8 or _ECHO_WORD.match(echo.group(1))):
        return ""
    if _LEAD_LABEL.fullmatch(visible) or _LEAD_NAMES.fullmatch(visible):
        return ""
    lead = " ".join(visible.lower().split())
    if lead and (
        NOTE_TAIL.startswith(lead)
        or "reply now as".startswith(lead)
        or "in character:".startswith(lead)
        or (lead.startswith("reply now as") and len(lead) < 44)
    ):
        return ""  # may still become an echo of the turn note (cut by cleanup)
    cut = len(visible)
    paren = visible.rfind("(")  # an open "(…" may still turn out to be about someone else (cut)
    if paren > 0 and ")" not in visible[paren:] and len(visible) - paren <= 130:
        cut = paren
    special = max(visible.rfind("<"), visible.rfind("["))
    if special >= 0 and not re.search(r"[>\]]", visible[special:]) and len(visible) - special <= 32:
        cut = special
    last = None
    for last in _BOUNDARY.finditer(visible, 0, cut):
        pass
    if last is not None and _TAIL_LABEL.fullmatch(visible, last.end(), cut):
        cut = last.start()
    return visible[:cut].rstrip()


_SPECIAL = re.compile(r"<\|[^|>]{1,30}\|>|</?s>|\[/?INST\]")


def clean_reply(text: str, speaker: str, others: list[str], user_name: str) -> tuple[str, bool]:
    """Cut anything the model wrote as someone else. Returns (text, had_role_confusion).
    Twice when the first pass changed the text: one cut can uncover another ("Me: (Note to Theo): ...")."""
    once, confused = _clean_once(text, speaker, others, user_name)
    if once == text.strip():
        return once, confused
    twice, again = _clean_once(once, speaker, others, user_name)
    return twice, confused or again


# Words a reply may open with before a colon that are its own text, not a speaker label:
# counting ("One: ..."), a note-taker's habits ("Noted: ...", "Open: ...").
_LEAD_WORDS = frozenset(
    "one two three four five first second third next last step plan noted note open "
    "recap summary decision decisions update question questions tip idea option".split()
)


def _clean_once(text: str, speaker: str, others: list[str], user_name: str) -> tuple[str, bool]:
    text = _SPECIAL.sub("", text).replace("\r", "")
    # Drop a leading "Speaker:" the model may write for itself (also **Speaker:**), or a label
    # it invents ("Drama: ..."); a leading label naming another member is role confusion (below).
    text = re.sub(
        rf"^\s*\**{re.escape(speaker)}\**[ \t]*(?::\s*|\n\s*)", "", text, flags=re.IGNORECASE
    )
    # An echo of the prompt's own framing: "(Mia's response)", "(Director's note ...)", or the
    # turn note itself, "(Mia, ask User one gentle question.)".
    # (also after the speaker's own name as an address: "Mia, (Note to Theo): ...")
    text = re.sub(
        r"^\s*(?:%s\s*,\s*)?\([^()\n]{0,%d}(?:response|reply|note|turn)[^()\n]{0,80}\)\s*:?\s*"
        % (re.escape(speaker), _ECHO_LEAD),
        "",
        text,
        flags=re.IGNORECASE,
    )
    text = re.sub(
        rf"^\s*\(\s*{re.escape(speaker)}\s*,[^()\n]{{0,{_ECHO_LEAD}}}\)\s*",
        "",
        text,
        flags=re.IGNORECASE,
    )
    names = [
        n
        for n in others + [user_name, "User", "Director", "Assistant"]
        if n and n.lower() != speaker.lower()
    ]
    alt = "|".join(re.escape(n) for n in sorted(set(names), key=len, reverse=True))
    confused = False
    if names:
        # A turn note for someone else echoed back ("(Ruth, add a point nobody has made yet)"), or
        # a stage direction for someone else ("(Ruth responds with a smile)"): not this reply's.
        # Cut before the leading labels below, which then also drop what it hid ("Ruth: ...").
        text, n_cut = re.subn(
            rf"\s*\(\s*(?:{alt})\b[^()\n]{{0,120}}\)", "", text, flags=re.IGNORECASE
        )
        confused = n_cut > 0
    lead = re.match(r"^\s*\**([A-Z][a-z]{1,20})\**:\s+", text)
    if (
        lead
        and lead.group(1).lower() not in {n.lower() for n in others + [user_name, "user"]}
        and lead.group(1).lower() not in _LEAD_WORDS
    ):
        text = text[lead.end() :]
    # "Mia, Theo: ..." (a label naming several people) is an address, not a reply of theirs.
    text = re.sub(r"^\s*[A-Z][a-z]{1,20}(?:\s*(?:,|&|and)\s*[A-Z][a-z]{1,20})+\s*:\s*", "", text)
    # The speaker's own name as if addressed, an echo of the turn note "(Mia, ...)": "Mia, I'm so glad ..."
    text = re.sub(rf"^\s*{re.escape(speaker)}\s*,\s*", "", text, flags=re.IGNORECASE)
    # The turn note's own words, "(Reply now as Mia,) briefly and in character.", as a sentence
    text = _NOTE_ECHO.sub("", text)
    # ... or in pieces: "(It is Ruth's turn.)", "(In character, add some humour.)", a leading
    # "Reply now as Omar." or "In character:" (an open "(" and these leads are held while streaming)
    text = _TURN_ECHO.sub("", text)
    text = re.sub(
        r"^\s*(?:reply now as [A-Za-z]{1,20}\s*[.!:](?=\s|$)|in character\s*:)\s*",
        "",
        text,
        flags=re.IGNORECASE,
    )
    text = re.sub(
        r"^[\s.…]+$|\s+(?=[.!?,])|(?<=[!?])\.(?!\.)", "", text
    )  # what a cut leaves: " .", "!.", a lone "…"
    text = re.sub(r"(?<!\.)\.\.(?!\.)", ".", text)
    if names:
        # a line in the style of the memory notes, "- Later, User said: ...": someone else's words
        m = re.search(
            rf"(?:^|\n)\s*[-*•]\s*[^\n]{{0,24}}\b(?:{alt})\s+(?:said|says|told)\b",
            text,
            flags=re.IGNORECASE,
        )
        if m:
            text, confused = text[: m.start()], True
        # also as a list item ("- User: ...", the notes' own bullet) or with an aside ("User (Rex): ...")
        m = re.search(
            rf"(?:^|\n|(?<=[.!?…])\s+)(?:[-*•>]\s*)?\**(?:{alt})\**(?:\s*\([^()\n]{{0,30}}\))?\s*:",
            text,
            flags=re.IGNORECASE,
        )
        if m:
            text = text[: m.start()]
            confused = True
    # The model may also start a fresh line as itself: keep only its first message block.
    m = re.search(rf"\n\s*\**{re.escape(speaker)}\**\s*:", text, flags=re.IGNORECASE)
    if m:
        text = text[: m.start()]
    # ... or invent a new participant ("Chat: ...", "Friend 2: ..."), which is the same failure.
    m = re.search(r"\n\s*\**[A-Z][A-Za-z]{1,20}(?: [A-Z0-9][A-Za-z0-9]{0,20})?\**\s*:\s", text)
    if m:
        text = text[: m.start()]
        confused = True
    text = re.sub(r"[ \t]+", " ", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return text, confused


def trim_to_sentence(text: str) -> str:
    """A reply cut by the token limit ends at its last complete sentence (if that keeps most
    of it), so nobody sees a half-sentence."""
    ends = [m.end() for m in re.finditer(r"[.!?…](?:[\"')\]]*)(?=\s|$)", text)]
    if ends and ends[-1] >= len(text) * 0.4:
        return text[: ends[-1]].rstrip()
    return text.rstrip() + "…"


def finish_reply(
    raw: str, speaker: str, others: list[str], user_name: str, stopped: str
) -> tuple[str, bool]:
    """A generated text as the chat keeps it: one paragraph, cleaned of lines written as others,
    cut back to its last full sentence when the token limit stopped it. Returns (text, confused)."""
    m = PARAGRAPH_END.search(raw)
    if m:
        raw = raw[: m.start()]
    text, confused = clean_reply(raw, speaker, others, user_name)
    if stopped == "length" and text:
        text = trim_to_sentence(text)
    return text, confused
