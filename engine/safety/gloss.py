"""A word-by-word English gloss of German and French messages, for the learned layer's encoder.

all-MiniLM-L6-v2 was trained on English: it reads "sitz auf der Brüstung vom Parkdeck" as
noise, but "sit on the railing of the parking deck" as what it is. So the layer embeds a German
or French message as its gloss (``assets/safety/gloss_de.tsv``, ``gloss_fr.tsv``: word forms and
their most likely English sense in a personal chat), and every English exemplar then teaches it
about German and French ones too. The gloss is not a translation (word order, idioms and senses
stay as they are); the character n-grams still read the original words.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from pathlib import Path

from ..paths import assets_dir
from . import rules_de, rules_en, rules_fr
from .screen import function_words

LANGS = ("de", "fr")
_WORD = re.compile(r"[^\W\d_]+|\d+|[^\w\s]", re.UNICODE)
_DE_SUFFIXES = ("ern", "em", "en", "er", "es", "e", "n", "s", "st", "t", "et", "te", "ten", "tet")
_FR_SUFFIXES = ("es", "s", "e", "x", "ent", "ee", "ees")


def gloss_path(lang: str) -> Path:
    return assets_dir() / "safety" / f"gloss_{lang}.tsv"


def _plain(word: str) -> str:
    """Lower case, accents and umlauts folded (``ä`` -> ``a``, ``ß`` -> ``ss``)."""
    word = unicodedata.normalize("NFKD", word.lower().replace("ß", "ss"))
    return "".join(c for c in word if not unicodedata.combining(c))


@lru_cache(maxsize=None)
def table(lang: str) -> dict[str, str]:
    """Word form -> English, with accent-folded and (German) ae/oe/ue spellings as well; {} when
    the file is missing."""
    path = gloss_path(lang)
    out: dict[str, str] = {}
    if not path.is_file():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        word, _, english = line.partition("\t")
        word = word.strip().lower()
        if word and word not in out:
            out[word] = english.strip()
    for word, english in list(out.items()):
        for variant in (
            _plain(word),
            word.replace("ä", "ae").replace("ö", "oe").replace("ü", "ue").replace("ß", "ss"),
        ):
            out.setdefault(variant, english)
    return out


def _lookup(word: str, lang: str, depth: int = 0) -> str | None:
    t = table(lang)
    for w in (word, _plain(word), re.sub(r"(.)\1{2,}", r"\1", _plain(word))):
        if w in t:
            return t[w]
    plain = _plain(word)
    for suffix in _DE_SUFFIXES if lang == "de" else _FR_SUFFIXES:
        if len(plain) > len(suffix) + 3 and plain.endswith(suffix) and plain[: -len(suffix)] in t:
            return t[plain[: -len(suffix)]]
    if (
        lang == "de" and depth < 2 and len(plain) >= 8
    ):  # a compound: Parkhaus|dach, Schlaf|tabletten
        for cut in range(len(plain) - 4, 3, -1):
            head, tail = plain[:cut], plain[cut:]
            for h in (head, head[:-1] if head.endswith("s") else None):  # Fugen-s: Lebens|ende
                if h and len(h) >= 4 and h in t:
                    rest = _lookup(tail, lang, depth + 1)
                    if rest is not None:
                        return f"{t[h]} {rest}".strip()
    return None


def gloss(text: str, lang: str) -> str:
    """``text`` (German or French) word by word in English; unknown words stay as they are."""
    out = []
    for tok in _WORD.findall(text.replace("’", "'")):
        if not tok[0].isalpha():
            if tok in ".!?,;:":
                out.append(tok)
            continue
        english = _lookup(tok.lower(), lang)
        out.append(tok if english is None else english)
    return re.sub(r"\s+([.!?,;:])", r"\1", " ".join(w for w in out if w)).strip()


def language(text: str, dialect: bool = False) -> str:
    """ "de", "fr" or "en": the language whose function words (the rules' stopword lists) the
    message uses most, with a glossary's word forms counting half a point each for German and
    French (colloquial German shares "in", "im", "is" with English); English on a tie. With
    ``dialect``, German dialect words count for German too (the language a reply is written in;
    the learned layer's gloss keeps the guess it was fitted with)."""
    words = re.findall(r"[a-z]+", _plain(text).replace("'", " "))
    score = {
        lang: float(sum(1 for w in words if w in function_words(t, dialect)))
        for lang, t in (("en", rules_en), ("de", rules_de), ("fr", rules_fr))
    }
    for lang in LANGS:
        t = table(lang)
        score[lang] += 0.5 * sum(
            1 for w in words if len(w) > 3 and w in t and w not in rules_en.STOPWORDS
        )
    best = max(score, key=lambda k: (score[k], k == "en"))
    return best if score[best] else "en"


def for_encoder(text: str) -> str:
    """What the encoder reads for ``text``: its English gloss when it is German or French and a
    glossary is there, else ``text`` itself."""
    lang = language(text)
    if lang in LANGS and table(lang):
        return gloss(text, lang) or text
    return text
