"""The history encrypted at rest (SQLCipher): opening an encrypted file, and converting one in place.

An encrypted history is a SQLCipher 4 database (AES-256, a key stretched from the passphrase
with PBKDF2-HMAC-SHA512; see docs/privacy.md). Whether a file is encrypted is read from its first
16 bytes: a plain SQLite file starts with ``SQLite format 3``, an encrypted one with random salt.
Nothing else records it, so there is no setting to lose or to get out of step with the file.

``convert`` turns a plain history into an encrypted one, changes the passphrase or removes it.
It never writes over the database it reads: the new database is written beside it
(``mascot.db.converting``), flushed to disk, checked (``integrity_check`` and every table's row
count) and only then renamed over the old one in one atomic step, so a crash or a kill at any
moment leaves the old database or the new one, whole. A plain file that was replaced is
overwritten with zeros before it is deleted.
"""

from __future__ import annotations

import gc
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from engine.errors import InputError, StorageError

try:  # the wheels ship SQLCipher built in; without them only plain histories open
    import sqlcipher3
except ImportError:  # pragma: no cover - every supported install has it (pyproject.toml)
    sqlcipher3 = None

try:  # POSIX advisory locks; on Windows an open file cannot be renamed over, which is enough
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

PLAIN_HEADER = b"SQLite format 3\x00"
PASSPHRASE_ENV = "MASCOT_PASSPHRASE"
MIN_PASSPHRASE = 8
NO_RECOVERY = (
    "Nobody can recover a forgotten passphrase, Mascot included: without it the history "
    "cannot be read, by you or anyone."
)
# the database errors of both drivers (sqlite-utils runs on either connection)
DB_ERRORS: tuple[type[Exception], ...] = (sqlite3.DatabaseError,) + (
    (sqlcipher3.DatabaseError,) if sqlcipher3 else ()
)

Step = Callable[[str], None]


class WrongPassphrase(StorageError):
    """The passphrase given does not open the encrypted history."""


class Locked(StorageError):
    """The history is encrypted and no passphrase was given."""


def is_encrypted(path: str | Path) -> bool:
    """Whether the file at ``path`` is an encrypted history: whole pages (a multiple of 512
    bytes) that do not start with SQLite's header. False when it is plain, empty, missing, or
    damaged past looking like either."""
    try:
        with open(path, "rb") as f:
            head = f.read(16)
            size = os.fstat(f.fileno()).st_size
    except FileNotFoundError:
        return False
    return len(head) == 16 and head != PLAIN_HEADER and size % 512 == 0


def check_passphrase(passphrase: str) -> str:
    """A new passphrase as the user typed it, or an ``InputError`` that says what to change."""
    if "\x00" in passphrase:
        raise InputError("A passphrase cannot hold a NUL character; type it again.")
    if len(passphrase) < MIN_PASSPHRASE:
        raise InputError(
            f"A passphrase needs at least {MIN_PASSPHRASE} characters; a few words are easy "
            "to remember and hard to guess."
        )
    return passphrase


def _literal(text: str) -> str:
    """``text`` as an SQL string literal (PRAGMA key takes no bound parameters)."""
    return "'" + text.replace("'", "''") + "'"


def _driver() -> Any:
    if sqlcipher3 is None:
        raise StorageError(
            "This Mascot has no SQLCipher, so it cannot open an encrypted history; "
            "reinstall Mascot (pip install sqlcipher3)."
        )
    return sqlcipher3


def sqlcipher_version() -> str | None:
    """The SQLCipher library's version ("4.19.0 community"), or None when it is missing."""
    if sqlcipher3 is None:
        return None
    conn = sqlcipher3.connect(":memory:")
    try:
        return str(conn.execute("PRAGMA cipher_version").fetchone()[0])
    finally:
        conn.close()


def _cipher_connect(path: Path, **kwargs: Any) -> Any:
    conn = _driver().connect(str(path), **kwargs)
    # SQLCipher writes its own errors to stderr (a wrong key: "hmac check failed"); the user
    # gets one line from Mascot instead
    conn.execute("PRAGMA cipher_log_level = NONE")
    return conn


