"""Robot descriptions built one at a time, off the hot path; the newest valid one wins.

Plain Python (threads, no rclpy). ``submit`` returns at once. One worker thread builds the
newest description waiting; when it is valid, the older ones waiting are dropped unbuilt
(superseded); when it is refused, the next newest is tried, so a broken description never
cancels a valid one sent before it. At most ``MAX_WAITING`` descriptions wait (the oldest
go first): memory stays bounded under a flood, and only one build runs at a time.

``load_now`` is for parameter changes, which must be answered with success or a reason:
it builds on the caller's thread, in turn with the worker, and loads the result at once;
with ``supersede`` the descriptions submitted before it are dropped.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

Built = TypeVar("Built")
MAX_WAITING = 4


class ModelLoader(Generic[Built]):
    def __init__(
        self,
        build: Callable[[str], Built],
        on_loaded: Callable[[Built], None],
        on_refused: Callable[[Exception], None],
    ) -> None:
        self._build, self._on_loaded, self._on_refused = build, on_loaded, on_refused
        self._waiting: deque[tuple[int, str]] = deque(maxlen=MAX_WAITING)  # (sequence, description)
        self._sequence = 0
        self._superseded_up_to = 0  # submitted at or before this sequence number: never loaded
        self._lock = threading.Lock()
        self._building = threading.Lock()  # one build at a time, worker or load_now
        self._idle = threading.Event()
        self._idle.set()
        self._worker: threading.Thread | None = None

    def submit(self, description: str) -> None:
        with self._lock:
            self._sequence += 1
            self._waiting.append((self._sequence, description))
            self._idle.clear()
            if self._worker is None:
                self._worker = threading.Thread(target=self._work, name="robot_description builder", daemon=True)
                self._worker.start()

    def load_now(self, build: Callable[[], Built], supersede: bool) -> Built:
        """Runs ``build`` once no other build runs and loads its result (exceptions propagate,
        nothing changes); ``supersede``: descriptions submitted before are dropped."""
        with self._building:
            built = build()
            if supersede:
                with self._lock:
                    self._superseded_up_to = self._sequence
                    self._waiting.clear()
            self._on_loaded(built)
        return built

    def wait_idle(self, timeout: float | None = None) -> bool:
        """True once nothing is waiting or building (for tests and orderly shutdown)."""
        return self._idle.wait(timeout)

    def _work(self) -> None:
        while True:
            with self._lock:
                if not self._waiting:
                    self._worker = None
                    self._idle.set()
                    return
                sequence, description = self._waiting.pop()  # the newest
            with self._building:
                if sequence <= self._superseded_up_to:
                    continue
                try:
                    built = self._build(description)
                except Exception as error:  # any failure to build must keep the node alive
                    self._on_refused(error)
                    continue
                with self._lock:  # older than a valid one: never built (newer ones that came meanwhile stay)
                    newer = [item for item in self._waiting if item[0] > sequence]
                    self._waiting.clear()
                    self._waiting.extend(newer)
                self._on_loaded(built)
