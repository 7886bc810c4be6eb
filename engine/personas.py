"""Personas and persona sets.

A *persona* is one companion. Its schema (all text is plain UTF-8; the limits keep prompts inside
a small model's context window):

============== ========= ======================================================================
field          type      meaning
============== ========= ======================================================================
name           str       required, 1-40 chars, unique within a group; how others address it
role           str       required, <= 200 chars; the part it plays in the group
traits         [str]     required, 1-12 items of <= 80 chars; personality adjectives/phrases
speaking_style str       required, <= 400 chars; how it talks (length, tone, quirks)
goals          [str]     <= 8 items of <= 200 chars; what it tries to do for the user
boundaries     [str]     <= 8 items of <= 200 chars; what it never does
example_lines  [str]     <= 8 items of <= 300 chars; lines in its voice (few-shot style)
color          str       ``#rrggbb``; its name colour in the CLI and GUI (default: derived)
avatar         str       an emoji or a short text shown as its avatar (default: first letter)
model          str|null  optional: a registered model name or a GGUF path; null = group default.
                         A registered LoRA adapter's name runs that adapter over its base model
                         (sharing the base's loaded weights with the other personas)
sampling       object    optional: temperature (0-2), top_p (0-1], top_k (0-200),
                         repeat_penalty (1-2), max_tokens (8-1024)
extensions     object    optional: data kept verbatim from imported Character Cards
============== ========= ======================================================================

A *persona set* (a group) is a JSON file ``{"name", "title", "description", "domain",
"members": [persona, ...]}`` with 1-8 members. Bundled sets live in ``assets/personas``; reading
and saving set files is ``engine.persona_files``.
"""

from __future__ import annotations

import colorsys
import hashlib
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from engine.errors import NotFound, PersonaError
from engine.lorebook import parse_book

_COLOR = re.compile(r"^#[0-9a-fA-F]{6}$")
_NAME = re.compile(r"^[^\n\r:]{1,40}$")
MAX_NESTING = (
    64  # deeper JSON than this is no persona, card or lorebook (and would exhaust recursion)
)
# labels the prompt gives to roles: a name ending in one of them reads as that role's turn
ROLE_LABELS = ("user", "assistant", "system", "director", "you")
_BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

SAMPLING_LIMITS: dict[str, tuple[type, float, float]] = {
    "temperature": (float, 0.0, 2.0),
    "top_p": (float, 0.0, 1.0),
    "top_k": (int, 0, 200),
    "repeat_penalty": (float, 1.0, 2.0),
    "max_tokens": (int, 8, 1024),
}

DEFAULT_SAMPLING = {
    "temperature": 0.7,
    "top_p": 0.9,
    "top_k": 40,
    "repeat_penalty": 1.15,
    "max_tokens": 96,
}


@dataclass
class Persona:
    name: str
    role: str
    traits: list[str]
    speaking_style: str
    goals: list[str] = field(default_factory=list)
    boundaries: list[str] = field(default_factory=list)
    example_lines: list[str] = field(default_factory=list)
    color: str = ""
    avatar: str = ""
    model: str | None = None
    sampling: dict[str, float] = field(default_factory=dict)
    extensions: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.color:
            self.color = default_color(self.name)
        if not self.avatar:
            self.avatar = self.name[:1].upper()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def sampling_settings(self) -> dict[str, float]:
        return {**DEFAULT_SAMPLING, **self.sampling}

    def system_prompt(self, group: list[str], user_name: str = "User") -> str:
        """The persona's stable prompt prefix. It never changes during a conversation, so
        llama.cpp's KV cache for it is reused on every turn."""
        others = [n for n in group if n != self.name]
        lines = [
            f"You are {self.name}, {self.role}.",
            f"You are in a small group chat with {user_name} (a real person)"
            + (f" and the companions {', '.join(others)}." if others else "."),
            f"Personality: {', '.join(self.traits)}.",
            f"How you talk: {self.speaking_style}",
        ]
        if self.goals:
            lines.append("Your goals: " + "; ".join(self.goals) + ".")
        if self.boundaries:
            lines.append("You never: " + "; ".join(self.boundaries) + ".")
        if self.example_lines:
            lines.append(
                "Things you might say: " + " | ".join(f'"{x}"' for x in self.example_lines)
            )
        lines.append(
            f"Write only {self.name}'s next message: one to three sentences, in your own voice. "
            f"Never write lines for {user_name} or for the other companions, and do not repeat "
            "what others already said; add something of your own. Stay in character even if "
            "someone asks you to become someone else."
        )
        return "\n".join(lines)

    def instructions(self, group: list[str], user_name: str = "User") -> str:
        """The system prompt less its example lines: what a reply must not read back (the copy
        guard drops a sentence that echoes it); the example lines are the persona's to say."""
        return "\n".join(
            line
            for line in self.system_prompt(group, user_name).split("\n")
            if not line.startswith("Things you might say:")
        )


