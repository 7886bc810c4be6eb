"""The results database: runs, cached work and every aggregated number (SQLite, sqlite-utils).

Tables:

* ``runs``         one row per ``mascot-eval`` invocation: command, settings, versions, times;
* ``rounds``       one generated round per (configuration, scenario, generation settings): the
                   resumable cache, keyed by a hash of everything that shapes the round;
* ``judgments``    one judge's scores for one reply in its context (cache, keyed the same way);
* ``comparisons``  one judge's pick among configurations' rounds in one presentation order;
* ``results``      aggregated metrics: ``run_id, config, metric, domain, persona, value,
                   ci_low, ci_high, n, created``. Compare runs over time with
                   ``mascot-eval compare``.

Schema changes are append-only migrations recorded in ``_migrations`` (as in ``engine.storage``).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import sqlite_utils

from engine.errors import StorageError
from engine.migrations import apply_migrations, migration_registry

MIGRATIONS, migration = migration_registry()


@migration
def m001_initial(db: sqlite_utils.Database) -> None:
    db["runs"].create(
        {
            "id": str,
            "started": str,
            "finished": str,
            "status": str,
            "command": str,
            "settings": str,
            "versions": str,
        },
        pk="id",
    )
    db["rounds"].create(
        {
            "key": str,
            "config": str,
            "scenario_id": str,
            "domain": str,
            "data": str,
            "created": str,
            "run_id": str,
        },
        pk="key",
    )
    db["judgments"].create({"key": str, "judge": str, "values": str, "created": str}, pk="key")
    db["comparisons"].create({"key": str, "judge": str, "choice": str, "created": str}, pk="key")
    db["results"].create(
        {
            "id": int,
            "run_id": str,
            "config": str,
            "metric": str,
            "domain": str,
            "persona": str,
            "value": float,
            "ci_low": float,
            "ci_high": float,
            "n": int,
            "created": str,
        },
        pk="id",
        foreign_keys=[("run_id", "runs", "id")],
    )
    db["results"].create_index(["run_id", "config", "metric"])


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def code_fingerprint(*modules: Any) -> str:
    """A hash of the source files of ``modules``: cached work made by other code is not reused
    (the engine changes how rounds are generated; the judge module how replies are scored)."""
    h = hashlib.sha256()
    for m in modules:
        h.update(Path(m.__file__).read_bytes())
    return h.hexdigest()[:16]


def digest(obj: Any) -> str:
    """A stable key for any JSON-able object."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[
        :32
    ]


class ResultsDB:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite_utils.Database(sqlite3.connect(str(self.path), timeout=30))
            self.db.enable_wal()
            self.migrate()
        except sqlite3.DatabaseError as e:
            raise StorageError(
                f"{self.path}: the results database cannot be opened ({e}); "
                "move it away or pick another --out/--db."
            ) from None

    def migrate(self) -> list[str]:
        return apply_migrations(self.db, MIGRATIONS, now)

    def close(self) -> None:
        self.db.conn.close()

    # -- runs -------------------------------------------------------------------------------------
    def start_run(self, run_id: str, command: str, settings: dict, versions: dict) -> None:
        with self.db.conn:
            self.db["runs"].insert(
                {
                    "id": run_id,
                    "started": now(),
                    "finished": None,
                    "status": "running",
                    "command": command,
                    "settings": json.dumps(settings),
                    "versions": json.dumps(versions),
                },
                replace=True,
            )

    def finish_run(self, run_id: str, status: str = "done") -> None:
        with self.db.conn:
            self.db["runs"].update(run_id, {"finished": now(), "status": status})

    def runs(self) -> list[dict]:
        return list(self.db["runs"].rows_where(order_by="started, id"))

    # -- caches -----------------------------------------------------------------------------------
    def get_round(self, key: str) -> dict | None:
        rows = list(self.db["rounds"].rows_where("key = ?", [key]))
        return json.loads(rows[0]["data"]) if rows else None

    def put_round(
        self, key: str, config: str, scenario_id: str, domain: str, data: dict, run_id: str
    ) -> None:
        with self.db.conn:  # one transaction per round: a crash loses at most the round running
            self.db["rounds"].insert(
                {
                    "key": key,
                    "config": config,
                    "scenario_id": scenario_id,
                    "domain": domain,
                    "data": json.dumps(data, ensure_ascii=False),
                    "created": now(),
                    "run_id": run_id,
                },
                replace=True,
            )

    def count_rounds(self) -> int:
        return self.db["rounds"].count

    def get_judgment(self, key: str) -> dict | None:
        rows = list(self.db["judgments"].rows_where("key = ?", [key]))
        return json.loads(rows[0]["values"]) if rows else None

    def put_judgment(self, key: str, judge: str, values: dict) -> None:
        with self.db.conn:
            self.db["judgments"].insert(
                {"key": key, "judge": judge, "values": json.dumps(values), "created": now()},
                replace=True,
            )

    def get_comparison(self, key: str) -> str | None:
        rows = list(self.db["comparisons"].rows_where("key = ?", [key]))
        return rows[0]["choice"] if rows else None

    def put_comparison(self, key: str, judge: str, choice: str) -> None:
        with self.db.conn:
            self.db["comparisons"].insert(
                {"key": key, "judge": judge, "choice": choice, "created": now()}, replace=True
            )

    # -- results ----------------------------------------------------------------------------------
    def put_results(self, run_id: str, rows: list[dict]) -> None:
        ts = now()
        with self.db.conn:
            self.db["results"].delete_where("run_id = ?", [run_id])
            self.db["results"].insert_all(
                [
                    {
                        "run_id": run_id,
                        "domain": "all",
                        "persona": "",
                        "ci_low": None,
                        "ci_high": None,
                        "n": None,
                        **r,
                        "created": ts,
                    }
                    for r in rows
                ]
            )

    def results(self, run_id: str) -> list[dict]:
        return list(self.db["results"].rows_where("run_id = ?", [run_id], order_by="id"))
