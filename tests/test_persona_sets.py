"""The bundled persona sets (assets/personas) and persona-file validation errors."""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path

import pytest

from engine.cards import card_from_persona, persona_from_card
from engine.errors import PersonaError
from engine.persona_files import bundled_dir, list_sets, load_set, load_set_file
from engine.personas import set_from_dict

BUNDLED = {"support": "support", "workplace": "workplace", "writers-room": "creative"}
SCHEMA_FIELDS = (
    "name",
    "role",
    "traits",
    "speaking_style",
    "goals",
    "boundaries",
    "example_lines",
    "color",
    "avatar",
)


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    monkeypatch.setenv("MASCOT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MASCOT_ASSETS", raising=False)


def _luminance(color: str) -> float:
    channels = [int(color[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


# -- bundled sets ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_bundled_set_loads_with_four_distinct_members(name):
    s = load_set(name)
    assert s.name == name and s.domain == BUNDLED[name]
    assert s.title and s.description
    assert len(s.members) == 4
    assert len({p.name.lower() for p in s.members}) == 4
    assert len({p.color.lower() for p in s.members}) == 4
    assert len({p.avatar for p in s.members}) == 4
    prompts = [p.system_prompt(s.names) for p in s.members]
    assert len(set(prompts)) == 4
    for a, b in itertools.combinations(s.members, 2):
        assert a.role != b.role and a.speaking_style != b.speaking_style
        assert set(a.traits) != set(b.traits) and not set(a.example_lines) & set(b.example_lines)


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_bundled_members_fill_every_field(name):
    raw = json.loads((bundled_dir() / f"{name}.json").read_text(encoding="utf-8"))
    assert set(raw) >= {"name", "title", "description", "domain", "members"}
    assert raw["name"] == name
    for member in raw["members"]:
        for key in SCHEMA_FIELDS:
            assert member.get(key), f"{member.get('name')}: {key} is empty"
        assert " " not in member["name"] and len(member["name"]) <= 8  # easy to address
    for p in load_set(name).members:
        assert len(p.traits) >= 3 and len(p.goals) >= 2 and len(p.boundaries) >= 2
        assert len(p.example_lines) >= 2
        assert p.avatar != p.name[:1].upper()  # a real avatar, not the default letter


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_bundled_colours_are_readable_on_light_and_dark(name):
    for p in load_set(name).members:
        assert _contrast(p.color, "#ffffff") >= 3.0, p.name
        assert _contrast(p.color, "#1e1e1e") >= 3.0, p.name


def test_bundled_names_are_distinct_across_sets():
    names = [p.name.lower() for n in BUNDLED for p in load_set(n).members]
    assert len(names) == len(set(names)) == 12


def test_support_boundaries_cover_medical_advice_and_professional_help():
    for p in load_set("support").members:
        text = " ".join(p.boundaries).lower()
        assert "medical" in text, p.name
        assert any(w in text for w in ("professional", "doctor", "therapist")), p.name
        assert "crisis line" in text or "emergency" in text, p.name


def test_list_sets_includes_bundled_sets():
    names = [s.name for s in list_sets()]
    for name in BUNDLED:
        assert name in names


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_bundled_sets_survive_dict_and_card_round_trips(name):
    s = load_set(name)
    again = set_from_dict(json.loads(json.dumps(s.to_dict())), "again.json")
    assert again.members == s.members and again.domain == s.domain
    for p in s.members:
        assert persona_from_card(json.loads(json.dumps(card_from_persona(p))), "card") == p


# -- validation errors ----------------------------------------------------------------------------


def _valid_set() -> dict:
    return copy.deepcopy(json.loads((bundled_dir() / "workplace.json").read_text(encoding="utf-8")))


def _error(path: Path) -> str:
    with pytest.raises(PersonaError) as info:
        load_set_file(path)
    message = str(info.value)
    assert "\n" not in message and "\r" not in message, message
    assert str(path) in message, message
    return message


def _write(tmp_path: Path, data, name: str = "set.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_valid_copy_loads(tmp_path):
    assert load_set_file(_write(tmp_path, _valid_set())).names == ["Ava", "Quinn", "Omar", "Lena"]


def test_error_missing_role(tmp_path):
    data = _valid_set()
    del data["members"][1]["role"]
    message = _error(_write(tmp_path, data))
    assert "'role'" in message and "missing" in message and "Quinn" in message


def test_error_traits_is_a_number(tmp_path):
    data = _valid_set()
    data["members"][0]["traits"] = 42
    message = _error(_write(tmp_path, data))
    assert "'traits'" in message and "int" in message


def test_error_temperature_out_of_range(tmp_path):
    data = _valid_set()
    data["members"][2]["sampling"] = {"temperature": 5}
    message = _error(_write(tmp_path, data))
    assert "'sampling.temperature'" in message and "5" in message and "2.0" in message


def test_error_speaking_style_too_long(tmp_path):
    data = _valid_set()
    data["members"][3]["speaking_style"] = "x" * 10_000
    message = _error(_write(tmp_path, data))
    assert "'speaking_style'" in message and "10000" in message and "400" in message


def test_error_empty_file(tmp_path):
    assert "empty" in _error(_write(tmp_path, ""))
    assert "empty" in _error(_write(tmp_path, "  \n\t\n", "blank.json"))


def test_error_invalid_json(tmp_path):
    message = _error(_write(tmp_path, '{"name": "x",\n  "members": [\n    {"name": "A",}\n  ]\n}'))
    assert "invalid JSON" in message and "line 3" in message


def test_error_duplicate_names(tmp_path):
    data = _valid_set()
    data["members"][3]["name"] = "ava"
    message = _error(_write(tmp_path, data))
    assert "two members are named" in message and "unique" in message
