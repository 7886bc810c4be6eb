"""Import and export SillyTavern Character Cards (V1, V2, V3; JSON or PNG). Standard library only.

A card becomes one :class:`~engine.personas.Persona`:

* If the card holds ``data.extensions.mascot`` (a full persona, as every card Mascot writes does),
  that persona is used as it is, so Mascot -> card -> Mascot is lossless.
* Otherwise the card's texts are mapped onto the persona schema and clipped to its limits:
  ``name`` -> name; the first sentence of ``description`` (or of ``creator_notes``) -> role;
  ``personality`` split on commas/semicolons -> traits; ``mes_example`` -> speaking_style;
  the ``{{char}}:`` lines of ``mes_example`` plus ``first_mes`` -> example_lines. ``{{char}}`` and
  ``{{user}}`` become the name and "User".

The whole original card (unknown fields, every tool's ``extensions``, the ``character_book``
lorebook) is kept verbatim in ``persona.extensions["chara_card"]``. Export starts from that copy and
only rewrites the card fields whose persona counterpart was changed, then stores the full persona
under ``data.extensions.mascot``. A card that is exactly what Mascot would write for its persona is
not kept a second time, so a Mascot persona exported and imported again is equal to the original.

PNG cards carry the card JSON base64-encoded in a ``tEXt`` (or ``zTXt``/``iTXt``) chunk with the
keyword ``chara`` (V2) or ``ccv3`` (V3; preferred when both exist). Exported PNGs get a generated
256x256 avatar in the persona's colour plus a ``chara`` chunk, and for V3 also a ``ccv3`` chunk
(as SillyTavern writes them). Every error is a :class:`~engine.errors.CardError` with one line
naming the file, the problem and what to do.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from engine.errors import CardError, PersonaError
from engine.lorebook import check_card_book
from engine.personas import Persona, check_nesting, name_problem, persona_from_dict

__all__ = ["persona_from_card", "card_from_persona", "MAX_CARD_BYTES", "V2", "V3"]

V2 = "chara_card_v2"
V3 = "chara_card_v3"
SPEC_VERSIONS = {V2: "2.0", V3: "3.0"}
CARD_KEY = "chara_card"  # persona.extensions key holding the original card
MASCOT_KEY = "mascot"  # card data.extensions key holding the full persona
MAX_CARD_BYTES = 20 * 1024 * 1024
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
AVATAR_SIZE = 256

# old TavernAI / Pygmalion (V1) field names -> V2 names
_V1_ALIASES = {
    "name": "char_name",
    "description": "char_persona",
    "scenario": "world_scenario",
    "first_mes": "char_greeting",
    "mes_example": "example_dialogue",
}
_V1_MIRROR = ("name", "description", "personality", "scenario", "first_mes", "mes_example")

_CHAR = re.compile(r"\{\{\s*char\s*\}\}|<BOT>", re.IGNORECASE)
_USER = re.compile(r"\{\{\s*user\s*\}\}|<USER>", re.IGNORECASE)
_STYLE_LINE = re.compile(r"^\s*\{\{char\}\}'s speaking style:\s*(.*)$", re.IGNORECASE)
_GOALS_LINE = re.compile(r"^\s*\{\{char\}\}'s goals:\s*$", re.IGNORECASE)
_NEVER_LINE = re.compile(r"^\s*\{\{char\}\} never:\s*$", re.IGNORECASE)
_ITEM_LINE = re.compile(r"^\s*-\s+(.*)$")
_SENTENCE = re.compile(r"^(.+?[.!?])(?=\s|$)")


# -- small text helpers -----------------------------------------------------------------------


def _s(body: dict, key: str) -> str:
    """A card text field ('' when absent or not text), honouring V1 aliases."""
    value = body.get(key)
    if (value is None or value == "") and key in _V1_ALIASES:
        value = body.get(_V1_ALIASES[key])
    return value if isinstance(value, str) else ""


def _macros(text: str, name: str) -> str:
    return _USER.sub("User", _CHAR.sub(lambda _m: name, text))


def _clip(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters, cut at a word boundary with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "…"


def one_line(text: Any, limit: int = 60) -> str:
    """Something from a file, safe to quote in a one-line message."""
    return _clip(re.sub(r"[\x00-\x1f\x7f]", " ", str(text)), limit)


def _dedupe(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        key = item.casefold()
        if item and key not in seen:
            seen.add(key)
            out.append(item)
    return out


def _first_sentence(text: str) -> tuple[int, int]:
    """(start, end) of the first sentence of ``text`` (within its first non-empty line)."""
    offset = 0
    for line in text.splitlines(keepends=True):
        if line.strip():
            lead = len(line) - len(line.lstrip())
            body = line.strip()
            m = _SENTENCE.match(body)
            end = len(m.group(1)) if m else len(body)
            return offset + lead, offset + lead + end
        offset += len(line)
    return 0, 0


def _role_from(text: str, name: str) -> str:
    start, end = _first_sentence(text)
    sentence = text[start:end].strip()
    for prefix in (f"{name} is ", f"{name.split(' ')[0]} is "):
        if sentence.lower().startswith(prefix.lower()):
            sentence = sentence[len(prefix) :]
            break
    sentence = sentence.rstrip(".").strip()
    return _clip(sentence, 200)


def _split_description(desc: str) -> tuple[str, str | None, list[str] | None, list[str] | None]:
    """Split off the sections Mascot writes into a card description (speaking style, goals,
    never). Returns (the rest, style, goals, boundaries); a section not present is None."""
    core: list[str] = []
    style: str | None = None
    goals: list[str] | None = None
    never: list[str] | None = None
    current: list[str] | None = None
    for line in desc.splitlines():
        m = _STYLE_LINE.match(line)
        if m:
            style, current = m.group(1).strip(), None
            continue
        if _GOALS_LINE.match(line):
            goals = current = []
            continue
        if _NEVER_LINE.match(line):
            never = current = []
            continue
        item = _ITEM_LINE.match(line)
        if current is not None and item:
            current.append(item.group(1).strip())
            continue
        current = None
        core.append(line)
    return "\n".join(core).strip(), style, goals, never


def _build_description(
    core: str, style: str | None, goals: list[str] | None, never: list[str] | None
) -> str:
    parts = [core] if core else []
    if style:
        parts.append(f"{{{{char}}}}'s speaking style: {' '.join(style.split())}")
    if goals:
        parts.append("{{char}}'s goals:\n" + "\n".join(f"- {' '.join(g.split())}" for g in goals))
    if never:
        parts.append("{{char}} never:\n" + "\n".join(f"- {' '.join(b.split())}" for b in never))
    return "\n".join(parts)


def _role_sentence(role: str) -> str:
    return "{{char}} is " + role.strip().rstrip(".") + "."


def _mes_example(lines: list[str]) -> str:
    return "\n".join(f"<START>\n{{{{char}}}}: {' '.join(line.split())}" for line in lines)


def _char_lines(mes_example: str, names: list[str]) -> list[str]:
    heads = ["{{char}}", "<BOT>", *[n for n in names if n]]
    pattern = re.compile(
        r"^\s*(?:" + "|".join(re.escape(h) for h in heads) + r")\s*:\s*(.+)$", re.IGNORECASE
    )
    return [m.group(1).strip() for m in map(pattern.match, mes_example.splitlines()) if m]


# -- card structure ---------------------------------------------------------------------------


def _card_body(card: dict, where: str) -> tuple[str, dict]:
    """("chara_card_v2" | "chara_card_v3" | "v1", the dict holding the character fields)."""
    spec = card.get("spec")
    if spec is None:
        if isinstance(card.get("data"), dict) and "name" not in card and "char_name" not in card:
            return V2, card["data"]  # a V2 card that lost its 'spec' line
        return "v1", card
    if not isinstance(spec, str) or not spec.startswith("chara_card_v"):
        raise CardError(
            f"{where}: unsupported card spec '{one_line(spec)}'; Mascot reads "
            "chara_card_v2 and chara_card_v3 cards (and V1 JSON)."
        )
    body = card.get("data")
    if not isinstance(body, dict):
        raise CardError(
            f"{where}: the {one_line(spec)} card has no 'data' object; "
            "export the card again from SillyTavern."
        )
    return (V3 if spec == V3 else V2), body


def _card_name(body: dict, spec: str, where: str) -> tuple[str, str]:
    """(the raw name, a valid persona name)."""
    raw = body.get("name")
    if raw is None or raw == "":
        raw = body.get("char_name")
    field = "name" if spec == "v1" else "data.name"
    if not isinstance(raw, str) or not raw.strip():
        raise CardError(
            f"{where}: the character card has no name (field '{field}'); "
            "give the character a name and export the card again."
        )
    # controls and invisible direction overrides are dropped (a display name must read as it is)
    shown = "".join(ch for ch in raw if ch.isprintable() or ch in " \t\n\r\u200c\u200d")
    name = " ".join(re.sub(r"\s*:\s*", " - ", shown).split()).strip(" -")
    if len(name) > 40:
        cut = name[:40]
        name = cut[: cut.rfind(" ")] if cut.rfind(" ") > 10 else cut
    why = name_problem(name.strip()) if name else "is empty once invisible characters are removed"
    if why:
        raise CardError(
            f"{where}: the character card's name '{one_line(name or raw)}' {why}; "
            "give the character a plain name and export the card again."
        )
    return raw.strip(), name.strip()


def _derive(card: dict, where: str) -> dict[str, Any]:
    """Persona fields from a card's own texts (ignoring any Mascot extension)."""
    spec, body = _card_body(card, where)
    raw_name, name = _card_name(body, spec, where)
    core, style, goals, never = _split_description(_s(body, "description"))
    role = _role_from(_macros(core, name), name)
    if not role:
        role = _role_from(_macros(_s(body, "creator_notes"), name), name)
    if not role:
        role = "a character from a Character Card"
    personality = _macros(_s(body, "personality"), name)
    traits = _dedupe([_clip(t.strip().rstrip("."), 80) for t in re.split(r"[,;\n]+", personality)])[
        :12
    ] or ["friendly"]
    mes = _s(body, "mes_example")
    char_lines = [_macros(x, name) for x in _char_lines(mes, [raw_name, name])]
    first_mes = _clip(_macros(_s(body, "first_mes"), name), 300)
    if style:
        speaking_style = _clip(_macros(style, name), 400)
    elif char_lines:
        speaking_style = _clip("Talks like this: " + " / ".join(char_lines), 400)
    elif _s(body, "system_prompt").strip():
        speaking_style = _clip(_macros(_s(body, "system_prompt"), name), 400)
    else:
        speaking_style = "Natural and conversational, true to the character described in the card."
    examples = _dedupe([_clip(x, 300) for x in [*char_lines, first_mes]])[:8]
    return {
        "name": name,
        "role": role,
        "traits": traits,
        "speaking_style": speaking_style,
        "goals": [_clip(_macros(g, name), 200) for g in (goals or []) if g.strip()][:8],
        "boundaries": [_clip(_macros(b, name), 200) for b in (never or []) if b.strip()][:8],
        "example_lines": examples,
        "_first_mes": first_mes,
        "_sections": {
            "style": style is not None,
            "goals": goals is not None,
            "boundaries": never is not None,
        },
    }


