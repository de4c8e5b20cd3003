"""The kernel's spatial algebra (tuples, numba) against Featherstone's 6×6 matrices built in numpy."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.dynamics import spatial
from rnea_ros.dynamics.rotations import matrix_quaternion, quaternion_matrix
from rnea_ros.dynamics.urdf import rpy_to_rotation

RNG = np.random.default_rng(7)


def skew(x: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def plucker(R: np.ndarray, p: np.ndarray) -> np.ndarray:
    """spatial_v2's X for a child frame at pose (R, p) in its parent: E = Rᵀ, r = p."""
    E = R.T
    return np.block([[E, np.zeros((3, 3))], [-E @ skew(p), E]])


def crm(v: np.ndarray) -> np.ndarray:
    return np.block([[skew(v[:3]), np.zeros((3, 3))], [skew(v[3:]), skew(v[:3])]])


def random_rotation() -> np.ndarray:
    return rpy_to_rotation(RNG.uniform(-np.pi, np.pi, 3))


def flat(R: np.ndarray) -> tuple:
    return tuple(R.ravel())


@pytest.mark.parametrize("trial", range(5))
def test_transforms_match_plucker_matrices(trial):
    R, p, m = random_rotation(), RNG.normal(size=3), RNG.normal(size=6)
    X = plucker(R, p)
    np.testing.assert_allclose(spatial.motion_transform(flat(R), tuple(p), tuple(m)), X @ m, atol=1e-12)
    np.testing.assert_allclose(spatial.force_transform_T(flat(R), tuple(p), tuple(m)), X.T @ m, atol=1e-12)


@pytest.mark.parametrize("trial", range(5))
def test_cross_products_match_crm_and_crf(trial):
    v, m = RNG.normal(size=6), RNG.normal(size=6)
    np.testing.assert_allclose(spatial.cross_motion(tuple(v), tuple(m)), crm(v) @ m, atol=1e-12)
    np.testing.assert_allclose(spatial.cross_force(tuple(v), tuple(m)), -crm(v).T @ m, atol=1e-12)


def test_inertia_times_matches_the_spatial_inertia_matrix():
    mass, c = 2.5, RNG.normal(size=3)
    A = RNG.normal(size=(3, 3))
    I_c = A @ A.T
    I_o = I_c + mass * (c @ c * np.eye(3) - np.outer(c, c))  # parallel axis: about the origin
    h = mass * c
    inertia = np.block([[I_o, skew(h)], [-skew(h), mass * np.eye(3)]])  # RBDA eq. 2.63
    v = RNG.normal(size=6)
    np.testing.assert_allclose(spatial.inertia_times(mass, tuple(h), flat(I_o), tuple(v)), inertia @ v, atol=1e-12)


def test_axis_angle_is_the_rotation_about_the_axis():
    axis = RNG.normal(size=3)
    axis /= np.linalg.norm(axis)
    R = np.array(spatial.axis_angle(tuple(axis), 0.7)).reshape(3, 3)
    np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(R), 1.0)
    np.testing.assert_allclose(R @ axis, axis, atol=1e-12)
    np.testing.assert_allclose(np.trace(R), 1 + 2 * np.cos(0.7))  # the angle
    Rz = np.array(spatial.axis_angle((0.0, 0.0, 1.0), 0.3)).reshape(3, 3)
    np.testing.assert_allclose(Rz, rpy_to_rotation([0.0, 0.0, 0.3]), atol=1e-15)


@pytest.mark.parametrize("trial", range(20))
def test_quaternions_round_trip(trial):
    R = random_rotation()
    q = matrix_quaternion(R)
    np.testing.assert_allclose(np.linalg.norm(q), 1.0)
    np.testing.assert_allclose(quaternion_matrix(q), R, atol=1e-12)


def test_quaternion_of_known_rotations():
    half = np.sqrt(0.5)
    np.testing.assert_allclose(
        quaternion_matrix([0.0, 0.0, half, half]), rpy_to_rotation([0, 0, np.pi / 2]), atol=1e-15
    )
    np.testing.assert_allclose(np.abs(matrix_quaternion(np.diag([1.0, -1.0, -1.0]))), [1.0, 0.0, 0.0, 0.0])
