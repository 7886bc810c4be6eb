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

import base64
import binascii
import copy
import json
import os
import re
import struct
import zlib
from pathlib import Path
from typing import Any

from engine.errors import CardError, PersonaError
from engine.personas import Persona, check_nesting, name_problem, persona_from_dict

__all__ = ["persona_from_card", "card_from_persona", "import_card", "export_card", "read_card",
           "card_png_bytes", "MAX_CARD_BYTES", "V2", "V3"]

V2 = "chara_card_v2"
V3 = "chara_card_v3"
SPEC_VERSIONS = {V2: "2.0", V3: "3.0"}
CARD_KEY = "chara_card"     # persona.extensions key holding the original card
MASCOT_KEY = "mascot"       # card data.extensions key holding the full persona
MAX_CARD_BYTES = 20 * 1024 * 1024
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
AVATAR_SIZE = 256

# old TavernAI / Pygmalion (V1) field names -> V2 names
_V1_ALIASES = {"name": "char_name", "description": "char_persona", "scenario": "world_scenario",
               "first_mes": "char_greeting", "mes_example": "example_dialogue"}
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


def _one_line(text: Any, limit: int = 60) -> str:
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
            sentence = sentence[len(prefix):]
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


def _build_description(core: str, style: str | None, goals: list[str] | None,
                       never: list[str] | None) -> str:
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
    pattern = re.compile(r"^\s*(?:" + "|".join(re.escape(h) for h in heads) + r")\s*:\s*(.+)$",
                         re.IGNORECASE)
    return [m.group(1).strip() for m in map(pattern.match, mes_example.splitlines()) if m]


# -- card structure ---------------------------------------------------------------------------

def _card_body(card: dict, where: str) -> tuple[str, dict]:
    """("chara_card_v2" | "chara_card_v3" | "v1", the dict holding the character fields)."""
    spec = card.get("spec")
    if spec is None:
        if isinstance(card.get("data"), dict) and "name" not in card and "char_name" not in card:
            return V2, card["data"]          # a V2 card that lost its 'spec' line
        return "v1", card
    if not isinstance(spec, str) or not spec.startswith("chara_card_v"):
        raise CardError(f"{where}: unsupported card spec '{_one_line(spec)}'; Mascot reads "
                        "chara_card_v2 and chara_card_v3 cards (and V1 JSON).")
    body = card.get("data")
    if not isinstance(body, dict):
        raise CardError(f"{where}: the {_one_line(spec)} card has no 'data' object; "
                        "export the card again from SillyTavern.")
    return (V3 if spec == V3 else V2), body


def _card_name(body: dict, spec: str, where: str) -> tuple[str, str]:
    """(the raw name, a valid persona name)."""
    raw = body.get("name")
    if raw is None or raw == "":
        raw = body.get("char_name")
    field = "name" if spec == "v1" else "data.name"
    if not isinstance(raw, str) or not raw.strip():
        raise CardError(f"{where}: the character card has no name (field '{field}'); "
                        "give the character a name and export the card again.")
    # controls and invisible direction overrides are dropped (a display name must read as it is)
    shown = "".join(ch for ch in raw if ch.isprintable() or ch in " \t\n\r\u200c\u200d")
    name = " ".join(re.sub(r"\s*:\s*", " - ", shown).split()).strip(" -")
    if len(name) > 40:
        cut = name[:40]
        name = cut[: cut.rfind(" ")] if cut.rfind(" ") > 10 else cut
    why = name_problem(name.strip()) if name else "is empty once invisible characters are removed"
    if why:
        raise CardError(f"{where}: the character card's name '{_one_line(name or raw)}' {why}; "
                        "give the character a plain name and export the card again.")
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
    traits = _dedupe([_clip(t.strip().rstrip("."), 80)
                      for t in re.split(r"[,;\n]+", personality)])[:12] or ["friendly"]
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
        "_sections": {"style": style is not None, "goals": goals is not None,
                      "boundaries": never is not None},
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
        raise CardError(f"{where}: a character card must be a JSON object, not "
                        f"{type(data).__name__}; export the card again from SillyTavern.")
    _check_nesting(data, where)
    spec, body = _card_body(data, where)
    _card_name(body, spec, where)  # a card without a name is an error even with a Mascot extension
    from engine.lorebook import check_card_book
    check_card_book(body, where)   # a lorebook within limits, so a card cannot blow up a prompt
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
        raise CardError(f"Unknown card spec '{_one_line(spec)}'; use {V2} or {V3}.")
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
        "description": _build_description(_role_sentence(p.role), p.speaking_style, p.goals,
                                          p.boundaries),
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
            core, p.speaking_style if keep_style else None, p.goals if keep_goals else None,
            p.boundaries if keep_never else None)
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


# -- files ------------------------------------------------------------------------------------