def _strip_mascot(card: dict) -> dict:
    out = copy.deepcopy(card)
    body = out.get("data") if isinstance(out.get("data"), dict) else out
    ext = body.get("extensions")
    if isinstance(ext, dict):
        ext.pop(MASCOT_KEY, None)
    return out


def _mascot_dict(p: Persona) -> dict[str, Any]:
    d = copy.deepcopy(p.to_dict())
    d["extensions"] = {k: v for k, v in d["extensions"].items() if k != CARD_KEY}
    return d


# -- public: card <-> persona -----------------------------------------------------------------


def persona_from_card(data: Any, where: str = "card") -> Persona:
    """A persona from a parsed Character Card (V1, V2 or V3); the card is kept verbatim in
    ``extensions["chara_card"]``. Raises CardError (one line) when it cannot be used."""
    if not isinstance(data, dict):
        raise CardError(
            f"{where}: a character card must be a JSON object, not "
            f"{type(data).__name__}; export the card again from SillyTavern."
        )
    check_card_nesting(data, where)
    spec, body = _card_body(data, where)
    _card_name(body, spec, where)  # a card without a name is an error even with a Mascot extension
    check_card_book(body, where)  # a lorebook within limits, so a card cannot blow up a prompt
    ext = body.get("extensions")
    mascot = ext.get(MASCOT_KEY) if isinstance(ext, dict) else None
    if isinstance(mascot, dict):
        mascot = copy.deepcopy(mascot)
        if isinstance(mascot.get("extensions"), dict):
            mascot["extensions"].pop(CARD_KEY, None)
        try:
            p = persona_from_dict(mascot, where)
        except PersonaError:
            p = None  # a damaged Mascot extension: fall back to the card's own texts
        if p is not None:
            if card_from_persona(p, V3 if spec == V3 else V2) != data:
                p.extensions[CARD_KEY] = _strip_mascot(data)
            return p
    fields = _derive(data, where)
    persona = {k: v for k, v in fields.items() if not k.startswith("_")}
    persona["extensions"] = {CARD_KEY: _strip_mascot(data)}
    try:
        return persona_from_dict(persona, where)
    except CardError:
        raise
    except PersonaError as e:
        raise CardError(str(e)) from None


