"""Conversation history in SQLite (through sqlite-utils).

One database file in the user data folder (``MASCOT_HOME`` overrides it). WAL mode;
``secure_delete`` so deleted conversations are overwritten, not just unlinked. Schema changes are
append-only numbered migrations recorded by name in the ``_migrations`` table. Each finished
message is committed in its own transaction, so a crash loses at most the message being streamed.
The user may encrypt the file with a passphrase (SQLCipher, engine/cipher.py); an encrypted
history opens with the passphrase given, the one this process opened it with before, or
``MASCOT_PASSPHRASE``.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Iterator

from engine.cipher import (
    DB_ERRORS,
    PASSPHRASE_ENV,
    Conversion,
    Locked,
    Step,
    clean_leftovers,
    connect,
    convert,
    hold_open,
    is_encrypted,
    wrong_passphrase,
)
from engine.errors import NotFound, StorageError
from engine.migrations import MIGRATIONS, apply_migrations, now
from engine.paths import db_path

# passphrases of the encrypted histories this process has opened, by file: the app asks once at
# start, and the stores that its dialogs and checks open later find the history unlocked
_unlocked: dict[str, str] = {}


def _key_of(path: Path) -> str:
    return str(path.resolve())


def passphrase_for(path: str | Path | None = None) -> str | None:
    """The passphrase a new ``Store`` of ``path`` (default: the history) would use: the one this
    process opened it with, else ``MASCOT_PASSPHRASE``, else None."""
    path = Path(path) if path else db_path()
    return _unlocked.get(_key_of(path)) or os.environ.get(PASSPHRASE_ENV) or None


def forget_passphrases() -> None:
    """Forget every passphrase this process opened a history with (a new ``Store`` of an
    encrypted history needs it given again)."""
    _unlocked.clear()


class Store:
    """All reads and writes of the history database. Thread-safe (one lock per store)."""

    def __init__(self, path: str | Path | None = None, passphrase: str | None = None):
        """Open (or create) the history. An encrypted one needs its passphrase: ``passphrase``,
        or ``passphrase_for``'s; a missing one raises ``Locked``, a wrong one
        ``WrongPassphrase`` (nothing is written). A new file is encrypted when ``passphrase``
        is given."""
        self.path = Path(path) if path else db_path()
        self._lock = threading.RLock()
        # held while open: a conversion refuses while another store has the history open, and
        # an open waits while a conversion runs
        self._held = hold_open(self.path)
        clean_leftovers(self.path)  # of a conversion that was stopped midway
        try:
            self._open(self._key_for(passphrase))
        except BaseException:
            self._let_go()
            raise

    def _key_for(self, passphrase: str | None) -> str | None:
        if is_encrypted(self.path):
            key = passphrase or passphrase_for(self.path)
            if not key:
                raise Locked(
                    f"The history in {self.path} is encrypted; type its passphrase when asked, "
                    f"or set {PASSPHRASE_ENV}."
                )
        elif self.path.exists() and self.path.stat().st_size > 0:
            key = None  # a plain history stays plain until the user encrypts it
        else:
            key = passphrase
        return key

    def _let_go(self) -> None:
        if self._held is not None:
            self._held.close()
            self._held = None

    def _open(self, key: str | None) -> None:
        # sqlite-utils imports pandas and numpy when they are installed (slow), so it is
        # imported where a database opens, not when the terminal commands start
        import sqlite_utils

        conn = None
        try:
            conn = connect(self.path, key, check_same_thread=False, timeout=10)
            self.db = sqlite_utils.Database(conn)
            self.db.execute("PRAGMA secure_delete=ON")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.enable_wal()
            self.migrate()
        except DB_ERRORS as e:
            if conn is not None:
                conn.close()
            raise StorageError(
                f"{self.path}: the history database cannot be opened ({e}); "
                "move the file away to start a fresh history."
            ) from None
        self._key = key
        if key is not None:
            _unlocked[_key_of(self.path)] = key
        else:
            _unlocked.pop(_key_of(self.path), None)

    # -- encryption at rest (engine/cipher.py) ------------------------------------------------
    @property
    def encrypted(self) -> bool:
        return self._key is not None

    def check(self, passphrase: str) -> None:
        """Raise ``WrongPassphrase`` unless ``passphrase`` is the one the history is open with."""
        if self._key is None or passphrase != self._key:
            raise wrong_passphrase(self.path)

    def _convert(self, old: str | None, new: str | None, on_step: Step | None) -> Conversion:
        """Close, convert the file in place, and open it again (with the old key if the
        conversion failed, so the store keeps working either way)."""
        with self._lock:
            self.db.conn.close()
            self._let_go()
            try:
                done = convert(self.path, old, new, on_step)
            except BaseException:
                self._held = hold_open(self.path)
                self._open(old)
                raise
            self._held = hold_open(self.path)
            self._open(new)
            return done

    def encrypt(self, passphrase: str, on_step: Step | None = None) -> Conversion:
        """Encrypt the plain history in place with ``passphrase``."""
        if self.encrypted:
            raise StorageError("The history is encrypted already; change its passphrase instead.")
        return self._convert(None, passphrase, on_step)

    def change_passphrase(self, old: str, new: str, on_step: Step | None = None) -> Conversion:
        """Encrypt the history again with ``new``; ``old`` must be the current passphrase."""
        self.check(old)
        return self._convert(old, new, on_step)

    def decrypt(self, passphrase: str, on_step: Step | None = None) -> Conversion:
        """Store the history as a plain file again; ``passphrase`` must be the current one."""
        self.check(passphrase)
        return self._convert(passphrase, None, on_step)

    # -- migrations ---------------------------------------------------------------------------
    def migrate(self) -> list[str]:
        with self._lock:
            return apply_migrations(self.db, MIGRATIONS, now)

    def close(self) -> None:
        with self._lock:
            self.db.conn.close()
            self._let_go()

    def integrity_check(self) -> str:
        return self.db.execute("PRAGMA integrity_check").fetchone()[0]

    # -- conversations ------------------------------------------------------------------------
    def create_conversation(
        self,
        *,
        title: str,
        group_name: str,
        policy: str,
        max_speakers: int,
        members: list[dict[str, Any]],
    ) -> int:
        with self._lock, self.db.conn:
            ts = now()
            cid = (
                self.db["conversations"]
                .insert(
                    {
                        "title": title,
                        "group_name": group_name,
                        "policy": policy,
                        "max_speakers": max_speakers,
                        "created": ts,
                        "updated": ts,
                    }
                )
                .last_pk
            )
            for i, m in enumerate(members):
                self.db["members"].insert(
                    {
                        "conversation_id": cid,
                        "position": i,
                        "name": m["name"],
                        "persona": json.dumps(m, ensure_ascii=False),
                        "model": m.get("model") or "",
                        "muted": 0,
                    }
                )
            return int(cid)

    def conversation(self, cid: int) -> dict[str, Any]:
        import sqlite_utils

        try:
            return self.db["conversations"].get(cid)
        except sqlite_utils.db.NotFoundError:
            raise NotFound(f"No conversation {cid}; see `mascot history list`.") from None

    def conversations(self, search: str = "") -> list[dict[str, Any]]:
        sql = (
            "select c.*, (select count(*) from messages m where m.conversation_id = c.id) as n_messages "
            "from conversations c"
        )
        params: list[Any] = []
        if search:
            sql += (
                " where c.title like ? or exists (select 1 from messages m where "
                "m.conversation_id = c.id and m.text like ?)"
            )
            params = [f"%{search}%", f"%{search}%"]
        sql += " order by c.updated desc, c.id desc"
        return list(self.db.query(sql, params))

    def rename_conversation(self, cid: int, title: str) -> None:
        self.conversation(cid)
        with self._lock, self.db.conn:
            self.db["conversations"].update(
                cid, {"title": title.strip()[:200] or "Untitled", "updated": now()}
            )

    def update_conversation(self, cid: int, **fields: Any) -> None:
        with self._lock, self.db.conn:
            self.db["conversations"].update(cid, {**fields, "updated": now()})

    def delete_conversation(self, cid: int) -> None:
        """Delete a conversation with its members and messages, and overwrite the freed pages."""
        self.conversation(cid)
        with self._lock:
            with self.db.conn:
                # facts found in it go with it; those the user typed or pinned stay, unlinked
                self.db.execute(
                    "delete from memories where conversation_id = ? and source = 'auto' "
                    "and pinned = 0",
                    [cid],
                )
                self.db.execute(
                    "update memories set conversation_id = null, message_id = null "
                    "where conversation_id = ?",
                    [cid],
                )
                self.db.execute(
                    "delete from message_vectors where message_id in "
                    "(select id from messages where conversation_id = ?)",
                    [cid],
                )
                self.db.execute("delete from messages where conversation_id = ?", [cid])
                self.db.execute("delete from members where conversation_id = ?", [cid])
                self.db.execute("delete from conversations where id = ?", [cid])
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def delete_all(self) -> None:
        with self._lock:
            with self.db.conn:
                for t in (
                    "message_vectors",
                    "lore_entries",
                    "lorebooks",
                    "memories",
                    "messages",
                    "members",
                    "conversations",
                    "models",
                ):
                    self.db.execute(f"delete from {t}")
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self.db.execute("VACUUM")
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def members(self, cid: int) -> list[dict[str, Any]]:
        rows = self.db.query(
            "select * from members where conversation_id = ? order by position", [cid]
        )
        return [{**r, "persona": json.loads(r["persona"])} for r in rows]

    def set_members(
        self, cid: int, members: list[dict[str, Any]], muted: set[str] | frozenset = frozenset()
    ) -> None:
        """Replace a conversation's companions (order, personas, mutes) in one transaction."""
        self.conversation(cid)
        with self._lock, self.db.conn:
            self.db.execute("delete from members where conversation_id = ?", [cid])
            for i, m in enumerate(members):
                self.db["members"].insert(
                    {
                        "conversation_id": cid,
                        "position": i,
                        "name": m["name"],
                        "persona": json.dumps(m, ensure_ascii=False),
                        "model": m.get("model") or "",
                        "muted": int(m["name"] in muted),
                    }
                )
            self.db["conversations"].update(cid, {"updated": now()})

    def remove_model(self, name: str) -> bool:
        with self._lock, self.db.conn:
            return self.db.execute("delete from models where name = ?", [name]).rowcount > 0

    def set_member_muted(self, cid: int, name: str, muted: bool) -> None:
        with self._lock, self.db.conn:
            self.db.execute(
                "update members set muted = ? where conversation_id = ? and name = ?",
                [int(muted), cid, name],
            )

    # -- messages ------------------------------------------------------------------------------
    def add_message(self, cid: int, **fields: Any) -> int:
        """Insert one finished message in its own transaction (durable on return)."""
        row = {
            "conversation_id": cid,
            "created": now(),
            "status": "done",
            "directive": "",
            "model": "",
            "round": 0,
            **fields,
        }
        if isinstance(row.get("meta"), (dict, list)):
            row["meta"] = json.dumps(row["meta"], ensure_ascii=False)
        with self._lock, self.db.conn:
            mid = self.db["messages"].insert(row).last_pk
            self.db["conversations"].update(cid, {"updated": row["created"]})
        return int(mid)

    def messages(self, cid: int) -> list[dict[str, Any]]:
        rows = self.db.query("select * from messages where conversation_id = ? order by id", [cid])
        out = []
        for r in rows:
            r["meta"] = json.loads(r["meta"]) if r.get("meta") else {}
            out.append(r)
        return out

    def message(self, mid: int) -> dict[str, Any]:
        import sqlite_utils

        try:
            r = self.db["messages"].get(mid)
        except sqlite_utils.db.NotFoundError:
            raise NotFound(f"No message {mid}.") from None
        r["meta"] = json.loads(r["meta"]) if r.get("meta") else {}
        return r

    def variants(self, mid: int) -> list[dict[str, Any]]:
        r = self.message(mid)
        if r.get("variants"):
            return json.loads(r["variants"])
        return [{"text": r["text"], "directive": r.get("directive") or "", "created": r["created"]}]

    def add_variant(self, mid: int, text: str, directive: str = "", **stats: Any) -> int:
        """Store a regenerated reply as a new alternative and show it. Returns its index."""
        with self._lock, self.db.conn:
            items = self.variants(mid) + [{"text": text, "directive": directive, "created": now()}]
            self.db["messages"].update(
                mid,
                {
                    "variants": json.dumps(items, ensure_ascii=False),
                    "variant": len(items) - 1,
                    "text": text,
                    **stats,
                },
            )
        return len(items) - 1

    def select_variant(self, mid: int, index: int) -> str:
        items = self.variants(mid)
        if not 0 <= index < len(items):
            raise NotFound(
                f"Message {mid} has {len(items)} alternatives; there is no #{index + 1}."
            )
        with self._lock, self.db.conn:
            self.db["messages"].update(mid, {"variant": index, "text": items[index]["text"]})
        return items[index]["text"]

    def edit_message(self, mid: int, text: str) -> None:
        self.message(mid)
        with self._lock, self.db.conn:
            self.db["messages"].update(mid, {"text": text, "edited": 1})
            self.db.execute(
                "delete from message_vectors where message_id = ?", [mid]
            )  # of the old text

    def delete_message(self, mid: int) -> None:
        self.message(mid)
        with self._lock, self.db.conn:
            self.db.execute("delete from message_vectors where message_id = ?", [mid])
            self.db.execute("delete from messages where id = ?", [mid])

    def user_messages(
        self, group_name: str, exclude: int | None = None, limit: int = 2000
    ) -> list[dict[str, Any]]:
        """The user's messages (id, text) in a group's conversations other than ``exclude``,
        newest first: what recall (engine.recall) searches."""
        return list(
            self.db.query(
                "select m.id, m.text from messages m join conversations c on c.id = m.conversation_id "
                "where c.group_name = ? and m.role = 'user' and m.conversation_id != ? "
                "order by m.id desc limit ?",
                [group_name, -1 if exclude is None else exclude, limit],
            )
        )

    def message_vectors(self, ids: list[int], model: str) -> dict[int, tuple[str, bytes]]:
        """Stored embeddings {message id: (text digest, float32 bytes)} of ``model`` for ``ids``."""
        out: dict[int, tuple[str, bytes]] = {}
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            rows = self.db.execute(
                f"select message_id, digest, vec from message_vectors where model = ? and message_id in "
                f"({','.join('?' * len(chunk))})",
                [model, *chunk],
            ).fetchall()
            out.update({r[0]: (r[1], r[2]) for r in rows})
        return out

    def put_message_vectors(self, rows: list[tuple[int, str, bytes]], model: str) -> None:
        """Store (message id, text digest, float32 bytes) embeddings of ``model``; ids of messages
        deleted meanwhile are skipped."""
        with self._lock, self.db.conn:
            for mid, digest, vec in rows:
                self.db.execute(
                    "insert or replace into message_vectors (message_id, model, digest, vec) "
                    "select ?, ?, ?, ? where exists (select 1 from messages where id = ?)",
                    [mid, model, digest, vec, mid],
                )

    def last_round(self, cid: int) -> int:
        row = self.db.execute(
            "select max(round) from messages where conversation_id = ?", [cid]
        ).fetchone()
        return int(row[0] or 0)

    # -- memory: facts the companions remember about the user, per group ------------------------
    def add_memory(
        self,
        group_name: str,
        text: str,
        *,
        source: str,
        conversation_id: int | None = None,
        message_id: int | None = None,
        pinned: bool = False,
    ) -> int:
        with self._lock, self.db.conn:
            ts = now()
            return int(
                self.db["memories"]
                .insert(
                    {
                        "group_name": group_name,
                        "conversation_id": conversation_id,
                        "message_id": message_id,
                        "text": text,
                        "source": source,
                        "pinned": int(pinned),
                        "created": ts,
                        "updated": ts,
                    }
                )
                .last_pk
            )

    def memories(self, group_name: str | None = None) -> list[dict[str, Any]]:
        """Facts, oldest first (of one group, or all), with the title of the conversation each
        came from (None when it came from none, or that conversation was deleted)."""
        sql = (
            "select m.*, c.title as conversation_title from memories m "
            "left join conversations c on c.id = m.conversation_id"
        )
        params: list[Any] = []
        if group_name is not None:
            sql += " where m.group_name = ?"
            params = [group_name]
        return [
            dict(r, pinned=bool(r["pinned"])) for r in self.db.query(sql + " order by m.id", params)
        ]

    def memory(self, fid: int) -> dict[str, Any]:
        import sqlite_utils

        try:
            r = self.db["memories"].get(fid)
        except sqlite_utils.db.NotFoundError:
            raise NotFound(
                f"No remembered fact {fid}; it may have been forgotten already."
            ) from None
        return dict(r, pinned=bool(r["pinned"]))

    def update_memory(
        self, fid: int, *, text: str | None = None, pinned: bool | None = None
    ) -> None:
        self.memory(fid)
        fields: dict[str, Any] = {"updated": now()}
        if text is not None:
            fields["text"] = text
        if pinned is not None:
            fields["pinned"] = int(pinned)
        with self._lock, self.db.conn:
            self.db["memories"].update(fid, fields)

    def delete_memory(self, fid: int) -> None:
        """Forget a fact (the freed page is overwritten: secure_delete)."""
        self.memory(fid)
        with self._lock, self.db.conn:
            self.db.execute("delete from memories where id = ?", [fid])

    # -- a group's own lorebook (engine.lorebook), edited in the app ---------------------------
    _LORE_FLAGS = ("selective", "constant", "case_sensitive", "enabled")

    def _lore_row(self, r: dict[str, Any]) -> dict[str, Any]:
        out = dict(
            r,
            keys=json.loads(r["keys"] or "[]"),
            secondary_keys=json.loads(r["secondary_keys"] or "[]"),
        )
        for f in self._LORE_FLAGS:
            out[f] = bool(r[f])
        return out

    def lore_entries(self, group_name: str | None = None) -> list[dict[str, Any]]:
        """A group's lorebook entries (or every group's), in the order they were added; keys as
        lists, flags as booleans."""
        sql, params = "select * from lore_entries", []
        if group_name is not None:
            sql, params = sql + " where group_name = ?", [group_name]
        return [self._lore_row(r) for r in self.db.query(sql + " order by id", params)]

    def lore_entry(self, eid: int) -> dict[str, Any]:
        import sqlite_utils

        try:
            return self._lore_row(self.db["lore_entries"].get(eid))
        except sqlite_utils.db.NotFoundError:
            raise NotFound(f"No lorebook entry {eid}; it may have been deleted already.") from None

    def _lore_fields(self, entry: dict[str, Any]) -> dict[str, Any]:
        fields = {
            k: entry[k]
            for k in ("name", "content", "insertion_order", "priority", "position")
            if k in entry
        }
        for k in ("keys", "secondary_keys"):
            if k in entry:
                fields[k] = json.dumps(list(entry[k]), ensure_ascii=False)
        for f in self._LORE_FLAGS:
            if f in entry:
                fields[f] = int(bool(entry[f]))
        return fields

    def add_lore_entry(self, group_name: str, entry: dict[str, Any]) -> int:
        """Add an entry (a checked ``engine.lorebook.check_entry`` dict) to a group's book."""
        with self._lock, self.db.conn:
            ts = now()
            row = {
                "group_name": group_name,
                "name": "",
                "keys": "[]",
                "secondary_keys": "[]",
                "content": "",
                "selective": 0,
                "constant": 0,
                "case_sensitive": 0,
                "enabled": 1,
                "insertion_order": 100.0,
                "priority": 10.0,
                "position": "after_char",
                **self._lore_fields(entry),
                "created": ts,
                "updated": ts,
            }
            self._touch_lorebook(group_name)
            return int(self.db["lore_entries"].insert(row).last_pk)

    def update_lore_entry(self, eid: int, entry: dict[str, Any]) -> None:
        old = self.lore_entry(eid)
        with self._lock, self.db.conn:
            self.db["lore_entries"].update(eid, {**self._lore_fields(entry), "updated": now()})
            self._touch_lorebook(old["group_name"])

    def delete_lore_entry(self, eid: int) -> None:
        old = self.lore_entry(eid)
        with self._lock, self.db.conn:
            self.db.execute("delete from lore_entries where id = ?", [eid])
            self._touch_lorebook(old["group_name"])

    def _touch_lorebook(self, group_name: str, **settings: Any) -> None:
        table = self.db["lorebooks"]
        if self.db.execute("select 1 from lorebooks where group_name = ?", [group_name]).fetchone():
            table.update(group_name, {**settings, "updated": now()})
        else:
            table.insert(
                {
                    "group_name": group_name,
                    "name": "",
                    "scan_depth": None,
                    "token_budget": None,
                    **settings,
                    "updated": now(),
                }
            )

    def set_lorebook_settings(
        self,
        group_name: str,
        *,
        scan_depth: int | None = None,
        token_budget: int | None = None,
        name: str | None = None,
    ) -> None:
        """A group book's scan depth, token budget or name (None: leave as is)."""
        settings = {
            k: v
            for k, v in (("scan_depth", scan_depth), ("token_budget", token_budget), ("name", name))
            if v is not None
        }
        with self._lock, self.db.conn:
            self._touch_lorebook(group_name, **settings)

    def has_lorebook(self, group_name: str) -> bool:
        """Whether the group's book lives in the database (once made or edited in the app)."""
        return (
            self.db.execute("select 1 from lorebooks where group_name = ?", [group_name]).fetchone()
            is not None
        )

    def group_lorebook(self, group_name: str) -> dict[str, Any] | None:
        """The group's book in V2 ``character_book`` form (None when it has none here), the
        form ``engine.lorebook.parse_book`` reads, so it works in prompts like a card's book."""
        rows = list(self.db.query("select * from lorebooks where group_name = ?", [group_name]))
        if not rows:
            return None
        book: dict[str, Any] = {"name": rows[0]["name"] or "", "entries": []}
        for k in ("scan_depth", "token_budget"):
            if rows[0][k] is not None:
                book[k] = rows[0][k]
        for e in self.lore_entries(group_name):
            book["entries"].append(
                {
                    k: e[k]
                    for k in (
                        "name",
                        "keys",
                        "secondary_keys",
                        "content",
                        "selective",
                        "constant",
                        "case_sensitive",
                        "enabled",
                        "insertion_order",
                        "priority",
                        "position",
                    )
                }
                | {"id": e["id"]}
            )
        return book

    def set_group_lorebook(self, group_name: str, book: dict[str, Any]) -> None:
        """Replace a group's book with ``book`` (a checked V2 ``character_book``: e.g. a persona
        set file's, copied in the first time the app opens that group)."""
        with self._lock, self.db.conn:
            self.db.execute("delete from lore_entries where group_name = ?", [group_name])
            self.db.execute("delete from lorebooks where group_name = ?", [group_name])
            self._touch_lorebook(
                group_name,
                name=book.get("name") or "",
                scan_depth=book.get("scan_depth"),
                token_budget=book.get("token_budget"),
            )
            ts = now()
            for e in book.get("entries") or []:
                self.db["lore_entries"].insert(
                    {
                        "group_name": group_name,
                        "name": "",
                        "keys": "[]",
                        "secondary_keys": "[]",
                        "content": "",
                        "selective": 0,
                        "constant": 0,
                        "case_sensitive": 0,
                        "enabled": 1,
                        "insertion_order": 100.0,
                        "priority": 10.0,
                        "position": "after_char",
                        **self._lore_fields(e),
                        "created": ts,
                        "updated": ts,
                    }
                )

    # -- models -------------------------------------------------------------------------------
    def upsert_model(self, info: dict[str, Any]) -> None:
        with self._lock, self.db.conn:
            self.db["models"].upsert(info, pk="name")

    def models(self) -> list[dict[str, Any]]:
        return [
            dict(r, bundled=bool(r["bundled"]))
            for r in self.db["models"].rows_where(order_by="name")
        ]

    def model(self, name: str) -> dict[str, Any] | None:
        rows = list(self.db["models"].rows_where("name = ?", [name]))
        return dict(rows[0], bundled=bool(rows[0]["bundled"])) if rows else None

    # -- export ---------------------------------------------------------------------------------
    def export_json(self, cid: int) -> dict[str, Any]:
        conv = self.conversation(cid)
        return {"conversation": conv, "members": self.members(cid), "messages": self.messages(cid)}

    def export_markdown(self, cid: int) -> str:
        conv = self.conversation(cid)
        lines = [
            f"# {conv['title']}",
            "",
            f"Group: {conv['group_name']} · policy: {conv['policy']} · started {conv['created']}",
            "",
            "Companions: " + ", ".join(m["name"] for m in self.members(cid)),
            "",
        ]
        for m in self.messages(cid):
            who = "You" if m["role"] == "user" else m["speaker"]
            lines.append(f"**{who}** ({m['created'][:19].replace('T', ' ')}):")
            if m.get("directive"):
                lines.append(f"> _Director: {m['directive']}_")
            lines.extend(["", m["text"], ""])
        return "\n".join(lines)

    def iter_all(self) -> Iterator[dict[str, Any]]:
        for c in self.conversations():
            yield self.export_json(c["id"])
