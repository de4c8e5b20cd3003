"""Velocities and accelerations from sampled positions: local polynomial least squares.

For each sample i, a polynomial of degree ``order`` in (t - t_i) is fitted to every
sample within ±window/2 seconds of t_i, and its first and second derivatives at t_i
are the estimates. On evenly spaced samples this is exactly the Savitzky–Golay
filter; it also handles uneven, jittered and repeated stamps and gaps:

- at the recording's first and last samples (``starts``, ``ends``: the arrays begin or end there)
  the window is one-sided, of the same length: every sample there gets its derivatives;
- a window holding fewer than order + 1 distinct stamps (a stamp repeated, jitter that moves the
  outer samples out, a window barely longer than order sampling periods) takes the nearest samples
  beyond it, one at a time, up to ±window (not ±window/2) around the sample: at 1 kHz a 4 ms window
  held 3 or 5 samples as the stamps' last bits fell, and 10,684 of 60,001 samples got none;
- only a sample with fewer than order + 1 distinct stamps within ±window (a gap) gives NaN.

What a sample's derivatives see lies within ±window of it: a chunk with that much context on both
sides gives the same numbers as the whole recording.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

MAX_ORDER = 5


def local_polynomial_derivatives(
    t: np.ndarray, y: np.ndarray, window: float, order: int = 3, *, starts: bool = True, ends: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """(dy/dt, d²y/dt²) for y of shape (N, M) sampled at non-decreasing times t (N,). ``starts`` /
    ``ends``: t[0] / t[-1] are the recording's first / last stamps (one-sided windows there)."""
    if not 2 <= order <= MAX_ORDER:
        raise ValueError(f"order must be 2..{MAX_ORDER}, got {order}")
    if window <= 0:
        raise ValueError(f"window must be positive, got {window}")
    t = np.ascontiguousarray(t, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    if np.any(np.diff(t) < 0):
        raise ValueError("sample times must be non-decreasing")
    lo, hi, lo_bound, hi_bound = _bounds(t, window, starts, ends)
    d1, d2 = np.empty_like(y), np.empty_like(y)
    _fit(t, y, lo, hi, lo_bound, hi_bound, window / 2, order, d1, d2)
    return d1, d2


def local_polynomial_derivatives_many(
    t: np.ndarray, y: np.ndarray, windows, order: int = 3, at: np.ndarray | None = None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """``local_polynomial_derivatives(t, y, window, order)`` for each of ``windows`` (the whole
    recording: one-sided at both ends), in one pass: a sample's windows are nested (each holds the
    shorter ones' samples), so the sums of the longest are gathered from the sample outward and
    each shorter window's fit taken on the way, the cost of the longest alone instead of all of
    them (the window's choice: 14 candidates, 1,358 samples summed per sample against 401). The
    same fits as one by one up to rounding (the sums taken in another order and scale); a sample
    whose windows are not nested (widened around a gap) is fitted window by window as there.
    ``at``: the indices of the samples to fit at (increasing; default every one), each from all the
    samples around it: the rows of the whole result at those samples."""
    if not 2 <= order <= MAX_ORDER:
        raise ValueError(f"order must be 2..{MAX_ORDER}, got {order}")
    windows = [float(w) for w in windows]
    if not windows or min(windows) <= 0 or windows != sorted(windows):
        raise ValueError(f"windows must be positive and increasing, got {windows}")
    t = np.ascontiguousarray(t, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    if np.any(np.diff(t) < 0):
        raise ValueError("sample times must be non-decreasing")
    at = np.arange(len(t)) if at is None else np.asarray(at, dtype=np.int64)
    bounds = [_bounds(t, w, True, True, t[at]) for w in windows]
    lo, hi, lo_bound, hi_bound = (np.stack([b[k] for b in bounds]) for k in range(4))
    d1, d2 = np.empty((len(windows), len(at), y.shape[1])), np.empty((len(windows), len(at), y.shape[1]))
    stamps = np.cumsum(np.r_[True, np.diff(t) > 0]) if len(t) else np.zeros(0, np.int64)  # distinct stamps up to k
    _fit_many(t, y, at, lo, hi, lo_bound, hi_bound, np.array(windows) / 2, order, stamps, d1, d2)
    return [(d1[c], d2[c]) for c in range(len(windows))]


def _bounds(
    t: np.ndarray, window: float, starts: bool, ends: bool, centres: np.ndarray | None = None
) -> tuple[np.ndarray, ...]:
    """Per sample (of stamps ``centres``, default ``t``): its window's samples [lo, hi) and how far it
    may be widened [lo_bound, hi_bound)."""
    half = window / 2
    c = t if centres is None else centres
    lo = np.searchsorted(t, c - half, side="left")
    hi = np.searchsorted(t, c + half, side="right")
    if len(t):
        if starts:  # one-sided at the first stamp: the window's whole length after it
            cut = c - half < t[0]
            hi[cut] = np.maximum(hi[cut], np.searchsorted(t, t[0] + window, side="right"))
        if ends:
            cut = c + half > t[-1]
            lo[cut] = np.minimum(lo[cut], np.searchsorted(t, t[-1] - window, side="left"))
    lo_bound = np.searchsorted(t, c - window, side="left")  # how far a window may be extended
    hi_bound = np.searchsorted(t, c + window, side="right")
    return lo, hi, lo_bound, hi_bound


def underived_count(qd: np.ndarray, qdd: np.ndarray) -> int:
    """Samples (rows) left without derivatives."""
    return int((~(np.isfinite(qd).all(axis=1) & np.isfinite(qdd).all(axis=1))).sum())


@numba.njit(cache=True)
def _widened(t, i, lo, hi, lo_bound, hi_bound, p):  # pragma: no cover - compiled
    """[lo, hi) with the nearest samples beyond it added, one at a time, until it holds p distinct
    stamps (or none is left within [lo_bound, hi_bound))."""
    distinct = 0
    for k in range(lo, hi):
        if k == lo or t[k] != t[k - 1]:
            distinct += 1
    while distinct < p:
        before = lo > lo_bound
        after = hi < hi_bound
        if not before and not after:
            break
        if before and (not after or t[i] - t[lo - 1] <= t[hi] - t[i]):
            lo -= 1
            if lo + 1 >= hi or t[lo] != t[lo + 1]:
                distinct += 1
        else:
            hi += 1
            if hi - 1 <= lo or t[hi - 1] != t[hi - 2]:
                distinct += 1
    return lo, hi, distinct


@numba.njit(parallel=True, cache=True)
def _fit(t, y, lo_, hi_, lo_bound, hi_bound, half, order, d1, d2):  # pragma: no cover - compiled
    n = y.shape[0]
    p = order + 1
    blocks = min(n, 64)  # each block's work arrays made once (three allocations per sample were ~1/4 of the time)
    for block in prange(blocks):
        A = np.empty((p, p))
        b = np.empty((p, y.shape[1]))
        sums = np.empty(2 * p - 1)
        for i in range(block * n // blocks, (block + 1) * n // blocks):
            lo, hi, distinct = _widened(t, i, lo_[i], hi_[i], lo_bound[i], hi_bound[i], p)
            _fit_into(t, y, i, i, lo, hi, distinct, half, p, d1, d2, A, b, sums)


@numba.njit(cache=True)
def _fit_at(t, y, i, row, lo, hi, distinct, half, p, d1, d2):  # pragma: no cover - compiled
    """The fit at sample i over [lo, hi): d1[row], d2[row]."""
    A, b, sums = np.empty((p, p)), np.empty((p, y.shape[1])), np.empty(2 * p - 1)
    _fit_into(t, y, i, row, lo, hi, distinct, half, p, d1, d2, A, b, sums)


@numba.njit(cache=True)
def _fit_into(t, y, i, row, lo, hi, distinct, half, p, d1, d2, A, b, sums):  # pragma: no cover - compiled
    """``_fit_at`` in the work arrays A (p, p), b (p, m), sums (2p - 1,)."""
    m = y.shape[1]
    h = max(half, t[i] - t[lo], t[hi - 1] - t[i]) if hi > lo else half  # s within [-1, 1]
    b[:] = 0.0
    sums[:] = 0.0  # Σ s^e: A[r, c] = sums[r + c] (a Hankel matrix)
    for k in range(lo, hi):
        s = (t[k] - t[i]) / h  # scaled to [-1, 1] for conditioning
        power = 1.0
        for e in range(2 * p - 1):
            sums[e] += power
            if e < p:
                for j in range(m):
                    b[e, j] += power * y[k, j]
            power *= s
    for r in range(p):
        for c in range(p):
            A[r, c] = sums[r + c]
    _solved(A, b, distinct, h, row, d1, d2)


@numba.njit(cache=True)
def _solved(A, b, distinct, h, i, d1, d2):  # pragma: no cover - compiled
    """d1[i], d2[i] from the normal equations A x = b of s = (t - t_i)/h (NaN: too few stamps, singular)."""
    p, m = A.shape[0], b.shape[1]
    if distinct < p or not _solve_in_place(A, b, 1):  # the value's row 0 is not used
        for j in range(m):
            d1[i, j] = np.nan
            d2[i, j] = np.nan
        return
    for j in range(m):
        d1[i, j] = b[1, j] / h
        d2[i, j] = 2.0 * b[2, j] / (h * h)


@numba.njit(cache=True)
def _gather(t, y, i, first, last, h, sums, b):  # pragma: no cover - compiled
    """Adds samples [first, last) to the sums of s^e and s^e·y, s = (t - t_i)/h."""
    p = b.shape[0]
    for k in range(first, last):
        s = (t[k] - t[i]) / h
        power = 1.0
        for e in range(2 * p - 1):
            sums[e] += power
            if e < p:
                for j in range(b.shape[1]):
                    b[e, j] += power * y[k, j]
            power *= s


@numba.njit(parallel=True, cache=True)
def _fit_many(t, y, at, lo_, hi_, lo_bound, hi_bound, halves, order, stamps, d1, d2):  # pragma: no cover - compiled
    """Row k of d1, d2: the fits at sample at[k] (lo_ ... hi_bound: its bounds, per window)."""
    windows, n = lo_.shape
    m = y.shape[1]
    p = order + 1
    for k in prange(n):
        i = at[k]
        lo, hi, distinct = np.empty(windows, np.int64), np.empty(windows, np.int64), np.empty(windows, np.int64)
        nested = True
        for c in range(windows):
            lo[c], hi[c] = lo_[c, k], hi_[c, k]
            distinct[c] = stamps[hi[c] - 1] - stamps[lo[c]] + 1 if hi[c] > lo[c] else 0
            if distinct[c] < p:  # widened as one by one (the count there, of the same stamps)
                lo[c], hi[c], distinct[c] = _widened(t, i, lo[c], hi[c], lo_bound[c, k], hi_bound[c, k], p)
            if c and (lo[c] > lo[c - 1] or hi[c] < hi[c - 1] or hi[c - 1] <= lo[c - 1]):
                nested = False
        if not nested:
            for c in range(windows):
                _fit_at(t, y, i, k, lo[c], hi[c], distinct[c], halves[c], p, d1[c], d2[c])
            continue
        last = windows - 1
        reference = max(halves[last], t[i] - t[lo[last]], t[hi[last] - 1] - t[i])
        sums = np.zeros(2 * p - 1)
        b = np.zeros((p, m))
        A = np.empty((p, p))
        scaled = np.empty((p, m))
        for c in range(windows):
            if c == 0:
                _gather(t, y, i, lo[0], hi[0], reference, sums, b)
            else:
                _gather(t, y, i, lo[c], lo[c - 1], reference, sums, b)
                _gather(t, y, i, hi[c - 1], hi[c], reference, sums, b)
            h = max(halves[c], t[i] - t[lo[c]], t[hi[c] - 1] - t[i])
            ratio = reference / h  # the sums in s = (t - t_i)/h: Σ s^e = ratio^e Σ (s/ratio)^e
            for r in range(p):
                for col in range(p):
                    A[r, col] = sums[r + col] * ratio ** (r + col)
                for j in range(m):
                    scaled[r, j] = b[r, j] * ratio**r
            _solved(A, scaled, distinct[c], h, k, d1[c], d2[c])


@numba.njit(cache=True)
def _solve_in_place(A, b, first=0):  # pragma: no cover - compiled
    """Gaussian elimination with partial pivoting; the solution's rows from ``first`` on replace b's
    (the rows above are left as the elimination leaves them). False if singular. The widths in locals:
    the loops over b's columns then vectorise (half the time of ``b.shape[1]`` read in each loop)."""
    p, m = A.shape[0], b.shape[1]
    scale = 0.0
    for r in range(p):
        scale = max(scale, abs(A[r, r]))
    for col in range(p):
        pivot = col
        for r in range(col + 1, p):
            if abs(A[r, col]) > abs(A[pivot, col]):
                pivot = r
        if abs(A[pivot, col]) <= 1e-12 * scale:
            return False
        if pivot != col:
            for c in range(p):
                A[col, c], A[pivot, c] = A[pivot, c], A[col, c]
            for j in range(m):
                b[col, j], b[pivot, j] = b[pivot, j], b[col, j]
        for r in range(col + 1, p):
            factor = A[r, col] / A[col, col]
            for c in range(col, p):
                A[r, c] -= factor * A[col, c]
            for j in range(m):
                b[r, j] -= factor * b[col, j]
    for r in range(p - 1, first - 1, -1):
        for j in range(m):
            acc = b[r, j]
            for c in range(r + 1, p):
                acc -= A[r, c] * b[c, j]
            b[r, j] = acc / A[r, r]
    return True
