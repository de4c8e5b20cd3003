"""Keeping Python's cyclic garbage collector off a 1 kHz loop.

A full (generation 2) collection walks every object the collector tracks and holds the GIL
while it does: in rnea_node with the example arm loaded that is ~138,000 objects (rclpy, numpy,
numba, the model) and 96–134 ms on a 2-core VM, long enough for 100 joint_states to wait. These
objects live as long as the model does, so once a model is loaded they are moved out of the
collector's reach (``gc.freeze``); what the loop allocates per message is freed by reference
counting, and what the executor and timers leave is collected in a few milliseconds at most.
``CollectionPauses`` counts the collections that still happen, for /diagnostics;
``python benchmarks/gc_pauses.py`` measures both.
"""

from __future__ import annotations

import gc
import threading
import time


def freeze_long_lived_objects() -> None:
    """Collects once, then leaves every object alive now out of later collections; does nothing
    when objects are frozen already.

    Called after each model load, it freezes at the first one only (before anything is served).
    Later models stay in the collector's reach: a reload costs no full collection (one per
    reload cost a soak with description swaps 1.3 % of its joint_states), and a flood of
    descriptions leaves nothing frozen behind but the first model."""
    if gc.get_freeze_count():
        return
    with _deliberate:
        gc.collect()
        gc.freeze()


def thaw() -> None:
    """Returns the frozen objects to the collector (a process that keeps running after a loop)."""
    gc.unfreeze()


class _Deliberate:
    """Marks the collection ``freeze_long_lived_objects`` makes (it is not a pause to report)."""

    def __init__(self) -> None:
        self.active = False
        self._lock = threading.Lock()

    def __enter__(self) -> None:
        self._lock.acquire()
        self.active = True

    def __exit__(self, *_) -> None:
        self.active = False
        self._lock.release()


_deliberate = _Deliberate()


class CollectionPauses:
    """The collections the collector makes on its own, per generation, and the longest pause,
    from ``gc.callbacks`` (called with the GIL held, around each collection)."""

    def __init__(self) -> None:
        self.counts = [0, 0, 0]
        self.longest = [0.0, 0.0, 0.0]  # s
        self._start = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if _deliberate.active:
            return
        if phase == "start":
            self._start = time.perf_counter()
            return
        generation = info["generation"]
        self.counts[generation] += 1
        self.longest[generation] = max(self.longest[generation], time.perf_counter() - self._start)

    def install(self) -> CollectionPauses:
        gc.callbacks.append(self)
        return self

    def uninstall(self) -> None:
        if self in gc.callbacks:
            gc.callbacks.remove(self)

    def values(self) -> dict[str, str]:
        return {
            f"garbage collections, generation {g}": f"{self.counts[g]} (longest {self.longest[g] * 1e3:.1f} ms)"
            for g in range(3)
        }
