"""The encrypted history's cost: a round's storage work and whole rounds with encryption on and
off, and converting a 10,000-message history (docs/privacy.md has the numbers).

    flock /tmp/mascot-cpu.lock nice -n 19 .venv/bin/python scripts/bench_encryption.py \\
        [--messages 10000] [--storage-rounds 200] [--model-rounds 3] [--out docs/encryption-bench.json]

Storage work per round, as ``GroupChat.send`` does it for a three-companion round with memory
on: the user's message, the group's facts and lorebook, the recall candidates (the user's
earlier messages, up to 2,000) with their stored embeddings, one new embedding, three replies.
Whole rounds run on the bundled model (round-robin, three companions, 24-token replies, seeded,
memory off: recall would first embed the fixture's messages with the real encoder) on the same
history, plain and encrypted, alternating so both see the same machine load.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from engine.chat.group import GroupChat
from engine.chat.settings import ChatSettings
from engine.cipher import is_encrypted
from engine.llm.runtime import RuntimePool
from engine.models.registry import bundled_model_path
from engine.personas import PersonaSet, persona_from_dict
from engine.storage import Store, forget_passphrases

PASS = "bench passphrase, not a secret"
WORDS = (
    "today work sister dog walk tired happy worried exam rain coffee friend call late "
    "dinner weekend plan song book train garden quiet loud early"
).split()


def fill(path: Path, n_messages: int, seed: int = 0) -> int:
    """A history of ``n_messages`` messages over conversations of 200, half the user's (each
    with a 384-float embedding, as recall stores them), some facts and a lorebook. Returns the
    last conversation's id."""
    rng = random.Random(seed)
    store = Store(path)
    cid = 0
    with store.db.conn:  # one transaction: building the fixture is not what is measured
        for i in range(n_messages):
            if i % 200 == 0:
                cid = (
                    store.db["conversations"]
                    .insert(
                        {
                            "title": f"Conversation {i // 200}",
                            "group_name": "support",
                            "policy": "round-robin",
                            "max_speakers": 3,
                            "created": "2026-12-07T00:00:00",
                            "updated": "2026-12-07T00:00:00",
                        }
                    )
                    .last_pk
                )
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 30)))
            mid = store.db.execute(
                "insert into messages (conversation_id, round, role, speaker, text, created, "
                "status) values (?, ?, ?, ?, ?, '2026-12-07T00:00:00', 'done')",
                [
                    cid,
                    i // 4,
                    "user" if i % 2 == 0 else "companion",
                    "User" if i % 2 == 0 else "Mia",
                    text,
                ],
            ).lastrowid
            if i % 2 == 0:
                store.db.execute(
                    "insert into message_vectors (message_id, model, digest, vec) "
                    "values (?, 'minilm', 'd', ?)",
                    [mid, rng.randbytes(1536)],
                )
    store.db.conn.commit()
    for k in range(20):
        store.add_memory("support", f"Fact number {k} about the user.", source="user")
    for k in range(10):
        store.add_lore_entry(
            "support", {"name": f"Entry {k}", "keys": [WORDS[k]], "content": f"Lore {k}."}
        )
    store.close()
    return int(cid)


def storage_round(store: Store, cid: int, rng: random.Random) -> None:
    text = " ".join(rng.choice(WORDS) for _ in range(16))
    mid = store.add_message(cid, role="user", speaker="User", text=text, round=1)
    store.memories("support")
    store.group_lorebook("support")
    ids = [r["id"] for r in store.user_messages("support", exclude=cid)]
    store.message_vectors(ids, "minilm")
    store.put_message_vectors([(mid, "d", rng.randbytes(1536))], "minilm")
    for who in ("Mia", "Theo", "Ada"):
        store.add_message(cid, role="companion", speaker=who, text=text[::-1], round=1)
    store.last_round(cid)


