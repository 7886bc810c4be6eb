"""Hostile Character Cards and persona files: one clear line each, never a traceback, nothing
unreadable or misleading in a display name, lorebooks within limits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.card_files import import_card
from engine.cards import persona_from_card
from engine.errors import CardError, PersonaError
from engine.lorebook import MAX_CONTENT_CHARS, MAX_ENTRIES, MAX_KEY_CHARS
from engine.personas import persona_from_dict
from mascot_cli.main import main


def card(name="Mara", **data) -> dict:
    return {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {
            "name": name,
            "description": "{{char}} is a retired ferry captain.",
            "personality": "gruff, warm",
            **data,
        },
    }


def cli_import(path: Path, capsys) -> tuple[int, str, str]:
    code = main(["personas", "import", str(path)])
    out = capsys.readouterr()
    return code, out.out, out.err


def one_line_error(code: int, err: str) -> str:
    assert code != 0
    assert err.startswith("Error: ") and err.count("\n") == 1, err
    assert (
        "Traceback" not in err and "unexpected failure" not in err and "RecursionError" not in err
    )
    return err


def test_card_nested_100000_levels_is_one_clear_line(tmp_path, capsys):
    path = tmp_path / "deep.json"
    path.write_text(
        '{"spec": "chara_card_v2", "data": {"name": "x", "extensions": '
        + "[" * 100_000
        + "]" * 100_000
        + "}}",
        encoding="utf-8",
    )
    err = one_line_error(*cli_import(path, capsys)[::2])
    assert "nested too deeply" in err
    bare = tmp_path / "bare.json"
    bare.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert "nested too deeply" in one_line_error(*cli_import(bare, capsys)[::2])


def test_card_nested_below_the_parser_limit_is_refused_too(tmp_path, capsys):
    # 500 levels parse, but copying or writing such a card later could exhaust the stack
    deep = {"x": 1}
    for _ in range(500):
        deep = {"x": deep}
    path = tmp_path / "deep500.json"
    path.write_text(json.dumps(card(extensions={"tool": deep}), indent=None), encoding="utf-8")
    err = one_line_error(*cli_import(path, capsys)[::2])
    assert "nested more than 64 levels" in err
    with pytest.raises(CardError, match="nested more than"):
        persona_from_card(card(extensions={"tool": deep}), "api")


def test_name_with_direction_override_nul_and_role_label_is_refused(tmp_path, capsys, mascot_home):
    path = tmp_path / "mia.json"
    path.write_text(json.dumps(card("Mia\u202e\u0000\nUser:")), encoding="utf-8")
    err = one_line_error(*cli_import(path, capsys)[::2])
    assert "'Mia User'" in err and "role label" in err and "\u202e" not in err
    assert not list((mascot_home / "personas").glob("*.json"))  # nothing was imported


def test_invisible_direction_characters_are_dropped_from_a_card_name(tmp_path):
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(card("Ma\u202era\u2066 Voss")), encoding="utf-8")
    assert import_card(path).name == "Mara Voss"


def test_path_like_name_is_refused_and_nothing_is_written_outside(tmp_path, capsys):
    target = Path("/tmp/adv/pwned")
    path = tmp_path / "pwned.json"
    path.write_text(json.dumps(card("../../../../tmp/adv/pwned")), encoding="utf-8")
    err = one_line_error(*cli_import(path, capsys)[::2])
    assert "looks like a file path" in err
    assert not target.exists() and not list(Path(tmp_path / "mascot-home").rglob("*pwned*"))
    # a persona set file with such a name, and a plain persona: the same rule
    with pytest.raises(PersonaError, match="file path"):
        persona_from_dict({"name": "..\\evil", "role": "r", "traits": ["t"], "speaking_style": "s"})
    s = tmp_path / "set.json"
    s.write_text(
        json.dumps(
            {
                "name": "../../etc",
                "members": [{"name": "Ok", "role": "r", "traits": ["t"], "speaking_style": "s"}],
            }
        ),
        encoding="utf-8",
    )
    assert "file path" in one_line_error(*cli_import(s, capsys)[::2])


@pytest.mark.parametrize(
    "name",
    ["User", "Assistant", "Mia User", "the director", "Mia\x07", "Zed\u200f", "<|im_start|>Mia"],
)
def test_persona_names_that_read_as_roles_or_hide_characters_are_refused(name):
    with pytest.raises(PersonaError) as e:
        persona_from_dict({"name": name, "role": "r", "traits": ["t"], "speaking_style": "s"})
    assert "field 'name'" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("name", ["Mia", "Zoë", "李雷", "Captain Mara", "Userin", "R2-D2 🤖"])
def test_ordinary_names_are_accepted(name):
    assert (
        persona_from_dict({"name": name, "role": "r", "traits": ["t"], "speaking_style": "s"}).name
        == name
    )


def _book(entries) -> dict:
    return {"name": "b", "entries": entries}


def test_lorebook_limits_are_enforced_on_import(tmp_path, capsys):
    entry = {"keys": ["harbor"], "content": "Fog.", "enabled": True, "insertion_order": 1}
    cases = {
        "count": (_book([entry] * (MAX_ENTRIES + 1)), f"limit is {MAX_ENTRIES}"),
        "size": (_book([{**entry, "content": "x" * (MAX_CONTENT_CHARS + 1)}]), "lorebook entry 1"),
        "key": (
            _book([{**entry, "keys": ["k" * (MAX_KEY_CHARS + 1)]}]),
            f"limit is {MAX_KEY_CHARS}",
        ),
        "type": (_book([{**entry, "keys": [{"x": 1}]}]), "must be text"),
        "entries": ({"entries": "nope"}, "must be a list"),
    }
    for label, (book, expected) in cases.items():
        path = tmp_path / f"{label}.json"
        path.write_text(json.dumps(card(character_book=book)), encoding="utf-8")
        err = one_line_error(*cli_import(path, capsys)[::2])
        assert expected in err, (label, err)
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps(card(character_book=_book([entry] * 3))), encoding="utf-8")
    code, out, _ = cli_import(ok, capsys)
    assert code == 0 and "Imported 'Mara'" in out
