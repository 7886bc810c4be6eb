"""Download a GGUF file from the Hugging Face Hub, only when the user asks for it.

``download_gguf(repo_id, filename, dest_dir, progress, cancel)`` fetches
``{endpoint}/{repo_id}/resolve/main/{filename}`` over HTTP(S) with the standard library (so the
usual ``HTTPS_PROXY`` settings apply), streams it into ``<file>.part`` while reporting
``progress(done_bytes, total_bytes)`` (total is 0 when the server does not say), moves it into
place and registers it in the model registry, which checks it with
:func:`engine.models.inspect_gguf` first (an unusable file is deleted). The endpoint is
``endpoint``, else ``HF_ENDPOINT``, else ``https://huggingface.co``.

Cancellation: ``cancel`` is checked after every chunk, and a small watcher shuts the connection
down as soon as it is set, so a stalled server cannot hold a cancelled download. A cancelled or
failed download leaves no partial file behind. Every failure is one line (``MascotError``).

Nothing here runs unless called: Mascot never contacts the network on its own.
"""

from __future__ import annotations

import os
import re
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Callable

from .errors import Cancelled, InputError, MascotError, ModelError

DEFAULT_ENDPOINT = "https://huggingface.co"
CHUNK_BYTES = 256 * 1024
TIMEOUT_S = 30
OFFLINE = "Cannot reach the Hugging Face Hub; check your internet connection."

_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}$")

Progress = Callable[[int, int], None]


def endpoint_url(endpoint: str | None = None) -> str:
    return (endpoint or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def check_names(repo_id: str, filename: str) -> tuple[str, str]:
    """Validate a repo id (``owner/name``) and a ``.gguf`` file name; returns them stripped."""
    repo_id, filename = (repo_id or "").strip().strip("/"), (filename or "").strip()
    if not _REPO_ID.match(repo_id) or ".." in repo_id:
        raise InputError(f"'{repo_id}' is not a Hugging Face repo id; write it as owner/name, "
                         "e.g. HuggingFaceTB/SmolLM2-360M-Instruct-GGUF.")
    parts = filename.split("/")
    if (not filename or filename.startswith("/") or "\\" in filename
            or any(p in ("", ".", "..") for p in parts)):
        raise InputError(f"'{filename}' is not a file name in a repo; give e.g. model.Q4_K_M.gguf.")
    if not filename.lower().endswith(".gguf"):
        raise InputError(f"'{filename}' is not a .gguf file; Mascot runs GGUF models only.")
    return repo_id, filename


def resolve_url(repo_id: str, filename: str, endpoint: str | None = None,
                revision: str = "main") -> str:
    repo_id, filename = check_names(repo_id, filename)
    quoted = "/".join(urllib.parse.quote(p) for p in filename.split("/"))
    return f"{endpoint_url(endpoint)}/{repo_id}/resolve/{urllib.parse.quote(revision)}/{quoted}"


def _open(url: str, repo_id: str, filename: str) -> Any:
    req = urllib.request.Request(url, headers={"User-Agent": "mascot/0.1 (+offline companion app)",
                                               "Accept-Encoding": "identity"})
    try:
        return urllib.request.urlopen(req, timeout=TIMEOUT_S)  # noqa: S310 (http/https only)
    except urllib.error.HTTPError as e:
        e.close()
        if e.code == 404:
            raise MascotError(f"No file '{filename}' in repo '{repo_id}' on the Hugging Face Hub; "
                              "check the file name (it is case-sensitive).") from None
        if e.code in (401, 403):
            raise MascotError(f"The repo '{repo_id}' was not found, or it is private or gated; "
                              "Mascot downloads public files only.") from None
        raise MascotError(f"The Hugging Face Hub answered HTTP {e.code} for '{filename}'; "
                          "try again later.") from None
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


def _stream(resp: Any, part: Path, progress: Progress, cancel: threading.Event) -> tuple[int, int]:
    total = int(resp.headers.get("Content-Length") or 0)
    done = 0
    progress(0, total)
    try:
        f = open(part, "wb")
    except OSError as e:
        raise MascotError(f"Cannot write {part}: {e.strerror or e}.") from None
    with f:
        while not cancel.is_set():
            try:
                block = resp.read(CHUNK_BYTES)
            except (OSError, ValueError, urllib.error.URLError) as e:
                if cancel.is_set():
                    break
                raise MascotError(f"The download was interrupted after {done:,} bytes "
                                  f"({type(e).__name__}); try again.") from None
            if not block:
                break
            try:
                f.write(block)
            except OSError as e:
                raise MascotError(f"Cannot write {part}: {e.strerror or e}.") from None
            done += len(block)
            progress(done, total)
    return done, total


def download_gguf(repo_id: str, filename: str, dest_dir: str | Path | None = None,
                  progress: Progress | None = None, cancel: threading.Event | None = None,
                  endpoint: str | None = None, store: Any = None) -> Path:
    """Download ``filename`` from the Hub repo ``repo_id`` into ``dest_dir`` and register it.

    ``dest_dir`` defaults to ``<data folder>/models``; ``store`` to a new ``Store()``.
    Returns the path of the checked, registered ``.gguf`` file. Raises ``Cancelled`` when
    ``cancel`` is set, ``InputError`` for bad names and ``MascotError``/``ModelError`` (one line)
    for everything else; no partial file is left behind in any of those cases.
    """
    from .models import ModelRegistry
    from .paths import user_dir

    repo_id, filename = check_names(repo_id, filename)
    url = resolve_url(repo_id, filename, endpoint)
    progress = progress or (lambda done, total: None)
    cancel = cancel or threading.Event()
    dest = Path(dest_dir) if dest_dir else user_dir() / "models"
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / Path(filename).name
    part = target.with_name(target.name + ".part")

    try:
        resp = _open(url, repo_id, filename)
        watch = _CancelWatch(resp, cancel)
        try:
            done, total = _stream(resp, part, progress, cancel)
        finally:
            watch.close()
        if cancel.is_set():
            raise Cancelled("Download cancelled; nothing was saved.")
        if total and done != total:
            raise MascotError(f"The download was cut off ({done:,} of {total:,} bytes); try again.")
        os.replace(part, target)
    finally:
        if part.exists():
            part.unlink()

    own_store = store is None
    if own_store:
        from .storage import Store
        store = Store()
    try:
        ModelRegistry(store).add(target)  # reads and checks the GGUF header, then registers it
    except ModelError as e:
        target.unlink(missing_ok=True)
        reason = str(e).split(": ", 1)[-1].split(";")[0].rstrip(".")
        raise ModelError(f"'{filename}' from {repo_id} is not a usable model: {reason}; "
                         "it was not kept.") from None
    finally:
        if own_store:
            store.close()
    return target
