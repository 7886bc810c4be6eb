"""Hugging Face Hub downloads, against a stand-in server on loopback (never the internet)."""

import hashlib
import http.server
import json
import socket
import threading
from pathlib import Path

import pytest

from engine.errors import Cancelled, InputError, MascotError, ModelError
from engine.models.hub import OFFLINE, download_gguf, resolve_url
from engine.models.registry import sha256_file

MiB = 1 << 20


class StandInHub:
    """Serves files at ``/{repo}/resolve/main/{file}`` on 127.0.0.1 the way the Hub does: the
    resolve URL redirects to a CDN path that streams the bytes, and carries the file's own
    metadata (``X-Linked-Size``, ``X-Linked-Etag`` = sha256, ``X-Repo-Commit``), also for HEAD.
    The CDN honours ``Range: bytes=N-`` with a 206 (unless ``no_range``). ``stall_after`` makes a
    file stop sending after that many bytes (until ``close``), like a stuck connection;
    ``cut_after`` drops the connection after that many bytes of a response, for the first
    ``cuts`` responses; ``advertise`` overrides the sha256 the metadata announces (a file that
    does not match it arrives "corrupted")."""

    def __init__(
        self,
        files: dict[str, Path | bytes],
        stall_after: dict[str, int] | None = None,
        cut_after: dict[str, int] | None = None,
        cuts: int = 1,
        advertise: dict[str, str] | None = None,
        no_range: bool = False,
    ):
        self.files = files
        self.stall_after = stall_after or {}
        self.cut_after = cut_after or {}
        self.cuts_left = {k: cuts for k in self.cut_after}
        self.advertise = advertise or {}
        self.no_range = no_range
        self.release = threading.Event()
        self.requests: list[str] = []
        self.ranges: list[str | None] = []  # the Range header of each CDN request
        self.sent: list[int] = []  # body bytes sent per CDN request
        hub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            timeout = 15

            def log_message(self, *args):
                pass

            def do_HEAD(self):
                self.do_GET(head=True)

            def do_GET(self, head=False):
                hub.requests.append(("HEAD " if head else "") + self.path)
                if self.path.startswith("/cdn/") and not head:
                    return self._serve(self.path[len("/cdn/") :])
                if "/resolve/main/" in self.path and self.path in hub.files:
                    data = hub._bytes(self.path)
                    self.send_response(302)
                    self.send_header("Location", "/cdn" + self.path)
                    self.send_header("X-Linked-Size", str(len(data)))
                    sha = hub.advertise.get(self.path) or hashlib.sha256(data).hexdigest()
                    self.send_header("X-Linked-Etag", f'"{sha}"')
                    self.send_header("X-Repo-Commit", "0123456789abcdef0123456789abcdef01234567")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = b"Entry not found"
                self.send_response(404)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if not head:
                    self.wfile.write(body)

            def _serve(self, key):
                key = "/" + key
                data = hub._bytes(key)
                rng = self.headers.get("Range")
                hub.ranges.append(rng)
                start = 0
                if rng and not hub.no_range:
                    start = int(rng.split("=")[1].split("-")[0])
                    if start >= len(data):
                        self.send_response(416)
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                else:
                    self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(data) - start))
                self.end_headers()
                stall = hub.stall_after.get(key)
                cut = hub.cut_after.get(key) if hub.cuts_left.get(key, 0) > 0 else None
                sent = 0
                try:
                    while start + sent < len(data):
                        if stall is not None and sent >= stall:
                            hub.release.wait(10)
                            return
                        if cut is not None and sent >= cut:
                            hub.cuts_left[key] -= 1
                            self.connection.shutdown(socket.SHUT_RDWR)  # a cut connection
                            return
                        block = data[start + sent : start + sent + 64 * 1024]
                        self.wfile.write(block)
                        sent += len(block)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                finally:
                    hub.sent.append(sent)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def _bytes(self, key: str) -> bytes:
        src = self.files[key]
        return src if isinstance(src, bytes) else Path(src).read_bytes()

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
    server = StandInHub(
        {
            PATH: bundled_path,
            f"/{REPO}/resolve/main/page.gguf": b"<html>nope</html>" * 200,
            f"/{REPO}/resolve/main/stuck.gguf": bundled_path,
        },
        stall_after={f"/{REPO}/resolve/main/stuck.gguf": 2 * MiB},
    )
    yield server
    server.close()


def one_line(msg: str) -> str:
    assert "\n" not in msg and len(msg) < 300
    return msg


