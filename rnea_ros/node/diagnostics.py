"""Figures for the node's /diagnostics, in plain Python: input rates and ages, rejection counts,
compute-time statistics, and the levels (the values of diagnostic_msgs/DiagnosticStatus)."""

from __future__ import annotations

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
