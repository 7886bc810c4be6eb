"""Held-out invented companions as an evaluation domain: ``mascot-eval --domain invented``.

The corpus' test split holds companions no training saw (``assets/corpus/test/``, written by a
writer who wrote nothing of the training split), read the way the app imports a user's card.
Each invented group's rounds are split in two by their order in the files: the even ones become
scenarios (the situation, its history and the user's message; the companions answer them), the
odd ones give the exemplars of each member's voice for identifiability (the writer's own
replies there). A reply is therefore never compared with lines written for its own situation.
"""

from __future__ import annotations

from engine.personas import PersonaSet
from evaluation.exemplars import Exemplar
from training.corpus import Corpus
from training.scenarios import Scenario

DOMAIN = "invented"


def invented_domain(
    limit: int | None = None,
) -> tuple[list[Scenario], dict[str, PersonaSet], list[Exemplar]]:
    """Scenarios (``limit`` per group), persona sets by group and the exemplars."""
    corpus = Corpus("test")
    by_group: dict[str, list] = {}
    for r in corpus.rounds:
        if r.invented:
            by_group.setdefault(r.group, []).append(r)
    scenarios: list[Scenario] = []
    sets: dict[str, PersonaSet] = {}
    exemplars: list[Exemplar] = []
    for group, rounds in by_group.items():
        sets[group] = corpus.group(rounds[0])
        chosen = rounds[0::2]
        for r in chosen[:limit] if limit else chosen:
            scenarios.append(
                Scenario(
                    id=f"invented:{r.id}",
                    domain=DOMAIN,
                    split="test",
                    group=group,
                    situation=r.situation,
                    history=[dict(h) for h in r.history],
                    user_message=r.user_message,
                )
            )
        for r in rounds[1::2]:
            for t in r.all_turns():
                exemplars.append(Exemplar(group, r.id, r.situation, t.speaker, t.text))
    return scenarios, sets, exemplars