def test_download_streams_with_progress_and_registers(hub, store, tmp_path, bundled_path):
    seen = []
    out = download_gguf(
        REPO,
        FILE,
        tmp_path / "models",
        lambda d, t, st: seen.append((d, t)),
        threading.Event(),
        endpoint=hub.endpoint,
        store=store,
    )
    size = bundled_path.stat().st_size
    assert out == tmp_path / "models" / FILE and out.stat().st_size == size
    assert not list((tmp_path / "models").glob("*.part"))
    assert seen[0] == (0, size) and seen[-1] == (size, size) and len(seen) > 10
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))
    registered = {m["path"]: m for m in store.models()}
    info = registered[str(out.resolve())]
    assert info["quantization"] == "Q4_1"
    assert info["sha256"] == sha256_file(bundled_path)  # a byte-identical copy
    assert hub.requests[0] == "HEAD " + PATH  # the Hub's own size and sha256 first
    assert hub.requests[1] == PATH and hub.requests[2].startswith("/cdn/")  # followed the redirect


def test_cancel_midway_removes_the_partial_file(hub, store, dest):
    cancel = threading.Event()

    def progress(done, total, status):
        if done >= 3 * MiB:
            cancel.set()

    with pytest.raises(Cancelled) as e:
        download_gguf(REPO, FILE, dest, progress, cancel, endpoint=hub.endpoint, store=store)
    assert "cancelled" in one_line(str(e.value)).lower()
    assert not dest.exists() or list(dest.iterdir()) == []
    assert store.models() == []


def test_cancel_returns_at_once_when_the_server_stalls(hub, store, dest):
    cancel, started, outcome = threading.Event(), threading.Event(), {}

    def progress(done, total, status):
        if done >= MiB:
            started.set()

    def run():
        try:
            download_gguf(
                REPO, "stuck.gguf", dest, progress, cancel, endpoint=hub.endpoint, store=store
            )
        except MascotError as err:
            outcome["error"] = err

    worker = threading.Thread(target=run)
    worker.start()
    assert started.wait(10)
    cancel.set()
    worker.join(5)
    assert not worker.is_alive()  # the download stopped (the stuck server never finishes)
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


@pytest.mark.parametrize(
    "repo,file,needle",
    [
        ("no-slash", FILE, "repo id"),
        ("a/b/c", FILE, "repo id"),
        ("../etc", FILE, "repo id"),
        ("", FILE, "repo id"),
        (REPO, "model.bin", ".gguf"),
        (REPO, "../x.gguf", "file name"),
        (REPO, "", "file name"),
    ],
)
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


# -- resumable, verified downloads -------------------------------------------------------------


def record_of(path):
    return json.loads(path.with_name(path.name + ".download.json").read_text())


def test_a_cut_connection_resumes_with_a_range_request(bundled_path, store, dest):
    size = bundled_path.stat().st_size
    hub = StandInHub({PATH: bundled_path}, cut_after={PATH: 3 * MiB}, cuts=2)
    try:
        statuses = []
        out = download_gguf(
            REPO,
            FILE,
            dest,
            lambda d, t, st: statuses.append((d, st.phase, st.speed, st.eta)),
            None,
            endpoint=hub.endpoint,
            store=store,
        )
    finally:
        hub.close()
    assert out.stat().st_size == size and sha256_file(out) == sha256_file(bundled_path)
    assert (
        hub.ranges[0] is None
        and hub.ranges[1] == "bytes=3145728-"
        and hub.ranges[2] == "bytes=6291456-"
    )
    assert sum(hub.sent) == size  # no byte was fetched twice
    assert [p for _, p, _, _ in statuses].count("resuming") == 2
    assert any(speed > 0 and eta is not None for _, p, speed, eta in statuses if p == "downloading")
    rec = record_of(out)
    assert rec["connection_cuts"] == 2 and rec["verified"] == [
        "sha256 from the Hub's file metadata"
    ]
    assert [m["sha256"] for m in store.models()] == [sha256_file(bundled_path)]


def test_a_download_resumes_after_a_restart_from_its_part_file(bundled_path, store, dest):
    size = bundled_path.stat().st_size
    hub = StandInHub({PATH: bundled_path}, cut_after={PATH: 5 * MiB}, cuts=1)
    try:
        with pytest.raises(MascotError) as e:  # no retries: like the app being closed by the cut
            download_gguf(REPO, FILE, dest, None, None, endpoint=hub.endpoint, store=store, tries=0)
        msg = one_line(str(e.value))
        assert "interrupted after 5,242,880 of" in msg and "resume" in msg
        part = dest / (FILE + ".part")
        assert (
            part.stat().st_size == 5 * MiB and not (dest / FILE).exists() and store.models() == []
        )
        # a new call (a restarted app) continues where the part ends
        out = download_gguf(REPO, FILE, dest, None, None, endpoint=hub.endpoint, store=store)
    finally:
        hub.close()
    assert hub.ranges == [None, f"bytes={5 * MiB}-"] and hub.sent == [5 * MiB, size - 5 * MiB]
    assert sha256_file(out) == sha256_file(bundled_path) and not part.exists()
    assert record_of(out)["resumed_from"] == 5 * MiB