def card_from_persona(p: Persona, spec: str = V2) -> dict[str, Any]:
    """A Character Card dict (``chara_card_v2`` or ``chara_card_v3``) for a persona.

    A persona imported from a card starts from that card, so its unknown fields, lorebook and
    other tools' extensions survive; only fields the persona changed are rewritten. The full
    persona always goes into ``data.extensions.mascot``."""
    if spec not in SPEC_VERSIONS:
        raise CardError(f"Unknown card spec '{one_line(spec)}'; use {V2} or {V3}.")
    base = p.extensions.get(CARD_KEY) if isinstance(p.extensions, dict) else None
    card = _card_from_base(p, base, spec) if isinstance(base, dict) else _fresh_card(p, spec)
    body = card["data"]
    if not isinstance(body.get("extensions"), dict):
        body["extensions"] = {}
    body["extensions"][MASCOT_KEY] = _mascot_dict(p)
    return card


def _fresh_card(p: Persona, spec: str) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": p.name,
        "description": _build_description(
            _role_sentence(p.role), p.speaking_style, p.goals, p.boundaries
        ),
        "personality": ", ".join(p.traits),
        "scenario": "",
        "first_mes": p.example_lines[0] if p.example_lines else "Hi, I'm {{char}}.",
        "mes_example": _mes_example(p.example_lines),
        "creator_notes": "Made with Mascot (offline group chat with AI companions); "
        "the full companion settings are in extensions.mascot.",
        "system_prompt": "",
        "post_history_instructions": "",
        "alternate_greetings": [],
        "tags": ["mascot"],
        "creator": "",
        "character_version": "",
        "extensions": {},
    }
    if spec == V3:
        data["group_only_greetings"] = []
    return {"spec": spec, "spec_version": SPEC_VERSIONS[spec], "data": data}