def time_storage(plain: Path, enc: Path, cid: int, rounds: int) -> dict:
    """Median open time (5 opens each) and per-round storage time, plain and encrypted rounds
    alternating so both see the same machine load."""
    opens: dict[str, list[float]] = {"off": [], "on": []}
    for _ in range(5):
        for k, path, key in (("off", plain, None), ("on", enc, PASS)):
            forget_passphrases()
            t = time.perf_counter()
            Store(path, passphrase=key).close()
            opens[k].append(time.perf_counter() - t)
    stores = {"off": Store(plain), "on": Store(enc, passphrase=PASS)}
    rngs = {"off": random.Random(1), "on": random.Random(1)}
    times: dict[str, list[float]] = {"off": [], "on": []}
    for i in range(rounds):
        for k in ("off", "on") if i % 2 == 0 else ("on", "off"):
            t = time.perf_counter()
            storage_round(stores[k], cid, rngs[k])
            times[k].append(time.perf_counter() - t)
    for st in stores.values():
        st.close()
    return {
        k: {
            "open_ms": round(statistics.median(opens[k]) * 1000, 1),
            "round_median_ms": round(statistics.median(v) * 1000, 2),
            "round_p90_ms": round(sorted(v)[int(0.9 * len(v))] * 1000, 2),
        }
        for k, v in times.items()
    }


def group() -> PersonaSet:
    members = [
        persona_from_dict(
            {"name": n, "role": r, "traits": ["kind"], "speaking_style": "Short and warm."}
        )
        for n, r in (("Mia", "the listener"), ("Theo", "the planner"), ("Ada", "the joker"))
    ]
    return PersonaSet(name="support", title="Bench", description="bench group", members=members)


def model_rounds(plain: Path, encrypted: Path, n: int) -> dict:
    pool = RuntimePool(n_ctx=2048, n_threads=2)
    model = bundled_model_path()
    stores = {"off": Store(plain), "on": Store(encrypted, passphrase=PASS)}
    chats = {
        k: GroupChat(
            group(),
            store=s,
            backend_for=lambda _m: pool.get(model),
            settings=ChatSettings(
                policy="round-robin",
                max_speakers=3,
                min_speakers=3,
                max_tokens=24,
                seed=7,
                memory=False,
            ),
        )
        for k, s in stores.items()
    }
    times: dict[str, list[float]] = {"off": [], "on": []}
    rng = random.Random(2)
    for i in range(n + 1):  # the first pair warms the model up and is not counted
        text = " ".join(rng.choice(WORDS) for _ in range(12))
        for k in ("off", "on") if i % 2 == 0 else ("on", "off"):
            t = time.perf_counter()
            list(chats[k].send(text, threading.Event()))
            if i:
                times[k].append(time.perf_counter() - t)
            say(f"round {i} encryption {k}: {time.perf_counter() - t:.1f} s")
    for s in stores.values():
        s.close()
    return {
        k: {"median_s": round(statistics.median(v), 3), "rounds": len(v)} for k, v in times.items()
    }


def say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--messages", type=int, default=10_000)
    p.add_argument("--storage-rounds", type=int, default=200)
    p.add_argument("--model-rounds", type=int, default=3, help="0 skips the rounds on the model")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mascot-cipher-bench-"))
    try:
        plain, enc = work / "plain.db", work / "encrypted.db"
        say(f"filling a history of {args.messages:,} messages")
        cid = fill(plain, args.messages)
        say("converting")
        shutil.copy(plain, enc)
        size = plain.stat().st_size

        store = Store(enc)
        conversions = {}
        for name, run in (
            ("encrypt", lambda: store.encrypt(PASS)),
            ("change_passphrase", lambda: store.change_passphrase(PASS, PASS + "!")),
            ("decrypt", lambda: store.decrypt(PASS + "!")),
            ("encrypt_again", lambda: store.encrypt(PASS)),
        ):
            t = time.perf_counter()
            done = run()
            conversions[name] = {"s": round(time.perf_counter() - t, 3), "rows": done.rows}
        store.close()
        assert is_encrypted(enc) and not is_encrypted(plain)

        say("storage rounds")
        storage = time_storage(plain, enc, cid, args.storage_rounds)
        result = {
            "date": time.strftime("%Y-%m-%d"),
            "machine": f"{platform.machine()}, {platform.processor() or platform.system()}",
            "history": {"messages": args.messages, "file_mb": round(size / 1e6, 2)},
            "conversion": conversions,
            "storage_per_round": storage,
        }
        if args.model_rounds:
            say("rounds on the bundled model")
            result["model_rounds"] = model_rounds(plain, enc, args.model_rounds)
        text = json.dumps(result, indent=2)
        print(text)
        if args.out:
            args.out.write_text(text + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
