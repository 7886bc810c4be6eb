"""Character Card import/export (engine.cards): V1/V2/V3, JSON and PNG, lossless round trips."""

from __future__ import annotations

import base64
import copy
import json
import struct
import zlib
from pathlib import Path

import pytest

from engine.card_files import export_card, import_card, read_card
from engine.cards import MAX_CARD_BYTES, V2, V3, card_from_persona, persona_from_card
from engine.errors import CardError, PersonaError
from engine.persona_files import load_set_file
from engine.personas import Persona, persona_from_dict

# -- a PNG writer/reader written independently of engine.cards ---------------------------------

SIG = b"\x89PNG\r\n\x1a\n"


def chunk(ctype: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + ctype + data + struct.pack(">I", zlib.crc32(ctype + data))


def tiny_png(*extra: bytes) -> bytes:
    """A 1x1 grey PNG with extra chunks inserted before IEND (where SillyTavern puts them)."""
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00\x80\x80\x80")
    return SIG + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + b"".join(extra) + chunk(b"IEND", b"")


def b64(card: dict) -> bytes:
    return base64.b64encode(json.dumps(card).encode("utf-8"))


def text_chunk(keyword: str, card: dict) -> bytes:
    return chunk(b"tEXt", keyword.encode("latin-1") + b"\0" + b64(card))


def parse_png(raw: bytes) -> list[tuple[bytes, bytes]]:
    assert raw[:8] == SIG
    pos, out = 8, []
    while pos < len(raw):
        length, ctype = struct.unpack(">I4s", raw[pos : pos + 8])
        data = raw[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", raw[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(ctype + data), f"bad CRC in {ctype!r}"
        out.append((ctype, data))
        pos += 12 + length
    assert out[0][0] == b"IHDR" and out[-1][0] == b"IEND"
    return out


def png_texts(raw: bytes) -> dict[str, dict]:
    out = {}
    for ctype, data in parse_png(raw):
        if ctype == b"tEXt":
            kw, text = data.split(b"\0", 1)
            out[kw.decode("latin-1")] = json.loads(base64.b64decode(text))
    return out


# -- sample cards -------------------------------------------------------------------------------

LOREBOOK = {
    "name": "Harbor lore",
    "description": "Places around the harbor",
    "scan_depth": 4,
    "token_budget": 512,
    "recursive_scanning": False,
    "extensions": {"world_tool": {"v": 1}},
    "entries": [
        {
            "keys": ["lighthouse", "beacon"],
            "content": "The lighthouse has been dark since 1998.",
            "extensions": {"position": 0, "probability": 100},
            "enabled": True,
            "insertion_order": 100,
            "case_sensitive": False,
            "name": "Lighthouse",
            "priority": 10,
            "id": 0,
            "comment": "",
            "selective": False,
            "secondary_keys": [],
            "constant": False,
            "position": "before_char",
        },
        {
            "keys": ["Ferry"],
            "content": "The ferry leaves at 6:40 sharp.\nNever later.",
            "extensions": {},
            "enabled": False,
            "insertion_order": 50,
            "id": 1,
            "secondary_keys": ["morning"],
            "selective": True,
            "constant": True,
            "position": "after_char",
        },
    ],
}

UNKNOWN_EXTENSIONS = {
    "talkativeness": "0.5",
    "fav": False,
    "world": "Harbor lore",
    "depth_prompt": {"prompt": "{{char}} smells of salt.", "depth": 4, "role": "system"},
    "someTool": {"nested": {"list": [1, 2, {"x": None}]}, "flag": True},
}


def st_v2_card() -> dict:
    """A SillyTavern-style V2 card, with the V1 mirror fields at the top level."""
    data = {
        "name": "Captain Mara",
        "description": "{{char}} is a retired ferry captain who runs the harbor cafe. She knows "
        "every boat by its engine sound.\nShe distrusts tourists but loves "
        "{{user}}'s questions.",
        "personality": "gruff; warm underneath, nostalgic,  sharp-eyed ,",
        "scenario": "A foggy morning in the harbor cafe.",
        "first_mes": "*wipes the counter* Morning, {{user}}. Coffee's strong today.",
        "mes_example": "<START>\n{{user}}: What's the weather like?\n{{char}}: Fog till noon, "
        "then wind from the west. Trust me.\n<START>\n{{user}}: Tell me a story.\n"
        "{{char}}: Pull up a stool, {{user}}. This one's about the night the "
        "beacon failed.",
        "creator_notes": "Best with a slow pace.",
        "system_prompt": "",
        "post_history_instructions": "Keep {{char}} grounded.",
        "alternate_greetings": ["Back again, {{user}}?"],
        "character_book": copy.deepcopy(LOREBOOK),
        "tags": ["sea", "cafe"],
        "creator": "someone",
        "character_version": "1.2",
        "extensions": copy.deepcopy(UNKNOWN_EXTENSIONS),
        "unknown_data_field": {"keep": "me"},
    }
    card = {
        "spec": V2,
        "spec_version": "2.0",
        "data": data,
        "create_date": "2024-5-1 @12h 00m 00s 000ms",
        "avatar": "none",
        "chat": "Mara - x",
        "talkativeness": "0.5",
        "fav": False,
        "unknown_top_field": [1, 2, 3],
    }
    for key in ("name", "description", "personality", "scenario", "first_mes", "mes_example"):
        card[key] = data[key]
    return card


def st_v3_card() -> dict:
    card = st_v2_card()
    card["spec"], card["spec_version"] = V3, "3.0"
    card["data"].update(
        {
            "nickname": "Cap",
            "group_only_greetings": ["Everyone, sit."],
            "assets": [{"type": "icon", "uri": "ccdefault:", "name": "main", "ext": "png"}],
            "creation_date": 1700000000,
            "modification_date": 1700000001,
            "source": ["https://example.invalid/card"],
        }
    )
    return card


def mascot_persona() -> Persona:
    return persona_from_dict(
        {
            "name": "Theo",
            "role": "a practical planner who turns worries into small next steps",
            "traits": ["practical", "calm", "organised", "direct"],
            "speaking_style": "Short numbered steps; asks one concrete question at a time.",
            "goals": ["break problems into doable steps", "check what the user can control"],
            "boundaries": [
                "never pushes a plan the user did not agree to",
                "no medical, legal or financial advice",
            ],
            "example_lines": [
                "Let's pick one thing for today.",
                "What's the smallest next step?",
                "Okay: one, call back; two, rest.",
            ],
            "color": "#2f6fb0",
            "avatar": "🗂️",
            "model": "smollm2-360m",
            "sampling": {
                "temperature": 0.6,
                "top_p": 0.9,
                "top_k": 30,
                "repeat_penalty": 1.1,
                "max_tokens": 120,
            },
            "extensions": {"ui": {"pinned": True}},
        },
        "test",
    )


def fields(p: Persona) -> dict:
    d = p.to_dict()
    d.pop("extensions")
    return d


def write_json(path: Path, card) -> Path:
    path.write_text(json.dumps(card), encoding="utf-8")
    return path


# -- import mapping -----------------------------------------------------------------------------


def test_import_handwritten_sillytavern_png(tmp_path):
    card = st_v2_card()
    path = tmp_path / "mara.png"
    path.write_bytes(tiny_png(text_chunk("chara", card)))
    p = import_card(path)
    assert p.name == "Captain Mara"
    assert p.role == "a retired ferry captain who runs the harbor cafe"
    assert p.traits == ["gruff", "warm underneath", "nostalgic", "sharp-eyed"]
    assert p.example_lines[0] == "Fog till noon, then wind from the west. Trust me."
    assert p.example_lines[1].startswith("Pull up a stool, User.")
    assert "*wipes the counter* Morning, User. Coffee's strong today." in p.example_lines
    assert p.speaking_style and len(p.speaking_style) <= 400
    assert not any("{{" in x for x in [p.role, p.speaking_style, *p.traits, *p.example_lines])
    assert p.extensions["chara_card"] == card  # the whole card, verbatim
    # it is a valid persona and gives a system prompt
    assert persona_from_dict(p.to_dict(), "again") == p
    assert "You are Captain Mara" in p.system_prompt(["Captain Mara", "Theo"])


def test_import_v1_flat_json(tmp_path):
    card = {
        "name": "Old Bot",
        "description": "A cheerful robot. It beeps.",
        "personality": "cheerful, curious",
        "scenario": "",
        "first_mes": "Beep! Hello {{user}}!",
        "mes_example": "<BOT>: Beep boop, <USER>.",
    }
    p = import_card(write_json(tmp_path / "old.json", card))
    assert p.name == "Old Bot"
    assert p.role == "A cheerful robot"
    assert p.traits == ["cheerful", "curious"]
    assert p.example_lines == ["Beep boop, User.", "Beep! Hello User!"]
    assert p.extensions["chara_card"] == card


def test_import_v1_tavernai_aliases():
    card = {
        "char_name": "Nyx",
        "char_persona": "Nyx is a night-owl poet.",
        "char_greeting": "Still awake?",
        "example_dialogue": "Nyx: The moon agrees with me.",
    }
    p = persona_from_card(card, "nyx.json")
    assert (p.name, p.role) == ("Nyx", "a night-owl poet")
    assert p.example_lines == ["The moon agrees with me.", "Still awake?"]
    assert p.traits == ["friendly"]


def test_long_card_texts_are_clipped_to_the_schema():
    card = {
        "spec": V2,
        "spec_version": "2.0",
        "data": {
            "name": "X" * 30 + " " + "Y" * 30 + ": the long one",
            "description": "word " * 3000,
            "personality": ", ".join(f"trait number {i} " + "z" * 100 for i in range(40)),
            "first_mes": "hello " * 200,
            "mes_example": "\n".join("{{char}}: " + "line " * 100 for _ in range(20)),
            "system_prompt": "s " * 1000,
            "extensions": {},
        },
    }
    p = persona_from_card(card, "long.json")
    assert 1 <= len(p.name) <= 40 and ":" not in p.name
    assert len(p.role) <= 200 and len(p.speaking_style) <= 400
    assert 1 <= len(p.traits) <= 12 and all(len(t) <= 80 for t in p.traits)
    assert len(p.example_lines) <= 8 and all(len(x) <= 300 for x in p.example_lines)
    assert p.extensions["chara_card"] == card


def test_card_without_texts_still_gives_a_valid_persona():
    p = persona_from_card({"spec": V2, "spec_version": "2.0", "data": {"name": "Bare"}}, "bare")
    assert p.name == "Bare" and p.role and p.traits == ["friendly"] and p.speaking_style


def test_role_falls_back_to_creator_notes():
    p = persona_from_card(
        {
            "spec": V2,
            "data": {"name": "Q", "description": "", "creator_notes": "A riddle master. Enjoy!"},
        },
        "q",
    )
    assert p.role == "A riddle master"


# -- round trips ----------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", [V2, V3])
@pytest.mark.parametrize("suffix", [".json", ".png"])
def test_mascot_persona_round_trip_is_equal(tmp_path, spec, suffix):
    p = mascot_persona()
    path = export_card(p, tmp_path / f"theo{suffix}", spec)
    q = import_card(path)
    assert q == p  # every field, extensions included (no copy of our own card is kept)
    card = read_card(path)
    assert card["spec"] == spec and card["spec_version"] == ("3.0" if spec == V3 else "2.0")
    assert card["data"]["extensions"]["mascot"] == p.to_dict()
    # the card is usable by other tools: texts filled in with SillyTavern macros
    data = card["data"]
    assert data["name"] == "Theo" and data["personality"] == "practical, calm, organised, direct"
    assert data["description"].startswith("{{char}} is a practical planner")
    assert "{{char}}: What's the smallest next step?" in data["mes_example"]
    if spec == V3:
        assert data["group_only_greetings"] == []


def test_mascot_card_without_extension_maps_back_to_the_same_texts():
    """A tool that drops data.extensions.mascot still leaves a card that maps back well."""
    p = mascot_persona()
    card = card_from_persona(p)
    del card["data"]["extensions"]["mascot"]
    q = persona_from_card(card, "stripped.json")
    for key in ("name", "role", "traits", "speaking_style", "goals", "boundaries", "example_lines"):
        assert getattr(q, key) == getattr(p, key), key


@pytest.mark.parametrize("spec", [V2, V3])
@pytest.mark.parametrize("suffix", [".json", ".png"])
@pytest.mark.parametrize("source", ["v2", "v3"])
def test_foreign_card_round_trip_keeps_unknown_fields_and_lorebook(tmp_path, spec, suffix, source):
    original = st_v2_card() if source == "v2" else st_v3_card()
    p = import_card(write_json(tmp_path / "in.json", original))
    out = export_card(p, tmp_path / f"out{suffix}", spec)
    card = read_card(out)
    data = card["data"]
    assert card["spec"] == spec
    assert data["character_book"] == LOREBOOK
    for key, value in UNKNOWN_EXTENSIONS.items():
        assert data["extensions"][key] == value
    assert data["extensions"]["mascot"]["name"] == "Captain Mara"
    assert data["unknown_data_field"] == {"keep": "me"}
    assert card["unknown_top_field"] == [1, 2, 3]
    # untouched texts stay exactly as written
    for key in (
        "description",
        "personality",
        "scenario",
        "first_mes",
        "mes_example",
        "creator_notes",
        "post_history_instructions",
        "alternate_greetings",
        "tags",
        "creator",
        "character_version",
    ):
        assert data[key] == original["data"][key], key
    if source == "v3":
        assert data["assets"] == original["data"]["assets"]
        assert data["group_only_greetings"] == ["Everyone, sit."]
    # the same card (without our extension) is what we started from, apart from the spec line
    expected = copy.deepcopy(original)
    expected["spec"], expected["spec_version"] = spec, ("3.0" if spec == V3 else "2.0")
    if spec == V3:
        expected["data"].setdefault("group_only_greetings", [])
    stripped = copy.deepcopy(card)
    del stripped["data"]["extensions"]["mascot"]
    assert stripped == expected
    # importing it again gives the same persona
    q = import_card(out)
    assert fields(q) == fields(p)
    assert q.extensions["chara_card"]["data"]["character_book"] == LOREBOOK
    if spec == source.replace("v", "chara_card_v"):
        assert q == p  # same spec: even the stored card is identical


def test_png_v3_export_has_chara_and_ccv3_chunks(tmp_path):
    p = import_card(write_json(tmp_path / "in.json", st_v3_card()))
    raw = export_card(p, tmp_path / "out.png", V3).read_bytes()
    texts = png_texts(raw)
    assert set(texts) == {"chara", "ccv3"}
    assert texts["chara"]["spec"] == V2 and texts["ccv3"]["spec"] == V3
    assert texts["chara"]["data"]["character_book"] == LOREBOOK
    assert texts["ccv3"]["data"]["character_book"] == LOREBOOK
    v2_only = png_texts(export_card(p, tmp_path / "out2.png", V2).read_bytes())
    assert set(v2_only) == {"chara"}


def test_exported_png_is_a_valid_avatar_image(tmp_path):
    p = mascot_persona()
    chunks = parse_png(export_card(p, tmp_path / "theo.png").read_bytes())
    ihdr = dict(chunks)[b"IHDR"]
    width, height, depth, colour_type = struct.unpack(">IIBB", ihdr[:10])
    assert (width, height, depth, colour_type) == (256, 256, 8, 2)
    pixels = zlib.decompress(b"".join(d for t, d in chunks if t == b"IDAT"))
    assert len(pixels) == 256 * (1 + 256 * 3)
    assert pixels[1:4] == bytes.fromhex(p.color[1:])


def test_edited_imported_persona_updates_only_changed_card_fields(tmp_path):
    original = st_v2_card()
    p = persona_from_card(original, "in.json")
    p.role = "a harbor cafe owner and former captain"
    p.traits = ["gruff", "loyal"]
    p.goals = ["keep the regulars warm"]
    card = card_from_persona(p)
    data = card["data"]
    assert data["description"].startswith("{{char}} is a harbor cafe owner and former captain.")
    assert "She knows every boat by its engine sound." in data["description"]
    assert "{{char}}'s goals:\n- keep the regulars warm" in data["description"]
    assert data["personality"] == "gruff, loyal"
    assert card["personality"] == "gruff, loyal"  # the V1 mirror follows
    assert data["mes_example"] == original["data"]["mes_example"]
    assert data["first_mes"] == original["data"]["first_mes"]
    assert data["character_book"] == LOREBOOK
    q = persona_from_card(card, "out.json")
    assert fields(q) == fields(p)
    # exporting the re-imported persona again changes nothing more
    again = card_from_persona(q)
    assert again == card


def test_png_prefers_ccv3_over_chara(tmp_path):
    old = {"spec": V2, "spec_version": "2.0", "data": {"name": "Old Name", "description": "V2."}}
    new = st_v3_card()
    for order in (
        (text_chunk("chara", old), text_chunk("ccv3", new)),
        (text_chunk("ccv3", new), text_chunk("chara", old)),
    ):
        path = tmp_path / "both.png"
        path.write_bytes(tiny_png(*order))
        assert import_card(path).name == "Captain Mara"


def test_png_falls_back_to_chara_when_ccv3_is_broken(tmp_path):
    path = tmp_path / "broken-v3.png"
    path.write_bytes(
        tiny_png(chunk(b"tEXt", b"ccv3\0!!!not base64!!!"), text_chunk("chara", st_v2_card()))
    )
    assert import_card(path).name == "Captain Mara"


def test_png_itxt_and_ztxt_chunks(tmp_path):
    card = st_v2_card()
    payload = b64(card)
    itxt_plain = chunk(b"iTXt", b"chara\0\0\0en\0\0" + payload)
    itxt_zip = chunk(b"iTXt", b"ccv3\0\1\0\0\0" + zlib.compress(b64(st_v3_card())))
    ztxt = chunk(b"zTXt", b"chara\0\0" + zlib.compress(payload))
    for name, chunks in (("itxt", [itxt_plain]), ("ztxt", [ztxt]), ("itxtz", [itxt_zip])):
        path = tmp_path / f"{name}.png"
        path.write_bytes(tiny_png(*chunks))
        p = import_card(path)
        assert p.name == "Captain Mara"
        assert p.extensions["chara_card"]["data"]["character_book"] == LOREBOOK


def test_png_with_plain_json_chunk(tmp_path):
    path = tmp_path / "plain.png"
    path.write_bytes(tiny_png(chunk(b"tEXt", b"chara\0" + json.dumps(st_v2_card()).encode())))
    assert import_card(path).name == "Captain Mara"


def test_cards_load_as_persona_sets(tmp_path):
    png = tmp_path / "mara.png"
    png.write_bytes(tiny_png(text_chunk("chara", st_v2_card())))
    js = write_json(tmp_path / "mara.json", st_v2_card())
    for path in (png, js):
        s = load_set_file(path)
        assert s.names == ["Captain Mara"] and s.source == str(path)


# -- errors ---------------------------------------------------------------------------------------


def _error(path: Path) -> str:
    with pytest.raises(CardError) as info:
        import_card(path)
    message = str(info.value)
    assert "\n" not in message and "\r" not in message, message
    assert str(path) in message, message
    assert isinstance(info.value, PersonaError)
    return message


def test_error_missing_file(tmp_path):
    assert "no such file" in _error(tmp_path / "nope.png")


def test_error_empty_file(tmp_path):
    for name in ("empty.png", "empty.json"):
        path = tmp_path / name
        path.write_bytes(b"")
        assert "empty" in _error(path)


def test_error_not_a_png(tmp_path):
    path = tmp_path / "fake.png"
    path.write_bytes(b"GIF89a this is not a png at all")
    assert "not a PNG" in _error(path)


def test_error_truncated_png(tmp_path):
    raw = tiny_png(text_chunk("chara", st_v2_card()))
    path = tmp_path / "cut.png"
    path.write_bytes(raw[: len(raw) // 2])
    assert "truncated" in _error(path)
    path.write_bytes(raw[:10])  # cut inside the first chunk header
    assert "truncated" in _error(path)
    path.write_bytes(tiny_png()[:-12])  # no IEND and no card
    assert "truncated" in _error(path)


def test_error_png_without_card(tmp_path):
    path = tmp_path / "plain.png"
    path.write_bytes(tiny_png(chunk(b"tEXt", b"Software\0GIMP")))
    message = _error(path)
    assert "no character card data (no 'chara' text chunk)" in message
    assert "SillyTavern" in message


def test_error_invalid_base64(tmp_path):
    path = tmp_path / "bad64.png"
    path.write_bytes(tiny_png(chunk(b"tEXt", b"chara\0%%%not-base64%%%")))
    assert "base64" in _error(path)


def test_error_invalid_json_in_png_and_file(tmp_path):
    path = tmp_path / "badjson.png"
    path.write_bytes(tiny_png(chunk(b"tEXt", b"chara\0" + base64.b64encode(b'{"spec": oops}'))))
    assert "not valid JSON" in _error(path)
    js = tmp_path / "bad.json"
    js.write_text('{"name": "A",\n "description": }', encoding="utf-8")
    assert "not valid JSON (line 2" in _error(js)


def test_error_too_large(tmp_path):
    path = tmp_path / "huge.png"
    with open(path, "wb") as f:
        f.truncate(MAX_CARD_BYTES + 1)  # sparse: nothing is actually written
    assert "too large" in _error(path)


def test_error_card_without_name(tmp_path):
    for name, card in (
        ("noname.json", {"spec": V2, "spec_version": "2.0", "data": {"description": "Nameless."}}),
        ("blank.json", {"spec": V3, "data": {"name": "   "}}),
        ("v1.json", {"description": "flat without name"}),
    ):
        assert "has no name" in _error(write_json(tmp_path / name, card))
    path = tmp_path / "noname.png"
    path.write_bytes(tiny_png(text_chunk("chara", {"spec": V2, "data": {"name": ""}})))
    assert "data.name" in _error(path)


def test_error_non_object_card(tmp_path):
    assert "JSON object" in _error(write_json(tmp_path / "list.json", [1, 2]))
    assert "'data'" in _error(write_json(tmp_path / "nodata.json", {"spec": V2, "data": "x"}))
    assert "unsupported card spec" in _error(write_json(tmp_path / "spec.json", {"spec": "x"}))
    path = tmp_path / "str.png"
    path.write_bytes(tiny_png(chunk(b"tEXt", b"chara\0" + base64.b64encode(b'"just text"'))))
    assert "JSON object" in _error(path)
    with pytest.raises(CardError, match="where.json"):
        persona_from_card(None, "where.json")


def test_error_unknown_export_suffix_and_spec(tmp_path):
    p = mascot_persona()
    for name in ("theo.txt", "theo"):
        with pytest.raises(CardError) as info:
            export_card(p, tmp_path / name)
        assert ".json or .png" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(CardError, match="chara_card_v2"):
        export_card(p, tmp_path / "theo.json", spec="chara_card_v9")
    with pytest.raises(CardError, match="does not exist"):
        export_card(p, tmp_path / "missing-folder" / "theo.json")
    assert not list(tmp_path.iterdir())