def _card_from_base(p: Persona, base: dict, spec: str) -> dict[str, Any]:
    card = copy.deepcopy(base)
    try:
        base_spec, _ = _card_body(card, "card")
        derived = _derive(base, "card")
    except CardError:
        base_spec, derived = ("v1" if "data" not in card else V2), {}
    if base_spec == "v1":
        body = card
        card = {"spec": spec, "spec_version": SPEC_VERSIONS[spec], "data": body}
    else:
        if not isinstance(card.get("data"), dict):
            card["data"] = {}
        card["spec"], card["spec_version"] = spec, SPEC_VERSIONS[spec]
        body = card["data"]
    changed: set[str] = set()

    def differs(field: str) -> bool:
        return derived.get(field) != getattr(p, field)

    if differs("name"):
        body["name"] = p.name
        changed.add("name")
    sections = derived.get("_sections", {})
    if any(differs(f) for f in ("role", "speaking_style", "goals", "boundaries")):
        core, _style, _goals, _never = _split_description(_s(body, "description"))
        if differs("role") or not core:
            start, end = _first_sentence(core)
            core = core[:start] + _role_sentence(p.role) + core[end:]
        keep_style = differs("speaking_style") or sections.get("style")
        keep_goals = differs("goals") or sections.get("goals")
        keep_never = differs("boundaries") or sections.get("boundaries")
        body["description"] = _build_description(
            core,
            p.speaking_style if keep_style else None,
            p.goals if keep_goals else None,
            p.boundaries if keep_never else None,
        )
        changed.add("description")
    if differs("traits"):
        body["personality"] = ", ".join(p.traits)
        changed.add("personality")
    if differs("example_lines"):
        first = derived.get("_first_mes", "")
        if first and first in p.example_lines:
            lines = [x for x in p.example_lines if x != first]
        else:
            lines = list(p.example_lines)
        body["mes_example"] = _mes_example(lines)
        changed.add("mes_example")
    if base_spec != "v1":
        for key in changed & set(_V1_MIRROR):
            if key in card:  # SillyTavern also writes the V1 fields at the top level
                card[key] = body[key]
    if spec == V3 and not isinstance(body.get("group_only_greetings"), list):
        body["group_only_greetings"] = []
    return card


def check_card_nesting(data: Any, where: str) -> None:
    try:
        check_nesting(data, where)
    except PersonaError as e:
        raise CardError(str(e)) from None
