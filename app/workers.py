"""Engine work off the GUI thread.

A :class:`Worker` is a ``QObject`` that lives on the GUI thread; its work runs on a ``QThread``
and reports back through its signals, which Qt queues to the GUI thread, so every slot (bound
method or lambda) runs on the GUI thread and may touch widgets.

* :class:`GeneratorWorker` runs ``fn(*args, cancel=event)`` and emits ``item`` per yielded value
  (the engine's rounds are generators of events).
* :class:`CallWorker` runs ``fn(*args, progress=callback, cancel=event)`` and emits ``item`` for
  each progress report and ``done`` with the return value.

``cancel()`` sets the ``threading.Event`` the engine checks between tokens/chunks. Failures
arrive as ``failed(one line)``: :func:`Runner.start` refuses a worker without an error handler,
so no failure goes unseen. ``finished`` is always the last signal.
"""

from __future__ import annotations

import logging
import threading
import traceback
from typing import Any, Callable

from PySide6.QtCore import QObject, QThread, Signal

from engine.errors import MascotError

from .notify import describe

log = logging.getLogger("mascot.app")


class Worker(QObject):
    item = Signal(object)
    done = Signal(object)
    failed = Signal(str)
    finished = Signal()

    def __init__(self, fn: Callable[..., Any], *args: Any, name: str = "", **kwargs: Any):
        super().__init__()
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.name = name or getattr(fn, "__name__", "work")
        self.cancel_event = threading.Event()

    def cancel(self) -> None:
        self.cancel_event.set()

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()

    def work(self) -> Any:  # runs on the worker thread
        raise NotImplementedError

    def run(self) -> None:  # runs on the worker thread
        try:
            result = self.work()
        except Exception as e:  # noqa: BLE001 - every failure becomes one line for the user
            if not isinstance(e, MascotError):
                log.error("worker %s failed\n%s", self.name, traceback.format_exc())
            self.failed.emit(describe(e))
        else:
            self.done.emit(result)
        finally:
            self.finished.emit()


class GeneratorWorker(Worker):
    def work(self) -> None:
        for value in self.fn(*self.args, cancel=self.cancel_event, **self.kwargs):
            self.item.emit(value)


class CallWorker(Worker):
    def work(self) -> Any:
        return self.fn(
            *self.args,
            progress=lambda *a: self.item.emit(a),
            cancel=self.cancel_event,
            **self.kwargs,
        )


class _Thread(QThread):
    def __init__(self, worker: Worker, parent: QObject | None):
        super().__init__(parent)
        self.worker = worker
        self.setObjectName(f"worker:{worker.name}")

    def run(self) -> None:
        self.worker.run()


class Runner(QObject):
    """Starts workers on their own threads and keeps them alive until they finish."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._threads: dict[Worker, _Thread] = {}

    def start(self, worker: Worker, *, on_error: Callable[[str], None]) -> Worker:
        if on_error is None:
            raise ValueError("a worker needs an error handler")
        worker.failed.connect(on_error)
        thread = _Thread(worker, self)
        self._threads[worker] = thread
        thread.finished.connect(lambda: self._forget(worker))
        thread.start()
        return worker

    def _forget(self, worker: Worker) -> None:
        thread = self._threads.pop(worker, None)
        if thread is not None:
            thread.wait()
            thread.deleteLater()

    @property
    def active(self) -> list[Worker]:
        return [w for w, t in self._threads.items() if t.isRunning()]

    def stop(self, worker: Worker, timeout_ms: int = 10_000) -> bool:
        """Cancel one worker and wait for its thread (the engine stops within a second)."""
        worker.cancel()
        thread = self._threads.get(worker)
        return thread.wait(timeout_ms) if thread is not None else True

    def stop_all(self, timeout_ms: int = 10_000) -> bool:
        ok = True
        for worker in list(self._threads):
            worker.cancel()
        for worker, thread in list(self._threads.items()):
            ok = thread.wait(timeout_ms) and ok
        return ok
