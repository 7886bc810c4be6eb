"""Risk screening for user messages, and the crisis resources shown when it fires.

``assess(text)`` runs before every round. It is a **rule-based screen**, written to catch as many
risk messages as it can (high recall) while leaving everyday idioms alone. It is *not* a clinical
instrument, it does not diagnose anything, and it can be wrong both ways; the app treats a hit as
a reason to step out of the role-play and point the user to real people, never as a judgement.

How it works (all in this file, stdlib only, well under a millisecond for a chat message):

1. **Normalise** (``normalise``): Unicode NFKC, case-fold, accents and zero-width characters
   removed, a few Cyrillic/Greek look-alike letters mapped to Latin; contractions expanded
   ("I'm" -> "i am", "don't" -> "do not", "gonna" -> "going to"); spaced-out or dotted single
   letters joined ("k i l l", "s.u.i.c.i.d.e"); leetspeak inside words undone (1->i, 3->e, 0->o,
   4->a, @->a, $->s, 5->s, 7->t); letters repeated 3+ times collapsed ("dieeee" -> "die");
   key words matched with edit distance <= 1 when they have >= 5 letters ("suiside", "myslef");
   slang mapped ("kms" -> "kill myself", "unalive myself" -> "kill myself", "unalive" -> "die",
   "sewerslide" -> "suicide", "commit sudoku" -> "commit suicide");
   filler words dropped ("just", "really", "literally", ...). Punctuation becomes a clause
   boundary ``|`` that no pattern crosses.
2. **Exclude idioms** (``IDIOMS``): benign spans ("this exam is killing me", "dying to see",
   "kill the process", "cut my hair", "suicide squad", ...) are blanked out first, so that a real
   risk phrase elsewhere in the same message still counts.
3. **Match pattern tables** (``RULES``): one table per category, each row a weight and a regex
   over the normalised text. Rows may ask for a **first-person check** (the nearest subject
   before the phrase must not be someone else: "my friend wants to die" and "the character
   commits suicide" count only as *concern*) and are **negatable** unless marked otherwise
   ("I would never hurt myself" does not count; "I don't want to live" is its own row).
   Reported speech ("they told me to kill myself") and past-only framing ("I used to cut")
   lower a hit to *concern*; hyperbole markers ("lol", "haha", "jk", laughing emoji; cancelled
   by "not joking", "for real") scale the score by 0.75 and cap it below *urgent*.
4. **Score**: per category, ``1 - prod(1 - w)`` over its hits (overlapping hits count once),
   plus small **boosters** (a plan, a time, "again", a weapon) that count only once the category
   has a hit. The best category wins (ties: suicide, self_harm, violence_from_others,
   violence_to_others); ``score >= 0.8`` is *urgent*, ``>= 0.4`` *concern*, otherwise *none*.
   Weak signals alone ("I hate myself", "I feel hopeless": 0.3-0.35) stay *none* but add up.

Speed: patterns compile on the first call (~0.2 s); after that a typical chat message takes
~0.2 ms, because each pattern only runs when the message contains one of its anchor words
(derived automatically from the regex, see section 4). Messages of a few thousand characters
take a few ms.

Judgement calls (documented because they are choices, not facts):

* "this traffic makes me want to die lol" -> *concern* (not urgent, not none): "makes me want to
  die" is its own lighter row and a hyperbole marker keeps it below urgent. A gentle check-in
  costs little; missing a real message costs a lot. Likewise "I want to die lol" and
  "kms lol" are *concern*, not urgent; the caller should still check in.
* Topic mentions ("I read an article about suicide prevention") -> *concern*.
* Third-person or fictional mentions ("the character in my novel commits suicide",
  "my friend self-harms") -> *concern*: they may still be about the user, or the user may need
  help supporting someone. Named media ("Suicide Squad") -> none.
* "X is going to kill me" is not flagged for parents, bosses etc. (nearly always an idiom) and is
  only *concern* for a partner; a *reported threat* ("he said he'd kill me", "he'll kill me if I
  leave") is urgent.
* "I'm going to kill my brother" -> concern (common idiom); stabbing/shooting words, "hurt
  someone", or a weapon/plan/"not joking" make violence to others urgent.

Known limits: English only; no memory of earlier messages (each message is screened alone);
sarcasm, very indirect wording, metaphors, and new slang will be missed; unusual spellings
beyond one edit are missed; idiom exclusions can hide a real message that happens to use the
same words ("my phone died and now I want to die" is still caught, but "the exam is killing
me" is always treated as an idiom); the numbers in ``tests/test_safety.py`` measure only its own
phrase lists. ``evidence`` is the matched phrase in *normalised* form (lower case, contractions
expanded), not the user's exact characters.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from .errors import MascotError
from .paths import assets_dir

__all__ = [
    "CATEGORIES",
    "DISCLOSURE",
    "LEVELS",
    "SafetyResult",
    "assess",
    "crisis_message",
    "load_resources",
    "normalise",
    "resources_for",
]

CATEGORIES = ("suicide", "self_harm", "violence_from_others", "violence_to_others")
LEVELS = ("none", "concern", "urgent")
URGENT_AT = 0.8
CONCERN_AT = 0.4

DISCLOSURE = (
    "Mascot's companions are AI, not people or therapists. Everything stays on this computer. "
    "In a crisis, contact local emergency services."
)


@dataclass(frozen=True)
class SafetyResult:
    """The outcome of ``assess``.

    ``risk`` is true for *concern* and *urgent*; ``category`` is one of ``CATEGORIES`` or None;
    ``evidence`` is the matched phrase (normalised) for logs and the UI; ``score`` is in [0, 1].
    """

    risk: bool
    category: str | None
    level: str
    evidence: str
    score: float

    @property
    def urgent(self) -> bool:
        return self.level == "urgent"


NO_RISK = SafetyResult(False, None, "none", "", 0.0)

# ---------------------------------------------------------------------------------------------
# 1. Normalisation tables
# ---------------------------------------------------------------------------------------------

_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)
_LOOKALIKES = str.maketrans({
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ј": "j",
    "ѕ": "s", "к": "k", "м": "m", "т": "t", "н": "h", "в": "b", "ԁ": "d", "ӏ": "l",
    "α": "a", "ε": "e", "ι": "i", "ο": "o", "κ": "k", "ν": "v", "τ": "t", "υ": "u", "ρ": "p",
    "‘": "'", "’": "'", "ʼ": "'", "`": "'", "´": "'", "′": "'",
    "“": '"', "”": '"', "–": "-", "—": " , ", "…": " ",
})
_LEET = {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s",
         "!": "i", "|": "i"}
_NOT_LEET = re.compile(r"^\d+(?:st|nd|rd|th|s|am|pm|k|m|km|kms|kg|lb|lbs|yo|h|hr|hrs|min|mins"
                       r"|x|d|mg|ml|g|ft|in|cm|mm|gb|mb|p|hz|v|w)$")

# Contractions written with an apostrophe (applied before apostrophes are dropped).
_APOSTROPHE_FORMS = [
    (r"\bcan'?t\b", "cannot"), (r"\bwon't\b", "will not"), (r"\bain't\b", "is not"),
    (r"\bshan't\b", "shall not"), (r"n't\b", " not"), (r"'m\b", " am"), (r"'re\b", " are"),
    (r"'ve\b", " have"), (r"'ll\b", " will"), (r"'d\b", " would"), (r"\blet's\b", "let us"),
    (r"\b(it|he|she|that|what|there|who|where|here|how|everyone|everybody|everything|nothing"
     r"|nobody|someone|somebody|life)'s\b", r"\1 is"),
]
_APOSTROPHE_RES = [(re.compile(p), r) for p, r in _APOSTROPHE_FORMS]

# Single tokens (no apostrophe) -> replacement. Contractions, chat spelling and known misspellings.
TOKEN_MAP: dict[str, str] = {
    # contractions typed without an apostrophe ("ill", "id", "shed", "wed" are real words: skipped)
    "im": "i am", "ive": "i have", "dont": "do not", "doesnt": "does not", "didnt": "did not",
    "cant": "cannot", "wont": "will not", "wouldnt": "would not", "couldnt": "could not",
    "shouldnt": "should not", "isnt": "is not", "arent": "are not", "wasnt": "was not",
    "werent": "were not", "havent": "have not", "hasnt": "has not", "hadnt": "had not",
    "aint": "is not", "whats": "what is", "thats": "that is", "theres": "there is",
    "hes": "he is", "shes": "she is", "theyre": "they are", "youre": "you are",
    "hed": "he would", "theyd": "they would", "itll": "it will", "youll": "you will",
    "wanna": "want to", "gonna": "going to", "gotta": "got to", "imma": "i am going to",
    "ima": "i am going to", "finna": "going to", "tryna": "trying to", "lemme": "let me",
    "dunno": "do not know", "idk": "i do not know", "idc": "i do not care",
    "noone": "no one", "u": "you", "ur": "your", "r": "are", "n": "and",
    "ppl": "people", "cuz": "because", "coz": "because", "cos": "because", "bc": "because",
    "rn": "right now", "tn": "tonight", "tonite": "tonight", "2nite": "tonight",
    "bf": "boyfriend", "gf": "girlfriend", "abt": "about", "w": "with", "tho": "though",
    "srsly": "seriously", "prolly": "probably", "everytime": "every time", "pls": "please",
    "plz": "please",
    # misspellings and chat spellings of key words (longer ones are also caught by fuzzy matching)
    "kil": "kill", "kll": "kill", "kiil": "kill", "kilk": "kill", "kiling": "killing",
    "kilin": "killing", "killin": "killing", "killng": "killing", "kild": "killed",
    "sueside": "suicide", "suiside": "suicide", "sucide": "suicide", "suicid": "suicide",
    "meself": "myself", "mself": "myself", "myslf": "myself", "urself": "yourself",
    "ded": "dead", "dyin": "dying", "livin": "living", "cuttin": "cutting", "goin": "going",
    "nothin": "nothing", "wnt": "want", "wan": "want", "anymoe": "anymore",
    "selfharm": "self harm", "selfharming": "self harming", "selfharmed": "self harmed",
    "sewerslide": "suicide", "unaliving": "killing", "unalived": "killed",
    "goodbyes": "goodbye", "thretened": "threatened",
}

# Words matched with edit distance <= 1 (all >= 5 letters, chosen to have no common neighbours).
FUZZY_WORDS = (
    "suicide", "suicidal", "myself", "overdose", "overdosed", "threaten", "threatens",
    "threatened", "threatening", "goodbye", "anymore", "hopeless", "worthless", "strangle",
    "strangled", "strangling", "stabbing", "unalive", "sewerslide", "yourself", "abusive",
)

# Words the elongation collapse ("dieeee" -> "die") may produce; plus every FUZZY/TOKEN_MAP key.
KEY_WORDS = frozenset({
    "die", "died", "dead", "death", "dying", "kill", "killed", "killing", "me", "my", "myself",
    "cut", "cutting", "hurt", "harm", "end", "live", "living", "life", "alive", "want", "so",
    "please", "help", "sad", "no", "pain", "gone", "sleep", "forever", "wake", "up", "kms", "kys",
    "hate", "scared", "hits", "beats", "hit", "beat", "go", "away", "point", "done", "tired",
    "anymore", "suicide", "suicidal", "overdose", "pills", "burn", "burning", "bleed", "home",
}) | frozenset(FUZZY_WORDS) | frozenset(TOKEN_MAP)

# Multi-word slang (applied to the joined token string).
PHRASE_MAP = [
    (r"(?<![0-9] )\bkms\b", "kill myself"),            # "50 kms away" is kilometres
    (r"\bk m s\b", "kill myself"),
    (r"\bsewer ?slide\b", "suicide"),
    (r"\bcommit(s|ted|ting)? sudoku\b", r"commit\1 suicide"),
    (r"\bself (harm|harms|harming|harmed|injury|injure|injuring|injured)\b", r"self harm"),
    (r"\bkill (my|me) self\b", "kill myself"),
    (r"\bmy self\b", "myself"),
    (r"\bkill \| myself\b", "kill myself"),                # "Kill. Myself."
    (r"\bcan not\b", "cannot"),
    (r"\bno 1\b", "no one"),
    (r"\b(want|wanna|going|need|ready|deserve|try|trying|have|got|about|wish) (?:2|too)\b",
     r"\1 to"),
    (r"\bunalive(?= (?:myself|me|him|her|them|someone|somebody|people|everyone|my|his|the|a"
     r"|you|yourself)\b)", "kill"),
    (r"\bunalive\b", "die"),
    (r"\bany more\b", "anymore"),
    (r"\bdye\b(?=\s*$| \|| lol| tonight| so bad| already)", "die"),   # "i wanna dye" (no object)
    (r"\bbe unalive\b", "be dead"),
]
_PHRASE_RES = [(re.compile(p), r) for p, r in PHRASE_MAP]

# Dropped after hyperbole/seriousness markers are read, so patterns need not allow for them.
FILLERS = frozenset({
    "just", "really", "literally", "honestly", "actually", "seriously", "totally", "truly",
    "genuinely", "kinda", "sorta", "basically", "lowkey", "highkey", "deadass", "fucking",
    "fuckin", "fking", "fkn", "freaking", "freakin", "frickin", "damn", "bloody", "even",
    "so", "very", "completely", "absolutely", "simply", "sometimes", "often", "always",
    "constantly", "almost", "sincerely", "ngl", "tbh", "fr", "um", "uh",
})
_FILLER_PHRASES = re.compile(r"\b(?:kind of|sort of|to be honest|not gonna lie|not going to lie"
                             r"|you know)\b")

HYPERBOLE = re.compile(r"\b(?:lol+|lmao+|lmfao+|rofl|haha\w*|hehe\w*|jk|jking|xd|ha ha|/j"
                       r"|(?:just|only|i am|am) (?:kidding|joking))\b")
HYPERBOLE_EMOJI = re.compile("[\U0001F602\U0001F923\U0001F480\U0001F606\U0001F605\U0001F92A]")
SERIOUS = re.compile(r"\b(?:not joking|no joke|not kidding|i am serious|i mean it|for real"
                     r"|deadass|seriously|/srs|srs|i am not okay|half joking|(?:jk|kidding|joking)"
                     r" not really)\b")


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
        return False                                       # cheap reject: start differs twice
    if la == lb:
        diff = [i for i in range(la) if a[i] != b[i]]
        if len(diff) <= 1:
            return True
        return (len(diff) == 2 and diff[1] == diff[0] + 1
                and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    if la > lb:
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    return a[i:] == b[i + 1:]


def _elongation_candidates(tok: str):
    two = re.sub(r"(.)\1{2,}", r"\1\1", tok)
    yield two
    yield re.sub(r"(.)\1+", r"\1", two)
    # collapse one doubled run at a time ("killl" -> "kill", "diiee" -> "die")
    for m in re.finditer(r"(.)\1", two):
        yield two[:m.start()] + two[m.start() + 1:]


@lru_cache(maxsize=8192)
def _canon_token(tok: str) -> str:
    """One token -> its canonical form (may become several words, e.g. "im" -> "i am")."""
    if "*" in tok:                                         # censored: "k*ll", "s*icide"
        rx = re.compile("^" + re.escape(tok).replace(r"\*", "[a-z]{1,2}") + "$")
        hit = next((w for w in sorted(KEY_WORDS) if rx.match(w)), None)
        tok = hit if hit else tok.replace("*", "")
    if tok in TOKEN_MAP:
        return TOKEN_MAP[tok]
    if tok in KEY_WORDS or not tok.isalpha():
        return tok
    if re.search(r"(.)\1\1", tok):                        # "dieeee", "myselfff", "killlll"
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
    alt = "".join("l" if c == "1" else _LEET.get(c, c) for c in core)   # "ki11" -> "kill"
    if alt in KEY_WORDS or _canon_token(alt) != alt:
        return alt
    return first


_SPACED = re.compile(r"(?<![a-z0-9@$])(?:[a-z0-9@$][ .\-_*~]{1,2}){2,}[a-z0-9@$](?![a-z0-9@$])")


def _join_spaced(m: re.Match) -> str:
    word = re.sub(r"[ .\-_*~]", "", m.group(0))
    if word.startswith("i") and _canon_token(_deleet(word[1:])) in KEY_WORDS:
        return "i " + word[1:]                             # "i k i l l myself"
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
    for rx, rep in _APOSTROPHE_RES:
        text = rx.sub(rep, text)
    text = text.replace("'", "")
    text = _SPACED.sub(_join_spaced, text)
    text = re.sub(r"[a-z0-9@$!|]+", lambda m: _deleet(m.group(0)), text)
    text = re.sub(r"\.{2,}", " ", text)
    text = re.sub(r"[.!?;:,()\[\]{}\"\n\r\t|]+", " | ", text)
    text = re.sub(r"[^a-z0-9|* ]+", " ", text)
    words = " ".join(_canon_token(t) for t in text.split())
    for rx, rep in _PHRASE_RES:
        words = rx.sub(rep, words)
    return re.sub(r"(?:\| )+\|", "|", words).strip(" |")


def _strip_fillers(text: str) -> str:
    text = _FILLER_PHRASES.sub(" ", text)
    return " ".join(t for t in text.split() if t not in FILLERS)


# ---------------------------------------------------------------------------------------------
# 2. Idioms and benign uses, blanked out before the risk patterns run
# ---------------------------------------------------------------------------------------------

_PERSONS = (r"(?:man|woman|person|guy|girl|kid|kids|child|children|baby|boy|stranger|cop|police"
            r"|teacher|someone|somebody|bitch|bastard|asshole|prick|dude|family|class|school"
            r"|people|boss|judge|neighbou?r|whole)")
IDIOMS = [
    r"\b(?:\w+ )?(?:is|are|was|were|be|been|keeps?|kept) killing me\b",   # exam/feet/suspense
    r"\bkilling me softly\b",
    r"\bdying (?:to|for) (?:see|try|know|meet|go|hear|watch|read|get|have|eat|tell|visit|find"
    r"|play|listen|talk|show|a|an|some|the)\b",
    r"\b(?:die|died|dying|dead) (?:of|from) (?:laughter|laughing|embarrassment|boredom|curiosity"
    r"|cringe|thirst|hunger|heat|cuteness|shame)\b",
    r"\b(?:nearly |almost )?died (?:laughing|of laughter)\b",
    r"\b(?:die|died|dying|dye|dyed) (?:my|her|his|the|their|your) (?:hair|clothes|shirt|fabric"
    r"|eggs|beard|jeans|roots)\b",
    r"\b(?:could|would|will) (?:murder|kill|destroy|demolish) (?:a|an|some|the) (?!" + _PERSONS
    + r")\w+",                                                           # could murder a pizza
    r"\b(?:would|will|could) kill for (?:a|an|some|the|\w+)\b",          # I'd kill for a coffee
    r"\b(?:killed|killing|kill|kills|nailed|slayed|smashed) it\b",     # killed it at work
    r"\b(?:joke|jokes|song|set|show|performance|outfit|look|comedian|pun|line|album|movie|film)"
    r" (?:killed|kills|slayed|slays)\b",
    r"\bdead (?:tired|beat|serious|wrong|right|set|last|centre|center|end|silent|quiet|asleep"
    r"|on|weight|heat|ringer|giveaway|easy|simple)\b",
    r"\b(?:phone|battery|laptop|computer|pc|car|engine|plant|plants|wifi|internet|tv|charger"
    r"|printer|headphones|mouse|keyboard|console|server|app|game|conversation|chat|party|vibe"
    r"|mood|hype|trend|meme|show|series|lightbulb|bulb|torch|remote|controller|ps5|xbox"
    r"|tablet|ipad|iphone|airpods|switch|mac|screen)s? (?:is |has |had |just |finally )?"
    r"(?:died|dead|dying|die|dies)\b",
    r"\b(?:kill|killed|killing|kills|end|ended|ending) (?:the |this |that |a |all |my |your |our"
    r" |his |her )?(?:process|processes|task|tasks|job|jobs|server|app|application|program"
    r"|thread|session|tab|tabs|window|switch|engine|lights|light|music|power|bug|bugs|mood|vibe"
    r"|time|joke|pid|container|instance|query|batch|game|level|mob|mobs|zombie|zombies"
    r"|monster|monsters|enemy|enemies|npc|dragon|spider|fly|mosquito|weeds|germs|bacteria"
    r"|buzz|battery|plant|plants|conversation|call|meeting|stream|shift|rumou?r|deal|noise"
    r"|bottle|pint|drink|chances?|two birds)\b",
    r"\b(?:kill|pkill|killall|sigkill|sigterm|kill -?9) \d+\b",
    r"\b(?:kill|killed|killing|shoot|shot|shooting|stab|stabbed) (?:\w+ ){0,4}(?:in|on) (?:the )?"
    r"(?:game|fortnite|minecraft|roblox|valorant|cod|call of duty|apex|overwatch|league|halo|gta"
    r"|pubg|csgo|cs|match|lobby|server|among us|dnd|d and d|campaign|book|novel|story|movie)\b",
    r"\b(?:cut|cutting|cuts|chop|chopping|slice|slicing) (?:the |some |up |my |a |an |off )?"
    r"(?:vegetables|veggies|onions?|carrots?|bread|meat|paper|fabric|wood|grass|lawn|hedge|cake"
    r"|pizza|fruit|tomato(?:es)?|potato(?:es)?|lemons?|limes?|coupons?|costs?|ties|class"
    r"|classes|corners|back|down|out|carbs|sugar|calories|cheese|sandwich|wire|rope|cards"
    r"|video|clip|scene|film|losses|budget|spending|prices?|chicken|fish|steak|apple|melon"
    r"|herbs|garlic|stone|glass|tile|tiles|hair)\b",
    r"\b(?:cut|cutting|cuts|trim|trimmed|trimming) (?:my|his|her|their|your|our) (?:own )?"
    r"(?:hair|nails|fringe|bangs|beard|toenails|fingernails|losses|lawn|grass|hedge|ties|costs"
    r"|spending|hours|sugar|carbs|screen time|coffee)\b",
    r"\bcut (?:myself|me) (?:some )?slack\b",
    r"\b(?:cut|cutting|cuts) (?:myself|me) (?:off|out)\b",
    r"\b(?:accidentally|accidently) (?:cut|burned|burnt|burn|hurt|stabbed|hit) (?:myself|my \w+)",
    r"\b(?:cut|burned|burnt|burn|hurt|injured|scratched|stabbed|hit|bumped) (?:myself|my (?:hand"
    r"|finger|fingers|thumb|arm|tongue|mouth|foot|toe|knee|leg|back|head|ankle|wrist|shoulder"
    r"|lip|nose)) (?:shaving|cooking|chopping|baking|gardening|by accident|accidentally"
    r"|on (?:a|the|some|an) (?!arms?|wrists?|legs?|thighs?|stomach|skin|hips?|purpose)\w+"
    r"|at (?:the )?(?:gym|work|practice|training|game|park)|playing \w+|(?:while|when) \w+ing"
    r"|during \w+|in (?:the )?(?:kitchen|garden|gym|game|match)|lifting|running|working out"
    r"|skating|falling|climbing)\b",
    r"\b(?:the )?(?:sun|sunburn|sunlight|heat|chilli|chili|pepper|acid|wasabi) (?:is |was )?"
    r"(?:burning|burned|burnt) my \w+",
    r"\bsuicide (?:squad|doors?|drills?|sprints?|runs?|silence|king|boys|girls|blonde|forest"
    r" movie|song|mission|pact movie)\b",
    r"\b(?:dressed|shoot|shot|shoots|shooting) (?:to kill|the breeze|for the (?:moon|stars)"
    r"|(?:a|an|the) (?:photo|picture|video|film|movie|scene|pic|pics|photos|ad|commercial"
    r"|trailer|hoop|hoops|shot|message|email|text)|hoops|me (?:a|an) (?:text|message|email|dm"
    r"|line|call))\b",
    r"\bphoto ?shoot\b",
    r"\b(?:hit|hits|hitting) me (?:up|back|like a truck|like a ton|with (?:the |a |an |some"
    r" |your |that |this )?(?:news|question|questions|facts?|truth|jokes?|pun|song|songs|track"
    r"|beat|tunes?|idea|reality|link|details|info|pillow|snowball|water balloon|feels))\b",
    r"\b(?:it|that|this|reality|life|the news|news|realization|realisation|the thought|thought"
    r"|the feeling|feeling|depression|anxiety|grief|wave|nostalgia|sadness|song|music|hunger"
    r"|tiredness|exhaustion|jet lag|car|bus|truck|bike|ball|door|branch|wind|rain) (?:really )?"
    r"(?:hit|hits|hitting|has hit|just hit) me\b",
    r"\b(?:beat|beats|beating|beaten|beats|kicked|kicks|smashed|destroyed|crushed|owned|whooped"
    r"|wrecked) me (?:at|in|to|by|fair and square|again at)\b",
    r"\b(?:overdose|overdosed|od|oded|odd) on (?:coffee|caffeine|sugar|chocolate|netflix|anime|tv"
    r"|candy|memes|work|content|tiktok|youtube|cuteness|love|sweets|cake|energy drinks|tea)\b",
    r"\b(?:jump|jumped|jumping) off (?:the|a) (?:diving board|boat|dock|pier|swing|couch|bed"
    r"|trampoline|sofa|stage|bus|train|plane|call)\b",
    r"\bmurder (?:mystery|mysteries|podcast|documentary|show|series|drawer|hornets?|board"
    r"|she wrote)\b",
    r"\b(?:could|can) sleep (?:forever|for (?:a week|days|a year|a month|ages|hours))"
    r"(?: after| because| since| i am so tired)?",
    r"\bsleep forever (?:after|on|this weekend|tomorrow)\b",
    r"\b(?:end|ended|ending|ends) (?:it|things) (?:with|between) (?:him|her|them|my \w+|us"
    r"|(?!(?:a|an|the|some|pills|rope|gun|knife|blade|razor|tablets|meds)\b)\w+)\b",
    r"\bend (?:of )?(?:the|this|my|our) (?:day|week|month|year|shift|semester|term|call"
    r"|meeting|relationship|contract|lease|streak)\b",
    r"\b(?:mom|mum|mother|dad|father|parents|teacher|boss|coach|sister|brother|grandma|grandpa"
    r"|family|mama|papa|nan|nana) (?:is |are |will |would )?(?:going to |gonna )?(?:kill"
    r"|murder) me (?:when|if|once) (?:she|he|they|mom|dad) (?:sees?|saw|finds? out|found out"
    r"|hears?|heard|notices?|noticed|knows?|knew|realis(?:es|e|ed)|realiz(?:es|e|ed)|gets? home"
    r"|gets? back|catches|caught)\b",
    r"\b(?:will|is going to|would|going to|gonna) (?:kill|murder) me (?:if|when) i (?:am late"
    r"|get|forget|miss|fail|lose|break|spend|eat|do not|mess|show up|come home late|skip|am not"
    r"|burn|crash|scratch|spill|dent)\b",
    r"\bkill me with (?:this|these|all|so much|the|his|her|their|your|its) (?:\w+ )?(?:work"
    r"|workload|homework|assignments?|deadlines?|meetings?|jokes?|puns?|cuteness|kindness"
    r"|questions?|emails?|chores?|demands)\b",
    r"\b(?:following|followed|follows|follow) me (?:on|back|around the (?:house|kitchen|flat"
    r"|apartment) (?:for|like|because|all day|whining)|everywhere i go like a puppy)\b",
    r"\bgiving (?:\w+ ){0,4}away (?:because|since|as|before) (?:i am|we are|i am going|we)"
    r" (?:moving|decluttering|downsizing|leaving for)\b",
    r"\b(?:i am |i )?(?:dead|dying) (?:lol|lmao|haha|rn)\b",
    r"\b(?:killer|killers) (?:app|feature|queen|heels|view|workout)\b",
    r"\bkill (?:two birds|the lights|the engine|switch)\b",
    r"\bover my dead body\b",
    r"\bdrop dead (?:gorgeous|beautiful)\b",
    r"\b(?:what is|whats) the point of (?:this|that|the|a|an|your|his|her|my|these|those)"
    r" (?!life\b|existence\b|living\b)\w+",
    r"\bthe (?:assignment|exam|test|work|project|meeting|class|movie|show|game|book) (?:is |was"
    r" )?(?:the death of me|going to be the death of me)\b",
    r"\b(?:going to be|will be|is|was) the death of me\b",
    r"\bthreaten(?:ed|ing|s)? to (?:rain|snow|storm)\b",
]

# ---------------------------------------------------------------------------------------------
# 3. Pattern tables (over normalised text). Each row: (weight, pattern, flags)
#    flags: "s" = first-person check (someone else as subject -> weight capped at THIRD_PERSON)
#           "n" = not negatable (the pattern contains its own negation or is negation-proof)
# ---------------------------------------------------------------------------------------------

THIRD_PERSON = 0.45      # "my friend wants to die", "the character commits suicide"
REPORTED = 0.45          # "they told me to kill myself" (the words are someone else's)
PAST = 0.6               # "I used to cut"
HYPERBOLE_CAP = 0.79     # "... makes me want to die lol": never urgent ...
HYPERBOLE_FACTOR = 0.75  # ... and a little lighter

_KIN = (r"(?:husband|wife|boyfriend|girlfriend|partner|ex|fiance|fiancee|dad|father|mom|mum"
        r"|mother|stepdad|stepfather|stepmom|stepmum|stepmother|step dad|step mom|brother|sister"
        r"|stepbrother|stepsister|uncle|aunt|grandpa|grandfather|grandma|grandmother|cousin"
        r"|parents?|family|son|daughter|roommate|flatmate|housemate|landlord|boss|manager"
        r"|coworker|co worker|colleague|teacher|coach|neighbou?r|classmates?|bully|bullies"
        r"|friends?|guardian|carer|caregiver|foster \w+|pastor|priest|doctor|pimp|brother in law"
        r"|ex husband|ex wife|ex boyfriend|ex girlfriend|dealer)")
_PERSON_AGENT = (r"(?:he|she|they|someone|somebody|people|this guy|that guy|some guy|a guy"
                 r"|a man|a woman|this man|that man|a stranger|my " + _KIN + r"|his " + _KIN
                 + r"|her " + _KIN + r"|their " + _KIN + r")")
# ... or any other word, most often a name ("jake hits me"), but not things, pets or babies.
_AGENT = (r"(?:" + _PERSON_AGENT + r"|(?!(?:it|that|this|what|which|life|baby|cat|dog|kitten"
          r"|puppy|toddler|horse|ball|car|bus|wave|music|song|reality|news|thought|feeling"
          r"|there|who|one|karma|anxiety|depression|grief|guilt|sadness|loneliness|tiredness"
          r"|exhaustion|hunger|fear|pain|work|school|exam|test)\b)[a-z]+)")
_TARGET = (r"(?:him|her|them|someone|somebody|people|everyone|everybody|anyone|anybody|others"
           r"|(?:that|this|the|a) (?:guy|girl|man|woman|person|kid|child|stranger|cop|teacher"
           r"|bitch|bastard|asshole|prick|dude|family|class|school|baby)|my " + _KIN
           + r"|my (?:baby|kids?|children|child|son|daughter|dog|cat)|his \w+|her \w+|\w+ and \w+)")
_WANT = (r"(?:want to|wish i could|would like to|need to|have to|am going to|going to|will|ill"
         r"|am about to|about to|ready to|plan to|planning to|planning on|thinking about|thinking"
         r" of|think about|thought about|thought of|considering|might|should|could|tempted to"
         r"|decided to|try to|tried to|trying to|attempted to|urge to|urges to|feel like"
         r"|(?:might|could|will|going to|am going to|about to|gonna)? ?snap and)")

RULES: dict[str, list[tuple[float, str, str]]] = {
    "suicide": [
        # explicit
        (0.95, r"\bkill(?:ing|ed|s)? myself\b", ""),
        (0.95, r"\b(?:end|ending|ended|take|taking|took) my (?:own )?life\b", ""),
        (0.90, r"\bcommit(?:s|ted|ting)? suicide\b", "s"),
        (0.90, r"\b(?:i am|i feel|feeling|i have been|been|i was|getting|i get"
               r"|becoming) suicidal\b", ""),
        (0.90, r"\bsuicidal (?:thoughts?|ideation|feelings?|urges?|again|tonight)\b", "s"),
        (0.60, r"\bsuicidal\b", "s"),
        (0.85, r"\b(?:thinking|thought|think|thoughts) (?:about|of) suicide\b", "s"),
        (0.90, r"\b(?:attempt|attempting|attempted|try|tried|trying) (?:to )?suicide\b", "s"),
        (0.90, r"\b(?<!makes me )(?<!made me )(?<!make me )(?<!making me )"
               r"(?:want(?:s|ed)? to|wish i could|going to|ready to|deserve to|should|would rather"
               r"|need to|wish i would|hope i|hoping i|i want to|wanting to|longing to|i would"
               r" like to|plan to|wish to|better to|i am going to) die\b(?! (?:of|from|for|than))",
         "s"),
        (0.60, r"\b(?:makes?|made|making) me (?:want to|wanna) die\b", ""),
        (0.85, r"\b(?:everything|life|living|being alive|existing|everyone|being me|my life)"
               r" (?:makes?|made|making) me (?:want to|wanna) die\b", ""),
        (0.90, r"\b(?:wish|wishing|want|wanted) (?:i|to) (?:was|were|be|am) dead\b", ""),
        (0.90, r"\b(?:better(?: off| of)?|rather be) dead\b", "s"),
        (0.70, r"\b(?:do not|cannot|can not|never) (?:see|imagine|picture) myself (?:alive|being"
               r" alive|being here|here|around|living|still here|making it) (?:next|in|by|much"
               r"|for|at|past|after)\b", "n"),
        (0.85, r"\bhow many (?:pills|tablets|sleeping pills|painkillers)(?: \w+){0,2} (?:it takes"
               r"|does it take|would it take|to die|to kill|to end|to overdose"
               r"|to not wake up)\b", "s"),
        (0.70, r"\b(?:think|thinking|thought|thoughts) (?:about|of) (?:dying|being dead|not being"
               r" here|not existing|not being alive|ending it)\b", "s"),
        (0.80, r"\b(?:calling it quits|call it quits|quit|quitting|giving up) on (?:life|living"
               r"|being alive)\b", "s"),
        (0.50, r"\bi want out(?=\s*$| \|)", ""),
        (0.50, r"\b(?:going to|want to|about to|ready to) jump(?=\s*$| \|| tonight| now)", "s"),
        (0.85, r"\b(?:i should|should i) be dead\b", ""),
        (0.75, r"\bkill me now\b(?! lol)", ""),
        (0.60, r"\bsuicide\b", "s"),                      # any other first-person-ish mention
        (0.45, r"\b(?:kill|killed|killing|kills|hurt|hurting|hurts|cut|cutting|cuts) (?:himself"
               r"|herself|themselves|themself)\b", ""),  # someone else at risk: still concern
        # indirect
        (0.85, r"\b(?:do not|no longer|not) want to (?:live|be alive|exist|be here anymore"
               r"|wake up|go on|keep going|be around anymore)\b", "n"),
        (0.50, r"\bdo not want to be here\b", "n"),
        (0.85, r"\b(?:wish|wishing) (?:i|to) (?:could |would )?(?:not|did not|do not|never|stop)"
               r" (?:exist|existed|existing|wake up|be here|be alive)\b", "n"),
        (0.85, r"\b(?:stop|stopped) existing\b", "s"),
        (0.80, r"\b(?:tired|sick) of (?:living|being alive|existing|life|this life|it all|being"
               r" here)\b", "s"),
        (0.85, r"\b(?:no|not any|not a) (?:reason|point) (?:to|in|of) (?:live|living|go on|going"
               r" on|being alive|existing|keep going|stay|staying|life)\b", "n"),
        (0.85, r"\bnothing (?:left )?to live for\b", "n"),
        (0.85, r"\b(?:life is|life|my life is|living is) not worth (?:living"
               r"|it)(?: anymore)?\b", "n"),
        (0.75, r"\bwhat is the point (?:of|in) (?:living|life|going on|being alive|existing"
               r"|waking up|carrying on|me|my life|staying alive)\b", "n"),
        (0.50, r"\bwhat is the point (?:of|in) (?:anything|it all|everything|trying|any of this"
               r"|this life|continuing|even trying)\b", "n"),
        (0.35, r"\b(?:what is the|there is no) point anymore\b", "n"),
        (0.75, r"\bwhy (?:should|would|do|am) i (?:keep living|keep going|go on|stay alive|even"
               r" live|be alive|alive|still alive|exist|still here)\b", "n"),
        (0.90, r"\b(?:end|ending|ended) it all\b", "s"),
        (0.75, _WANT + r" (?:end|ending) (?:it|things|everything)\b", "s"),
        (0.65, r"\bend (?:it|everything|things) (?:tonight|today|soon|now|for good|once and for"
               r" all)\b", "s"),
        (0.85, r"\b(?:be|are|is|would be|will be) better(?: off)? without me\b", "n"),
        (0.85, r"\b(?:better|happier|easier)(?: off)? (?:for everyone |for them )?(?:without me"
               r"|if i (?:was"
               r"|were) (?:gone|dead|not here|not around)|if i (?:died|disappeared))\b", "n"),
        (0.75, r"\b(?:no one|nobody|not one|none of them) (?:would|will) (?:miss|notice|care)"
               r"(?: about)?(?: me| if i (?:died|was gone|disappeared|left|was dead))\b", "n"),
        (0.80, r"\b(?:do not|not|no longer) want to be (?:alive|here anymore|around anymore"
               r"|a burden)\b", "n"),
        (0.80, r"\b(?:will not|not going to|wont) be (?:here|around) (?:much longer|for long"
               r"|tomorrow|anymore|next week|by tomorrow)\b", "n"),
        (0.75, r"\b(?:will|i will) be gone (?:soon|tomorrow|tonight|by)\b", "s"),
        (0.75, r"\bwhen i am gone\b", ""),
        (0.50, r"\b(?:i am|i feel like|feel like i am|i feel|am) (?:a |such a "
               r"|only a )?burden\b", ""),
        (0.80, r"\b(?:will not|wont) be (?:a )?(?:burden|problem) (?:much longer|for long"
               r"|anymore)\b", "n"),
        (0.70, r"\b(?:want to|going to|wish i could|just want to|i will|to) (?:go to )?sleep"
               r" forever\b", "s"),
        (0.40, r"\bsleep forever\b", "s"),
        (0.80, r"\b(?:sleep|go to sleep|fall asleep|close my eyes) and (?:never|not|do not) wake"
               r" (?:up|again)\b", "n"),
        (0.80, r"\b(?:hope|wish|hoping|want|pray) (?:i |to )?(?:never|not|do not|will not)"
               r" wake up\b", "n"),
        (0.70, r"\b(?:wish|wishing) i (?:was|were|had) (?:never|not) (?:been )?born\b", "n"),
        (0.70, r"\bshould (?:never|not) have been born\b", "n"),
        (0.55, r"\b(?:want to|wish i could|i will|going to) disappear\b(?! (?:into|for a"
               r"|for the|to|on"
               r"|with|from|in|under|inside|behind))", "s"),
        (0.70, r"\bdisappear forever\b", "s"),
        (0.60, r"\b(?:cannot|can not|could not) (?:go on|keep going|do this anymore|take (?:it"
               r"|this)"
               r" anymore|live like this|carry on)\b", "n"),
        (0.40, r"\bno way out\b", "n"),
        (0.35, r"\b(?:feel|feeling|i am|am) (?:hopeless|worthless|empty|dead inside|numb)\b", ""),
        (0.30, r"\b(?:i give up|giving up on (?:life|everything)|nothing matters)\b", "s"),
        (0.35, r"\bi hate (?:my life|being alive|myself|existing)\b", ""),
        # preparations
        (0.65, r"\b(?:writing|wrote|write|written|leave|leaving|left|finished) (?:a |my |some"
               r" |the )?(?:goodbye|farewell|last) (?:letters?|notes?|messages?|texts?"
               r"|videos?)\b", "s"),
        (0.90, r"\b(?:writing|wrote|write|written|leave|leaving|left|finished|draft|drafted)"
               r" (?:a |my |the )?suicide notes?\b", "s"),
        (0.65, r"\b(?:giving|gave|give|given) (?:away )?(?:all )?(?:of )?my (?:favou?rite |precious"
               r" |prized |most precious |important )?(?:stuff|things|belongings|possessions|stuffs"
               r"|pets?|cat|dog|everything)(?: away)?\b", "s"),
        (0.65, r"\b(?:giving|gave|give|given) (?:away )?(?:all|everything) (?:i own"
               r"|i have)\b", "s"),
        (0.55, r"\b(?:saying|said|say) goodbye to (?:everyone|everybody|my family|my friends"
               r"|you all|all of you|you guys|the world)\b|\b(?:said|saying) my goodbyes?\b", "s"),
        (0.65, r"\b(?:this is|it is) (?:my )?(?:final )?goodbye\b", "s"),
        (0.60, r"\bgoodbye forever\b", "s"),
        (0.50, r"\b(?:made|making|updated|wrote) (?:a |my )?will\b", "s"),
        # methods (detected, never echoed back in messages)
        (0.90, r"\b(?:want to|going to|will|plan to|thinking about|about to|might|could|tried"
               r" to|try to|to) (?:take |do )?(?:an )?(?:overdose|od)\b", "s"),
        (0.85, r"\b(?:overdose|overdosing|overdosed)(?! on (?:coffee|sugar))\b", "s"),
        (0.90, r"\b(?:took|take|taking|swallow|swallowed|swallowing) (?:all|a bunch of|too many"
               r"|a lot of|every|the whole bottle of|all of) (?:my |the |of my )?(?:pills|tablets"
               r"|meds|medication|painkillers)\b", "s"),
        (0.95, r"\b(?:hang|hanging|hanged|shoot|shooting|shot|drown|drowning|poison|poisoning"
               r"|stab|stabbing|suffocate|starve) myself\b", ""),
        (0.95, r"\b(?:slit|slitting) (?:my|both|open my) wrists?\b", ""),
        (0.85, r"\b(?:jump|jumping|jumped) (?:off|from) (?:a|the|this|that) (?:bridge|building"
               r"|roof|rooftop|cliff|balcony|tower|overpass|parking garage|window)\b", "s"),
        (0.85, r"\b(?:step|stepping|jump|jumping|walk|walking|throw myself) in front of (?:a|the)"
               r" (?:train|bus|car|truck|lorry|subway)\b", "s"),
        (0.80, r"\b(?:drive|driving|crash|crashing|swerve|swerving) (?:my car )?(?:into|off) (?:a"
               r"|the) (?:tree|wall|bridge|cliff|river|lake|barrier|truck|road|edge|oncoming"
               r" traffic)\b", "s"),
        (0.90, r"\b(?:i|me) (?:should |will |might |am going to |want to |am about to |am )?kys\b"
               r"|\b(?:going to|want to|about to) kys\b", "s"),
        (0.85, r"\b(?:pills|tablets|meds|medication|painkillers)\b(?: \w+){0,8} (?:take|taking"
               r"|swallow|swallowing|took) (?:them|all of them|it) all\b", "s"),
        (0.60, r"\b(?:want|need|wish|wishing) (?:it all|everything|the pain|it|this|all of this|my"
               r" life) to (?:stop|end|be over)\b", "s"),
        (0.80, r"\b(?:feel|feeling|felt) like dying\b", ""),
        (0.70, r"\b(?:done|finished) with (?:life|living|everything|it all|this world|being"
               r" alive|existing|this life)\b", "s"),
        (0.50, r"\b(?:goodbye|bye) (?:everyone|everybody|world|cruel world|all of you|forever)\b"
               r"(?!.*\b(?:see you|see ya|talk (?:to you )?(?:later|tomorrow|soon)|ttyl|until"
               r" tomorrow|till tomorrow|good night|gn|for now|brb|back later|later|tomorrow)\b)",
         "s"),
        (0.30, r"\bi am done\b", ""),
        (0.70, r"\b(?:a|my|the) plan\b(?: \w+){0,6} (?:pills|rope|gun|blades?|razors?)\b"
               r"|\b(?:pills|rope|gun|blades?|razors?)\b(?: \w+){0,6} (?:a|my|the) plan\b", "s"),
        (0.50, r"\brather (?:die|be dead) than\b", "s"),
        (0.75, r"\b(?:had|have had) enough of (?:living|life|being alive|existing|it all|this"
               r" life|everything)\b", "s"),
        (0.90, r"\b(?:ways|way|how|methods?|best way|easiest way|painless way) to (?:die|end it"
               r"|end my life|kill myself|commit suicide|not wake up)\b|\bpainless (?:way to go"
               r"|death)\b", "s"),
        (0.60, r"\b(?:do not|not) think i (?:will|am going to|can) make it (?:through the night"
               r"|to tomorrow|much longer|through this week|through today)\b", "n"),
        (0.60, r"\b(?:no one|nobody|not one) (?:cares|would care|will care) (?:if|whether) i"
               r" (?:live|die|am alive|am dead|disappear)\b", "n"),
        (0.60, r"\bwant out of (?:this life|life|this world|existence|everything)\b", "s"),
        (0.35, r"\b(?:it is all|life is|everything is|my life is|living is) pointless\b", "s"),
    ],
    "self_harm": [
        (0.80, r"\b(?:cut|cutting|cuts|slash|slashing|slashed|carve|carving|carved) (?:myself|my"
               r" (?:arms?|wrists?|thighs?|legs?|skin|stomach|hips?|body|ankles?|chest|forearms?"
               r"|face))\b", ""),
        (0.80, r"\b(?:burn|burning|burned|burnt|burns) (?:myself|my (?:arms?|wrists?|skin|thighs?"
               r"|legs?|hands?|stomach|body|forearms?))\b", ""),
        (0.55, r"\b(?:hurt|hurting|hurts|injure|injuring|injured) myself\b", ""),
        (0.85, _WANT + r" (?:hurt|harm|injure|cut|burn|punish) myself\b", ""),
        (0.85, r"\b(?:hurt|hurting|harm|harming|cut|cutting|injure|injuring) myself (?:on purpose"
               r"|deliberately|intentionally|again|every (?:day|night)|to (?:feel|cope|punish|stop)"
               r"|because i deserve)\b", ""),
        (0.85, r"\b(?:harm|harming|harmed|punish|punishing|punished) myself\b", ""),
        (0.85, r"\bi (?:have been |am |started |start |keep |still |do )?(?:self harm|self harming"
               r"|sh)\b", ""),
        (0.90, r"\b(?:relapsed?|relapsing)(?: on| into| with| back into| back to)?(?: my)?"
               r" (?:sh|self harm|cutting|burning)\b", ""),
        (0.80, r"\b(?:urge|urges|want|wanting|craving|cravings|tempted) to (?:sh|self harm|cut"
               r"|cut again|burn)\b", ""),
        (0.75, r"\b(?:sh|self harm|cutting) (?:urges|scars?|wounds?|cuts|again|relapse|kit)\b", ""),
        (0.70, r"\b(?:started|been|keep|kept|stop|stopped|quit|relapsed|urge to|urges to|want to"
               r"|need to|going to|thinking about|miss|back to|went back to) (?:cutting|cut)"
               r"(?=\s*$| \|| again| lately| more| myself| every| at night| because| for)", ""),
        (0.75, r"\bi (?:cut|cutted) (?:again|last night|today|yesterday|this morning"
               r"|tonight)\b", ""),
        (0.60, r"\bi (?:cut|cutted)(?=\s*$| \|)", ""),
        (0.50, r"\b(?:clean|free) (?:from|of) (?:sh|self harm|cutting)\b", ""),
        (0.60, r"\bself harm\b", "s"),
        (0.80, r"\b(?:make|made|making) myself bleed\b", ""),
        (0.80, r"\b(?:carve|carved|carving|etch|etched|scratch|scratched) (?:\w+ ){0,3}(?:into|on)"
               r" my (?:skin|arms?|wrists?|thighs?|legs?|stomach|hips?|body|forearms?)\b", ""),
        (0.75, r"\b(?:scratch|scratching|scratched|pick|picking) (?:myself|my skin) (?:until|till)"
               r" (?:i|it) (?:bleed|bled|bleeds)\b", ""),
        (0.60, r"\b(?:hit|hitting|punch|punching|bang|banging) (?:myself|my head against)\b", ""),
        (0.45, r"\bpunch(?:ing|ed)? (?:the )?walls?\b", "s"),
        (0.60, r"\b(?:starve|starving|starved) myself\b", ""),
        (0.55, r"\bdeserve (?:the )?(?:pain|to hurt|to suffer|to be hurt|to bleed)\b", "s"),
    ],
    "violence_from_others": [
        (0.85, r"\b" + _AGENT + r" (?:keeps |always |often |still |has |had |would |used to"
               r" |started |will |is going to |tried to |tries to )?(?:hits|hit|beats|beat"
               r"|punches|punched|kicks|kicked|slaps|slapped|chokes|choked|strangles|strangled"
               r"|rapes|raped|molests|molested|abuses|abused|assaults|assaulted|stabbed|burns"
               r"|whips|whipped|batters|battered|beat up|beats up) (?:my \w+ and "
               r"|both of )?(?:me|us)\b",
         ""),
        (0.65, r"\b" + _PERSON_AGENT + r" (?:keeps |always |often |still |has |had |would |used to"
               r" |started )?(?:pushes|pushed|shoves|shoved|throws|threw) me (?:around|down|against"
               r"|into|to the (?:floor|ground)|out)\b", ""),
        (0.65, r"\b" + _PERSON_AGENT + r" (?:keeps |always |often |still |has |had |would |used to"
               r" |started |tried to |tries to )?(?:burns|burned|shoves|shoved|attacks|attacked"
               r"|grabs|grabbed|pins|pinned|bites|bit|spits on|spat on) me\b", ""),
        (0.60, r"\b" + _PERSON_AGENT + r" (?:physically )?(?:hurts|hurt) me (?:when|if|every"
               r"|again|physically|badly)\b", ""),
        (0.90, r"\b(?:said|says|told me|tells me|threatened|threatens|threatening|swore|swears"
               r"|promised|keeps saying|warned me)(?: that)?(?: \w+){0,4} (?:kill|hurt|beat|shoot"
               r"|stab|murder|strangle|choke|burn)(?: (?!for\b)\w+){0,3} (?:me|us)\b", "n"),
        (0.90, r"\b(?:kill|hurt|beat|shoot|stab|murder|find) me if i (?:leave|go|tell|call|report"
               r"|talk|say|speak|try|break up|ever|left|told|move out|run)\b", "n"),
        (0.80, r"\b(?:threaten|threatens|threatened|threatening) (?:me|to (?:kill|hurt|beat|shoot"
               r"|stab|post|leak|share|send|take|hit))\b", "n"),
        (0.85, r"\b(?:trying|tried|tries|wants|want|wanted) to kill me\b", "n"),
        (0.45, r"\b(?:he|she|my (?:husband|wife|boyfriend|girlfriend|partner|ex|fiance|fiancee"
               r"|ex husband|ex wife|ex boyfriend|ex girlfriend)) (?:is |are )?(?:going to|will"
               r"|would) kill me\b", "n"),
        (0.70, r"\b(?:he|she|they|someone|somebody|people|my " + _KIN + r") (?:is |are )?(?:going"
               r" to|will|wants to|want to|trying to|tried to|is going to|threatened to) (?:hurt"
               r"|beat|attack|rape|stab|shoot|strangle|choke) me\b", "n"),
        (0.80, r"\bi (?:was|got|get|am|have been|keep getting) (?:hit|beaten|beat|punched|kicked"
               r"|slapped|choked|strangled|attacked|assaulted|abused|raped|stabbed|threatened"
               r"|molested) by (?!(?:a|the) (?:car|bus|truck|bike|ball|wave|train|van|bicycle"
               r"|scooter|motorbike|door|branch))\w+", "n"),
        (0.65, r"\b(?:sending|sent|sends|send|getting|got|get|received|receiving|gives|giving)"
               r" me (?:death )?threats\b|\bdeath threats\b|\bthreatening (?:messages|texts"
               r"|letters|calls|emails|dms)\b", "n"),
        (0.45, r"\b" + _PERSON_AGENT + r" (?:touches|touched|keeps touching|touching) me\b"
               r"(?! (?:deeply|so|with|emotionally|heart|a lot))", "n"),
        (0.45, r"\b" + _PERSON_AGENT + r" (?:hurt|hurts|hurting) me(?=\s*$| \|)", "n"),
        (0.60, r"\b(?:someone|somebody|a man|a guy|a woman|some guy|this guy|a stranger|people"
               r"|he|she|they|my " + _KIN + r"|a car|a van)(?: \w+){0,4} (?:is |are |has been"
               r" |have been |keeps |was |kept )?(?:following|stalking|watching|tracking|stalked"
               r"|followed) me\b", "n"),
        (0.55, r"\b(?:someone|somebody|a man|a guy|a woman|a stranger|people|he|she|they|man|guy"
               r"|my ex|a car|a van) (?:is |are |keeps |has been |was )?(?:standing |waiting"
               r" |sitting |parked |hanging around |showing up )?outside my (?:house|home|door"
               r"|window|apartment|flat|room|work|school)\b", "n"),
        (0.60, r"\b(?:being|been|getting|got|was|am) (?:stalked|followed home|threatened)\b", "n"),
        (0.60, r"\b(?:stalking|stalks|stalked) me\b", "n"),
        (0.55, r"\b(?:scared|afraid|terrified|frightened) (?:to go"
               r"|of going) (?:back )?home\b", "n"),
        (0.55, r"\b(?:scared|afraid|terrified|frightened) of (?:him|her|them|my " + _KIN
               + r"|what (?:he|she|they) (?:will|might|would) do)\b", "n"),
        (0.70, r"\b(?:do not|never|cannot) feel safe (?:at home|with (?:him|her|them|my \w+)|in my"
               r" (?:own )?(?:house|home|room))\b", "n"),
        (0.70, r"\b(?:i am )?not safe (?:at home|with (?:him|her|them|my \w+)|here|in my (?:own )?"
               r"(?:house|home))\b", "n"),
        (0.65, r"\b(?:locks|locked|locking|lock) me (?:in|out|up)\b", "n"),
        (0.60, r"\b(?:will not|would not|does not|did not|never) let me (?:leave|go out|see my"
               r" (?:friends|family)|have my phone|eat)\b", "n"),
        (0.75, r"\b(?:is|being|was|so|very) abusive\b", "n"),
        (0.75, r"\babusive (?:husband|wife|partner|boyfriend|girlfriend|relationship|parents?|dad"
               r"|father|mom|mum|mother|home|household|family|ex|stepdad|stepmom)\b", "n"),
        (0.55, r"\bdomestic (?:violence|abuse)\b", "s"),
        (0.90, r"\b(?:forced|forces|forcing|made|makes|pressured|pressures) me (?:to )?(?:have sex"
               r"|do sexual|sleep with|touch|perform)\b", "n"),
        (0.85, r"\bi (?:was|got|have been|had been|am being|am) (?:raped|sexually assaulted"
               r"|sexually abused|molested|groomed)\b", "n"),
        (0.75, r"\bi (?:was|got|have been|had been|am being|am) (?:abused|assaulted|attacked"
               r"|beaten|beat up|stabbed|jumped|mugged|strangled|choked|kidnapped"
               r"|trafficked)\b", "n"),
        (0.60, r"\b(?:touches|touched|touching) me (?:inappropriately|when|at night|there"
               r"|without)\b", "n"),
        (0.60, r"\b(?:told|tell|tells|telling|keep telling|keeps telling|want|wants) me to"
               r" (?:kill myself|kys|die|go die|end my life|end it)\b", "n"),
        (0.45, r"\b(?:being|getting|got) (?:bullied|harassed|blackmailed|extorted)\b", "n"),
        (0.70, r"\b(?:blackmailing|blackmails|extorting|sextorting) me\b", "n"),
        (0.55, r"\b(?:yells|screams|screamed|yelled) at me (?:and|then) (?:hits|throws|breaks"
               r"|smashes|threatens)\b", "n"),
    ],
    "violence_to_others": [
        (0.65, r"\b(?:i |i am )?" + _WANT + r" (?:kill|murder|killing|murdering) " + _TARGET
               + r"\b", "s"),
        (0.80, r"\b(?:i |i am )?" + _WANT + r" (?:stab|shoot|strangle|poison|run over|choke"
               r"|burn|stabbing|shooting|strangling|poisoning) " + _TARGET + r"\b", "s"),
        (0.85, r"\b(?:i |i am )?" + _WANT + r" (?:hurt|harm|attack|hurting|harming|attacking)"
               r" (?:someone|somebody|people|everyone|everybody|anyone|anybody|others|a (?:child"
               r"|kid|stranger|person)|my (?:baby|kids?|children|child|son|daughter))\b", "s"),
        (0.65, r"\b(?:i |i am )?" + _WANT + r" (?:hurt|harm|attack|hurting|harming|attacking"
               r"|beat up|beating up) " + _TARGET + r"\b", "s"),
        (0.50, r"\b(?:i |i am )?" + _WANT + r" (?:punch|hit|slap|smack|kick|punching|hitting"
               r"|slapping) " + _TARGET + r"\b", "s"),
        (0.50, r"\b(?:i |i am )?" + _WANT + r" (?:beat|beating) " + _TARGET + r" up\b", "s"),
        (0.85, r"\b(?:thoughts?|thinking|urges?|fantasi[sz]e|fantasi[sz]ing|fantasies|dreams?)"
               r" (?:of|about) (?:hurting|killing|harming|stabbing|shooting|murdering|strangling)"
               r" (?:someone|somebody|people|my \w+|him|her|them|others|a \w+|everyone)\b", "s"),
        (0.80, r"\b(?:afraid|scared|worried|terrified) (?:that )?i (?:will|might|am going to|could"
               r"|would) (?:hurt|kill|harm|snap and hurt) (?:someone|somebody|my \w+|him|her|them"
               r"|people|the baby|a \w+|others)\b", "n"),
        (0.95, r"\bshoot up (?:the|my|a|our|this) (?:school|office|work|workplace|place|mall"
               r"|church|class|mosque|synagogue|party|campus)\b", "s"),
        (0.90, r"\b(?:bring|bringing|brought|take|taking|took) (?:a |my |the |dads |his )?"
               r"(?:gun|guns|knife|knives|weapon|rifle|pistol) to (?:school|work|class|the office"
               r"|campus|church)\b", "s"),
        (0.55, r"\bmake (?:him|her|them|everyone|everybody|people|all of them)(?: all)? (?:pay"
               r"|suffer|bleed)"
               r"\b", "s"),
        (0.50, r"\b(?:they|he|she|everyone) (?:will|are going to|is going to) (?:all )?pay for"
               r" (?:this|it|what)\b", "s"),
    ],
}

# Only count once their category already has a hit.
BOOSTERS: dict[str, list[tuple[float, str]]] = {
    "suicide": [
        (0.30, r"\b(?:tonight|today|tomorrow|this weekend|right now|soon|after everyone is"
               r" asleep)\b"),
        (0.40, r"\b(?:i have|i got|got|bought|saved|collected|stockpiled|been saving|saving up)"
               r" (?:\w+ ){0,2}(?:pills|rope|gun|razor|razors|blades?|tablets|meds)\b"),
        (0.40, r"\b(?:have|made|got) a plan\b|\bmy plan\b|\bplanned (?:it|everything|how)\b"
               r"|\bknow how i (?:would|will|am going to)\b"),
        (0.30, r"\b(?:tried|attempted) (?:it )?(?:before|again|last)\b"),
    ],
    "self_harm": [
        (0.30, r"\b(?:again|deeper|every (?:day|night)|to feel (?:something|better|in control"
               r"|real)|on purpose|deliberately|intentionally|cannot stop|bleeding|stitches)\b"),
    ],
    "violence_from_others": [
        (0.30, r"\b(?:tonight|right now|he is home|she is home|coming home|gun|knife|weapon"
               r"|bruises?|bleeding|pregnant|kids|children|cannot leave|nowhere to go)\b"),
    ],
    "violence_to_others": [
        (0.40, r"\b(?:gun|guns|knife|knives|weapon|rifle|pistol|tonight|tomorrow|plan|planned"
               r"|for real|not joking|i mean it|no joke|not kidding)\b"),
    ],
}

_FIRST = frozenset({"i", "me", "my", "myself", "mine", "we", "us", "our"})
_THIRD = frozenset({
    "he", "she", "they", "him", "her", "his", "them", "their", "hers", "someone", "somebody",
    "people", "friend", "friends", "brother", "sister", "mom", "mum", "dad", "mother", "father",
    "son", "daughter", "wife", "husband", "boyfriend", "girlfriend", "partner", "cousin",
    "character", "characters", "protagonist", "hero", "heroine", "villain", "novel", "book",
    "story", "movie", "film", "show", "series", "episode", "game", "song", "article", "news",
    "celebrity", "actor", "actress", "singer", "rapper", "guy", "girl", "man", "woman", "kid",
    "kids", "person", "student", "classmate", "coworker", "colleague", "patient", "client",
    "dog", "cat", "pet", "poem", "play", "anime", "manga", "documentary", "fic", "fanfic",
    "author", "writer", "narrator", "uncle", "aunt", "grandpa", "grandma", "neighbor",
    "neighbour", "roommate", "teacher", "nobody", "everyone", "everybody", "somebody",
})
_NEGATION_TAIL = re.compile(
    r"\b(?:never|not|no|nor|neither|wont|cannot|nothing makes me)"
    r"(?! (?:stop|help|shake|escape|get rid|resist|wait|seem to stop|control|handle|cope|take"
    r" it|bear|anymore|one|longer|reason|point|sure)\b)"
    r"(?: (?!(?:why|if|but|how|when|because|and|or|what|that|who|where|unless|until|so|though"
    r"|anymore|now|then)\b)[a-z]+){0,3} $")
_REPORTED_TAIL = re.compile(r"\b(?:told|tell|tells|telling|want|wants|wanted|said|says|saying"
                            r"|dared|asked) me to $|\b(?:said|says|saying) (?:that )?i should $"
                            r"|\btold me (?:that )?i should $")
_PAST = re.compile(r"\b(?:used to|when i was (?:a kid|little|young|younger|a child|a teen"
                   r"|a teenager|in school|\d+)|as a (?:kid|child|teen|teenager)|years ago"
                   r"|in the past|back in (?:high school|school|college|the day)|a long time ago"
                   r"|i am \d+ (?:days|weeks|months|years) clean)\b")
_NOT_PAST = re.compile(r"\b(?:now|again|still|lately|these days|today|tonight|anymore|recently"
                       r"|relapsed|back)\b")



# ---------------------------------------------------------------------------------------------
# 4. Speed: each pattern is tried only when the message has one of its "anchor" words
# ---------------------------------------------------------------------------------------------
# An anchor set is a set of word prefixes (up to 4 letters) such that every match of the pattern
# contains a word starting with one of them. It is derived from the parsed regex: literal words
# that start a token and are not optional; for alternatives, the union over the branches. When
# no such set can be proven the pattern always runs (anchors = None). tests/test_safety.py checks
# that the result is the same with and without this shortcut.

try:                                                        # Python >= 3.11
    from re import _constants as _sre_c, _parser as _sre_p
except ImportError:                                         # pragma: no cover - Python 3.10
    import sre_constants as _sre_c  # type: ignore[no-redef]
    import sre_parse as _sre_p  # type: ignore[no-redef]

_COMMON_KEYS = frozenset({"i", "a", "to", "my", "me", "am", "is", "the", "and", "not", "do",
                          "be", "you", "want", "goin", "will", "of", "in", "on", "it", "he",
                          "she", "the", "have", "that", "this", "for", "no", "so", "at"})


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
            continue                                  # consumes nothing; keep next_start
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
            else:                     # optional "(?:a )?": a word still starts if it ends in " "
                ends_at_start = ends_at_start and next_start
        if found is not None:
            candidates.append(found)
        next_start = ends_at_start
    flush()
    if not candidates:
        return None
    return min(candidates, key=lambda c: sum(50 if k in _COMMON_KEYS else 20 if len(k) < 3
                                             else 1 for k in c))


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
    except Exception:                                       # pragma: no cover - private API
        return None


def _word_keys(text: str) -> frozenset:
    return frozenset(t[:k] for t in text.split() for k in (1, 2, 3, 4))


@lru_cache(maxsize=1)
def _compiled():
    """Compile the tables once, on first use (keeps ``import engine.safety`` cheap)."""
    idioms = [(re.compile(p), _anchors(p)) for p in IDIOMS]
    rules = {cat: [(w, re.compile(p), flags, _anchors(p)) for w, p, flags in rows]
             for cat, rows in RULES.items()}
    boosters = {cat: [(w, re.compile(p)) for w, p in rows] for cat, rows in BOOSTERS.items()}
    return idioms, rules, boosters


def _runs(anchors: frozenset | None, keys: frozenset | None) -> bool:
    return keys is None or anchors is None or not anchors.isdisjoint(keys)
_PRIORITY = {c: i for i, c in enumerate(CATEGORIES)}


def _clause_prefix(text: str, start: int) -> str:
    cut = text.rfind("|", 0, start)
    return text[cut + 1:start].lstrip()


def _clause_around(text: str, start: int, end: int) -> str:
    left = text.rfind("|", 0, start)
    right = text.find("|", end)
    return text[left + 1:right if right >= 0 else len(text)]


def _someone_else(prefix: str) -> bool:
    """Nearest subject-ish word before the phrase belongs to someone else (not the user)."""
    for tok in reversed(prefix.split()[-8:]):
        if tok in _FIRST:
            return False
        if tok in _THIRD:
            return True
    return False


def _weigh(text: str, weight: float, m: re.Match, flags: str, category: str) -> float:
    prefix = _clause_prefix(text, m.start())
    if "n" not in flags and _NEGATION_TAIL.search(" " + prefix if prefix else " "):
        return 0.0
    if "s" in flags and _someone_else(prefix):
        weight = min(weight, THIRD_PERSON)
    if category in ("suicide", "self_harm") and _REPORTED_TAIL.search(prefix):
        weight = min(weight, REPORTED)
    clause = _clause_around(text, m.start(), m.end())
    if _PAST.search(clause) and not _NOT_PAST.search(clause):
        weight = min(weight, PAST)
    return weight


def assess(text: str, *, _shortcut: bool = True) -> SafetyResult:
    """Screen one user message. Rule-based, high recall; see the module docstring for limits."""
    if not text or not text.strip():
        return NO_RISK
    idioms, rules, boosters = _compiled()
    raw_hyperbole = bool(HYPERBOLE_EMOJI.search(text))
    norm = normalise(text)
    hyperbole = raw_hyperbole or bool(HYPERBOLE.search(norm))
    serious = bool(SERIOUS.search(norm))
    norm = _strip_fillers(norm)
    keys = _word_keys(norm) if _shortcut else None
    for rx, anchors in idioms:
        if _runs(anchors, keys):
            norm = rx.sub(" _ ", norm)
    norm = " " + re.sub(r" +", " ", norm).strip() + " "
    keys = _word_keys(norm) if _shortcut else None

    best: tuple[float, int, str, str] | None = None     # (score, -priority, category, evidence)
    for category, rows in rules.items():
        found: list[tuple[float, int, int, str]] = []
        for weight, rx, flags, anchors in rows:
            if not _runs(anchors, keys):
                continue
            for m in rx.finditer(norm):
                w = _weigh(norm, weight, m, flags, category)
                if w > 0:
                    found.append((w, m.start(), m.end(), m.group(0).strip()))
        if not found:
            continue
        hits: list[tuple[float, str]] = []            # overlapping hits count once (the heaviest)
        taken: list[tuple[int, int]] = []
        for w, start, end, phrase in sorted(found, key=lambda h: -h[0]):
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
        if hyperbole and not serious:
            score = min(score * HYPERBOLE_FACTOR, HYPERBOLE_CAP)
        evidence = max(hits, key=lambda h: h[0])[1]
        cand = (round(score, 3), -_PRIORITY[category], category, evidence)
        if best is None or cand[:2] > best[:2]:
            best = cand
    if best is None:
        return NO_RISK
    score, _, category, evidence = best
    if score >= URGENT_AT:
        level = "urgent"
    elif score >= CONCERN_AT:
        level = "concern"
    else:
        return SafetyResult(False, None, "none", "", score)
    return SafetyResult(True, category, level, evidence, score)


# ---------------------------------------------------------------------------------------------
# Crisis resources
# ---------------------------------------------------------------------------------------------

_REGION_ALIASES = {"GB": "UK", "USA": "US", "UNITED STATES": "US", "UNITED KINGDOM": "UK",
                   "ENGLAND": "UK", "SCOTLAND": "UK", "WALES": "UK", "NORTHERN IRELAND": "UK",
                   "CANADA": "CA", "AUSTRALIA": "AU", "IRELAND": "IE", "GERMANY": "DE",
                   "FRANCE": "FR", "INDIA": "IN", "NEW ZEALAND": "NZ", "INTERNATIONAL": "INTL"}


def _default_path() -> Path:
    return assets_dir() / "safety" / "resources.json"


def _broken(path: Path, why: str) -> MascotError:
    why = " ".join(str(why).split())
    return MascotError(f"The crisis resources file {path} is broken ({why}); "
                       f"reinstall Mascot or fix that file.")


def _read_resources(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise _broken(path, "file not found") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise _broken(path, err) from None
    if not isinstance(data, dict) or not isinstance(data.get("regions"), dict) \
            or not data["regions"]:
        raise _broken(path, 'it needs an object with a non-empty "regions" object')
    default = data.get("default_region", "INTL")
    if default not in data["regions"]:
        raise _broken(path, f'default_region "{default}" is not one of its regions')
    for code, region in data["regions"].items():
        if not isinstance(region, dict) or not isinstance(region.get("resources"), list):
            raise _broken(path, f'region "{code}" needs a "resources" list')
        for i, res in enumerate(region["resources"]):
            if not isinstance(res, dict) or not all(
                    isinstance(res.get(k), str) and res[k].strip() for k in ("name", "contact")):
                raise _broken(path, f'region "{code}" resource {i + 1} needs "name" and "contact"')
            if not isinstance(res.get("for", []), list):
                raise _broken(path, f'region "{code}" resource {i + 1}: "for" must be a list')
    return data


def _region_code(region: str) -> str:
    code = region.strip().upper().replace("-", "_")
    if "_" in code and code not in _REGION_ALIASES:       # locale such as "en_GB"
        code = code.rsplit("_", 1)[1]
    return _REGION_ALIASES.get(code, code)


def load_resources(region: str | None = None, path: Path | None = None) -> dict[str, Any]:
    """Crisis resources for one region.

    The region comes from ``region``, else the ``MASCOT_REGION`` environment variable, else the
    file's ``default_region``. Codes are case-insensitive; "GB" and locales like "en_GB" work.
    Returns ``{"region", "name", "resources": [...], "note"}``; ``note`` is None, or a sentence
    saying that an unknown region fell back to the international list. A missing or malformed
    file raises ``MascotError``.
    """
    path = Path(path) if path is not None else _default_path()
    data = _read_resources(path)
    regions = data["regions"]
    default = data.get("default_region", "INTL")
    requested = region if region and region.strip() else os.environ.get("MASCOT_REGION", "")
    code = _region_code(requested) if requested.strip() else default
    note = None
    if code not in regions:
        fallback = "INTL" if "INTL" in regions else default
        note = (f'No crisis resources are listed for region "{requested.strip()}"; '
                f"showing international ones instead.")
        code = fallback
    entry = regions[code]
    return {"region": code, "name": entry.get("name", code),
            "resources": [dict(r) for r in entry["resources"]], "note": note}


def resources_for(result: SafetyResult | str | None, region: str | None = None,
                  path: Path | None = None) -> list[dict[str, Any]]:
    """The region's resources for a result: those meant for its category first, then emergency.

    With no category (``none``), every non-emergency resource comes first.
    """
    category = result if isinstance(result, str) or result is None else result.category
    resources = load_resources(region, path)["resources"]
    first = [r for r in resources if not r.get("emergency")
             and (category is None or category in r.get("for", []))]
    emergency = [r for r in resources if r.get("emergency")]
    return first + emergency


# ---------------------------------------------------------------------------------------------
# Crisis message (plain language, outside the role-play)
# ---------------------------------------------------------------------------------------------

_OPENING = {
    ("suicide", "urgent"): "It sounds like you are in a lot of pain right now, and I am really"
                           " glad you said it instead of keeping it to yourself.",
    ("suicide", "concern"): "It sounds like things feel really heavy right now, and that"
                            " matters.",
    ("self_harm", "urgent"): "Thank you for telling me; hurting yourself is a sign of how much"
                             " you are carrying, and you deserve care, not judgement.",
    ("self_harm", "concern"): "Thank you for trusting me with this; what you are going through"
                              " matters, and you deserve care, not judgement.",
    ("violence_from_others", "urgent"): "What you are describing is not your fault, and you"
                                        " deserve to be safe.",
    ("violence_from_others", "concern"): "What you are describing sounds frightening, it is not"
                                         " your fault, and you deserve to feel safe.",
    ("violence_to_others", "urgent"): "It sounds like you are feeling a huge amount of anger or"
                                      " pain right now, and it took honesty to say it.",
    ("violence_to_others", "concern"): "It sounds like you are really angry or hurt right now,"
                                       " and those feelings deserve to be taken seriously.",
    (None, "none"): "It sounds like you are going through something hard.",
}

_ACTION = {
    "suicide": ["Please reach out to a real person now: a crisis line is free, confidential, and"
                " there for exactly this, even if you are not sure it is bad enough.",
                "If you can, let someone you trust know how you are feeling, and try not to stay"
                " alone with this."],
    "self_harm": ["Talking to a real person now can help with the urge and with what is"
                  " underneath it, and you can reach out even if you do not know what to say."],
    "violence_from_others": ["A trained advocate can help you make a safety plan, like a safe"
                             " place to go, who to call and what to keep ready, at your own pace"
                             " and in confidence.",
                             "Mascot keeps its history on this computer, so if someone else uses"
                             " it, you may want to delete this conversation."],
    "violence_to_others": ["If you can, step away from the person and the situation for now and"
                           " give yourself some space and time to cool down.",
                           "Please reach someone now: a crisis line can talk this moment through"
                           " with you without judging you."],
    None: ["Talking to a real person can help, and you do not have to wait for things to get"
           " worse to reach out."],
}


_URGENT = {
    "suicide": "If you might act on these thoughts or are in immediate danger, {call}.",
    "self_harm": "If you are badly hurt or in immediate danger, {call}.",
    "violence_from_others": "If you are in immediate danger, {call}.",
    "violence_to_others": "If you feel you might act on this, or anyone is in immediate danger,"
                          " {call}.",
    None: "If you are in immediate danger, {call}.",
}


def _emergency_phrase(resources: list[dict[str, Any]]) -> str:
    for res in resources:
        if res.get("emergency"):
            number = str(res.get("number", "")).strip()
            if number:
                return f"call your local emergency number ({number}) now"
            break
    return "call your local emergency number now"


def crisis_message(result: SafetyResult, resources: list[dict[str, Any]],
                   companion_name: str | None = None) -> str:
    """A warm, plain message (not role-play) that points to real people and lists resources.

    ``resources`` is normally ``resources_for(result)``; the 2-4 most relevant are listed.
    """
    category = result.category if result.category in CATEGORIES else None
    level = result.level if category and result.level in ("concern", "urgent") else "none"
    opening = _OPENING.get((category, level), _OPENING[(None, "none")])
    if companion_name and companion_name.strip():
        who = f"{companion_name.strip()} is an AI, like every companion in Mascot, and"
    else:
        who = "every companion in Mascot is an AI,"
    disclosure = (f"Stepping out of the chat for a moment: {who} not a therapist, counsellor or"
                  f" emergency service, so please do not rely on this app alone right now.")
    sentences = [opening, disclosure, *_ACTION[category]]

    helplines = [r for r in resources if not r.get("emergency")][:3]
    emergency = [r for r in resources if r.get("emergency")]
    listed = helplines + (emergency[:1] if level == "urgent" or len(helplines) < 2 else [])
    if level == "urgent":
        sentences.append(_URGENT[category].format(call=_emergency_phrase(resources)))
    sentences.append("Reaching out is a brave and sensible thing to do, and you deserve support.")
    lines = []
    for res in listed[:4]:
        line = f"- {res['name']}: {res['contact']}"
        if res.get("url"):
            line += f" ({res['url']})"
        lines.append(line)
    if not lines:
        return " ".join(sentences)
    return " ".join(sentences) + "\n\nYou can contact:\n" + "\n".join(lines)
