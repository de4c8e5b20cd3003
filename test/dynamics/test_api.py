"""The public API: shapes, batches, errors, names."""

from __future__ import annotations

import re

import numpy as np
import pytest

from rnea_ros import ModelError, RobotModel
from rnea_ros.testing.reference import EXAMPLE_ARM, random_state


@pytest.fixture(scope="module")
def arm() -> RobotModel:
    return RobotModel.from_urdf(EXAMPLE_ARM.read_text())


def test_names(arm):
    assert arm.joint_names == [f"joint{i}" for i in range(1, 8)] + ["finger_left_joint"]
    assert arm.nq == arm.nv == 8
    for link in ("world", "base_link", "flange", "tool", "camera_link", "tcp", "finger_right"):
        assert link in arm.link_names


def test_batch_equals_single_calls(arm):
    rng = np.random.default_rng(3)
    states = [random_state(arm, rng) for _ in range(50)]
    Q, QD, QDD = (np.array(x) for x in zip(*states, strict=True))
    W = rng.normal(size=(50, 6))
    shared = rng.normal(size=6)
    batch = arm.inverse_dynamics(Q, QD, QDD, {"tcp": W, "link3": shared})
    assert batch.shape == (50, arm.nv)
    # The batch kernel's sin and cos are within one ulp of libm's (test_sincos.py), the rest is the
    # single call's expressions: the rows agree to rounding, not bit for bit.
    same = lambda a, b: np.testing.assert_allclose(a, b, rtol=0, atol=1e-13 * max(1.0, np.abs(b).max()))  # noqa: E731
    for n in range(50):
        single = arm.inverse_dynamics(Q[n], QD[n], QDD[n], {"tcp": W[n], "link3": shared})
        same(batch[n], single)
    same(arm.gravity_torques(Q)[7], arm.gravity_torques(Q[7]))
    same(arm.nonlinear_effects(Q, QD)[9], arm.nonlinear_effects(Q[9], QD[9]))


def test_lists_are_accepted(arm):
    tau = arm.inverse_dynamics([0.1] * 8, [0.0] * 8, [0.0] * 8)
    assert tau.shape == (8,) and tau.dtype == np.float64


@pytest.mark.parametrize(
    "q, qd, qdd",
    [
        (np.zeros(7), np.zeros(8), np.zeros(8)),
        (np.zeros(8), np.zeros(9), np.zeros(8)),
        (np.zeros((3, 8)), np.zeros((2, 8)), np.zeros((3, 8))),
        (np.zeros((3, 8)), np.zeros(8), np.zeros(8)),
        (np.zeros((3, 7)), np.zeros((3, 8)), np.zeros((3, 8))),
        (np.zeros((2, 2, 8)), np.zeros((2, 2, 8)), np.zeros((2, 2, 8))),
    ],
)
def test_wrong_sizes_raise(arm, q, qd, qdd):
    with pytest.raises(ValueError, match="nq=8, nv=8"):
        arm.inverse_dynamics(q, qd, qdd)


def test_wrong_size_gravity_raises(arm):
    with pytest.raises(ValueError, match="nq=8"):
        arm.gravity_torques(np.zeros(3))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_inputs_raise(arm, bad):
    for position in range(3):
        args = [np.zeros(8), np.zeros(8), np.zeros(8)]
        args[position][2] = bad
        with pytest.raises(ValueError, match="finite"):
            arm.inverse_dynamics(*args)
    Q = np.zeros((4, 8))
    Q[2, 1] = bad
    with pytest.raises(ValueError, match="state 2"):
        arm.gravity_torques(Q)
    with pytest.raises(ValueError, match="finite"):
        arm.inverse_dynamics(np.zeros(8), np.zeros(8), np.zeros(8), {"tcp": [0, 0, bad, 0, 0, 0]})


def test_unknown_wrench_link_is_named(arm):
    with pytest.raises(ValueError, match="unknown link 'gripper_tip'"):
        arm.inverse_dynamics(np.zeros(8), np.zeros(8), np.zeros(8), {"gripper_tip": np.zeros(6)})


