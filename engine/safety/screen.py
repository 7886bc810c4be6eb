"""The rule-based screen: normalisation, idiom blanking, pattern matching and scoring.

The tables it runs are data in ``rules_en.py``, ``rules_de.py`` and ``rules_fr.py``; this module
holds only the logic (see docs/safety.md for how a message is scored and what it misses).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from ..paths import assets_dir
from . import rules_de, rules_en, rules_fr
from .result import CATEGORIES, CONCERN_AT, NO_RISK, URGENT_AT, SafetyResult
from .rules_en import (
    APOSTROPHE_RES,
    FILLER_PHRASES,
    FILLERS,
    FUZZY_WORDS,
    KEY_WORDS,
    PHRASE_RES,
    TOKEN_MAP,
)

# ---------------------------------------------------------------------------------------------
# 1. Normalisation tables
# ---------------------------------------------------------------------------------------------

_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)
_LOOKALIKES = str.maketrans(
    {
        "а": "a",
        "е": "e",
        "о": "o",
        "р": "p",
        "с": "c",
        "у": "y",
        "х": "x",
        "і": "i",
        "ј": "j",
        "ѕ": "s",
        "к": "k",
        "м": "m",
        "т": "t",
        "н": "h",
        "в": "b",
        "ԁ": "d",
        "ӏ": "l",
        "α": "a",
        "ε": "e",
        "ι": "i",
        "ο": "o",
        "κ": "k",
        "ν": "v",
        "τ": "t",
        "υ": "u",
        "ρ": "p",
        "‘": "'",
        "’": "'",
        "ʼ": "'",
        "`": "'",
        "´": "'",
        "′": "'",
        "“": '"',
        "”": '"',
        "–": "-",
        "—": " , ",
        "…": " ",
    }
)
_LEET = {
    "0": "o",
    "1": "i",
    "3": "e",
    "4": "a",
    "5": "s",
    "7": "t",
    "@": "a",
    "$": "s",
    "!": "i",
    "|": "i",
}
_NOT_LEET = re.compile(
    r"^\d+(?:st|nd|rd|th|s|am|pm|k|m|km|kms|kg|lb|lbs|yo|h|hr|hrs|min|mins"
    r"|x|d|mg|ml|g|ft|in|cm|mm|gb|mb|p|hz|v|w)$"
)

_FUZZY_BY_LEN: dict[int, list[str]] = {}
for _w in FUZZY_WORDS:
    for _n in (len(_w) - 1, len(_w), len(_w) + 1):
        _FUZZY_BY_LEN.setdefault(_n, []).append(_w)


def _edit1(a: str, b: str) -> bool:
    """True when a and b differ by at most one insertion, deletion, substitution or swap."""
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    if a[0] != b[0] and a[1] != b[1] and a[0] != b[1] and a[1] != b[0]:
        return False  # cheap reject: start differs twice
    if la == lb:
        diff = [i for i in range(la) if a[i] != b[i]]
        if len(diff) <= 1:
            return True
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    if la > lb:
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    return a[i:] == b[i + 1 :]


def _elongation_candidates(tok: str):
    two = re.sub(r"(.)\1{2,}", r"\1\1", tok)
    yield two
    yield re.sub(r"(.)\1+", r"\1", two)
    # collapse one doubled run at a time ("killl" -> "kill", "diiee" -> "die")
    for m in re.finditer(r"(.)\1", two):
        yield two[: m.start()] + two[m.start() + 1 :]


def medicines_path():
    return assets_dir() / "safety" / "medicines.txt"


@lru_cache(maxsize=1)
def _medicines() -> frozenset[str]:
    """Medicine names (assets/safety/medicines.txt: generic, brand and slang names in the three
    languages), folded like the text; a missing or unreadable file means no extra names."""
    try:
        lines = medicines_path().read_text(encoding="utf-8").splitlines()
    except (OSError, ValueError):
        return frozenset()
    names = {_fold(x.strip()) for x in lines if x.strip() and not x.startswith("#")}
    return frozenset(n for n in names if n.isalpha() and len(n) >= 4)


def _medicine(tok: str, pills: str, word: str) -> str | None:
    """A medicine name the table's own pill words do not list -> the table's word for medicine
    ("took 40 zolpidem" is read as "took 40 medication")."""
    if tok in _medicines() and not re.fullmatch(pills, tok):
        return word
    return None


@lru_cache(maxsize=8192)
def _canon_token(tok: str) -> str:
    """One token -> its canonical form (may become several words, e.g. "im" -> "i am")."""
    if "*" in tok:  # censored: "k*ll", "s*icide"
        rx = re.compile("^" + re.escape(tok).replace(r"\*", "[a-z]{1,2}") + "$")
        hit = next((w for w in sorted(KEY_WORDS) if rx.match(w)), None)
        tok = hit if hit else tok.replace("*", "")
    if tok in TOKEN_MAP:
        return TOKEN_MAP[tok]
    if tok in KEY_WORDS or not tok.isalpha():
        return tok
    med = _medicine(tok, rules_en.PILLS, "medication")
    if med:
        return med
    if re.search(r"(.)\1\1", tok):  # "dieeee", "myselfff", "killlll"
        for cand in _elongation_candidates(tok):
            if cand in KEY_WORDS:
                return TOKEN_MAP.get(cand, cand)
        tok = re.sub(r"(.)\1{2,}", r"\1\1", tok)
    if len(tok) >= 5:
        for word in _FUZZY_BY_LEN.get(len(tok), ()):
            if _edit1(tok, word):
                return TOKEN_MAP.get(word, word)
    return tok


@lru_cache(maxsize=8192)
def _deleet(tok: str) -> str:
    core = tok.strip("!|")
    if not re.search(r"[a-z]", core) or not re.search(r"[0-9@$!|]", core) or _NOT_LEET.match(core):
        return tok
    first = "".join(_LEET.get(c, c) for c in core)
    if _canon_token(first) != first or first in KEY_WORDS:
        return first
    alt = "".join("l" if c == "1" else _LEET.get(c, c) for c in core)  # "ki11" -> "kill"
    if alt in KEY_WORDS or _canon_token(alt) != alt:
        return alt
    return first


_SPACED = re.compile(r"(?<![a-z0-9@$])(?:[a-z0-9@$][ .\-_*~]{1,2}){2,}[a-z0-9@$](?![a-z0-9@$])")


def _join_spaced(m: re.Match) -> str:
    word = re.sub(r"[ .\-_*~]", "", m.group(0))
    if word.startswith("i") and _canon_token(_deleet(word[1:])) in KEY_WORDS:
        return "i " + word[1:]  # "i k i l l myself"
    return word


def _fold(text: str) -> str:
    if text.isascii():
        return text.lower()
    text = unicodedata.normalize("NFKC", text).translate(_ZERO_WIDTH).casefold()
    text = text.translate(_LOOKALIKES)
    text = unicodedata.normalize("NFKD", text)
    return "".join(c for c in text if not unicodedata.combining(c))


def normalise(text: str) -> str:
    """The canonical form the patterns run on: lower-case words, clauses separated by ``|``."""
    text = _fold(text)
    for rx, rep in APOSTROPHE_RES:
        text = rx.sub(rep, text)
    text = text.replace("'", "")
    text = _SPACED.sub(_join_spaced, text)
    text = re.sub(r"[a-z0-9@$!|]+", lambda m: _deleet(m.group(0)), text)
    text = re.sub(r"\.{2,}", " ", text)
    text = re.sub(r"[.!?;:,()\[\]{}\"\n\r\t|]+", " | ", text)
    text = re.sub(r"[^a-z0-9|* ]+", " ", text)
    words = " ".join(_canon_token(t) for t in text.split())
    for rx, rep in PHRASE_RES:
        words = rx.sub(rep, words)
    return re.sub(r"(?:\| )+\|", "|", words).strip(" |")


def _strip_fillers(text: str) -> str:
    text = FILLER_PHRASES.sub(" ", text)
    return " ".join(t for t in text.split() if t not in FILLERS)


# ---------------------------------------------------------------------------------------------
# 3. Pattern tables (over normalised text). Each row: (weight, pattern, flags)
#    flags: "s" = first-person check (someone else as subject -> weight capped at THIRD_PERSON)
#           "n" = not negatable (the pattern contains its own negation or is negation-proof)
#           "f" = first person only (someone else as subject -> no hit)
#           "t" = a topic word: no hit in a clause about fiction, news, study or work (MEDIA)
#           "e" = behaviour in progress: a hit that keeps its full weight makes the level
#                 "emergency", and hyperbole markers do not lower it
# ---------------------------------------------------------------------------------------------

THIRD_PERSON = 0.45  # "my friend wants to die", "the character commits suicide"
REPORTED = 0.45  # "they told me to kill myself" (the words are someone else's)
PAST = 0.6  # "I used to cut"
HYPERBOLE_CAP = 0.79  # "... makes me want to die lol": never urgent ...
HYPERBOLE_FACTOR = 0.75  # ... and a little lighter
EMERGENCY_SCORE = 0.95  # behaviour in progress ("I took the whole bottle an hour ago")

# ---------------------------------------------------------------------------------------------
# 4. Speed: each pattern is tried only when the message has one of its "anchor" words
# ---------------------------------------------------------------------------------------------
# An anchor set is a set of word prefixes (up to 4 letters) such that every match of the pattern
# contains a word starting with one of them. It is derived from the parsed regex: literal words
# that start a token and are not optional; for alternatives, the union over the branches. When
# no such set can be proven the pattern always runs (anchors = None). tests/test_safety.py checks
# that the result is the same with and without this shortcut.

try:  # Python >= 3.11
    from re import _constants as _sre_c
    from re import _parser as _sre_p
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _sre_c  # type: ignore[no-redef]
    import sre_parse as _sre_p  # type: ignore[no-redef]

_COMMON_KEYS = frozenset(
    {
        "i",
        "a",
        "to",
        "my",
        "me",
        "am",
        "is",
        "the",
        "and",
        "not",
        "do",
        "be",
        "you",
        "want",
        "goin",
        "will",
        "of",
        "in",
        "on",
        "it",
        "he",
        "she",
        "the",
        "have",
        "that",
        "this",
        "for",
        "no",
        "so",
        "at",
    }
)


def _anchor_seq(items, at_start: bool) -> frozenset | None:
    candidates: list[frozenset] = []
    word, word_at_start, next_start = "", False, at_start

    def flush():
        nonlocal word
        if word and word_at_start:
            candidates.append(frozenset({word[:4]}))
        word = ""

    for op, av in items:
        if op is _sre_c.LITERAL:
            ch = chr(av)
            if ch.isalpha():
                if not word:
                    word_at_start = next_start
                word += ch
                next_start = False
                continue
            flush()
            next_start = ch == " "
            continue
        if op is _sre_c.AT:
            flush()
            next_start = True
            continue
        if op in (_sre_c.ASSERT, _sre_c.ASSERT_NOT):
            flush()
            continue  # consumes nothing; keep next_start
        if op is _sre_c.BRANCH and word and word_at_start and len(word) < 4:
            # the parser factors "giving|gave" into "g(?:iving|ave)": extend the prefix per branch
            candidates.append(frozenset((word + _leading(b))[:4] for b in av[1]))
            word = ""
            next_start = False
            continue
        flush()
        found = None
        ends_at_start = _ends_with_space([(op, av)])
        if op is _sre_c.SUBPATTERN:
            found = _anchor_seq(av[-1], next_start)
        elif op is _sre_c.BRANCH:
            sets = [_anchor_seq(branch, next_start) for branch in av[1]]
            if all(x is not None for x in sets):
                found = frozenset().union(*sets)
        elif op in (_sre_c.MAX_REPEAT, _sre_c.MIN_REPEAT):
            if av[0] >= 1:
                found = _anchor_seq(av[2], next_start)
            else:  # optional "(?:a )?": a word still starts if it ends in " "
                ends_at_start = ends_at_start and next_start
        if found is not None:
            candidates.append(found)
        next_start = ends_at_start
    flush()
    if not candidates:
        return None
    return min(
        candidates,
        key=lambda c: sum(50 if k in _COMMON_KEYS else 20 if len(k) < 3 else 1 for k in c),
    )


def _ends_with_space(items) -> bool:
    """True when whatever ``items`` matches ends with a space (so a new word starts next)."""
    if not items:
        return False
    op, av = items[-1]
    if op is _sre_c.LITERAL:
        return chr(av) == " "
    if op is _sre_c.SUBPATTERN:
        return _ends_with_space(av[-1])
    if op is _sre_c.BRANCH:
        return all(_ends_with_space(b) for b in av[1])
    if op in (_sre_c.MAX_REPEAT, _sre_c.MIN_REPEAT):
        return _ends_with_space(av[2])
    return False


def _leading(items) -> str:
    out = ""
    for op, av in items:
        if op is not _sre_c.LITERAL or not chr(av).isalpha():
            break
        out += chr(av)
    return out


def _anchors(pattern: str) -> frozenset | None:
    try:
        return _anchor_seq(_sre_p.parse(pattern), False)
    except Exception:  # pragma: no cover # noqa: BLE001 - private API
        return None


def _word_keys(text: str) -> frozenset:
    return frozenset(t[:k] for t in text.split() for k in (1, 2, 3, 4))


def _keyed(pattern: str) -> str:
    """A row written as ``^(?=context)(?!exclusions).*?PHRASE`` checks the whole message, but
    negation, someone else as subject and the media clause must be read where PHRASE starts: the
    phrase becomes group ``k`` (only when nothing after the ``.*?`` is a top-level alternative)."""
    if not pattern.startswith("^"):
        return pattern
    depth, i, cls, cut = 0, 0, False, None
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if cls:
            cls = c != "]"
        elif c == "[":
            cls = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0 and c == "|":
            return pattern  # a top-level alternative: leave the row as written
        elif depth == 0 and cut is None and pattern.startswith(".*?", i):
            cut = i + 3
        i += 1
    return pattern if cut is None else pattern[:cut] + "(?P<k>" + pattern[cut:] + ")"


def _span(m: re.Match) -> tuple[int, int]:
    """Where a row's phrase is: group ``k`` of a keyed row (``_keyed``), else the whole match."""
    return m.span("k") if "k" in m.re.groupindex else m.span()


