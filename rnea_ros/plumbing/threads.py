"""Threads that the node's and the simulator's plumbing start and stop (no ROS)."""

from __future__ import annotations

import threading


def stop_thread(stop: threading.Event, thread: threading.Thread, timeout: float) -> None:
    """Asks ``thread`` to end through ``stop`` and waits for it at most ``timeout`` [s]."""
    stop.set()
    if thread.is_alive():
        thread.join(timeout=timeout)