def wrong_passphrase(path: Path) -> WrongPassphrase:
    return WrongPassphrase(
        f"That passphrase does not open the history in {path}; check it and try again "
        "(nothing was changed)."
    )


def connect(path: str | Path, passphrase: str | None, **kwargs: Any) -> Any:
    """A DB-API connection to ``path``: SQLite's own when ``passphrase`` is None, SQLCipher's
    keyed with it otherwise. The key is checked at once: a wrong one raises ``WrongPassphrase``
    before anything is written."""
    path = Path(path)
    if passphrase is None:
        return sqlite3.connect(str(path), **kwargs)
    conn = _cipher_connect(path, **kwargs)
    try:
        conn.execute(f"PRAGMA key = {_literal(passphrase)}")
        conn.execute("select count(*) from sqlite_master").fetchone()
    except DB_ERRORS:
        conn.close()
        raise wrong_passphrase(path) from None
    return conn


# -- who has the history open --------------------------------------------------------------------

IN_USE = "The history is open in another Mascot window or command; close it and try again."


def lock_path(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


class Held:
    """A lock on the history's lock file; ``close`` (or dropping it) lets go."""

    def __init__(self, fd: int):
        self.fd: int | None = fd

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the descriptor releases its flock
            self.fd = None

    def __del__(self) -> None:  # a store nobody closed lets go when it is collected
        self.close()


def _lock_fd(path: Path) -> int:
    try:
        return os.open(lock_path(path), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as e:
        raise StorageError(
            f"{path}: the history cannot be opened ({e.strerror}); check the data folder."
        ) from None


def hold_open(path: str | Path) -> Held | None:
    """A shared lock on the history's lock file, held for as long as a store has it open.
    Waits while a conversion runs, then the store opens the new file."""
    if fcntl is None:
        return None
    fd = _lock_fd(Path(path))
    fcntl.flock(fd, fcntl.LOCK_SH)
    return Held(fd)


def hold_alone(path: Path) -> Held | None:
    """The lock exclusively, for a conversion: ``StorageError`` when anything else (another
    process, or another store in this one) has the history open."""
    if fcntl is None:
        return None
    gc.collect()  # a store nobody refers to any more lets go of its lock here
    fd = _lock_fd(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise StorageError(IN_USE) from None
    return Held(fd)


# -- converting in place ----------------------------------------------------------------------


@dataclass(frozen=True)
class Conversion:
    """What ``convert`` did: the tables and rows it copied and checked."""

    tables: int
    rows: int


def work_path(path: Path) -> Path:
    """Where the new database is written before it replaces ``path``."""
    return path.with_name(path.name + ".converting")


def old_path(path: Path) -> Path:
    """A second name for the replaced plain file, kept until it is overwritten."""
    return path.with_name(path.name + ".replaced")


def sidecars(path: Path) -> list[Path]:
    """SQLite's files beside a database: the WAL, its index and the rollback journal."""
    return [path.with_name(path.name + s) for s in ("-wal", "-shm", "-journal")]


def clean_leftovers(path: str | Path) -> None:
    """Remove what a conversion stopped midway left beside ``path`` (a half-written new
    database, the name of a replaced plain file). The database itself is never touched."""
    path = Path(path)
    for p in [work_path(path), *sidecars(work_path(path))]:
        p.unlink(missing_ok=True)
    old = old_path(path)
    if old.exists():
        if path.exists() and os.path.samefile(old, path):
            old.unlink()  # stopped before the rename: a second name of the live database
        else:
            shred(old)


def shred(path: Path) -> None:
    """Overwrite a file with zeros, flush it and delete it. (On SSDs and copy-on-write file
    systems the old blocks may survive elsewhere: docs/privacy.md says so.)"""
    size = path.stat().st_size
    with open(path, "r+b") as f:
        block = b"\x00" * (1 << 20)
        left = size
        while left > 0:
            n = min(left, len(block))
            f.write(block[:n])
            left -= n
        f.flush()
        os.fsync(f.fileno())
    path.unlink()


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _counts(conn: Any, schema: str = "main") -> dict[str, int]:
    names = [
        r[0]
        for r in conn.execute(
            f"select name from {schema}.sqlite_master where type = 'table' "
            "and name not like 'sqlite_%' order by name"
        )
    ]
    return {n: conn.execute(f'select count(*) from {schema}."{n}"').fetchone()[0] for n in names}


def convert(
    path: str | Path,
    old: str | None,
    new: str | None,
    on_step: Step | None = None,
) -> Conversion:
    """Rewrite the database at ``path`` from passphrase ``old`` to ``new`` (None: plain), in
    place and crash-safe. Every other connection to it must be closed first.

    ``on_step`` hears each step as it starts: "start", "copying" (again and again while rows
    are copied), "copied", "verified", "replaced", "done". A wrong ``old`` passphrase raises
    ``WrongPassphrase`` and changes nothing."""
    path = Path(path)
    step = on_step or (lambda _name: None)
    if new is not None:
        check_passphrase(new)
    if not path.exists():
        raise StorageError(f"{path}: there is no history to convert yet.")
    if is_encrypted(path) != (old is not None):
        raise StorageError(
            f"{path} is {'encrypted' if is_encrypted(path) else 'not encrypted'}; "
            "reopen Mascot and try again."
        )
    alone = hold_alone(path)
    try:
        return _convert(path, old, new, step)
    finally:
        if alone is not None:
            alone.close()


def _convert(path: Path, old: str | None, new: str | None, step: Step) -> Conversion:
    clean_leftovers(path)
    tmp = work_path(path)
    src = connect(path, old) if old is not None else _cipher_connect(path)
    try:
        try:
            step("start")
            # the whole database into the main file, and no WAL left to pair with the new one
            src.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            mode = src.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
            if str(mode).lower() != "delete":
                raise StorageError(IN_USE)
            before = _counts(src)
            src.set_progress_handler(lambda: step("copying") or 0, 500)
            src.execute(
                "ATTACH DATABASE ? AS converted KEY ?", [str(tmp), "" if new is None else new]
            )
            src.execute("select sqlcipher_export('converted')")
            src.set_progress_handler(None, 0)
            after = _counts(src, "converted")
            src.execute("DETACH DATABASE converted")
        finally:
            src.close()
    except DB_ERRORS as e:
        clean_leftovers(path)
        raise StorageError(
            f"{path}: the history could not be converted ({e}); it is unchanged."
        ) from None
    except BaseException:
        clean_leftovers(path)
        raise
    step("copied")
    _fsync(tmp)
    try:
        check = connect(tmp, new)
        try:
            ok = check.execute("PRAGMA integrity_check").fetchone()[0]
            counts = _counts(check)
        finally:
            check.close()
    except (WrongPassphrase, *DB_ERRORS) as e:
        ok, counts = str(e), {}
    if ok != "ok" or counts != before or after != before:
        clean_leftovers(path)
        raise StorageError(
            f"{path}: the converted copy did not check out ({ok}); the history is unchanged."
        )
    step("verified")
    for p in sidecars(path):  # the old database's, empty now: they must not meet the new one
        p.unlink(missing_ok=True)
    linked = False
    if old is None:  # keep the plain file's blocks reachable, to overwrite them after the rename
        try:
            os.link(path, old_path(path))
            linked = True
        except OSError:  # a file system without hard links (FAT): docs/privacy.md says so
            pass
    try:
        os.replace(tmp, path)
    except OSError:  # Windows: another program has the file open
        clean_leftovers(path)
        raise StorageError(IN_USE) from None
    try:
        _fsync(path.parent)  # the rename itself on disk (POSIX; Windows cannot open a folder)
    except OSError:
        pass
    step("replaced")
    if linked:
        shred(old_path(path))
    step("done")
    return Conversion(tables=len(before), rows=sum(before.values()))
