"""The local polynomial fit is exact on polynomials of its degree, on even and uneven stamps;
the CSV kernel writes what Python's own formatting writes."""

from __future__ import annotations

import io

import numpy as np
import pytest

from rnea_ros.analysis.differentiate import local_polynomial_derivatives
from rnea_ros.analysis.fast_csv import format_rows, write_rows


@pytest.mark.parametrize("uneven", [False, True])
def test_cubic_derivatives_are_exact(uneven):
    rng = np.random.default_rng(2)
    t = np.arange(400) / 100.0
    if uneven:
        t = np.sort(t + rng.uniform(-0.004, 0.004, t.size))
    y = np.stack([1 + 2 * t - 0.5 * t**2 + 0.3 * t**3, -(t**3)], axis=1)
    d1, d2 = local_polynomial_derivatives(t, y, window=0.1, order=3)
    np.testing.assert_allclose(d1[:, 0], 2 - t + 0.9 * t**2, atol=1e-7)
    np.testing.assert_allclose(d2[:, 0], -1 + 1.8 * t, atol=1e-5)
    np.testing.assert_allclose(d1[:, 1], -3 * t**2, atol=1e-7)
    np.testing.assert_allclose(d2[:, 1], -6 * t, atol=1e-5)


def test_too_few_samples_in_a_window_give_nan():
    t = np.array([0.0, 0.01, 0.02, 5.0, 10.0])
    d1, _ = local_polynomial_derivatives(t, t[:, None] ** 2, window=0.05, order=3)
    assert np.isnan(d1[3, 0])


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="order"):
        local_polynomial_derivatives(np.arange(5.0), np.zeros((5, 1)), 0.1, order=9)
    with pytest.raises(ValueError, match="non-decreasing"):
        local_polynomial_derivatives(np.array([1.0, 0.0]), np.zeros((2, 1)), 0.1)


def test_csv_matches_python_formatting_on_exact_values():
    values = np.array([[0.0, 1.5, -2.25, 123456.0625], [-0.5, 1e-6 * 3, 98765432.125, -7.0]])
    text = format_rows(values).decode()
    assert text == "".join(",".join(f"{x:.6f}" for x in row) + "\n" for row in values)
    buffer = io.BytesIO()
    write_rows(buffer, values)
    assert buffer.getvalue() == text.encode()


def test_csv_rounds_to_within_one_unit_of_the_last_digit_and_writes_no_negative_zero():
    values = np.random.default_rng(4).normal(scale=1e3, size=(50, 7))
    values[0, :3] = [-0.0, -4e-7, -1e-9]
    text = format_rows(values).decode()
    parsed = np.array([[float(x) for x in line.split(",")] for line in text.splitlines()])
    np.testing.assert_allclose(parsed, values, rtol=0, atol=1e-6)
    assert "-0.000000" not in text


def test_csv_refuses_values_it_cannot_write():
    with pytest.raises(ValueError):
        format_rows(np.zeros(3))
    with pytest.raises(ValueError):
        format_rows(np.array([[1e30]]))
