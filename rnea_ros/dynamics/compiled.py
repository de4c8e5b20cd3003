"""Numba kernels called without numba's per-call type dispatch, on the hot paths."""

from __future__ import annotations

from collections.abc import Callable

import numba


def entry_point(dispatcher, *args) -> Callable:
    """The compiled kernel for these argument types, called without numba's per-call type
    dispatch (~150 ns of a 1–2 µs call, more with many arguments). Callers pass only arrays of
    exactly these types (C-contiguous float64 where ``args`` has them): a wrong type is not
    caught."""
    dispatcher(*args)  # compiles, or loads from numba's cache
    return dispatcher.overloads[tuple(numba.typeof(a) for a in args)].entry_point
