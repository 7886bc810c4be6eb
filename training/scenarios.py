"""Scenario sets: short group-chat contexts shared by training and evaluation.

Each scenario is one moment in a group conversation: a one-line ``situation`` (what is going on,
for judges and reports; the companions never see it), one to four earlier turns (``history``), and
the user's latest message, which the companions answer. The files live in
``assets/scenarios/<domain>.jsonl``, one JSON object per line::

    {"id": "support-007", "domain": "support", "split": "train", "group": "support",
     "situation": "Lonely: moved to a new city for work and knows nobody yet.",
     "history": [{"speaker": "User", "text": "..."}, {"speaker": "Mia", "text": "..."}],
     "user_message": "..."}

``history[i].speaker`` is a member of the scenario's persona set or ``"User"`` (the person).

Domains (all written for this project, not taken from any dataset; they imitate the style of the
datasets the MASCOT paper draws on):

* ``support``   emotional-support situations in the style of EmpatheticDialogues (an emotion
  label, a personal situation), answered by the ``support`` circle;
* ``workplace`` meeting moments in the style of QMSum (product, research and committee
  meetings), answered by the ``workplace`` team;
* ``creative``  writers'-room moments, the out-of-domain set, answered by ``writers-room``.

The ``split`` field is fixed in the files: ``train`` or ``heldout`` (about a quarter). Training
reads only ``train``; evaluation and the before/after numbers use ``heldout``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from engine.errors import InputError, NotFound
from engine.paths import assets_dir

DOMAINS = ("support", "workplace", "creative")
GROUP_FOR_DOMAIN = {"support": "support", "workplace": "workplace", "creative": "writers-room"}
SPLITS = ("train", "heldout")
USER = "User"


@dataclass
class Scenario:
    id: str
    domain: str
    split: str
    group: str
    situation: str
    history: list[dict] = field(default_factory=list)  # each {"speaker", "text"}
    user_message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def transcript(self) -> list[dict]:
        """History plus the user's latest message, as ``{"speaker", "text"}`` items."""
        return [dict(h) for h in self.history] + [{"speaker": USER, "text": self.user_message}]


def scenarios_dir() -> Path:
    return assets_dir() / "scenarios"


def _parse(line: str, where: str) -> Scenario:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as e:
        raise InputError(f"{where}: invalid JSON ({e.msg}).") from None
    if not isinstance(data, dict):
        raise InputError(f"{where}: each line must be a JSON object.")
    for key in ("id", "domain", "split", "group", "situation", "user_message"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise InputError(f"{where}: field '{key}' must be non-empty text.")
    if data["split"] not in SPLITS:
        raise InputError(f"{where}: field 'split' must be one of {', '.join(SPLITS)}.")
    history = data.get("history") or []
    if not isinstance(history, list) or not all(
        isinstance(h, dict) and isinstance(h.get("speaker"), str) and isinstance(h.get("text"), str)
        for h in history
    ):
        raise InputError(
            f'{where}: field \'history\' must be a list of {{"speaker", "text"}} objects.'
        )
    return Scenario(
        id=data["id"],
        domain=data["domain"],
        split=data["split"],
        group=data["group"],
        situation=data["situation"],
        history=[{"speaker": h["speaker"], "text": h["text"]} for h in history],
        user_message=data["user_message"],
    )


def load_file(path: str | Path) -> list[Scenario]:
    """Read one scenario ``.jsonl`` file (blank lines and ``#`` comments are skipped)."""
    path = Path(path)
    if not path.is_file():
        raise NotFound(f"{path}: no such scenario file.")
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip() and not line.lstrip().startswith("#"):
            out.append(_parse(line, f"{path.name}:{n}"))
    return out


def load_scenarios(domain: str | None = None, split: str | None = None) -> list[Scenario]:
    """Bundled scenarios, optionally filtered by domain and split, in file order."""
    if domain is not None and domain not in DOMAINS:
        raise InputError(f"Unknown scenario domain '{domain}'; use one of: {', '.join(DOMAINS)}.")
    if split is not None and split not in SPLITS:
        raise InputError(f"Unknown split '{split}'; use one of: {', '.join(SPLITS)}.")
    out: list[Scenario] = []
    for d in (domain,) if domain else DOMAINS:
        out.extend(
            s
            for s in load_file(scenarios_dir() / f"{d}.jsonl")
            if split is None or s.split == split
        )
    return out