def _stat(path: Path) -> int:
    try:
        st = path.stat()
    except FileNotFoundError:
        raise CardError(f"{path}: no such file; check the path to the character card.") from None
    except OSError as e:
        raise CardError(f"{path}: cannot read the file ({_one_line(e.strerror or e)}).") from None
    if path.is_dir():
        raise CardError(f"{path}: is a folder; give the path of a .json or .png character card.")
    if st.st_size > MAX_CARD_BYTES:
        raise CardError(f"{path}: {st.st_size} bytes is too large for a character card "
                        f"(limit {MAX_CARD_BYTES // (1024 * 1024)} MB).")
    if st.st_size == 0:
        raise CardError(f"{path}: the file is empty; export the card again from SillyTavern.")
    return st.st_size


def _json_from_bytes(raw: bytes, path: Path, what: str) -> Any:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CardError(f"{path}: {what} is not UTF-8 text; export the card again.") from None
    if not text.strip():
        raise CardError(f"{path}: {what} is empty; export the card again from SillyTavern.")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise CardError(f"{path}: {what} is not valid JSON (line {e.lineno}, column {e.colno}: "
                        f"{e.msg}); export the card again.") from None
    except RecursionError:
        raise CardError(f"{path}: {what} is nested too deeply to read; this is not a usable "
                        "character card.") from None
    _check_nesting(data, str(path))
    return data


def _check_nesting(data: Any, where: str) -> None:
    try:
        check_nesting(data, where)
    except PersonaError as e:
        raise CardError(str(e)) from None


def _inflate(data: bytes, path: Path, kw: str) -> bytes:
    d = zlib.decompressobj()
    try:
        out = d.decompress(data, MAX_CARD_BYTES + 1)
    except zlib.error:
        raise CardError(f"{path}: the compressed '{kw}' chunk is corrupt; "
                        "export the card again.") from None
    if len(out) > MAX_CARD_BYTES or d.unconsumed_tail:
        raise CardError(f"{path}: the '{kw}' chunk unpacks to more than "
                        f"{MAX_CARD_BYTES // (1024 * 1024)} MB; this is not a usable card.")
    return out


def _chunk_payload(ctype: bytes, chunk: bytes, path: Path, kw: str) -> bytes:
    """The text of a tEXt/zTXt/iTXt chunk, as bytes."""
    bad = CardError(f"{path}: the '{kw}' {ctype.decode('ascii')} chunk is malformed; "
                    "export the card again.")
    rest = chunk.split(b"\0", 1)[1]
    if ctype == b"tEXt":
        return rest
    if ctype == b"zTXt":
        if len(rest) < 1 or rest[0] != 0:
            raise bad
        return _inflate(rest[1:], path, kw)
    # iTXt: compression flag, method, language tag \0, translated keyword \0, text
    if len(rest) < 2:
        raise bad
    flag, method, tail = rest[0], rest[1], rest[2:]
    parts = tail.split(b"\0", 2)
    if len(parts) != 3:
        raise bad
    text = parts[2]
    if flag:
        if method != 0:
            raise bad
        text = _inflate(text, path, kw)
    return text


def _card_from_payload(payload: bytes, path: Path, kw: str) -> Any:
    stripped = payload.strip()
    if stripped.startswith(b"{") or stripped.startswith(b"\xef\xbb\xbf{"):
        return _json_from_bytes(stripped, path, f"the '{kw}' chunk")  # plain JSON, not base64
    b64 = b"".join(stripped.split())
    b64 += b"=" * (-len(b64) % 4)
    try:
        decoded = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError):
        raise CardError(f"{path}: the '{kw}' text chunk is not valid base64; "
                        "export the card again from SillyTavern.") from None
    return _json_from_bytes(decoded, path, f"the card data in the '{kw}' chunk")


def _card_from_png(raw: bytes, path: Path) -> Any:
    if not raw.startswith(PNG_SIGNATURE):
        raise CardError(f"{path}: not a PNG image (bad signature); "
                        "use a PNG or JSON character card exported from SillyTavern.")
    pos, found, ended = len(PNG_SIGNATURE), {}, False
    while pos < len(raw):
        if pos + 8 > len(raw):
            raise CardError(f"{path}: the PNG is truncated (a chunk header at byte {pos} is cut "
                            "off); download or export the card again.")
        length, ctype = struct.unpack(">I4s", raw[pos:pos + 8])
        label = ctype.decode("ascii") if ctype.isalpha() else ctype.hex()
        end = pos + 12 + length
        if end > len(raw):
            raise CardError(f"{path}: the PNG is truncated (chunk '{label}' at byte {pos} is cut "
                            "off); download or export the card again.")
        if ctype in (b"tEXt", b"zTXt", b"iTXt"):
            chunk = raw[pos + 8:pos + 8 + length]
            if b"\0" in chunk:
                kw = chunk.split(b"\0", 1)[0].decode("latin-1").strip().lower()
                if kw in ("chara", "ccv3") and kw not in found:
                    found[kw] = (ctype, chunk)
        pos = end
        if ctype == b"IEND":
            ended = True
            break
    if not found:
        if not ended:
            raise CardError(f"{path}: the PNG is truncated (it ends before the IEND chunk); "
                            "download or export the card again.")
        raise CardError(f"{path}: the PNG has no character card data (no 'chara' text chunk); "
                        "export the card again from SillyTavern.")
    keys = [k for k in ("ccv3", "chara") if k in found]
    for i, kw in enumerate(keys):
        ctype, chunk = found[kw]
        try:
            return _card_from_payload(_chunk_payload(ctype, chunk, path, kw), path, kw)
        except CardError:
            if i == len(keys) - 1:
                raise
            # a broken ccv3 chunk next to a good chara chunk: use the V2 card
    raise AssertionError("unreachable")