@lru_cache(maxsize=None)
def _compiled(table):
    """Compile one language's tables once, on first use (keeps ``import engine.safety`` cheap)."""
    idioms = [(re.compile(p), _anchors(p)) for p in table.IDIOMS]
    rules = {
        cat: [(w, re.compile(_keyed(p)), flags, _anchors(p)) for w, p, flags in rows]
        for cat, rows in table.RULES.items()
    }
    boosters = {cat: [(w, re.compile(p)) for w, p in rows] for cat, rows in table.BOOSTERS.items()}
    return idioms, rules, boosters


def _runs(anchors: frozenset | None, keys: frozenset | None) -> bool:
    return keys is None or anchors is None or not anchors.isdisjoint(keys)


_PRIORITY = {c: i for i, c in enumerate(CATEGORIES)}


def _clause_prefix(text: str, start: int) -> str:
    cut = text.rfind("|", 0, start)
    return text[cut + 1 : start].lstrip()


def _clause_around(text: str, start: int, end: int) -> str:
    left = text.rfind("|", 0, start)
    right = text.find("|", end)
    return text[left + 1 : right if right >= 0 else len(text)]


def _someone_else(prefix: str, table) -> bool:
    """Nearest subject-ish word before the phrase belongs to someone else (not the user)."""
    for tok in reversed(prefix.split()[-8:]):
        if tok in table.FIRST:
            return False
        if tok in table.THIRD:
            return True
    return False