def test_a_part_of_another_version_is_not_resumed(bundled_path, store, dest):
    dest.mkdir(parents=True)
    (dest / (FILE + ".part")).write_bytes(b"x" * MiB)  # no version record: unknown origin
    hub = StandInHub({PATH: bundled_path})
    try:
        out = download_gguf(REPO, FILE, dest, None, None, endpoint=hub.endpoint, store=store)
    finally:
        hub.close()
    assert hub.ranges == [None] and sha256_file(out) == sha256_file(bundled_path)


def test_a_server_that_ignores_range_restarts_from_zero(bundled_path, store, dest):
    hub = StandInHub({PATH: bundled_path}, cut_after={PATH: 2 * MiB}, no_range=True)
    try:
        out = download_gguf(REPO, FILE, dest, None, None, endpoint=hub.endpoint, store=store)
    finally:
        hub.close()
    assert hub.ranges[1] == f"bytes={2 * MiB}-" and sha256_file(out) == sha256_file(bundled_path)


def test_a_corrupted_file_is_deleted_and_not_registered(bundled_path, store, dest):
    data = bytearray(bundled_path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte in the tensor data: still a valid GGUF header
    good = hashlib.sha256(bundled_path.read_bytes()).hexdigest()
    hub = StandInHub({PATH: bytes(data)}, advertise={PATH: good})
    try:
        with pytest.raises(ModelError) as e:
            download_gguf(REPO, FILE, dest, None, None, endpoint=hub.endpoint, store=store)
    finally:
        hub.close()
    msg = one_line(str(e.value))
    assert "corrupted" in msg and good[:12] in msg and "deleted" in msg
    assert list(dest.iterdir()) == [] and store.models() == []


def test_a_catalog_pin_that_differs_from_the_hub_downloads_nothing(bundled_path, store, dest):
    hub = StandInHub({PATH: bundled_path})
    try:
        with pytest.raises(MascotError) as e:
            download_gguf(
                REPO, FILE, dest, None, None, endpoint=hub.endpoint, store=store, sha256="0" * 64
            )
    finally:
        hub.close()
    assert "not the file the catalog names" in one_line(str(e.value))
    assert not any(r.startswith("/cdn/") for r in hub.requests) and store.models() == []


def test_catalog_pins_are_verified_and_recorded(bundled_path, store, dest):
    import hashlib as h

    raw = bundled_path.read_bytes()
    hub = StandInHub({PATH: bundled_path})
    try:
        out = download_gguf(
            REPO,
            FILE,
            dest,
            None,
            None,
            endpoint=hub.endpoint,
            store=store,
            sha256=h.sha256(raw).hexdigest(),
            md5=h.md5(raw).hexdigest(),
            name="tiny-pick",
        )
        with pytest.raises(ModelError) as e:  # a wrong md5 pin: the file is not kept
            download_gguf(
                REPO,
                FILE,
                tmp := dest / "again",
                None,
                None,
                endpoint=hub.endpoint,
                store=store,
                md5="0" * 32,
            )
    finally:
        hub.close()
    assert record_of(out)["verified"] == [
        "sha256 from the catalog",
        "sha256 from the Hub's file metadata",
        "md5 from the catalog",
    ]
    assert [m["name"] for m in store.models()] == ["tiny-pick"]
    assert "md5" in one_line(str(e.value)) and list(tmp.iterdir()) == []


def test_not_enough_disk_space_is_one_line_before_any_byte(bundled_path, store, dest, monkeypatch):
    import shutil
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(10 * MiB, 9 * MiB, MiB))
    hub = StandInHub({PATH: bundled_path})
    try:
        with pytest.raises(MascotError) as e:
            download_gguf(REPO, FILE, dest, None, None, endpoint=hub.endpoint, store=store)
    finally:
        hub.close()
    assert one_line(str(e.value)).startswith(f"Not enough free disk space for '{FILE}'")
    assert not any(r.startswith("/cdn/") for r in hub.requests) and list(dest.iterdir()) == []


def test_cancel_with_keep_partial_leaves_the_part_to_resume(hub, store, dest):
    cancel = threading.Event()

    def progress(done, total, status):
        if done >= 2 * MiB:
            cancel.set()

    with pytest.raises(Cancelled) as e:
        download_gguf(
            REPO,
            FILE,
            dest,
            progress,
            cancel,
            endpoint=hub.endpoint,
            store=store,
            keep_partial=True,
        )
    assert "resumes" in str(e.value)
    assert (dest / (FILE + ".part")).stat().st_size >= 2 * MiB
