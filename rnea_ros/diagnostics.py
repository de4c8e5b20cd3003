"""Figures for the node's /diagnostics: input rates and ages, compute-time statistics."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable

import numpy as np


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