def _weigh(text: str, weight: float, m: re.Match, flags: str, category: str, table) -> float:
    start, end = _span(m)
    prefix = _clause_prefix(text, start)
    if "n" not in flags and table.NEGATION_TAIL.search(" " + prefix if prefix else " "):
        return 0.0
    if ("s" in flags or "f" in flags or "t" in flags) and _someone_else(prefix, table):
        if "f" in flags:  # "my mum is going to kill me"
            return 0.0
        weight = min(weight, THIRD_PERSON)
    if "t" in flags and table.MEDIA.search(_clause_around(text, start, end)):
        return 0.0  # a novel, the news, a class, research
    if category in ("suicide", "self_harm") and table.REPORTED_TAIL.search(prefix):
        weight = min(weight, REPORTED)
    clause = _clause_around(text, start, end)
    if table.PAST.search(clause) and not table.NOT_PAST.search(clause):
        weight = min(weight, PAST)
    return weight


# Behaviour in progress (rows flagged "e" that keep their full weight) raises the level to this.
LEVEL_RANK = {"none": 0, "concern": 1, "urgent": 2, "emergency": 3}


def _blank_idioms(norm: str, table, shortcut: bool = True) -> str:
    """``norm`` with the table's idioms blanked out, padded with one space at each end."""
    keys = _word_keys(norm) if shortcut else None
    for rx, anchors in _compiled(table)[0]:
        if _runs(anchors, keys):
            norm = rx.sub(" _ ", norm)
    return " " + re.sub(r" +", " ", norm).strip() + " "


