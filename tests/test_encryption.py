"""The history encrypted at rest (engine/cipher.py, Store.encrypt/change_passphrase/decrypt):
real SQLite and SQLCipher files, a real subprocess killed during conversion, a real round."""

import hashlib
import logging
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from helpers import make_group

from engine.chat.group import GroupChat
from engine.chat.settings import ChatSettings
from engine.cipher import (
    Locked,
    WrongPassphrase,
    is_encrypted,
    old_path,
    sidecars,
    work_path,
)
from engine.data import delete_all, write_export
from engine.doctor import history_state
from engine.errors import InputError, StorageError
from engine.storage import Store, forget_passphrases

ROOT = Path(__file__).resolve().parent.parent
SECRET = "my sister Ylva hides the spare key under the blue flowerpot"
PASS = "correct horse battery"


@pytest.fixture(autouse=True)
def forget_unlocked():
    """Each test starts with no history unlocked in this process."""
    forget_passphrases()
    yield
    forget_passphrases()


def fill(store, n=40):
    """A history with every kind of row: conversation, members, messages, a fact, an
    embedding, a group lorebook and a model."""
    cid = store.create_conversation(
        title="Evening chat",
        group_name="support",
        policy="director",
        max_speakers=3,
        members=[{"name": "Mia"}, {"name": "Theo"}],
    )
    for i in range(n):
        store.add_message(
            cid,
            round=i // 2 + 1,
            role="user" if i % 2 == 0 else "companion",
            speaker="User" if i % 2 == 0 else "Mia",
            text=f"{SECRET} #{i}",
        )
    mid = store.messages(cid)[0]["id"]
    store.add_memory("support", "The user's sister is called Ylva.", source="user")
    store.put_message_vectors([(mid, "d1", b"\x01\x02\x03\x04" * 96)], "minilm")
    store.add_lore_entry(
        "support", {"name": "Key", "keys": ["flowerpot"], "content": "Ylva's flowerpot is blue."}
    )
    store.upsert_model(
        {"name": "tiny", "path": "/x.gguf", "size": 1, "bundled": 0, "kind": "model", "base": ""}
    )
    return cid


def snapshot(store):
    """Everything the user would miss if it were lost."""
    cid = store.conversations()[0]["id"]
    return {
        "messages": [(m["speaker"], m["text"]) for m in store.messages(cid)],
        "members": [m["name"] for m in store.members(cid)],
        "facts": [f["text"] for f in store.memories()],
        "vectors": store.message_vectors([store.messages(cid)[0]["id"]], "minilm"),
        "lore": [(e["name"], e["keys"], e["content"]) for e in store.lore_entries()],
        "models": [m["name"] for m in store.models()],
    }


def file_bytes(path):
    """The database and every file SQLite keeps beside it."""
    return b"".join(p.read_bytes() for p in [path, *sidecars(path)] if p.exists())


def digest(path):
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(path.parent.iterdir())
    }


def test_encrypting_keeps_everything_and_the_files_hold_no_text(tmp_path):
    path = tmp_path / "mascot.db"
    store = Store(path)
    cid = fill(store)
    before = snapshot(store)
    assert SECRET.encode() in file_bytes(path)  # the plain file is readable by anyone

    done = store.encrypt(PASS)
    assert done.rows >= 40 and is_encrypted(path)
    assert snapshot(store) == before
    store.add_message(cid, role="user", speaker="User", text="zebra crossing at midnight")
    # the new message sits in the WAL until a checkpoint: the WAL is encrypted too
    assert path.with_name("mascot.db-wal").exists()
    raw = file_bytes(path)
    for text in (SECRET, "Ylva", "flowerpot", "zebra crossing", "Evening chat"):
        assert text.encode() not in raw
    assert not work_path(path).exists() and not old_path(path).exists()
    store.close()

    again = Store(path, passphrase=PASS)
    assert again.integrity_check() == "ok"
    assert snapshot(again)["messages"][-1] == ("User", "zebra crossing at midnight")
    assert snapshot(again)["facts"] == before["facts"]
    again.close()


