"""Fast CSV of float columns: fixed-point text written by a numba kernel.

``np.savetxt`` formats each value in Python (~1 µs); an hour of 1 kHz samples has
10⁸ values. Here every value is written with ``decimals`` digits after the point
(values beyond ±9·10¹⁸/10^decimals raise, NaN is written as ``nan``). ``RowWriter`` formats
and writes them on a thread of its own, beside the caller's work.
"""

from __future__ import annotations

import queue
import threading

import numba
import numpy as np

MAX_INTEGER = 9.0e18
PAIRS = np.frombuffer(b"".join(b"%02d" % k for k in range(100)), dtype=np.uint8).copy()  # "00" ... "99"
POWERS = np.array([10**k for k in range(19)], dtype=np.int64)


def format_rows(values: np.ndarray, decimals: int = 6) -> bytes:
    """Rows of ``values`` (N, M) as CSV text (no header), ``decimals`` digits after the point."""
    return b"".join(_formatted_pieces(values, decimals))


def write_rows(file, values: np.ndarray, decimals: int = 6) -> None:
    """``format_rows`` straight into a binary file, without joining the pieces; into a ``RowWriter``,
    formatted and written by its thread."""
    if isinstance(file, RowWriter):
        file.write_rows(values, decimals)
        return
    for piece in _formatted_pieces(values, decimals):
        file.write(piece)


