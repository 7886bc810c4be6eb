"""The `mascot` command: one JSON round on the real model, and one-line errors."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from mascot_cli.main import main

ROOT = Path(__file__).resolve().parent.parent


def mascot(*args, env_home, input_text=None, timeout=900):
    env = {**os.environ, "MASCOT_HOME": str(env_home)}
    return subprocess.run(
        [sys.executable, "-m", "mascot_cli.main", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=timeout,
        input=input_text,
    )


@pytest.mark.model
def test_json_round_on_support_circle(mascot_home):
    r = mascot(
        "chat",
        "--group",
        "support",
        "--say",
        "I have a job interview tomorrow and I'm nervous.",
        "--json",
        "--max-tokens",
        "40",
        env_home=mascot_home,
    )
    assert r.returncode == 0, r.stderr
    events = [json.loads(line) for line in r.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert types[0] == "round_start" and types[-1] == "round_end"
    directors = [e for e in events if e["type"] == "director"]
    messages = [e for e in events if e["type"] == "message"]
    assert {"speaker", "directive"} <= set(directors[0])
    assert len(messages) == 3 and len({m["speaker"] for m in messages}) == 3
    assert all(m["text"].strip() for m in messages)
    # stored in SQLite, visible through the history commands
    listing = mascot("history", "list", env_home=mascot_home)
    assert "support" in listing.stdout and "4 msgs" in listing.stdout
    cid = listing.stdout.split()[0]
    md = mascot("history", "export", cid, "--format", "md", env_home=mascot_home)
    assert messages[0]["text"].splitlines()[0] in md.stdout
    js = json.loads(
        mascot("history", "export", cid, "--format", "json", env_home=mascot_home).stdout
    )
    assert [m["speaker"] for m in js["messages"][1:]] == [m["speaker"] for m in messages]
    gone = mascot("history", "delete", cid, "--yes", env_home=mascot_home)
    assert (
        gone.returncode == 0
        and "No conversations" in mascot("history", "list", env_home=mascot_home).stdout
    )


@pytest.mark.model
def test_round_opens_no_network_connection(monkeypatch, capsys):
    attempts = []
    real_connect = socket.socket.connect

    def guard(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            attempts.append(address)
            raise OSError("network disabled in test")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guard)
    code = main(
        [
            "chat",
            "--group",
            "workplace",
            "--say",
            "Let's plan the Q3 launch.",
            "--json",
            "--max-tokens",
            "24",
            "--max-speakers",
            "2",
        ]
    )
    assert code == 0
    assert attempts == []
    assert '"type": "message"' in capsys.readouterr().out


@pytest.mark.parametrize(
    "args,needle,code",
    [
        (["chat", "--group", "no-such-group", "--say", "hi"], "No persona set 'no-such-group'", 1),
        (["chat", "--say", "   "], "message is empty", 1),
        (["chat", "--json"], "--json needs --say", 1),
        (
            ["chat", "--max-speakers", "0", "--say", "hi"],
            "--max-speakers must be between 1 and 8",
            1,
        ),
        (["chat", "--policy", "loud", "--say", "hi"], "Invalid value for '--policy'", 2),
        (
            ["chat", "--history-tokens", "5", "--say", "hi"],
            "--history-tokens must be 0 (all that fits) or at least 256",
            1,
        ),
        (["models", "add", "missing.gguf"], "no such file", 1),
        (["history", "export", "999"], "No conversation 999", 1),
        (["personas", "show", "support/Nobody"], "No companion named 'Nobody'", 1),
    ],
)
def test_errors_are_one_line_without_traceback(args, needle, code, capsys):
    assert main(args) == code
    err = capsys.readouterr().err
    assert needle in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_bad_persona_file_names_the_field(tmp_path, capsys):
    f = tmp_path / "group.json"
    f.write_text(
        json.dumps(
            {
                "name": "g",
                "members": [
                    {"name": "Kai", "role": "friend", "traits": 5, "speaking_style": "calm"}
                ],
            }
        )
    )
    assert main(["chat", "--group", str(f), "--say", "hi"]) == 1
    err = capsys.readouterr().err
    assert "'traits'" in err and "Kai" in err and len(err.strip().splitlines()) == 1


def test_bad_gguf_is_refused_by_models_add(tmp_path, capsys):
    f = tmp_path / "broken.gguf"
    f.write_bytes(b"GGUF" + b"\x00" * 5000)
    assert main(["models", "add", str(f)]) == 1
    err = capsys.readouterr().err
    assert "broken.gguf" in err and len(err.strip().splitlines()) == 1


def test_models_list_shows_bundled(capsys):
    assert main(["models", "list"]) == 0
    out = capsys.readouterr().out
    assert "smollm2-135m-instruct-q4_1" in out and "Q4_1" in out and "(bundled)" in out


def test_personas_list_import_export_roundtrip(tmp_path, capsys):
    assert main(["personas", "list"]) == 0
    out = capsys.readouterr().out
    for name in ("support", "workplace", "writers-room"):
        assert name in out
    card = tmp_path / "mia.png"
    assert main(["personas", "export", "support/Mia", str(card)]) == 0
    assert card.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["personas", "import", str(card)]) == 0
    capsys.readouterr()
    assert main(["personas", "show", "Mia/Mia", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)[0]
    assert shown["name"] == "Mia" and shown["role"].startswith("a warm listener")


def test_interactive_chat_quits_cleanly(mascot_home):
    r = mascot(
        "chat", "--group", "support", "--no-color", env_home=mascot_home, input_text="/who\n/quit\n"
    )
    assert r.returncode == 0, r.stderr
    assert "not therapists" in r.stdout or "not people" in r.stdout
    assert "Mia" in r.stdout and "Theo" in r.stdout