def read_card(path: str | Path) -> Any:
    """The raw card (parsed JSON) from a ``.json`` file or a PNG card (``ccv3`` preferred over
    ``chara``). Raises CardError with one line for every problem."""
    path = Path(path)
    _stat(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise CardError(f"{path}: cannot read the file ({_one_line(e.strerror or e)}).") from None
    if len(raw) > MAX_CARD_BYTES:
        raise CardError(f"{path}: {len(raw)} bytes is too large for a character card "
                        f"(limit {MAX_CARD_BYTES // (1024 * 1024)} MB).")
    if not raw:
        raise CardError(f"{path}: the file is empty; export the card again from SillyTavern.")
    suffix = path.suffix.lower()
    if suffix == ".png" or raw.startswith(PNG_SIGNATURE):
        return _card_from_png(raw, path)
    if suffix == ".json" or raw.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{":
        return _json_from_bytes(raw, path, "the card file")
    raise CardError(f"{path}: not a character card; use a .json or .png card file.")


def import_card(path: str | Path) -> Persona:
    """A persona from a Character Card file (``.json`` or ``.png``)."""
    return persona_from_card(read_card(path), str(Path(path)))


def _png_chunk(ctype: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + ctype + data
            + struct.pack(">I", zlib.crc32(ctype + data) & 0xFFFFFFFF))


def _avatar_idat(color: str, size: int = AVATAR_SIZE) -> bytes:
    """Deflated scanlines of a size x size RGB image filled with ``color`` (#rrggbb)."""
    try:
        rgb = bytes.fromhex(color.lstrip("#"))
        if len(rgb) != 3:
            raise ValueError
    except ValueError:
        rgb = bytes((0x55, 0x66, 0x77))
    row = b"\x00" + rgb * size  # filter type 0 (None) + pixels
    return zlib.compress(row * size, 9)


def card_png_bytes(p: Persona, spec: str = V2) -> bytes:
    """A PNG card: a 256x256 avatar in the persona's colour, the V2 card base64-encoded in a
    ``chara`` tEXt chunk and, for V3, the V3 card in a ``ccv3`` chunk too."""
    if spec not in SPEC_VERSIONS:
        raise CardError(f"Unknown card spec '{_one_line(spec)}'; use {V2} or {V3}.")

    def text_chunk(kw: str, card: dict) -> bytes:
        payload = base64.b64encode(json.dumps(card, ensure_ascii=False).encode("utf-8"))
        return _png_chunk(b"tEXt", kw.encode("latin-1") + b"\0" + payload)

    ihdr = struct.pack(">IIBBBBB", AVATAR_SIZE, AVATAR_SIZE, 8, 2, 0, 0, 0)
    chunks = [_png_chunk(b"IHDR", ihdr), _png_chunk(b"IDAT", _avatar_idat(p.color)),
              text_chunk("chara", card_from_persona(p, V2))]
    if spec == V3:
        chunks.append(text_chunk("ccv3", card_from_persona(p, V3)))
    chunks.append(_png_chunk(b"IEND", b""))
    return PNG_SIGNATURE + b"".join(chunks)


def export_card(p: Persona, path: str | Path, spec: str = V2) -> Path:
    """Write a persona as a Character Card: ``.json`` (the card JSON) or ``.png`` (avatar image
    with the card embedded). Returns the path written."""
    path = Path(path)
    suffix = path.suffix.lower()
    if spec not in SPEC_VERSIONS:
        raise CardError(f"{path}: unknown card spec '{_one_line(spec)}'; use {V2} or {V3}.")
    if suffix == ".json":
        payload = (json.dumps(card_from_persona(p, spec), indent=2, ensure_ascii=False)
                   + "\n").encode("utf-8")
    elif suffix == ".png":
        payload = card_png_bytes(p, spec)
    else:
        raise CardError(f"{path}: cannot write a character card as "
                        f"'{_one_line(suffix) or 'a file without extension'}'; "
                        "use a file name ending in .json or .png.")
    if not path.parent.is_dir():
        raise CardError(f"{path}: the folder {path.parent} does not exist; "
                        "create it or choose another place.")
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_bytes(payload)
        os.replace(tmp, path)
    except OSError as e:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise CardError(f"{path}: cannot write the card ({_one_line(e.strerror or e)}).") from None
    return path
