"""Download a GGUF file from the Hugging Face Hub, only when the user asks for it.

``download_gguf(repo_id, filename, dest_dir, progress, cancel)`` fetches
``{endpoint}/{repo_id}/resolve/{revision}/{filename}`` over HTTP(S) with the standard library (so
the usual ``HTTPS_PROXY`` settings apply). The endpoint is ``endpoint``, else ``HF_ENDPOINT``,
else ``https://huggingface.co``. Step by step:

1. **What the Hub says.** A HEAD request on the resolve URL (not following its redirect) gives the
   file's size and sha256 the way ``huggingface_hub`` reads them (``X-Linked-Size``,
   ``X-Linked-Etag``; ``X-Repo-Commit``). A catalog entry may pin a sha256 and a size too; when
   both are known they must agree, or nothing is downloaded.
2. **Free disk** for what is left to fetch (plus 100 MB) is checked before any byte is written.
3. **Resumable.** Bytes stream into ``<file>.part`` with ``<file>.part.json`` beside it naming the
   file version (size, sha256, commit). A connection cut mid-way is resumed with an HTTP Range
   request (a few tries, then a one-line error that says the download resumes from there); a
   later call, after a restart too, resumes from the ``.part`` when it is for the same version.
   A server that ignores Range starts again from byte 0.
4. **Verified.** The finished file's sha256 (and md5, where a catalog pins one) must match; a
   corrupted file is deleted with one line saying so. What was checked against what is recorded
   in ``<file>.download.json``; the model is then registered (its GGUF header checked first).

``progress(done, total, status)`` reports bytes (total is 0 when unknown) and a
:class:`DownloadStatus` with speed, time left and the phase. Cancel: ``cancel`` is checked after
every chunk, and a watcher shuts the connection so a stalled server cannot hold it; a cancelled
download deletes its ``.part`` unless ``keep_partial`` (the app passes it when it closes, so the
download resumes next time). Every failure is one line (``MascotError``).

Nothing here runs unless called: Mascot never contacts the network on its own.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from engine.errors import Cancelled, InputError, MascotError, ModelError
from engine.models.registry import ModelRegistry
from engine.paths import user_dir
from engine.storage import Store

DEFAULT_ENDPOINT = "https://huggingface.co"
CHUNK_BYTES = 256 * 1024
TIMEOUT_S = 30
RESUME_TRIES = 3  # connection cuts resumed within one call before giving up
DISK_MARGIN = 100 * 1024 * 1024
OFFLINE = "Cannot reach the Hugging Face Hub; check your internet connection."
USER_AGENT = "mascot/0.1 (+offline companion app)"

_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}$")
_HEX = re.compile(r"^[0-9a-f]{64}$")


@dataclass
class DownloadStatus:
    phase: str = "connecting"  # connecting, downloading, resuming, verifying, done
    speed: float = 0.0  # bytes per second, over the last few seconds
    eta: float | None = None  # seconds left, None when unknown
    resumed_from: int = 0  # bytes that were already on disk when this call started

    def describe(self, done: int, total: int) -> str:
        """One short line: '12.3 MB/s · 1 min 20 s left'."""
        if self.phase == "verifying":
            return "checking the file's sha256…"
        parts = []
        if self.speed > 0:
            parts.append(f"{self.speed / 1e6:.1f} MB/s")
        if self.eta is not None:
            parts.append(f"{_duration(self.eta)} left")
        return " · ".join(parts)


def _duration(s: float) -> str:
    s = int(round(s))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


Progress = Callable[..., None]


def endpoint_url(endpoint: str | None = None) -> str:
    return (endpoint or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def check_names(repo_id: str, filename: str) -> tuple[str, str]:
    """Validate a repo id (``owner/name``) and a ``.gguf`` file name; returns them stripped."""
    repo_id, filename = (repo_id or "").strip().strip("/"), (filename or "").strip()
    if not _REPO_ID.match(repo_id) or ".." in repo_id:
        raise InputError(
            f"'{repo_id}' is not a Hugging Face repo id; write it as owner/name, "
            "e.g. HuggingFaceTB/SmolLM2-360M-Instruct-GGUF."
        )
    parts = filename.split("/")
    if (
        not filename
        or filename.startswith("/")
        or "\\" in filename
        or any(p in ("", ".", "..") for p in parts)
    ):
        raise InputError(f"'{filename}' is not a file name in a repo; give e.g. model.Q4_K_M.gguf.")
    if not filename.lower().endswith(".gguf"):
        raise InputError(f"'{filename}' is not a .gguf file; Mascot runs GGUF models only.")
    return repo_id, filename


def resolve_url(
    repo_id: str, filename: str, endpoint: str | None = None, revision: str = "main"
) -> str:
    repo_id, filename = check_names(repo_id, filename)
    quoted = "/".join(urllib.parse.quote(p) for p in filename.split("/"))
    return f"{endpoint_url(endpoint)}/{repo_id}/resolve/{urllib.parse.quote(revision or 'main')}/{quoted}"


def _http_error(e: urllib.error.HTTPError, repo_id: str, filename: str) -> MascotError:
    if e.code == 404:
        return MascotError(
            f"No file '{filename}' in repo '{repo_id}' on the Hugging Face Hub; "
            "check the file name (it is case-sensitive)."
        )
    if e.code in (401, 403):
        return MascotError(
            f"The repo '{repo_id}' was not found, or it is private or gated; "
            "Mascot downloads public files only."
        )
    return MascotError(
        f"The Hugging Face Hub answered HTTP {e.code} for '{filename}'; try again later."
    )


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def hub_file_info(
    repo_id: str, filename: str, revision: str = "main", endpoint: str | None = None
) -> dict[str, Any]:
    """What the Hub says about a file: ``size`` (int or None), ``sha256`` (LFS files; or None)
    and ``commit``, from a HEAD request on its resolve URL (the redirect is not followed: the
    Hub puts the file's own metadata on it). MascotError (one line) if it is missing."""
    url = resolve_url(repo_id, filename, endpoint, revision)
    req = urllib.request.Request(  # noqa: S310 (http/https only)
        url,
        method="HEAD",
        headers={
            "User-Agent": USER_AGENT,
            "Accept-Encoding": "identity",
        },
    )
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        resp = opener.open(req, timeout=TIMEOUT_S)
        headers = resp.headers
        resp.close()
    except urllib.error.HTTPError as e:
        e.close()
        if e.code in (301, 302, 303, 307, 308):
            headers = e.headers
        else:
            raise _http_error(e, repo_id, filename) from None
    except (urllib.error.URLError, OSError) as e:
        raise MascotError(OFFLINE) from e
    etag = (
        (headers.get("X-Linked-Etag") or "")
        .strip()
        .strip('"')
        .removeprefix("W/")
        .strip('"')
        .lower()
    )
    size = headers.get("X-Linked-Size") or (
        headers.get("Content-Length") if not headers.get("Location") else None
    )
    return {
        "sha256": etag if _HEX.match(etag) else None,
        "size": int(size) if size and str(size).isdigit() else None,
        "commit": headers.get("X-Repo-Commit") or None,
    }


def _open(url: str, repo_id: str, filename: str, start: int = 0) -> Any:
    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    if start:
        headers["Range"] = f"bytes={start}-"
    req = urllib.request.Request(url, headers=headers)  # noqa: S310 (http/https only)
    try:
        return urllib.request.urlopen(req, timeout=TIMEOUT_S)  # noqa: S310 (http/https only)
    except urllib.error.HTTPError as e:
        e.close()
        if e.code == 416:  # nothing left to send: the part is already whole
            return None
        raise _http_error(e, repo_id, filename) from None
    except (urllib.error.URLError, OSError) as e:
        raise MascotError(OFFLINE) from e


class _CancelWatch:
    """Shuts the connection down when ``cancel`` is set, so a blocked read returns at once."""

    def __init__(self, resp: Any, cancel: threading.Event):
        self._resp, self._cancel = resp, cancel
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._watch, name="hub-cancel-watch", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while True:
            fired = self._cancel.wait(0.1)
            with self._lock:
                if self._closed:
                    return
                if fired:
                    try:
                        dup = socket.fromfd(self._resp.fileno(), socket.AF_INET, socket.SOCK_STREAM)
                        try:
                            dup.shutdown(socket.SHUT_RDWR)
                        finally:
                            dup.close()
                    except (OSError, ValueError, AttributeError):
                        pass
                    return

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._resp.close()
        self._thread.join(1.0)


class _Meter:
    """Speed over a sliding window of a few seconds, and the time left."""

    WINDOW_S = 3.0

    def __init__(self, done: int):
        self.points: list[tuple[float, int]] = [(time.monotonic(), done)]

    def add(self, done: int) -> None:
        now = time.monotonic()
        self.points.append((now, done))
        while len(self.points) > 2 and now - self.points[0][0] > self.WINDOW_S:
            self.points.pop(0)

    def speed(self) -> float:
        (t0, d0), (t1, d1) = self.points[0], self.points[-1]
        return (d1 - d0) / (t1 - t0) if t1 - t0 > 0.05 else 0.0


class _Interrupted(Exception):
    """The connection broke mid-way (resumable)."""


def _stream(
    resp: Any,
    part: Path,
    start: int,
    total: int,
    report: Callable[[int, str], None],
    cancel: threading.Event,
) -> int:
    """Append the response body to ``part`` from byte ``start``; returns the bytes on disk."""
    done = start
    try:
        f = open(part, "r+b" if start and part.exists() else "wb")
        f.seek(start)
        f.truncate()
    except OSError as e:
        raise MascotError(f"Cannot write {part}: {e.strerror or e}.") from None
    with f:
        while not cancel.is_set():
            try:
                block = resp.read(CHUNK_BYTES)
            except (OSError, ValueError, urllib.error.URLError) as e:
                if cancel.is_set():
                    break
                raise _Interrupted(type(e).__name__) from None
            if not block:
                break
            try:
                f.write(block)
            except OSError as e:
                raise MascotError(f"Cannot write {part}: {e.strerror or e}.") from None
            done += len(block)
            report(done, "downloading")
    if not cancel.is_set() and total and done < total:
        raise _Interrupted("the connection closed early")
    return done


def _hashes(path: Path, cancel: threading.Event, want_md5: bool) -> tuple[str, str | None]:
    sha, md5 = hashlib.sha256(), (hashlib.md5(usedforsecurity=False) if want_md5 else None)
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            if cancel.is_set():
                raise Cancelled("Download cancelled while checking the file.")
            sha.update(block)
            if md5 is not None:
                md5.update(block)
    return sha.hexdigest(), md5.hexdigest() if md5 is not None else None


def _read_json(p: Path) -> dict[str, Any]:
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def download_gguf(
    repo_id: str,
    filename: str,
    dest_dir: str | Path | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    endpoint: str | None = None,
    store: Any = None,
    *,
    revision: str = "main",
    sha256: str | None = None,
    md5: str | None = None,
    size: int | None = None,
    name: str | None = None,
    keep_partial: Callable[[], bool] | bool = False,
    tries: int = RESUME_TRIES,
) -> Path:
    """Download ``filename`` from the Hub repo ``repo_id`` into ``dest_dir`` and register it.

    ``dest_dir`` defaults to ``<data folder>/models``; ``store`` to a new ``Store()``.
    ``sha256``/``md5``/``size`` pin the file (a catalog entry's); ``name`` is its registry name.
    Returns the path of the checked, registered ``.gguf`` file. Raises ``Cancelled`` when
    ``cancel`` is set, ``InputError`` for bad names and ``MascotError``/``ModelError`` (one line)
    for everything else. A cut connection leaves the ``.part`` for the next call to resume."""
    repo_id, filename = check_names(repo_id, filename)
    url = resolve_url(repo_id, filename, endpoint, revision)
    cancel = cancel or threading.Event()
    dest = Path(dest_dir) if dest_dir else user_dir() / "models"
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / Path(filename).name
    part = target.with_name(target.name + ".part")
    meta_file = target.with_name(target.name + ".part.json")
    status = DownloadStatus()
    say = progress or (lambda *a: None)

    hub = hub_file_info(repo_id, filename, revision, endpoint)
    if sha256 and hub["sha256"] and hub["sha256"] != sha256:
        raise MascotError(
            f"'{filename}' on the Hub (sha256 {hub['sha256'][:12]}…) is not the file the "
            f"catalog names (sha256 {sha256[:12]}…); it may have been replaced, so it was "
            "not downloaded."
        )
    expected_sha = sha256 or hub["sha256"]
    total = hub["size"] or size or 0
    version = {
        "repo": repo_id,
        "file": filename,
        "revision": revision,
        "size": total,
        "sha256": expected_sha,
        "commit": hub["commit"],
    }

    start = part.stat().st_size if part.exists() else 0
    if start and (_read_json(meta_file) != version or (total and start > total)):
        start = 0  # a part of another version of the file: start again
    status.resumed_from = start
    if total:
        free = shutil.disk_usage(dest).free
        if free < total - start + DISK_MARGIN:
            raise MascotError(
                f"Not enough free disk space for '{filename}': it needs "
                f"{(total - start + DISK_MARGIN) / 1e9:.1f} GB and {dest} has "
                f"{free / 1e9:.1f} GB free."
            )
    meta_file.write_text(json.dumps(version), encoding="utf-8")
    meter = _Meter(start)

    def report(done: int, phase: str) -> None:
        meter.add(done)
        status.phase, status.speed = phase, meter.speed()
        status.eta = (total - done) / status.speed if total and status.speed > 0 else None
        say(done, total, status)

    def discard() -> None:
        part.unlink(missing_ok=True)
        meta_file.unlink(missing_ok=True)

    report(start, "resuming" if start else "connecting")
    done, cuts = start, 0
    try:
        while True:
            resp = _open(url, repo_id, filename, done)
            if resp is None:  # 416: the server has nothing after byte `done`
                break
            if done and resp.status != 206:
                done = 0  # the server ignored the Range: the body is the whole file
            length = int(resp.headers.get("Content-Length") or 0)
            if not total and length:
                total = done + length
            watch = _CancelWatch(resp, cancel)
            try:
                done = _stream(resp, part, done, total, report, cancel)
                break
            except _Interrupted as e:
                cuts += 1
                done = part.stat().st_size if part.exists() else 0
                if cuts > tries:
                    raise MascotError(
                        f"The download of '{filename}' was interrupted after {done:,} of "
                        f"{total:,} bytes ({e}); download it again to resume from there."
                    ) from None
                report(done, "resuming")
                time.sleep(min(2.0, 0.2 * cuts))
            finally:
                watch.close()
        if cancel.is_set():
            raise Cancelled(
                "Download cancelled; nothing was saved."
                if not _keep(keep_partial)
                else "Download paused; it resumes from here next time."
            )
        if total and done != total:
            raise MascotError(f"The download was cut off ({done:,} of {total:,} bytes); try again.")
        report(done, "verifying")
        got_sha, got_md5 = _hashes(part, cancel, md5 is not None)
        if expected_sha and got_sha != expected_sha:
            discard()
            raise ModelError(
                f"'{filename}' arrived corrupted (sha256 {got_sha[:12]}…, expected "
                f"{expected_sha[:12]}…); it was deleted, download it again."
            )
        if md5 is not None and got_md5 != md5:
            discard()
            raise ModelError(
                f"'{filename}' does not match the catalog's checksum (md5 {got_md5}, "
                f"expected {md5}); it was deleted."
            )
        os.replace(part, target)
        meta_file.unlink(missing_ok=True)
    except (Cancelled, InputError):
        if not _keep(keep_partial):
            discard()
        raise
    except ModelError:
        raise
    except MascotError:
        raise  # the .part stays: the next call resumes
    verified = [
        x
        for x, ok in (
            ("sha256 from the catalog", bool(sha256)),
            ("sha256 from the Hub's file metadata", bool(hub["sha256"])),
            ("md5 from the catalog", md5 is not None),
        )
        if ok
    ]
    record = {
        **version,
        "sha256": got_sha,
        "size": done,
        "verified": verified or ["nothing (no checksum known)"],
        "resumed_from": status.resumed_from,
        "connection_cuts": cuts,
        "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    target.with_name(target.name + ".download.json").write_text(
        json.dumps(record, indent=1), encoding="utf-8"
    )
    report(done, "done")
    _register(target, filename, repo_id, store, name, got_sha)
    return target


def _keep(keep_partial: Callable[[], bool] | bool) -> bool:
    return bool(keep_partial()) if callable(keep_partial) else bool(keep_partial)


def _register(
    target: Path, filename: str, repo_id: str, store: Any, name: str | None, sha: str
) -> None:
    own_store = store is None
    if own_store:
        store = Store()
    try:
        ModelRegistry(store).add(target, name=name, sha256=sha)  # checks the GGUF header first
    except ModelError as e:
        target.unlink(missing_ok=True)
        target.with_name(target.name + ".download.json").unlink(missing_ok=True)
        reason = str(e).split(": ", 1)[-1].split(";")[0].rstrip(".")
        raise ModelError(
            f"'{filename}' from {repo_id} is not a usable model: {reason}; it was not kept."
        ) from None
    finally:
        if own_store:
            store.close()
