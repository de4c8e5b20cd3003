"""Numba kernels called without numba's per-call type dispatch, on the hot paths."""

from __future__ import annotations

import threading
from collections.abc import Callable

import numba


def entry_point(dispatcher, *args) -> Callable:
    """The compiled kernel for these argument types, called without numba's per-call type
    dispatch (~150 ns of a 1–2 µs call, more with many arguments). Callers pass only arrays of
    exactly these types (C-contiguous float64 where ``args`` has them): a wrong type is not
    caught."""
    dispatcher(*args)  # compiles, or loads from numba's cache
    return dispatcher.overloads[tuple(numba.typeof(a) for a in args)].entry_point


class LazyEntryPoint:
    """``entry_point`` of a kernel compiled at its first call (few models need it), once even when
    two threads make that call together."""

    def __init__(self, dispatcher) -> None:
        self._dispatcher = dispatcher
        self._entry: Callable | None = None
        self._lock = threading.Lock()

    def __call__(self, *args):
        entry = self._entry
        if entry is None:
            with self._lock:
                if self._entry is None:
                    self._entry = entry_point(self._dispatcher, *args)
                entry = self._entry
        return entry(*args)
