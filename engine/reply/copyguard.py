"""The copy guard: a reply that repeats a recent reply is not shown (small models often post the
previous speaker's message again, word for word or nearly; docs/copy-guard.md has the rules'
measurements)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from difflib import SequenceMatcher

# Pronouns compared as one word each: the 135M model echoes "I'm going to make it happen." as
# "You're going to make it happen." and "She's going to make it happen."
_PRONOUNS = {
    **dict.fromkeys(("i", "you", "he", "she", "we", "they"), "~p"),
    **dict.fromkeys(("i'm", "you're", "he's", "she's", "we're", "they're"), "~pbe"),
    **dict.fromkeys(("me", "him", "us", "them"), "~pobj"),
    **dict.fromkeys(("my", "your", "his", "her", "our", "their"), "~pposs"),
}


def copy_key(text: str, names: list[str] | tuple[str, ...] = ()) -> str:
    """A reply as the copy check compares it: its words, lower case, without punctuation,
    pronouns as one word each, and without member names leading it ("Mia, I'm so glad ..." is
    copied as often as "I'm so glad ...")."""
    words = re.findall(r"[a-z0-9]+(?:'[a-z]+)?", text.lower().replace("’", "'"))
    lead = {n.lower() for n in names}
    while words and words[0] in lead:
        words.pop(0)
    # "I am" is "I'm", "you are" is "you're": the model restates "You are Mia, ..." as "I'm Mia, ..."
    return re.sub(r"~p (?:am|are|is)\b", "~pbe", " ".join(_PRONOUNS.get(w, w) for w in words))


@dataclass(frozen=True)
class CopyRule:
    """When a reply counts as a copy of a recent one. Every tunable is a field, so ``key()``
    names the whole rule (training's rollout cache is keyed by it)."""

    words: int = (
        12  # a reply whose first this many words are nearly a recent reply's first words...
    )
    similarity: float = 0.8  # ... nearly: this word-sequence similarity (difflib ratio) or more
    recent_turns: int = 8  # recent: the companion turns among the last this many transcript items
    short_words: int = 4  # a shorter reply is compared whole, from this many words
    contained: float = (
        0.8  # a reply of 5+ words with this share of its words inside a recent reply...
    )
    block: int = 3  # ... in runs of at least this many words, in order, is a copy too
    retry_as_free_turn: bool = True  # a copy's one retry drops the Director's directive
    echo_words: int = 5  # a sentence of this many words or more ...
    echo_contained: float = (
        0.8  # ... with this share inside a recent reply (runs of ``block``) is an echo
    )
    framing_words: int = 6  # a sentence of this many words or more ...
    framing_contained: float = (
        0.75  # ... with this share inside the speaker's own instructions is an echo
    )

    def key(self) -> dict[str, object]:
        return asdict(self)

    def recent(
        self, items: list[tuple[str, str]], names: list[str] | tuple[str, ...] = ()
    ) -> list[str]:
        """What a new reply must not repeat: the companion turns among the last ``recent_turns``
        of ``items`` ((role, text) pairs), ``copy_key``-ed."""
        return [
            copy_key(text, names)
            for role, text in items[-self.recent_turns :]
            if role == "companion"
        ]

    def _similar_start(self, words: list[str], other: list[str]) -> float:
        """How closely ``words`` match the start of ``other`` (a word left out or added still matches)."""
        n = len(words)
        return max(
            SequenceMatcher(None, words, other[:k], autojunk=False).ratio()
            for k in range(max(1, n - 1), n + 3)
        )

    def _contained(self, words: list[str], other: list[str], open_end: bool = False) -> float:
        """The share of ``words`` found in ``other``, in order, in runs of ``block`` words or more
        (common words scattered through a long reply do not count). ``open_end``: ``words`` is
        still growing, so a shorter run at its end counts too (it may yet become long enough)."""
        blocks = SequenceMatcher(None, words, other, autojunk=False).get_matching_blocks()
        return sum(
            b.size
            for b in blocks
            if b.size >= self.block or (open_end and b.size and b.a + b.size == len(words))
        ) / max(1, len(words))

    def copies(self, text: str, recent: list[str], names: list[str] | tuple[str, ...] = ()) -> bool:
        """Whether ``text`` repeats one of ``recent`` (already ``copy_key``-ed): the same words;
        first ``words`` words nearly a recent reply's; a short reply (``short_words`` to
        ``words``) nearly the same as a recent one of about its length; or a reply of 5+ words
        mostly (``contained``) inside a recent one in runs of ``block`` words."""
        words = copy_key(text, names).split()
        if not words:
            return False
        for r in recent:
            other = r.split()
            if words == other:
                return True
            if len(words) > self.short_words and self._contained(words, other) >= self.contained:
                return True
            if (
                len(words) >= self.words
                and len(other) >= self.words - 1
                and self._similar_start(words[: self.words], other) >= self.similarity
            ):
                return True
            if (
                self.short_words <= len(words) < self.words
                and abs(len(words) - len(other)) <= 2
                and SequenceMatcher(None, words, other, autojunk=False).ratio() >= self.similarity
            ):
                return True
        return False

    def may_become_copy(
        self, text: str, recent: list[str], names: list[str] | tuple[str, ...] = ()
    ) -> bool:
        """Whether a growing reply may still turn out a copy: so far nearly the start of a recent
        reply, or (from ``block`` words) so far inside one. It is held back while it may; an
        opening of its own is shown at once (shown text is never taken back)."""
        words = copy_key(text, names).split()[: self.words]
        if not words:
            return False
        for r in recent:
            other = r.split()
            if other and self._similar_start(words, other) >= self.similarity:
                return True
            if len(words) < self.block:  # too few words to tell yet: hold if they occur in order
                if f" {' '.join(words)} " in f" {r} ":
                    return True
            elif self._contained(words, other) >= self.contained:
                return True
        return False

    def _echo(self, words: list[str], recent: list[list[str]], framing: list[str]) -> bool:
        """Whether a whole sentence (``copy_key`` words) repeats a recent reply or the speaker's
        instructions."""
        if len(words) >= self.echo_words and any(
            self._contained(words, r) >= self.echo_contained for r in recent
        ):
            return True
        return (
            bool(framing)
            and len(words) >= self.framing_words
            and self._contained(words, framing) >= self.framing_contained
        )

    def _may_echo(self, words: list[str], recent: list[list[str]], framing: list[str]) -> bool:
        """Whether an unfinished sentence may still become an echo: so far inside a source."""
        if not words:
            return False
        for source, share in [
            *((r, self.echo_contained) for r in recent),
            (framing, self.framing_contained),
        ]:
            if not source:
                continue
            if len(words) < self.block:
                if f" {' '.join(words)} " in f" {' '.join(source)} ":
                    return True
            elif self._contained(words, source, open_end=True) >= share:
                return True
        return False

    def drop_echoes(
        self,
        text: str,
        recent: list[str],
        framing: str = "",
        names: list[str] | tuple[str, ...] = (),
        *,
        partial: bool = False,
        shown: str = "",
    ) -> tuple[str, int]:
        """``text`` without its sentences that repeat a recent reply (``recent``, ``copy_key``-ed)
        or the speaker's own instructions (``framing``, ``copy_key``-ed: its card and turn note).
        Returns (text, sentences dropped). ``partial``: ``text`` is still growing, so its last,
        unfinished sentence is cut while it may still become an echo. A sentence that starts
        inside ``shown`` (already on screen) is kept: shown text is never taken back."""
        rec = [r.split() for r in recent if r]
        fr = framing.split()
        if not rec and not fr:
            return text, 0
        out, dropped, start = "", 0, 0
        ends = [m.end() for m in _SENTENCE_END.finditer(text)]
        for end in ends + [len(text)]:
            if end <= start:
                continue
            piece = text[start:end]
            words = copy_key(piece, names).split()
            last = end == len(text) and end not in ends
            rest = shown[len(out) :]  # what of ``shown`` this sentence would stand for
            on_screen = bool(rest.strip()) and (
                rest.startswith(piece.rstrip()) or piece.startswith(rest)
            )
            if not on_screen and partial and last and (piece[-1:].isalnum() or piece[-1:] in "'’"):
                words = words[:-1]  # its last word may be unfinished ("y" of "you're")
            if not on_screen and partial and last and (not words or self._may_echo(words, rec, fr)):
                break
            if not on_screen and not (partial and last) and self._echo(words, rec, fr):
                dropped += 1
            else:
                out += piece
            start = end
        return out.strip() if not partial else out.lstrip(), dropped


# a sentence ends after . ! ? or … (and any closing quotes or brackets) and the space after it,
# or at a line break
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"'”’)\]]*[ \t]+|\n+")

DEFAULT_RULE = CopyRule()
