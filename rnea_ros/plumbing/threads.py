"""Threads that the node's and the simulator's plumbing start and stop (no ROS)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable


def stop_thread(stop: threading.Event, thread: threading.Thread, timeout: float) -> None:
    """Asks ``thread`` to end through ``stop`` and waits for it at most ``timeout`` [s]."""
    stop.set()
    if thread.is_alive():
        thread.join(timeout=timeout)


def quiet_after_shutdown(context, callback: Callable) -> Callable:
    """``callback`` for an executor, minus the errors of a shutdown that came while it ran.

    A signal shuts the context down from another thread; a callback then running fails in rcl
    ("context is invalid"), and the executor, stopped, never fetches that error from its task: Python
    prints it at exit ("exception was never retrieved"). ``context`` is anything with ``ok()``.
    """

    @functools.wraps(callback)
    def guarded(*args, **kwargs):
        try:
            return callback(*args, **kwargs)
        except Exception:
            if context.ok():
                raise
            return None

    return guarded
