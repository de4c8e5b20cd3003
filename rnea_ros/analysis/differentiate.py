"""Velocities and accelerations from sampled positions: local polynomial least squares.

For each sample i, a polynomial of degree ``order`` in (t - t_i) is fitted to every
sample within ±window/2 seconds of t_i, and its first and second derivatives at t_i
are the estimates. On evenly spaced samples this is exactly the Savitzky–Golay
filter; it also handles uneven stamps and gaps (a window with fewer than order + 1
samples gives NaN). Near the ends the window is one-sided.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

MAX_ORDER = 5


def local_polynomial_derivatives(
    t: np.ndarray, y: np.ndarray, window: float, order: int = 3
) -> tuple[np.ndarray, np.ndarray]:
    """(dy/dt, d²y/dt²) for y of shape (N, M) sampled at increasing times t (N,)."""
    if not 2 <= order <= MAX_ORDER:
        raise ValueError(f"order must be 2..{MAX_ORDER}, got {order}")
    if window <= 0:
        raise ValueError(f"window must be positive, got {window}")
    t = np.ascontiguousarray(t, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    if np.any(np.diff(t) < 0):
        raise ValueError("sample times must be non-decreasing")
    half = window / 2
    lo = np.searchsorted(t, t - half, side="left")
    hi = np.searchsorted(t, t + half, side="right")
    d1, d2 = np.empty_like(y), np.empty_like(y)
    _fit(t, y, lo, hi, half, order, d1, d2)
    return d1, d2


@numba.njit(parallel=True, cache=True)
def _fit(t, y, lo, hi, h, order, d1, d2):  # pragma: no cover - compiled
    n, m = y.shape
    p = order + 1
    for i in prange(n):
        A = np.empty((p, p))
        b = np.zeros((p, m))
        sums = np.zeros(2 * p - 1)  # Σ s^e: A[r, c] = sums[r + c] (a Hankel matrix)
        for k in range(lo[i], hi[i]):
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
        if hi[i] - lo[i] < p or not _solve_in_place(A, b):
            for j in range(m):
                d1[i, j] = np.nan
                d2[i, j] = np.nan
            continue
        for j in range(m):
            d1[i, j] = b[1, j] / h
            d2[i, j] = 2.0 * b[2, j] / (h * h)


@numba.njit(cache=True)
def _solve_in_place(A, b):  # pragma: no cover - compiled
    """Gaussian elimination with partial pivoting; the solution replaces b. False if singular."""
    p = A.shape[0]
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
            for j in range(b.shape[1]):
                b[col, j], b[pivot, j] = b[pivot, j], b[col, j]
        for r in range(col + 1, p):
            factor = A[r, col] / A[col, col]
            for c in range(col, p):
                A[r, c] -= factor * A[col, c]
            for j in range(b.shape[1]):
                b[r, j] -= factor * b[col, j]
    for r in range(p - 1, -1, -1):
        for j in range(b.shape[1]):
            acc = b[r, j]
            for c in range(r + 1, p):
                acc -= A[r, c] * b[c, j]
            b[r, j] = acc / A[r, r]
    return True