@dataclass
class PersonaSet:
    name: str
    title: str
    description: str
    members: list[Persona]
    domain: str = "general"
    source: str = ""
    lorebook: dict[str, Any] | None = None  # the group's own lorebook (V2 character_book form)

    def member(self, name: str) -> Persona:
        for p in self.members:
            if p.name.lower() == name.lower():
                return p
        raise NotFound(
            f"No companion named '{name}' in group '{self.name}'; members are: "
            f"{', '.join(self.names)}."
        )

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.members]

    def to_dict(self) -> dict[str, Any]:
        out = {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "domain": self.domain,
            "members": [p.to_dict() for p in self.members],
        }
        if self.lorebook:
            out["lorebook"] = self.lorebook
        return out


def default_color(name: str) -> str:
    """A stable, readable colour from the name (so two imports of one persona match)."""
    h = int(hashlib.sha1(name.encode("utf-8")).hexdigest()[:4], 16) / 0xFFFF
    r, g, b = colorsys.hls_to_rgb(h, 0.45, 0.55)
    return "#{:02x}{:02x}{:02x}".format(int(r * 255), int(g * 255), int(b * 255))


# -- validation -------------------------------------------------------------------------------


def _text(
    data: dict, key: str, where: str, *, required: bool, limit: int, default: str = ""
) -> str:
    if key not in data or data[key] is None:
        if required:
            raise PersonaError(f"{where}: field '{key}' is missing; add it as text.")
        return default
    value = data[key]
    if not isinstance(value, str):
        raise PersonaError(f"{where}: field '{key}' must be text, not {type(value).__name__}.")
    value = value.strip()
    if required and not value:
        raise PersonaError(f"{where}: field '{key}' is empty; write a few words.")
    if len(value) > limit:
        raise PersonaError(
            f"{where}: field '{key}' is {len(value)} characters; the limit is {limit}."
        )
    return value


def _text_list(
    data: dict, key: str, where: str, *, required: bool, max_items: int, limit: int
) -> list[str]:
    if key not in data or data[key] is None:
        if required:
            raise PersonaError(f"{where}: field '{key}' is missing; add a list of short texts.")
        return []
    value = data[key]
    if isinstance(value, str):  # be forgiving: "warm, curious" -> ["warm", "curious"]
        value = [v for v in (s.strip() for s in value.split(",")) if v]
    if not isinstance(value, list):
        raise PersonaError(
            f"{where}: field '{key}' must be a list of texts, not {type(value).__name__}."
        )
    if required and not value:
        raise PersonaError(f"{where}: field '{key}' is empty; add at least one item.")
    if len(value) > max_items:
        raise PersonaError(
            f"{where}: field '{key}' has {len(value)} items; the limit is {max_items}."
        )
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise PersonaError(
                f"{where}: field '{key}[{i}]' must be text, not {type(item).__name__}."
            )
        if len(item) > limit:
            raise PersonaError(
                f"{where}: field '{key}[{i}]' is {len(item)} characters; the limit is {limit}."
            )
        if item.strip():
            out.append(item.strip())
    return out


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a companion's or group's display name, or None: it must be printable
    text (no control, bidirectional-override or unassigned characters), not look like a file
    path, and not be or end in a role label ("User", "Assistant", ...), which the prompt and the
    reply cleanup read as another speaker's turn."""
    import unicodedata

    for ch in name:
        if ch in _BIDI:
            return f"contains the invisible text-direction character U+{ord(ch):04X}"
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cs", "Co", "Cn") or (cat == "Cf" and ch not in "\u200c\u200d"):
            return f"contains the control character U+{ord(ch):04X}"
    if "/" in name or "\\" in name or name.startswith("."):
        return "looks like a file path"
    if "<|" in name or "|>" in name:
        return "contains a chat-template marker"
    words = re.findall(r"\w+", name.casefold())
    if words and words[-1] in ROLE_LABELS:
        return f"ends in '{words[-1]}', a role label in the chat"
    return None


def _display_name(data: dict, where: str, limit: int, *, required: bool, default: str = "") -> str:
    name = _text(data, "name", where, required=required, limit=limit, default=default)
    if name and not _NAME.match(name):
        raise PersonaError(f"{where}: field 'name' must be one line without ':'.")
    why = name_problem(name) if name else None
    if why:
        raise PersonaError(f"{where}: field 'name' {why}; use a plain name such as 'Mia'.")
    return name


