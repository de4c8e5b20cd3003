"""The methods' hot path (plain float64 vectors straight to the kernel) gives what the converting path
gives, and every other input still goes through the conversions and the checks."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.dynamics import rnea as kernel
from rnea_ros.dynamics.precompile import compile_dynamics, kernels_in_cache, small_robot
from rnea_ros.testing.reference import EXAMPLE_ARM, PinocchioReference, random_state

ARM = RobotModel.from_urdf(EXAMPLE_ARM.read_text())


def variants(x: np.ndarray) -> list:
    """The same values as a list, an int-valued array, a strided view and a read-only array."""
    strided = np.repeat(x, 2)[::2]
    frozen = x.copy()
    frozen.flags.writeable = False
    return [x.tolist(), strided, frozen, np.asfortranarray(x)]


@pytest.mark.parametrize("floating_base", [False, True])
def test_every_layout_gives_the_hot_paths_torques(floating_base):
    model = small_robot(floating_base)
    q, qd, qdd = random_state(model, np.random.default_rng(1))
    tau, g = model.inverse_dynamics(q, qd, qdd), model.gravity_torques(q)
    for q_, qd_, qdd_ in zip(variants(q), variants(qd), variants(qdd), strict=True):
        assert np.array_equal(model.inverse_dynamics(q_, qd_, qdd_), tau)
        assert np.array_equal(model.gravity_torques(q_), g)


def test_the_hot_path_matches_pinocchio():
    reference = PinocchioReference(EXAMPLE_ARM.read_text(), ARM)
    q, qd, qdd = random_state(ARM, np.random.default_rng(2))
    np.testing.assert_allclose(ARM.inverse_dynamics(q, qd, qdd), reference.inverse_dynamics(q, qd, qdd), atol=1e-9)
    zero = np.zeros(ARM.nv)
    np.testing.assert_allclose(ARM.gravity_torques(q), reference.inverse_dynamics(q, zero, zero), atol=1e-9)


def test_integer_arrays_are_converted_not_reinterpreted():
    q = np.arange(ARM.nq, dtype=np.int64)
    zero = np.zeros(ARM.nv, dtype=np.int64)
    expected = ARM.inverse_dynamics(q.astype(float), zero.astype(float), zero.astype(float))
    assert np.array_equal(ARM.inverse_dynamics(q, zero, zero), expected)
    assert np.array_equal(ARM.gravity_torques(q), ARM.gravity_torques(q.astype(float)))


def test_the_hot_path_refuses_what_the_kernel_refuses():
    q, qd, qdd = random_state(ARM, np.random.default_rng(3))
    with pytest.raises(ValueError, match="wrong input shapes"):
        ARM.inverse_dynamics(q[:-1], qd, qdd)
    with pytest.raises(ValueError, match="wrong input shapes"):
        ARM.gravity_torques(q[:-1])
    bad = q.copy()
    bad[0] = np.nan
    with pytest.raises(ValueError, match="finite"):
        ARM.gravity_torques(bad)
    with pytest.raises(ValueError, match="finite"):
        ARM.inverse_dynamics(bad, qd, qdd)


def test_a_kernel_takes_its_sizes_from_the_model_not_from_the_output():
    """An output array one short (and q one short to match) is refused, never written past its end."""
    q = ARM.neutral_configuration()
    work = ARM.create_data().work
    short = np.empty(ARM.nv - 1)
    assert kernel.gravity(ARM.joints, ARM.bodies, q[:-1], work, short) == kernel.WRONG_SIZE
    zero = np.zeros(ARM.nv - 1)
    status = kernel.inverse_dynamics(ARM.joints, ARM.bodies, q[:-1], zero, zero, ARM.no_f_ext[0], work, short)
    assert status == kernel.WRONG_SIZE


def test_the_cache_check_answers_without_compiling():
    assert kernels_in_cache() in (True, False, None)


def test_a_cold_cache_is_announced_and_a_warm_one_is_not(tmp_path):
    script = "from rnea_ros.dynamics.precompile import compile_notice; print(compile_notice())"
    cold = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert cold.stdout.startswith("compiling kernels (first start, ~")
    compile_dynamics()  # into the default cache, which the next process reads
    warm = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert warm.stdout.strip() == "None"