def _strip(norm: str, table) -> str:
    """``norm`` without the fillers of one language's table."""
    return _strip_fillers(norm) if table is rules_en else _strip_light(norm, table)


def _read(text: str, table) -> str:
    """``text`` normalised for one language's table (light normalisation for German and French)."""
    return normalise(text) if table is rules_en else normalise_light(text, table)


def _screen(
    norm: str, table, hyperbole: bool, serious: bool, shortcut: bool, joke: bool = False
) -> SafetyResult:
    """Score one normalised message against one language's tables; ``joke``: the message is a
    method joke about an everyday annoyance, whose method phrase is then no suicide hit (other
    hits in the message still count)."""
    _, rules, boosters = _compiled(table)
    norm = _blank_idioms(norm, table, shortcut)
    keys = _word_keys(norm) if shortcut else None
    jokes = [m.span() for m in table.JOKE_METHOD.finditer(norm)] if joke else []

    # (level rank, score, -priority, category, evidence)
    best: tuple[int, float, int, str, str] | None = None
    for category, rows in rules.items():
        found: list[tuple[float, int, int, str, bool]] = []
        for weight, rx, flags, anchors in rows:
            if not _runs(anchors, keys):
                continue
            for m in rx.finditer(norm):
                w = _weigh(norm, weight, m, flags, category, table)
                if w > 0:
                    start, end = _span(m)
                    found.append(
                        (w, start, end, norm[start:end].strip(), "e" in flags and w >= weight)
                    )
        if not found:
            continue
        hits: list[tuple[float, str]] = []  # overlapping hits count once (the heaviest)
        taken: list[tuple[int, int]] = []
        if jokes and category == "suicide" and not any(h[4] for h in found):
            found = [h for h in found if all(h[2] <= a or h[1] >= b for a, b in jokes)]
            if not found:
                continue
        emergency = any(h[4] for h in found)
        for w, start, end, phrase, _ in sorted(found, key=lambda h: -h[0]):
            if all(end <= a or start >= b for a, b in taken):
                taken.append((start, end))
                hits.append((w, phrase))
        miss = 1.0
        for w, _ in hits:
            miss *= 1.0 - w
        for w, rx in boosters.get(category, ()):
            if rx.search(norm):
                miss *= 1.0 - w
        if serious and category == "violence_to_others":
            miss *= 0.65
        score = 1.0 - miss
        if hyperbole and not serious and not emergency:
            score = min(score * HYPERBOLE_FACTOR, HYPERBOLE_CAP)
        if emergency:
            level, evidence = (
                "emergency",
                next(h[3] for h in sorted(found, key=lambda h: -h[0]) if h[4]),
            )
            score = max(score, EMERGENCY_SCORE)
        else:
            evidence = max(hits, key=lambda h: h[0])[1]
            level = "urgent" if score >= URGENT_AT else "concern" if score >= CONCERN_AT else "none"
        cand = (LEVEL_RANK[level], round(score, 3), -_PRIORITY[category], category, evidence)
        if best is None or cand[:3] > best[:3]:
            best = cand
    if best is None:
        return NO_RISK
    _, score, _, category, evidence = best
    if score < CONCERN_AT:
        return SafetyResult(False, None, "none", "", score)
    level = "emergency" if best[0] == 3 else "urgent" if score >= URGENT_AT else "concern"
    return SafetyResult(True, category, level, evidence, score)


