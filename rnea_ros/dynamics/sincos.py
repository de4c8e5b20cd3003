"""sin and cos of many angles at once, in a loop that LLVM vectorises (numba).

libm's sin and cos cost 15-35 ns a call, called one by one: half of a batch's inverse dynamics.
This is fdlibm's algorithm (Sun's, as in FreeBSD's libm: ``k_sin.c``, ``k_cos.c`` and the medium
case of ``e_rem_pio2.c``), written without branches so that one loop evaluates several angles per
instruction: the angle is reduced by π/2 in three parts (Cody-Waite), and the degree-13 and -14
polynomials on [-π/4, π/4] carry the reduced angle's tail. fdlibm's results are within 1 ulp of
the true value, as are libm's: the two differ by at most one ulp (test/dynamics/test_sincos.py
checks it against numpy on a million angles). The reduction is exact for |x| < 2^19 π/2 (about
800,000 rad); larger angles, and NaN or Inf, take libm's own result.
"""

from __future__ import annotations

import numpy as np

from rnea_ros.dynamics.jit import njit

LARGEST_REDUCED = 823550.0  # 2^19 π/2: n π/2 is split exactly into three parts below it

_INV_PIO2 = 6.36619772367581382433e-01  # 2/π
_PIO2_1 = 1.57079632673412561417e00  # the first 33 bits of π/2
_PIO2_2 = 6.07710050630396597660e-11  # the next 33 bits
_PIO2_2T = 2.02226624879595063154e-21  # π/2 - _PIO2_1 - _PIO2_2
_ROUND = 6755399441055744.0  # 1.5 · 2^52: x + _ROUND - _ROUND rounds x to an integer

_S1, _S2, _S3 = -1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04
_S4, _S5, _S6 = 2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10
_C1, _C2, _C3 = 4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05
_C4, _C5, _C6 = -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11


@njit(cache=True, inline="always")
def sincos(x):
    """(sin x, cos x) for |x| < ``LARGEST_REDUCED``, without a branch (the caller handles the rest)."""
    fn = (x * _INV_PIO2 + _ROUND) - _ROUND
    r = (x - fn * _PIO2_1) - fn * _PIO2_2  # both products exact: 33-bit constants, |n| < 2^20
    w = fn * _PIO2_2T
    y0 = r - w
    y1 = (r - y0) - w
    z = y0 * y0
    v = z * y0
    rs = _S2 + z * (_S3 + z * (_S4 + z * (_S5 + z * _S6)))
    ks = y0 - ((z * (0.5 * y1 - v * rs) - y1) - v * _S1)
    ww = z * z
    rc = z * (_C1 + z * (_C2 + z * _C3)) + ww * ww * (_C4 + z * (_C5 + z * _C6))
    hz = 0.5 * z
    wc = 1.0 - hz
    kc = wc + (((1.0 - wc) - hz) + (z * rc - y0 * y1))
    n = np.int64(fn)  # the quadrant: sin x = ±ks or ±kc, cos x likewise
    odd = (n & 1) != 0
    sign_s = 1.0 - np.float64(n & 2)
    sign_c = 1.0 - np.float64((n + 1) & 2)
    return sign_s * (kc if odd else ks), sign_c * (ks if odd else kc)


@njit(cache=True)
def sincos_array(x, s, c) -> None:
    """s[k], c[k] = sin x[k], cos x[k] for the 1-D arrays given (libm's own beyond ``LARGEST_REDUCED``)."""
    n = x.shape[0]
    for k in range(n):
        s[k], c[k] = sincos(x[k])
    for k in range(n):
        if not (abs(x[k]) < LARGEST_REDUCED):
            s[k] = np.sin(x[k])
            c[k] = np.cos(x[k])
