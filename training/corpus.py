"""The persona corpus: whole group rounds written by people, read as training examples.

``assets/corpus/<split>/<writer>/`` holds a writer's rounds (``*.jsonl``, one round a line) and,
for invented companions, their cards (``personas.jsonl``). A round is a situation, the user's
message, then 3-4 companions replying in turn (each turn with the Director's directive or ""),
and sometimes the user's follow-up with more replies. docs/corpus.md says how it was written.

Every turn becomes one example: the exact request the app sends that companion at that point of
the round (``engine.chat.group.companion_prompt``: persona, transcript, directive), and the
writer's reply as the target. ``problems`` lists what makes a round unusable, in one line each.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.cards import persona_from_card
from engine.chat.companion_memory import CompanionMemory
from engine.chat.group import companion_prompt
from engine.chat.settings import ChatSettings
from engine.director.policies import Director
from engine.errors import InputError, MascotError
from engine.llm.backend import GenRequest
from engine.paths import assets_dir
from engine.persona_files import load_set
from engine.personas import Persona, PersonaSet, persona_from_dict
from engine.reply.prompts import from_history
from training.scenarios import GROUP_FOR_DOMAIN, USER

SPLITS = ("train", "test")
DOMAINS = tuple(GROUP_FOR_DOMAIN)
# Stage directions a reply must not hold: "*smiles*", "(laughs) ...", "[pauses]".
_STAGE = re.compile(r"^\s*[*(\[]|\*[^*]{1,40}\*")


def corpus_dir() -> Path:
    return assets_dir() / "corpus"


@dataclass
class Turn:
    speaker: str
    text: str
    directive: str = ""


@dataclass
class Round:
    id: str
    writer: str
    split: str
    domain: str
    group: str
    situation: str
    user_message: str
    turns: list[Turn]
    history: list[dict[str, str]] = field(default_factory=list)
    follow_up: str = ""  # the user's next message, "" when none
    follow_turns: list[Turn] = field(default_factory=list)
    members: list[str] = field(default_factory=list)  # invented groups name their members

    @property
    def invented(self) -> bool:
        return self.group not in GROUP_FOR_DOMAIN.values()

    def all_turns(self) -> list[Turn]:
        return [*self.turns, *self.follow_turns]


@dataclass
class Example:
    """One reply to learn: the companion, what it reads before it speaks, its directive, the
    writer's reply."""

    round: Round
    persona: Persona
    group: PersonaSet
    transcript: list[dict[str, str]]
    directive: str
    target: str

    def request(self, count: Callable[[str], int], n_ctx: int = 2048) -> GenRequest:
        """The request the app sends this companion here (``companion_prompt``)."""
        settings = ChatSettings(policy="round-robin")
        req, _ = companion_prompt(
            self.persona,
            from_history(self.transcript, USER),
            self.directive,
            names=self.group.names,
            settings=settings,
            memory=CompanionMemory(self.group, None, settings),
            count=count,
            n_ctx=n_ctx,
        )
        return req


def _turns(data: Any, where: str) -> list[Turn]:
    if not isinstance(data, list) or not data:
        raise InputError(f"{where}: 'turns' must be a non-empty list.")
    out = []
    for i, t in enumerate(data):
        if (
            not isinstance(t, dict)
            or not isinstance(t.get("speaker"), str)
            or not isinstance(t.get("text"), str)
        ):
            raise InputError(f"{where}: turn {i + 1} needs 'speaker' and 'text'.")
        out.append(
            Turn(t["speaker"].strip(), t["text"].strip(), str(t.get("directive") or "").strip())
        )
    return out