class RowWriter:
    """A binary file whose rows (``write_rows``) are formatted and written by a thread of its own, in
    order, while the caller goes on: the formatting kernel releases the GIL, the file's writes too.
    At most ``depth`` arrays wait (memory stays bounded); the caller must not change an array it
    handed over. An error of the thread (a value it cannot write, a full disk) is raised by the next
    ``write``/``write_rows`` or by ``close``; the file is complete when ``close`` returns."""

    def __init__(self, file, depth: int = 2) -> None:
        self._file = file
        self._queue: queue.Queue = queue.Queue(depth)
        self._error: BaseException | None = None
        self._buffer = np.empty(0, dtype=np.uint8)  # the thread's, grown as needed and reused
        self._thread = threading.Thread(target=self._run, name="csv rows", daemon=True)
        self._thread.start()

    def write(self, data: bytes) -> None:
        self._put(bytes(data))

    def write_rows(self, values: np.ndarray, decimals: int = 6) -> None:
        self._put((values, decimals))

    def _put(self, item) -> None:
        if self._error is not None:
            raise self._error
        self._queue.put(item)

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            if self._error is not None:
                continue  # drained, not written: the caller is told
            try:
                if isinstance(item, bytes):
                    self._file.write(item)
                else:
                    self._file.write(self._formatted(*item))
            except BaseException as error:  # handed to the caller's thread
                self._error = error

    def _formatted(self, values: np.ndarray, decimals: int) -> memoryview:
        values = _checked(values, decimals)
        size = len(values) * _row_width(values, decimals)
        if len(self._buffer) < size:
            self._buffer = np.empty(size, dtype=np.uint8)
        return memoryview(self._buffer[: _format_any(values, decimals, self._buffer)])

    def close(self) -> None:
        """Waits for every row handed over to be written; raises the thread's error if it had one."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def __enter__(self) -> RowWriter:
        return self

    def __exit__(self, kind, error, traceback) -> None:
        if kind is None:
            self.close()
            return
        self._error = self._error or error  # the rows waiting are dropped: the caller's error goes on
        self._queue.put(None)
        self._thread.join()


def _checked(values: np.ndarray, decimals: int) -> np.ndarray:
    values = np.ascontiguousarray(values, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError(f"values must be 2-D, got shape {values.shape}")
    limit = MAX_INTEGER / 10.0**decimals
    if values.size and np.max(np.abs(values), initial=0.0, where=np.isfinite(values)) >= limit:
        raise ValueError(f"values beyond ±{limit:.1e} cannot be written with {decimals} decimals")
    return values


def _row_width(values: np.ndarray, decimals: int) -> int:
    return values.shape[1] * (22 + decimals)  # per value: sign, 19 digits, point, decimals, separator


def _formatted_pieces(values: np.ndarray, decimals: int) -> list[memoryview]:
    values = _checked(values, decimals)
    row_width = _row_width(values, decimals)
    blocks = max(1, min(numba.get_num_threads(), len(values) // 1000))  # rows split across the threads
    bounds = np.linspace(0, len(values), blocks + 1).astype(np.int64)
    buffer = np.empty(len(values) * row_width, dtype=np.uint8)
    used = _format_blocks(values, decimals, buffer, bounds, row_width)
    return [memoryview(buffer[bounds[k] * row_width : bounds[k] * row_width + used[k]]) for k in range(blocks)]


@numba.njit(parallel=True, cache=True)
def _format_blocks(values, decimals, out, bounds, row_width):  # pragma: no cover - compiled
    """Block k of rows is written from byte bounds[k]·row_width on; returns the bytes used per block."""
    blocks = len(bounds) - 1
    used = np.zeros(blocks, dtype=np.int64)
    for k in numba.prange(blocks):
        start = bounds[k] * row_width
        used[k] = _format_any(values[bounds[k] : bounds[k + 1]], decimals, out[start:])
    return used


@numba.njit(cache=True, nogil=True)
def _format_any(values, decimals, out):  # pragma: no cover - compiled
    """``_format``, through ``_format_six`` for 6 decimals (samples.csv's)."""
    if decimals == 6:
        return _format_six(values, out)
    return _format(values, decimals, out)


@numba.njit(cache=True, nogil=True)
def _format(values, decimals, out):  # pragma: no cover - compiled
    """Right to left, two digits at a time (``PAIRS``), the integer part and the fraction apart;
    ``np.rint``: half to even as ``np.round``. 1.4-2x faster than digit by digit through a buffer."""
    n, m = values.shape
    scale = 10.0**decimals
    unit = POWERS[decimals]
    pos = 0
    for i in range(n):
        for j in range(m):
            x = values[i, j]
            if not np.isfinite(x):
                pos = _not_finite(out, pos, x)
            else:
                scaled = np.int64(np.rint(abs(x) * scale))
                if x < 0 and scaled != 0:
                    out[pos] = 45  # -
                    pos += 1
                whole = scaled // unit
                fraction = scaled - whole * unit
                width = 1
                while width < 19 and whole >= POWERS[width]:
                    width += 1
                end = pos + width + (decimals + 1 if decimals > 0 else 0)
                k = end
                for _ in range(decimals // 2):
                    quotient = fraction // 100
                    _pair(out, k, PAIRS, fraction - quotient * 100)
                    k -= 2
                    fraction = quotient
                if decimals % 2:
                    out[k - 1] = 48 + fraction % 10
                    k -= 1
                if decimals > 0:
                    out[k - 1] = 46  # .
                    k -= 1
                while whole >= 100:
                    quotient = whole // 100
                    _pair(out, k, PAIRS, whole - quotient * 100)
                    k -= 2
                    whole = quotient
                if whole >= 10:
                    _pair(out, k, PAIRS, whole)
                else:
                    out[k - 1] = 48 + whole
                pos = end
            out[pos] = 44 if j < m - 1 else 10  # , or newline
            pos += 1
    return pos


@numba.njit(cache=True, inline="always")
def _not_finite(out, pos, x):  # pragma: no cover - compiled
    """nan, inf or -inf at out[pos:]; the position after it."""
    if np.isnan(x):
        out[pos] = 110  # n
        out[pos + 1] = 97  # a
        out[pos + 2] = 110  # n
        return pos + 3
    if x < 0:
        out[pos] = 45
        pos += 1
    out[pos] = 105  # i
    out[pos + 1] = 110  # n
    out[pos + 2] = 102  # f
    return pos + 3


@numba.njit(cache=True, inline="always")
def _pair(out, end, pairs, value):  # pragma: no cover - compiled
    """The two digits of 0 <= value < 100 at out[end - 2 : end]."""
    out[end - 2] = pairs[2 * value]
    out[end - 1] = pairs[2 * value + 1]


@numba.njit(cache=True, nogil=True)
def _format_six(values, out):  # pragma: no cover - compiled
    """``_format`` with 6 decimals, the same bytes 2.2x faster (18 against 41 ns of CPU per value):
    unsigned integers and divisors known to the compiler (multiplications, not divisions), the
    fraction's three pairs unrolled. Its own loop: one loop calling either per value was 32 ns."""
    n, m = values.shape
    million, hundred, ten_thousand = np.uint64(1_000_000), np.uint64(100), np.uint64(10_000)
    pos = 0
    for i in range(n):
        for j in range(m):
            x = values[i, j]
            if not np.isfinite(x):
                pos = _not_finite(out, pos, x)
            else:
                scaled = np.uint64(np.int64(np.rint(abs(x) * 1e6)))
                if x < 0 and scaled != 0:
                    out[pos] = 45  # -
                    pos += 1
                whole = scaled // million
                fraction = scaled - whole * million
                if whole < 10:
                    out[pos] = 48 + whole
                    pos += 1
                elif whole < 100:
                    _pair(out, pos + 2, PAIRS, whole)
                    pos += 2
                else:
                    width, power = 3, np.uint64(1000)
                    while width < 20 and whole >= power:
                        width += 1
                        power *= np.uint64(10)
                    k = pos + width
                    while whole >= hundred:
                        quotient = whole // hundred
                        _pair(out, k, PAIRS, whole - quotient * hundred)
                        k -= 2
                        whole = quotient
                    if whole >= 10:
                        _pair(out, k, PAIRS, whole)
                    else:
                        out[k - 1] = 48 + whole
                    pos += width
                out[pos] = 46  # .
                high = fraction // ten_thousand
                low = fraction - high * ten_thousand
                middle = low // hundred
                _pair(out, pos + 3, PAIRS, high)
                _pair(out, pos + 5, PAIRS, middle)
                _pair(out, pos + 7, PAIRS, low - middle * hundred)
                pos += 7
            out[pos] = 44 if j < m - 1 else 10  # , or newline
            pos += 1
    return pos
