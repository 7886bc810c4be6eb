"""Persona set files: the bundled and the user's folders, reading a set from JSON or a Character
Card file (with the limits that keep a hostile file small), listing, finding and saving sets."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from engine.card_files import import_card
from engine.cards import persona_from_card
from engine.errors import NotFound, PersonaError
from engine.paths import assets_dir, user_dir
from engine.personas import PersonaSet, check_nesting, set_from_dict

MAX_FILE_BYTES = 2_000_000


def read_json_file(path: Path, what: str = "file") -> Any:
    path = Path(path)
    if not path.exists():
        raise NotFound(f"{path}: no such {what}; check the path.")
    if path.is_dir():
        raise PersonaError(f"{path}: is a folder; give a {what} path.")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise PersonaError(
            f"{path}: {size} bytes is too large for a {what} (limit {MAX_FILE_BYTES})."
        )
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise PersonaError(f"{path}: not a UTF-8 text file; save it as UTF-8 JSON.") from None
    if not text.strip():
        raise PersonaError(f"{path}: the file is empty; it should hold JSON.")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise PersonaError(
            f"{path}: invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}."
        ) from None
    except RecursionError:
        raise PersonaError(
            f"{path}: the JSON is nested too deeply to read; this is not a usable {what}."
        ) from None
    check_nesting(data, str(path))
    return data


def load_set_file(path: Path) -> PersonaSet:
    path = Path(path)
    if path.suffix.lower() == ".png":
        p = import_card(path)
        return PersonaSet(
            name=p.name, title=p.name, description=p.role, members=[p], source=str(path)
        )
    data = read_json_file(path, "persona file")
    if isinstance(data, dict) and data.get("spec") in ("chara_card_v2", "chara_card_v3"):
        p = persona_from_card(data, str(path))
        return PersonaSet(
            name=p.name, title=p.name, description=p.role, members=[p], source=str(path)
        )
    s = set_from_dict(data, str(path))
    s.source = str(path)
    return s


# -- the library of sets ----------------------------------------------------------------------


def bundled_dir() -> Path:
    return assets_dir() / "personas"


def user_personas_dir() -> Path:
    d = user_dir() / "personas"
    d.mkdir(parents=True, exist_ok=True)
    return d


def list_sets() -> list[PersonaSet]:
    """Bundled sets, then the user's imported ones (a user set may not shadow a bundled name)."""
    out: dict[str, PersonaSet] = {}
    for folder in (bundled_dir(), user_personas_dir()):
        for f in sorted(folder.glob("*.json")):
            try:
                s = load_set_file(f)
            except PersonaError:
                continue  # a broken user file must not hide the others; `personas show` reports it
            out.setdefault(s.name, s)
    return list(out.values())


def load_set(name_or_path: str | Path) -> PersonaSet:
    """A bundled/user set by name (``support``) or any persona/set/card file by path."""
    text = str(name_or_path)
    p = Path(text).expanduser()
    if p.suffix.lower() in (".json", ".png") or p.exists():
        return load_set_file(p)
    for folder in (bundled_dir(), user_personas_dir()):
        f = folder / f"{text}.json"
        if f.exists():
            return load_set_file(f)
    for s in list_sets():
        if s.name.lower() == text.lower():
            return s
    names = ", ".join(s.name for s in list_sets())
    raise NotFound(
        f"No persona set '{text}'. Available: {names}; or give a path to a .json/.png file."
    )


def save_user_set(pset: PersonaSet) -> Path:
    """Store a set (e.g. an imported card) in the user's persona folder."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", pset.name).strip("-") or "persona"
    if (bundled_dir() / f"{safe}.json").exists():
        safe = f"{safe}-user"
    path = user_personas_dir() / f"{safe}.json"
    path.write_text(json.dumps(pset.to_dict(), indent=2, ensure_ascii=False), encoding="utf-8")
    return path
