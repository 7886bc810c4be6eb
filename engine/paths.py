"""Where Mascot keeps its data and finds its bundled assets."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def user_dir() -> Path:
    """The user data folder (database, imported personas, registered models).

    ``MASCOT_HOME`` overrides it; otherwise the platform's usual per-user data folder.
    """
    env = os.environ.get("MASCOT_HOME")
    if env:
        path = Path(env).expanduser()
    elif sys.platform == "win32":
        path = Path(os.environ.get("APPDATA", Path.home() / "AppData" / "Roaming")) / "Mascot"
    elif sys.platform == "darwin":
        path = Path.home() / "Library" / "Application Support" / "Mascot"
    else:
        base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
        path = Path(base) / "mascot"
    path.mkdir(parents=True, exist_ok=True)
    return path


def models_dir() -> Path:
    """Model files Mascot downloads or builds (the voices model, Hub downloads), in the data folder."""
    path = user_dir() / "models"
    path.mkdir(parents=True, exist_ok=True)
    return path


def db_path() -> Path:
    return user_dir() / "mascot.db"


def assets_dir() -> Path:
    """The bundled ``assets/`` folder (repository root, or inside a PyInstaller bundle)."""
    env = os.environ.get("MASCOT_ASSETS")
    if env:
        return Path(env)
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen) / "assets"
    return Path(__file__).resolve().parent.parent / "assets"
