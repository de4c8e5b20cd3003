"""The batch kernel's sin and cos (fdlibm's, vectorised) within one ulp of libm's (numpy's)."""

from __future__ import annotations

import numpy as np

from rnea_ros.dynamics.sincos import LARGEST_REDUCED, sincos_array


def ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many doubles apart a and b are (both finite, the same sign or zero)."""
    ia, ib = a.view(np.int64), b.view(np.int64)
    ia = np.where(ia < 0, np.int64(-(2**63)) - ia, ia)  # sign-magnitude to a monotonic integer line
    ib = np.where(ib < 0, np.int64(-(2**63)) - ib, ib)
    return np.abs(ia - ib)


def test_within_one_ulp_of_libm_on_a_million_angles():
    rng = np.random.default_rng(45)
    for scale in (1e-8, 1.0, np.pi, 10.0, 1e3, 1e5, LARGEST_REDUCED):
        x = rng.uniform(-scale, scale, 200_000)
        s, c = np.empty_like(x), np.empty_like(x)
        sincos_array(x, s, c)
        assert ulps(s, np.sin(x)).max() <= 1, scale
        assert ulps(c, np.cos(x)).max() <= 1, scale


def test_quadrant_edges_zeros_and_what_libm_takes():
    k = np.arange(-64, 65)
    edges = np.concatenate([k * np.pi / 4, np.nextafter(k * np.pi / 2, np.inf), np.nextafter(k * np.pi / 2, -np.inf)])
    special = np.array([0.0, -0.0, 5e-324, 1e-300, LARGEST_REDUCED * 2, -1e22, 1e300])
    x = np.concatenate([edges, special])
    s, c = np.empty_like(x), np.empty_like(x)
    sincos_array(x, s, c)
    assert ulps(s, np.sin(x)).max() <= 1
    assert ulps(c, np.cos(x)).max() <= 1
    assert np.signbit(s[len(edges) + 1])  # sin(-0) = -0
    odd = np.array([np.nan, np.inf, -np.inf])
    s, c = np.empty(3), np.empty(3)
    sincos_array(odd, s, c)
    assert np.isnan(s).all() and np.isnan(c).all()