def test_a_wrong_passphrase_is_one_line_and_changes_nothing(tmp_path):
    path = tmp_path / "mascot.db"
    store = Store(path)
    fill(store)
    store.encrypt(PASS)
    store.close()
    forget_passphrases()
    files = digest(path)

    with pytest.raises(WrongPassphrase) as err:
        Store(path, passphrase="not the passphrase")
    assert "\n" not in str(err.value) and "passphrase does not open" in str(err.value)
    assert digest(path) == files

    with pytest.raises(Locked) as err:
        Store(path)
    assert "MASCOT_PASSPHRASE" in str(err.value) and "\n" not in str(err.value)
    assert digest(path) == files

    store = Store(path, passphrase=PASS)
    with pytest.raises(WrongPassphrase):
        store.change_passphrase("not the passphrase", "a brand new one")
    with pytest.raises(WrongPassphrase):
        store.decrypt("not the passphrase")
    assert is_encrypted(path) and len(snapshot(store)["messages"]) == 40
    store.close()


def test_a_short_passphrase_is_refused_before_anything_changes(tmp_path):
    path = tmp_path / "mascot.db"
    store = Store(path)
    fill(store)
    with pytest.raises(InputError) as err:
        store.encrypt("short")
    assert "at least 8 characters" in str(err.value)
    assert not is_encrypted(path) and len(snapshot(store)["messages"]) == 40
    store.close()


def test_changing_and_removing_the_passphrase(tmp_path):
    path = tmp_path / "mascot.db"
    store = Store(path)
    fill(store)
    before = snapshot(store)
    store.encrypt(PASS)
    store.change_passphrase(PASS, "a second passphrase")
    assert snapshot(store) == before
    store.close()
    forget_passphrases()
    with pytest.raises(WrongPassphrase):
        Store(path, passphrase=PASS)
    store = Store(path, passphrase="a second passphrase")
    store.decrypt("a second passphrase")
    assert not is_encrypted(path) and snapshot(store) == before
    store.close()
    forget_passphrases()
    plain = Store(path)  # no passphrase needed any more
    assert snapshot(plain) == before and plain.integrity_check() == "ok"
    plain.close()


def test_the_passphrase_from_the_environment_and_from_this_process(tmp_path, monkeypatch):
    path = tmp_path / "mascot.db"
    store = Store(path)
    fill(store)
    store.encrypt(PASS)
    # another store in this process (a dialog, the diagnostics) finds the history unlocked
    other = Store(path)
    assert len(snapshot(other)["messages"]) == 40
    other.close()
    store.close()
    forget_passphrases()
    monkeypatch.setenv("MASCOT_PASSPHRASE", PASS)
    assert len(snapshot(Store(path))["messages"]) == 40


def test_a_plain_export_of_an_encrypted_history_only_when_asked(tmp_path):
    store = Store(tmp_path / "mascot.db")
    fill(store)
    store.encrypt(PASS)
    with pytest.raises(InputError) as err:
        write_export(store, tmp_path / "out.zip")
    assert "plain" in str(err.value) and not (tmp_path / "out.zip").exists()
    assert write_export(store, tmp_path / "out.zip", plain=True) == 1
    assert (tmp_path / "out.zip").stat().st_size > 0
    store.close()


def test_deleting_all_data_keeps_the_history_encrypted_and_diagnostics_say_so(mascot_home):
    store = Store()
    fill(store)
    assert history_state().startswith("plain SQLite")
    store.encrypt(PASS)
    delete_all(store, delete_models=False)
    assert is_encrypted(store.path) and store.conversations() == []
    assert SECRET.encode() not in file_bytes(store.path)
    assert history_state().startswith("encrypted")
    store.close()
    forget_passphrases()
    assert Store(passphrase=PASS).integrity_check() == "ok"


# -- killed during conversion ------------------------------------------------------------------

