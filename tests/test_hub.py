"""Hugging Face Hub downloads, against a stand-in server on loopback (never the internet)."""
import http.server
import socket
import threading
import time
from pathlib import Path

import pytest

from engine.errors import Cancelled, InputError, MascotError, ModelError
from engine.hub import OFFLINE, download_gguf, resolve_url
from engine.models import sha256_file

MiB = 1 << 20


class StandInHub:
    """Serves files at ``/{repo}/resolve/main/{file}`` on 127.0.0.1 the way the Hub does: the
    resolve URL redirects to a CDN path that streams the bytes. ``stall_after`` makes a file stop
    sending after that many bytes (until ``close``), like a stuck connection."""

    def __init__(self, files: dict[str, Path | bytes], stall_after: dict[str, int] | None = None):
        self.files = files
        self.stall_after = stall_after or {}
        self.release = threading.Event()
        self.requests: list[str] = []
        hub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            timeout = 15

            def log_message(self, *args):
                pass

            def do_GET(self):
                hub.requests.append(self.path)
                if self.path.startswith("/cdn/"):
                    return self._serve(self.path[len("/cdn/"):])
                if "/resolve/main/" in self.path and self.path in hub.files:
                    self.send_response(302)
                    self.send_header("Location", "/cdn" + self.path)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = b"Entry not found"
                self.send_response(404)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _serve(self, key):
                key = "/" + key
                src = hub.files[key]
                data = src if isinstance(src, bytes) else None
                size = len(data) if data is not None else Path(src).stat().st_size
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(size))
                self.end_headers()
                stall = hub.stall_after.get(key)
                sent = 0
                try:
                    f = None if data is not None else open(src, "rb")
                    while sent < size:
                        if stall is not None and sent >= stall:
                            hub.release.wait(10)
                            return
                        block = data[sent:sent + 64 * 1024] if data is not None else f.read(64 * 1024)
                        self.wfile.write(block)
                        sent += len(block)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                finally:
                    if data is None:
                        f.close()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.thread.start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def closed_port_endpoint() -> str:
    """An endpoint on loopback where nothing listens (connection refused, like being offline)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


REPO = "owner/tiny-GGUF"
FILE = "tiny.Q4_1.gguf"
PATH = f"/{REPO}/resolve/main/{FILE}"


@pytest.fixture
def dest(tmp_path):
    return tmp_path / "downloads"


@pytest.fixture
def hub(bundled_path):
    server = StandInHub({PATH: bundled_path, f"/{REPO}/resolve/main/page.gguf": b"<html>nope</html>" * 200,
                         f"/{REPO}/resolve/main/stuck.gguf": bundled_path},
                        stall_after={f"/{REPO}/resolve/main/stuck.gguf": 2 * MiB})
    yield server
    server.close()


def one_line(msg: str) -> str:
    assert "\n" not in msg and len(msg) < 300
    return msg


def test_download_streams_with_progress_and_registers(hub, store, tmp_path, bundled_path):
    seen = []
    out = download_gguf(REPO, FILE, tmp_path / "models", lambda d, t: seen.append((d, t)),
                        threading.Event(), endpoint=hub.endpoint, store=store)
    size = bundled_path.stat().st_size
    assert out == tmp_path / "models" / FILE and out.stat().st_size == size
    assert not list((tmp_path / "models").glob("*.part"))
    assert seen[0] == (0, size) and seen[-1] == (size, size) and len(seen) > 10
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))
    registered = {m["path"]: m for m in store.models()}
    info = registered[str(out.resolve())]
    assert info["quantization"] == "Q4_1"
    assert info["sha256"] == sha256_file(bundled_path)  # a byte-identical copy
    assert hub.requests[0] == PATH and hub.requests[1].startswith("/cdn/")  # followed the redirect


def test_cancel_midway_removes_the_partial_file(hub, store, dest):
    cancel = threading.Event()

    def progress(done, total):
        if done >= 3 * MiB:
            cancel.set()

    with pytest.raises(Cancelled) as e:
        download_gguf(REPO, FILE, dest, progress, cancel, endpoint=hub.endpoint, store=store)
    assert "cancelled" in one_line(str(e.value)).lower()
    assert not dest.exists() or list(dest.iterdir()) == []
    assert store.models() == []


def test_cancel_returns_at_once_when_the_server_stalls(hub, store, dest):
    cancel, started, outcome = threading.Event(), threading.Event(), {}

    def progress(done, total):
        if done >= MiB:
            started.set()

    def run():
        try:
            download_gguf(REPO, "stuck.gguf", dest, progress, cancel, endpoint=hub.endpoint, store=store)
        except MascotError as err:
            outcome["error"] = err

    worker = threading.Thread(target=run)
    worker.start()
    assert started.wait(10)
    t0 = time.perf_counter()
    cancel.set()
    worker.join(5)
    elapsed = time.perf_counter() - t0
    assert not worker.is_alive() and elapsed < 1.0
    assert isinstance(outcome["error"], Cancelled)
    assert not dest.exists() or list(dest.iterdir()) == []


def test_missing_file_names_file_and_repo(hub, store, dest):
    with pytest.raises(MascotError) as e:
        download_gguf(REPO, "missing.gguf", dest, None, None, endpoint=hub.endpoint, store=store)
    assert one_line(str(e.value)).startswith(f"No file 'missing.gguf' in repo '{REPO}'")
    assert not dest.exists() or list(dest.iterdir()) == []


def test_offline_is_one_clear_line(store, dest):
    with pytest.raises(MascotError) as e:
        download_gguf(REPO, FILE, dest, None, None, endpoint=closed_port_endpoint(), store=store)
    assert one_line(str(e.value)) == OFFLINE


def test_a_file_that_is_not_gguf_is_refused_and_not_kept(hub, store, dest):
    with pytest.raises(ModelError) as e:
        download_gguf(REPO, "page.gguf", dest, None, None, endpoint=hub.endpoint, store=store)
    msg = one_line(str(e.value))
    assert "page.gguf" in msg and "not a GGUF" in msg and "not kept" in msg
    assert not dest.exists() or list(dest.iterdir()) == []


@pytest.mark.parametrize("repo,file,needle", [
    ("no-slash", FILE, "repo id"),
    ("a/b/c", FILE, "repo id"),
    ("../etc", FILE, "repo id"),
    ("", FILE, "repo id"),
    (REPO, "model.bin", ".gguf"),
    (REPO, "../x.gguf", "file name"),
    (REPO, "", "file name"),
])
def test_bad_names_are_refused_before_any_request(repo, file, needle, dest):
    with pytest.raises(InputError) as e:
        download_gguf(repo, file, dest, None, None, endpoint=closed_port_endpoint())
    assert needle in one_line(str(e.value))


def test_endpoint_comes_from_argument_then_hf_endpoint_then_the_hub(monkeypatch):
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    assert resolve_url(REPO, "a b.gguf") == f"https://huggingface.co/{REPO}/resolve/main/a%20b.gguf"
    monkeypatch.setenv("HF_ENDPOINT", "http://mirror.local/")
    assert resolve_url(REPO, FILE).startswith("http://mirror.local/owner/")
    assert resolve_url(REPO, FILE, endpoint="http://x").startswith("http://x/owner/")