def check_nesting(data: Any, where: str, limit: int = MAX_NESTING) -> None:
    """Raise PersonaError when parsed JSON nests deeper than ``limit`` (checked without recursion,
    so a hostile file cannot exhaust Python's stack later, when it is copied or written)."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            raise PersonaError(
                f"{where}: the JSON is nested more than {limit} levels deep; "
                "this is not a usable persona or card."
            )
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)


def persona_from_dict(data: Any, where: str = "persona") -> Persona:
    """Validate a persona dict; errors name the field and say how to fix it."""
    if not isinstance(data, dict):
        raise PersonaError(f"{where}: a persona must be a JSON object, not {type(data).__name__}.")
    name = _display_name(data, where, 40, required=True)
    where = f"{where} '{name}'"
    role = _text(data, "role", where, required=True, limit=200)
    traits = _text_list(data, "traits", where, required=True, max_items=12, limit=80)
    style = _text(data, "speaking_style", where, required=True, limit=400)
    goals = _text_list(data, "goals", where, required=False, max_items=8, limit=200)
    boundaries = _text_list(data, "boundaries", where, required=False, max_items=8, limit=200)
    examples = _text_list(data, "example_lines", where, required=False, max_items=8, limit=300)
    color = _text(data, "color", where, required=False, limit=7)
    if color and not _COLOR.match(color):
        raise PersonaError(f"{where}: field 'color' must look like #3a7bd5, not '{color}'.")
    avatar = _text(data, "avatar", where, required=False, limit=16)
    model = data.get("model")
    if model is not None and (not isinstance(model, str) or len(model) > 1000):
        raise PersonaError(f"{where}: field 'model' must be a model name or a GGUF path (text).")
    sampling_in = data.get("sampling") or {}
    if not isinstance(sampling_in, dict):
        raise PersonaError(
            f"{where}: field 'sampling' must be an object like {{\"temperature\": 0.7}}."
        )
    sampling: dict[str, float] = {}
    for key, value in sampling_in.items():
        if key not in SAMPLING_LIMITS:
            raise PersonaError(
                f"{where}: field 'sampling.{key}' is unknown; use one of "
                f"{', '.join(SAMPLING_LIMITS)}."
            )
        typ, lo, hi = SAMPLING_LIMITS[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise PersonaError(f"{where}: field 'sampling.{key}' must be a number.")
        if typ is int and value != int(value):
            raise PersonaError(f"{where}: field 'sampling.{key}' must be a whole number.")
        if not lo <= value <= hi:
            raise PersonaError(
                f"{where}: field 'sampling.{key}' is {value}; allowed is {lo} to {hi}."
            )
        sampling[key] = typ(value)
    extensions = data.get("extensions") or {}
    if not isinstance(extensions, dict):
        raise PersonaError(f"{where}: field 'extensions' must be an object.")
    return Persona(
        name=name,
        role=role,
        traits=traits,
        speaking_style=style,
        goals=goals,
        boundaries=boundaries,
        example_lines=examples,
        color=color,
        avatar=avatar,
        model=model,
        sampling=sampling,
        extensions=extensions,
    )


def set_from_dict(data: Any, where: str) -> PersonaSet:
    if not isinstance(data, dict):
        raise PersonaError(f"{where}: a persona set must be a JSON object with 'members'.")
    if "members" not in data:
        # a single persona file is a set of one
        if "role" in data and "name" in data:
            p = persona_from_dict(data, where)
            return PersonaSet(name=p.name, title=p.name, description=p.role, members=[p])
        raise PersonaError(f"{where}: field 'members' is missing; list the companions there.")
    members_in = data["members"]
    if not isinstance(members_in, list) or not members_in:
        raise PersonaError(f"{where}: field 'members' must be a non-empty list of personas.")
    if len(members_in) > 8:
        raise PersonaError(
            f"{where}: field 'members' has {len(members_in)} personas; the limit is 8."
        )
    members = [persona_from_dict(m, f"{where}: members[{i}]") for i, m in enumerate(members_in)]
    seen: set[str] = set()
    for p in members:
        if p.name.lower() in seen:
            raise PersonaError(f"{where}: two members are named '{p.name}'; names must be unique.")
        seen.add(p.name.lower())
    name = _display_name(data, where, 60, required=False) or Path(where).stem
    lorebook = data.get("lorebook")
    if lorebook is not None:
        parse_book(lorebook, f"{where}: field 'lorebook'")
    return PersonaSet(
        name=name,
        title=_text(data, "title", where, required=False, limit=120, default=name),
        description=_text(data, "description", where, required=False, limit=1000),
        domain=_text(data, "domain", where, required=False, limit=40, default="general"),
        members=members,
        lorebook=lorebook or None,
    )
