"""effort_commands: PD plus feed-forward, its sources, gains by command joint and effort limits
(plain Python, no ROS). The feed-forward is checked against Pinocchio."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.controller.core import build_live_model
from rnea_ros.controller.settings import Settings
from rnea_ros.controller.state import ConfigurationError, DesiredPoints
from rnea_ros.controller.torques import compute_outputs
from rnea_ros.testing.reference import ARM_URDF, PinocchioReference

ARM = RobotModel.from_urdf(ARM_URDF)
PIN = PinocchioReference(ARM_URDF, ARM)
rng = np.random.default_rng(13)
Q, QD = rng.uniform(-0.5, 0.5, ARM.nv), rng.uniform(-1, 1, ARM.nv)
Q_D, QD_D, QDD_D = Q + rng.uniform(-0.05, 0.05, ARM.nv), QD + 0.1, rng.uniform(-1, 1, ARM.nv)
ORDER = ["finger_left_joint", *reversed(ARM.joint_names[:-1])]


def urdf_joint_dynamics(qd: np.ndarray) -> np.ndarray:
    """The example arm's URDF <dynamics damping="0.5" friction="0.1"> on joint1, written out here."""
    terms = np.zeros(ARM.nv)
    terms[ARM.joint_names.index("joint1")] = 0.5 * qd[0] + 0.1 * np.tanh(qd[0] / 0.01)
    return terms


def outputs(settings: Settings, desired_state: bool = True):
    live = build_live_model(ARM_URDF, settings)
    live.merge_joint_states(ARM.joint_names, Q, QD, 1.0, settings.state_timeout)
    points = DesiredPoints(ARM.joint_names, QDD_D, Q_D if desired_state else None, QD_D if desired_state else None)
    live.set_desired(points, now=0.0)
    return compute_outputs(live, live.inputs_now(0.0, settings), settings), live


def in_command_order(values: np.ndarray) -> np.ndarray:
    return values[[ARM.joint_names.index(name) for name in ORDER]]


def test_pd_plus_feedforward_is_inverse_dynamics_at_the_desired_state_plus_the_feedback():
    kp = np.arange(1.0, ARM.nv + 1) * 10
    kd = np.full(ARM.nv, 3.0)
    settings = Settings(command_joints=tuple(ORDER), kp=tuple(kp), kd=tuple(kd), urdf_joint_dynamics=True)
    out, _ = outputs(settings)
    feedforward = PIN.inverse_dynamics(Q_D, QD_D, QDD_D) + urdf_joint_dynamics(QD_D)
    expected = in_command_order(feedforward) + kp * in_command_order(Q_D - Q) + kd * in_command_order(QD_D - QD)
    np.testing.assert_allclose(out.commands, expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(out.tau, feedforward, rtol=1e-9, atol=1e-9)  # feedforward_efforts: no feedback
    assert out.clipped == 0


def test_gravity_source_holds_the_measured_state_and_none_is_feedback_only():
    settings = Settings(kp=(50.0,), kd=(2.0,), command_source="gravity")
    out, _ = outputs(settings)
    feedback = 50.0 * (Q_D - Q) + 2.0 * (QD_D - QD)
    np.testing.assert_allclose(out.commands, PIN.gravity_torques(Q) + feedback, rtol=1e-9, atol=1e-9)
    out, _ = outputs(settings.with_values(command_source="none"))
    np.testing.assert_allclose(out.commands, feedback, rtol=1e-12, atol=1e-12)


def test_without_a_desired_state_there_is_no_feedback_and_zero_gains_change_nothing():
    expected = PIN.inverse_dynamics(Q, QD, QDD_D) + urdf_joint_dynamics(QD)
    out, _ = outputs(Settings(kp=(50.0,), kd=(2.0,), urdf_joint_dynamics=True), desired_state=False)
    np.testing.assert_allclose(out.commands, expected, rtol=1e-9, atol=1e-9)
    out, _ = outputs(Settings(urdf_joint_dynamics=True))
    np.testing.assert_allclose(out.commands, expected, rtol=1e-9, atol=1e-9)


def test_the_urdf_joint_dynamics_are_left_out_by_default():
    """By default the rigid bodies alone, as Pinocchio, KDL and ros2_control: a real URDF's <dynamics>
    is often simulator tuning (a torso damping of 1000)."""
    out, _ = outputs(Settings(), desired_state=False)
    np.testing.assert_allclose(out.tau, PIN.inverse_dynamics(Q, QD, QDD_D), rtol=1e-9, atol=1e-9)


def test_commands_are_clipped_to_the_urdf_effort_limits_and_counted():
    np.testing.assert_array_equal(ARM.effort_limits, [87, 87, 87, 87, 12, 12, 12, 20])  # the URDF's <limit effort>
    out, _ = outputs(Settings(kp=(1e5,), urdf_joint_dynamics=True))
    assert np.all(np.abs(out.commands) <= ARM.effort_limits + 1e-12)
    unclipped = PIN.inverse_dynamics(Q_D, QD_D, QDD_D) + urdf_joint_dynamics(QD_D) + 1e5 * (Q_D - Q)
    assert out.clipped == int(np.count_nonzero(np.abs(unclipped) > ARM.effort_limits))
    assert out.clipped > 0


def test_gains_must_match_the_command_joints():
    with pytest.raises(ConfigurationError, match="kp has 3 values"):
        build_live_model(ARM_URDF, Settings(kp=(1.0, 2.0, 3.0)))
    with pytest.raises(ValueError, match="kd must be finite"):
        Settings(kd=(float("nan"),))
    with pytest.raises(ValueError, match="command_source"):
        Settings(command_source="torque")