def test_wrench_of_wrong_shape(arm):
    with pytest.raises(ValueError, match=re.escape("shape (6,)")):
        arm.inverse_dynamics(np.zeros(8), np.zeros(8), np.zeros(8), {"tcp": np.zeros(3)})


def test_wrench_on_a_link_fixed_to_the_world_changes_nothing(arm):
    q = np.full(8, 0.3)
    np.testing.assert_array_equal(
        arm.inverse_dynamics(q, q, q, {"base_link": np.ones(6)}), arm.inverse_dynamics(q, q, q)
    )


def test_model_without_movable_joints():
    model = RobotModel.from_urdf(
        '<robot name="r"><link name="a"/><link name="b"/>'
        '<joint name="f" type="fixed"><parent link="a"/><child link="b"/></joint></robot>'
    )
    assert model.nq == model.nv == 0 and model.joint_names == []
    assert model.inverse_dynamics([], [], []).shape == (0,)
    assert model.gravity_torques(np.zeros((5, 0))).shape == (5, 0)


def test_floating_root_joint_is_the_same_as_floating_base():
    arm_urdf = EXAMPLE_ARM.read_text()
    root_joint = '<joint name="world_to_base" type="fixed">'
    with_joint = arm_urdf.replace(root_joint, root_joint.replace("fixed", "floating"))
    with_joint = with_joint.replace('<origin xyz="0 0 0.02" rpy="0 0 0"/>', "", 1)
    floating = RobotModel.from_urdf(with_joint)
    reference = RobotModel.from_urdf(arm_urdf.replace('<origin xyz="0 0 0.02" rpy="0 0 0"/>', "", 1))
    reference_fb = RobotModel.from_urdf(
        arm_urdf.replace('<origin xyz="0 0 0.02" rpy="0 0 0"/>', "", 1), floating_base=True
    )
    assert floating.floating_base and floating.nq == 15 and floating.nv == 14
    rng = np.random.default_rng(5)
    q, qd, qdd = random_state(floating, rng)
    # the base link (not "world") carries the free flyer; world is massless here
    np.testing.assert_allclose(floating.inverse_dynamics(q, qd, qdd), reference_fb.inverse_dynamics(q, qd, qdd))
    assert reference.nv == 8


def test_bad_quaternion_raises():
    model = RobotModel.from_urdf(EXAMPLE_ARM.read_text(), floating_base=True)
    q = np.zeros(model.nq)
    with pytest.raises(ValueError, match="quaternion"):
        model.gravity_torques(q)
    q[6] = 1.0
    assert np.all(np.isfinite(model.gravity_torques(q)))


def test_gravity_parameter():
    model = RobotModel.from_urdf(EXAMPLE_ARM.read_text(), gravity=(0.0, 0.0, 0.0))
    np.testing.assert_array_equal(model.gravity_torques(np.full(8, 0.4)), np.zeros(8))
    with pytest.raises(ModelError):
        RobotModel.from_urdf(EXAMPLE_ARM.read_text(), gravity=(0.0, np.nan, 0.0))


def test_damping_and_friction_are_not_added(arm):
    # joint1 declares damping 0.5 and friction 0.1. Rigid-body C(q, q̇) q̇ is quadratic in q̇,
    # so reversing q̇ leaves it unchanged; damping or friction would flip sign with q̇.
    q = np.full(8, 0.2)
    qd = np.zeros(8)
    qd[0] = 1.0
    tau_plus = arm.nonlinear_effects(q, qd)
    tau_minus = arm.nonlinear_effects(q, -qd)
    np.testing.assert_allclose(tau_plus, tau_minus, rtol=1e-12, atol=1e-12)


def test_wrenches_that_are_not_a_mapping_are_a_clear_type_error():
    arm = RobotModel.from_urdf(EXAMPLE_ARM.read_text())
    zero = np.zeros(arm.nv)
    with pytest.raises(TypeError, match="wrenches must map link names"):
        arm.inverse_dynamics(zero, zero, zero, [("tcp", np.ones(6))])