def assess_rules(text: str, *, _shortcut: bool = True) -> SafetyResult:
    """Screen one message with the rule tables of every screened language; the highest wins."""
    if not text or not text.strip():
        return NO_RISK
    raw_hyperbole = bool(rules_en.HYPERBOLE_EMOJI.search(text))
    best = NO_RISK
    for table in _languages(text):
        norm = _read(text, table)
        hyperbole = raw_hyperbole or bool(table.HYPERBOLE.search(norm))
        serious = bool(table.SERIOUS.search(norm))
        norm = _strip(norm, table)
        joke = (
            not serious
            and bool(table.JOKE_METHOD.search(norm))
            and bool(table.JOKE_TRIVIAL.search(norm))
            and (hyperbole or bool(table.JOKE_IF.search(norm)))
        )
        result = _screen(norm, table, hyperbole, serious, _shortcut, joke)
        if (LEVEL_RANK[result.level], result.score) > (LEVEL_RANK[best.level], best.score):
            best = result
    return best


def everyday_purpose(text: str) -> bool:
    """Whether the message states a harmless purpose in any screened language's ``PURPOSE`` table
    ("kill it at the gym", "wie verschrieben", "pour accrocher le rideau")."""
    if not text or not text.strip():
        return False
    for table in _languages(text):
        norm = _read(text, table)
        if table.PURPOSE.search(norm):
            return True
    return False