CONVERTER = r"""
import sys
from engine.storage import Store

path, old, new, stop_at, nth = sys.argv[1:6]
old = old or None
new = new or None
seen = {}

def on_step(name):
    seen[name] = seen.get(name, 0) + 1
    if name == stop_at and seen[name] == int(nth):
        print("PAUSED", flush=True)
        sys.stdin.readline()  # the test kills this process here

store = Store(path, passphrase=old)
if new is None:
    store.decrypt(old, on_step)
elif old is None:
    store.encrypt(new, on_step)
else:
    store.change_passphrase(old, new, on_step)
print("FINISHED " + " ".join(f"{k}={v}" for k, v in seen.items()), flush=True)
"""


def run_converter(path, old, new, stop_at="", nth=1):
    """Run a conversion in a child process; stop it at the ``nth`` time it reaches ``stop_at``
    and SIGKILL it there. Returns the child's output up to then."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-c", CONVERTER, str(path), old or "", new or "", stop_at, str(nth)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    line = child.stdout.readline()
    if line.startswith("PAUSED"):
        leftovers = {p.name for p in path.parent.iterdir()}
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdin.close()
        child.stdout.close()
        child.stderr.close()
        return "PAUSED", leftovers
    out, err = child.communicate("")
    assert child.returncode == 0, err
    return line + out, set()


def make_history(tmp_path, n=600):
    path = tmp_path / "mascot.db"
    store = Store(path)
    fill(store, n)
    expected = snapshot(store)
    store.close()
    return path, expected


def test_a_whole_conversion_reports_its_steps(tmp_path):
    path, expected = make_history(tmp_path)
    out, _ = run_converter(path, None, PASS)
    assert out.startswith("FINISHED")
    steps = dict(kv.split("=") for kv in out.split()[1:])
    assert list(steps) == ["start", "copying", "copied", "verified", "replaced", "done"]
    assert int(steps["copying"]) >= 5  # a kill at the 3rd lands mid-copy
    assert is_encrypted(path)


@pytest.mark.parametrize(
    "stop_at, nth, becomes",
    [
        ("start", 1, "old"),
        ("copying", 3, "old"),
        ("copied", 1, "old"),
        ("verified", 1, "old"),
        ("replaced", 1, "new"),
    ],
)
def test_sigkill_while_encrypting_leaves_the_old_or_the_new_database_whole(
    tmp_path, stop_at, nth, becomes
):
    path, expected = make_history(tmp_path)
    state, leftovers = run_converter(path, None, PASS, stop_at, nth)
    assert state == "PAUSED"
    if stop_at in ("copying", "copied", "verified"):
        assert work_path(path).name in leftovers  # killed with the new copy half made
    if stop_at == "replaced":
        assert old_path(path).name in leftovers  # killed before the plain file was wiped

    assert is_encrypted(path) == (becomes == "new")
    store = Store(path, passphrase=PASS if becomes == "new" else None)
    assert store.integrity_check() == "ok"
    assert snapshot(store) == expected
    # the next open cleared what the killed conversion left, and no file holds plain text
    names = {p.name for p in tmp_path.iterdir()}
    assert work_path(path).name not in names and old_path(path).name not in names
    if becomes == "new":
        assert all(SECRET.encode() not in p.read_bytes() for p in tmp_path.iterdir())
    store.close()


@pytest.mark.parametrize(
    "stop_at, nth, becomes", [("copying", 3, "old"), ("verified", 1, "old"), ("done", 1, "new")]
)
def test_sigkill_while_decrypting_or_changing_the_passphrase(tmp_path, stop_at, nth, becomes):
    path, expected = make_history(tmp_path)
    store = Store(path)
    store.encrypt(PASS)
    store.close()
    forget_passphrases()
    for new, opens_with in ((None, None), ("a second passphrase", "a second passphrase")):
        state, _ = run_converter(path, PASS, new, stop_at, nth)
        assert state == "PAUSED"
        key = PASS if becomes == "old" else opens_with
        assert is_encrypted(path) == (key is not None)
        store = Store(path, passphrase=key)
        assert store.integrity_check() == "ok" and snapshot(store) == expected
        if becomes == "new":  # back to the first passphrase for the next direction
            if key is None:
                store.encrypt(PASS)
            else:
                store.change_passphrase(key, PASS)
        store.close()
        forget_passphrases()


# -- logs -----------------------------------------------------------------------------------------


class Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        self.lines.append(self.format(record))


def test_a_round_on_an_encrypted_history_logs_no_message_text(tmp_path, real_backend_for):
    store = Store(tmp_path / "mascot.db", passphrase=PASS)  # a new history, encrypted
    assert store.encrypted
    root = logging.getLogger()
    handler, level = Collect(), root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        chat = GroupChat(
            make_group(),
            store=store,
            backend_for=real_backend_for,
            settings=ChatSettings(policy="round-robin", max_speakers=2, min_speakers=2),
        )
        said = f"My name is Ylva and {SECRET}."
        events = list(chat.send(said, threading.Event()))
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    replies = [e.text for e in events if e.type == "message"]
    assert replies and all(r.strip() for r in replies)
    log_text = "\n".join(handler.lines)
    for text in [said, "Ylva", "flowerpot", *[r[:40] for r in replies if len(r) >= 12]]:
        assert text not in log_text
    assert SECRET.encode() not in file_bytes(store.path)
    cid = chat.conversation_id
    assert [m["text"] for m in store.messages(cid)][0] == said
    store.close()


# -- the terminal ---------------------------------------------------------------------------------


def mascot(*args, home, input_text="", passphrase=None):
    env = {**os.environ, "MASCOT_HOME": str(home), "PYTHONPATH": str(ROOT)}
    env.pop("MASCOT_PASSPHRASE", None)
    if passphrase is not None:
        env["MASCOT_PASSPHRASE"] = passphrase
    return subprocess.run(
        [sys.executable, "-m", "mascot_cli.main", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        input=input_text,
    )


def test_the_cli_encrypts_asks_for_the_passphrase_and_refuses_a_wrong_one(mascot_home):
    store = Store()
    fill(store, 6)
    store.close()
    path = mascot_home / "mascot.db"

    r = mascot("data", "encrypt", home=mascot_home, input_text=f"{PASS}\nsomething else\n")
    assert r.returncode == 1 and "differ" in r.stderr and not is_encrypted(path)
    r = mascot("data", "encrypt", home=mascot_home, input_text=f"{PASS}\n{PASS}\n")
    assert r.returncode == 0, r.stderr
    assert "cannot be read, by you or anyone" in r.stdout and is_encrypted(path)
    files = digest(path)

    r = mascot("history", "list", home=mascot_home)  # no passphrase: one line that says how
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "MASCOT_PASSPHRASE" in r.stderr
    r = mascot("history", "list", home=mascot_home, passphrase="not the passphrase")
    assert r.returncode == 1 and r.stderr.count("\n") == 1
    assert "passphrase does not open" in r.stderr and "Traceback" not in r.stderr
    assert digest(path) == files
    r = mascot("history", "list", home=mascot_home, input_text=f"{PASS}\n")  # typed when asked
    assert r.returncode == 0 and "Evening chat" in r.stdout

    out = mascot_home / "export.zip"
    r = mascot("data", "export", str(out), home=mascot_home, passphrase=PASS)
    assert r.returncode == 1 and "--plain" in r.stderr and not out.exists()
    r = mascot("data", "export", str(out), "--plain", home=mascot_home, passphrase=PASS)
    assert r.returncode == 0 and out.exists()

    r = mascot("data", "decrypt", "--yes", home=mascot_home, passphrase=PASS)
    assert r.returncode == 0, r.stderr
    assert not is_encrypted(path)
    r = mascot("history", "list", home=mascot_home)
    assert r.returncode == 0 and "Evening chat" in r.stdout


def test_no_conversion_while_another_store_has_the_history_open(tmp_path):
    path = tmp_path / "mascot.db"
    first = Store(path)
    fill(first, 4)
    second = Store(path)  # another window or `mascot` command
    with pytest.raises(StorageError) as err:
        second.encrypt(PASS)
    assert "open in another Mascot window or command" in str(err.value)
    assert not is_encrypted(path)
    first.add_memory("support", "Still writable.", source="user")
    assert "Still writable." in [f["text"] for f in second.memories()]
    first.close()
    second.encrypt(PASS)  # alone now
    assert is_encrypted(path) and len(snapshot(second)["messages"]) == 4
    second.close()