def parse_round(line: str, where: str) -> Round:
    """One JSON line as a Round; an InputError naming ``where`` when it is malformed."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as e:
        raise InputError(f"{where}: invalid JSON ({e.msg}).") from None
    if not isinstance(data, dict):
        raise InputError(f"{where}: each line must be a JSON object.")
    for key in ("id", "writer", "split", "domain", "group", "situation", "user_message"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise InputError(f"{where}: field '{key}' must be non-empty text.")
    fu = data.get("follow_up") or {}
    if not isinstance(fu, dict):
        raise InputError(f"{where}: 'follow_up' must be an object.")
    return Round(
        id=data["id"],
        writer=data["writer"],
        split=data["split"],
        domain=data["domain"],
        group=data["group"],
        situation=data["situation"],
        user_message=data["user_message"].strip(),
        turns=_turns(data.get("turns"), where),
        history=[
            {"speaker": str(h["speaker"]), "text": str(h["text"])}
            for h in data.get("history") or []
        ],
        follow_up=str(fu.get("user_message") or "").strip(),
        follow_turns=_turns(fu["turns"], where) if fu.get("turns") else [],
        members=[str(m) for m in data.get("members") or []],
    )


def load_rounds(split: str, root: Path | None = None) -> list[Round]:
    """Every round of ``split``, in file order."""
    out: list[Round] = []
    for path in sorted((root or corpus_dir()).glob(f"{split}/*/*.jsonl")):
        if path.name == "personas.jsonl":
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                out.append(parse_round(line, f"{path.name}:{n}"))
    return out


def _short_card(persona: dict[str, Any]) -> dict[str, Any]:
    """A short persona (a name, a line, a few traits) as the minimal Character Card a user
    would write for it, so it is imported the way the app imports such a card."""
    return {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {
            "name": persona["name"],
            "description": persona.get("role", ""),
            "personality": ", ".join(persona.get("traits", [])),
        },
    }


def load_personas(split: str, root: Path | None = None) -> dict[str, Persona]:
    """The invented companions of ``split`` by name, read as the app imports them: a Mascot
    persona through ``persona_from_dict``, a Character Card (or a short persona, as the card a
    user would write for it) through ``persona_from_card``."""
    out: dict[str, Persona] = {}
    for path in sorted((root or corpus_dir()).glob(f"{split}/*/personas.jsonl")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            where = f"{path.name}:{n}"
            data = json.loads(line)
            if data.get("format") == "card":
                p = persona_from_card(data["card"], where)
            elif not data["persona"].get("speaking_style"):
                p = persona_from_card(_short_card(data["persona"]), where)
            else:
                p = persona_from_dict(data["persona"], where)
            out[p.name] = p
    return out


def card_style(split: str, root: Path | None = None) -> dict[str, str]:
    """How each invented companion's card was written: "card", "long" or "short"."""
    out = {}
    for path in sorted((root or corpus_dir()).glob(f"{split}/*/personas.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                data = json.loads(line)
                if data.get("format") == "card":
                    out[data["card"]["data"]["name"]] = "card"
                else:
                    out[data["persona"]["name"]] = (
                        "long" if data["persona"].get("speaking_style") else "short"
                    )
    return out


class Corpus:
    """The rounds and invented companions of one split, with their groups resolved."""

    def __init__(self, split: str, root: Path | None = None):
        self.split = split
        self.rounds = load_rounds(split, root)
        self.personas = load_personas(split, root)
        self._groups: dict[tuple[str, ...], PersonaSet] = {}

    def group(self, r: Round) -> PersonaSet:
        """The persona set the round was written for (an invented group: its named members)."""
        key = (r.group, *r.members)
        if key not in self._groups:
            if not r.invented:
                self._groups[key] = load_set(r.group)
            else:
                missing = [m for m in r.members if m not in self.personas]
                if not r.members or missing:
                    raise InputError(
                        f"{r.id}: invented group '{r.group}' names unknown members "
                        f"{missing or '(none)'}."
                    )
                self._groups[key] = PersonaSet(
                    name=r.group,
                    title=r.group,
                    description="",
                    members=[self.personas[m] for m in r.members],
                    domain=r.domain,
                )
        return self._groups[key]

    def problems(self, r: Round) -> list[str]:
        """Why a round cannot be learned from (empty: it can)."""
        out = []
        try:
            group = self.group(r)
        except MascotError as e:
            return [str(e)]
        if r.split != self.split:
            out.append(f"{r.id}: split '{r.split}' in the {self.split} folder.")
        if r.domain not in DOMAINS:
            out.append(f"{r.id}: unknown domain '{r.domain}'.")
        for t in r.all_turns():
            if t.speaker not in group.names:
                out.append(f"{r.id}: '{t.speaker}' is not a member of {r.group}.")
                continue
            if t.directive and t.directive not in Director.menu(group.member(t.speaker), USER):
                out.append(f"{r.id}: directive '{t.directive}' is not on {t.speaker}'s menu.")
            if not t.text:
                out.append(f"{r.id}: an empty reply by {t.speaker}.")
            elif _STAGE.search(t.text) or re.match(
                rf"{re.escape(t.speaker)}(:|\s+\w+(ed|s)\b)", t.text
            ):
                out.append(
                    f"{r.id}: {t.speaker}'s reply narrates or is name-prefixed: {t.text[:60]!r}."
                )
        if r.follow_turns and not r.follow_up:
            out.append(f"{r.id}: follow-up replies without the user's follow-up message.")
        return out

    def examples(self, rounds: list[Round] | None = None) -> Iterator[Example]:
        """Every turn of every usable round as an Example, in order."""
        for r in self.rounds if rounds is None else rounds:
            if self.problems(r):
                continue
            group = self.group(r)
            seen = [*r.history, {"speaker": USER, "text": r.user_message}]
            for t in r.turns:
                yield Example(r, group.member(t.speaker), group, list(seen), t.directive, t.text)
                seen.append({"speaker": t.speaker, "text": t.text})
            if r.follow_up:
                seen.append({"speaker": USER, "text": r.follow_up})
                for t in r.follow_turns:
                    yield Example(
                        r, group.member(t.speaker), group, list(seen), t.directive, t.text
                    )
                    seen.append({"speaker": t.speaker, "text": t.text})

    def stats(self) -> dict[str, Any]:
        """Counts for docs/corpus.md: rounds, replies per persona, domain and writer."""
        per_persona: Counter[str] = Counter()
        per_domain: Counter[str] = Counter()
        per_writer: Counter[str] = Counter()
        situations: set[str] = set()
        bad = 0
        for r in self.rounds:
            if self.problems(r):
                bad += 1
                continue
            situations.add(r.id)
            for t in r.all_turns():
                per_persona[t.speaker] += 1
                per_domain[r.domain] += 1
                per_writer[r.writer] += 1
        return {
            "split": self.split,
            "rounds": len(self.rounds) - bad,
            "unusable_rounds": bad,
            "replies": sum(per_persona.values()),
            "situations": len(situations),
            "per_persona": dict(per_persona.most_common()),
            "per_domain": dict(per_domain),
            "per_writer": dict(per_writer),
            "invented": sorted(self.personas),
        }