DENIAL_WORDS = 12


def denied(text: str) -> bool:
    """Whether a short message (up to ``DENIAL_WORDS`` words) denies a suicide or self-harm
    phrase the rules know ("I'm not going to kill myself", "ich will nicht sterben"): a hit the
    negation before it cancels. Longer messages say more than the denial; the layer reads them."""
    if not text or not text.strip() or len(text.split()) > DENIAL_WORDS:
        return False
    for table in _languages(text):
        norm = _read(text, table)
        if table.DENIAL.search(norm):
            return True
        norm = _strip(norm, table)
        norm = _blank_idioms(norm, table)
        rules = _compiled(table)[1]
        for category in ("suicide", "self_harm"):
            for _w, rx, flags, _a in rules.get(category, ()):
                if "n" in flags:
                    continue
                for m in rx.finditer(norm):
                    prefix = _clause_prefix(norm, _span(m)[0])
                    if table.NEGATION_TAIL.search(" " + prefix if prefix else " ") and any(
                        tok in table.FIRST for tok in prefix.split()
                    ):  # the user's own
                        return True
    return False


# Every screened language's tables, English first.
TABLES = (rules_en, rules_de, rules_fr)


@lru_cache(maxsize=None)
def function_words(table, dialect: bool = True) -> frozenset:
    """The words that tell a table's language: its stopwords, and with ``dialect`` its dialect
    words (``rules_de.DIALECT``)."""
    return table.STOPWORDS | (getattr(table, "DIALECT", frozenset()) if dialect else frozenset())


def _languages(text: str) -> list:
    """The tables to run: each language whose function words make up at least half as many of
    the message's words as the best language's (all of them when none is recognised), so that
    German "Suizid" rules do not fire on an English sentence and vice versa."""
    words = re.findall(r"[a-z]+", _fold(text).replace("'", " "))
    tables = TABLES
    counts = [sum(1 for w in words if w in function_words(t)) for t in tables]
    top = max(counts)
    if top == 0:
        return list(tables)
    return [t for t, c in zip(tables, counts) if c and c * 2 >= top]


# ---------------------------------------------------------------------------------------------
# 5. Light normalisation for German and French (fold, elisions, chat spellings, typos)
# ---------------------------------------------------------------------------------------------


@lru_cache(maxsize=None)
def _light_compiled(table):
    fuzzy: dict[int, list[str]] = {}
    for w in table.FUZZY_WORDS:
        for n in (len(w) - 1, len(w), len(w) + 1):
            fuzzy.setdefault(n, []).append(w)
    elisions = [(re.compile(p), r) for p, r in table.ELISIONS]
    phrases = [(re.compile(p), r) for p, r in table.PHRASE_MAP]
    return fuzzy, elisions, phrases


@lru_cache(maxsize=16384)
def _canon_light(tok: str, table) -> str:
    fuzzy = _light_compiled(table)[0]
    if tok in table.TOKEN_MAP:
        return table.TOKEN_MAP[tok]
    if not tok.isalpha():
        return tok
    med = _medicine(tok, table.PILLS, table.MEDICINE_WORD)
    if med:
        return med
    if re.search(r"(.)\1\1", tok):  # "sterbeeeen" -> "sterben"
        tok = re.sub(r"(.)\1{2,}", r"\1", tok)
        if tok in table.TOKEN_MAP:
            return table.TOKEN_MAP[tok]
    if len(tok) >= 6 and tok not in table.FUZZY_WORDS:
        for word in fuzzy.get(len(tok), ()):
            if _edit1(tok, word):
                return word
    return tok


def normalise_light(text: str, table) -> str:
    """German/French canonical form: folded lower-case words, clauses separated by ``|``."""
    _, elisions, phrases = _light_compiled(table)
    text = _fold(text)
    for rx, rep in elisions:
        text = rx.sub(rep, text)
    text = re.sub(r"\.{2,}", " ", text)
    text = re.sub(r"[.!?;:,()\[\]{}\"\n\r\t|]+", " | ", text)
    text = re.sub(r"[^a-z0-9|* ]+", " ", text)
    words = " ".join(_canon_light(t, table) for t in text.split())
    for rx, rep in phrases:
        words = rx.sub(rep, words)
    return re.sub(r"(?:\| )+\|", "|", words).strip(" |")


def _strip_light(text: str, table) -> str:
    return " ".join(t for t in text.split() if t not in table.FILLERS)
