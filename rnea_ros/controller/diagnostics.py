"""Figures for the node's /diagnostics, in plain Python: input rates and ages, rejection counts,
compute-time statistics, the garbage collector's pauses, and the levels (the values of
diagnostic_msgs/DiagnosticStatus)."""

from __future__ import annotations

import gc
import threading
import time
from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

OK, WARN, ERROR = 0, 1, 2
COMPUTE_TIME_WINDOW = 10_000


@dataclass(frozen=True)
class Report:
    level: int
    message: str
    values: dict[str, str]


class InputStats:
    """Receive counts and times per input, for the rates and ages in the diagnostics."""

    def __init__(self) -> None:
        self.count: Counter[str] = Counter()
        self.last: dict[str, float] = {}
        self._count_at_report: Counter[str] = Counter()
        self._report_time = time.monotonic()

    def received(self, name: str) -> None:
        self.count[name] += 1
        self.last[name] = time.monotonic()

    def report(self) -> dict[str, str]:
        now = time.monotonic()
        period = max(now - self._report_time, 1e-9)
        values = {}
        for name in sorted(self.count):
            rate = (self.count[name] - self._count_at_report[name]) / period
            values[f"{name} rate [Hz]"] = f"{rate:.1f}"
            values[f"{name} age [s]"] = f"{now - self.last[name]:.3f}"
            values[f"{name} total"] = str(self.count[name])
        self._count_at_report = self.count.copy()
        self._report_time = now
        return values


class Rejections:
    """Rejected inputs by reason, counted from several threads; ``new()`` gives those since the last call."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._at_report: Counter[str] = Counter()

    def count(self, reason: str) -> None:
        with self._lock:
            self._counts[reason] += 1

    def totals(self) -> Counter[str]:
        with self._lock:
            return self._counts.copy()

    def new(self) -> Counter[str]:
        totals = self.totals()
        new, self._at_report = totals - self._at_report, totals
        return new


class ComputeTimes:
    """The most recent compute times, for p50/p99/max."""

    def __init__(self, window: int = COMPUTE_TIME_WINDOW) -> None:
        self._times: deque[float] = deque(maxlen=window)

    def add(self, seconds: float) -> None:
        self._times.append(seconds)

    def recent(self) -> list[float]:
        """The recent compute times [s], oldest first (a snapshot: the deque grows on another thread)."""
        return list(self._times)

    def values(self) -> dict[str, str]:
        return compute_time_values(self.recent())


def compute_time_values(seconds: Iterable[float]) -> dict[str, str]:
    """p50, p99 and max of the recent compute times, in µs."""
    times = np.fromiter(seconds, dtype=float) * 1e6
    if not times.size:
        return {}
    return {
        "compute time p50 [us]": f"{np.percentile(times, 50):.1f}",
        "compute time p99 [us]": f"{np.percentile(times, 99):.1f}",
        "compute time max [us]": f"{times.max():.1f}",
    }


class CollectorPauses:
    """How long Python's garbage collector stopped the process, per generation (gc.callbacks): every
    thread waits while it runs, the joint_states one too."""

    def __init__(self) -> None:
        self.count = [0, 0, 0]
        self.longest = [0.0, 0.0, 0.0]  # [s]
        self._started = 0.0

    def start(self) -> None:
        gc.callbacks.append(self._on_collection)

    def stop(self) -> None:
        if self._on_collection in gc.callbacks:
            gc.callbacks.remove(self._on_collection)

    def _on_collection(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        generation = info["generation"]
        self.count[generation] += 1
        self.longest[generation] = max(self.longest[generation], time.perf_counter() - self._started)

    def values(self) -> dict[str, str]:
        return {
            f"collector pauses gen {g}": f"{self.count[g]}, longest {self.longest[g] * 1e3:.2f} ms" for g in range(3)
        }


def freeze_the_heap() -> None:
    """Leaves what exists now (modules, compiled kernels: never freed) out of every later
    collection (gc.freeze): a full collection then walks the objects made since, not the whole
    interpreter (measured: ~100 ms pauses otherwise). Call once, at start-up."""
    gc.collect()
    gc.freeze()
