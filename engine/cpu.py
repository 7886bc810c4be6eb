"""Whether a local model is generating in this process. The crisis screen's encoder takes the
second core for a long message only while none is: two jobs at once on two cores slow each other
(docs/memory.md)."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

_lock = threading.Lock()
_active = 0


@contextmanager
def generating() -> Iterator[None]:
    """Mark a model job (prefill or decode) as running for the duration of the block."""
    global _active
    with _lock:
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1


def busy() -> bool:
    """True while any model job of this process runs."""
    return _active > 0
