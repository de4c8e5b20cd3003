"""Per-joint gains as joint_trajectory_controller spells them (gains.<joint>.p and .d), beside the
kp/kd arrays: mapped onto the same feedback, given one way only, unknown joints refused with a hint."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.controller.core import RneaCore, build_live_model
from rnea_ros.controller.inputs import BY_TOPIC
from rnea_ros.controller.settings import Settings, settings_from
from rnea_ros.controller.state import ConfigurationError, DesiredPoints
from rnea_ros.testing.reference import ARM_URDF

ARM = RobotModel.from_urdf(ARM_URDF)
NAMES = list(ARM.joint_names)
KP = np.linspace(10.0, 80.0, len(NAMES))
KD = np.linspace(0.5, 4.0, len(NAMES))


def per_joint(kp, kd) -> dict[str, float]:
    return {f"gains.{n}.p": float(p) for n, p in zip(NAMES, kp, strict=True)} | {
        f"gains.{n}.d": float(d) for n, d in zip(NAMES, kd, strict=True)
    }


def commands(settings: Settings, q: np.ndarray, q_desired: np.ndarray) -> np.ndarray:
    core = RneaCore(settings)
    core.load(build_live_model(ARM_URDF, settings))
    core.receive(BY_TOPIC["desired_accelerations"], DesiredPoints(NAMES, np.zeros(len(q)), q_desired, np.zeros(len(q))))
    return core.joint_states(NAMES, q, np.zeros(len(q)), True, 1.0, lambda: 0.0).commands


def test_gains_by_joint_name_give_the_feedback_of_the_same_arrays():
    by_name = settings_from(per_joint(KP, KD))
    assert by_name.feedback and by_name.kp == () and by_name.kd == ()
    q = np.zeros(len(NAMES))
    q_desired = np.full(len(NAMES), 0.01)
    arrays = Settings(kp=tuple(KP), kd=tuple(KD))
    np.testing.assert_array_equal(commands(by_name, q, q_desired), commands(arrays, q, q_desired))


def test_one_joint_by_name_leaves_the_others_without_feedback():
    settings = settings_from({f"gains.{NAMES[1]}.p": 100.0})
    q, q_desired = np.zeros(len(NAMES)), np.full(len(NAMES), 0.01)
    without = commands(Settings(), q, q_desired)  # no feedback: the feed-forward at the measured state
    with_gain = commands(settings, q, q_desired)  # feedback: at the desired state, plus 100 · 0.01 on joint 2
    at_desired = commands(settings_from({f"gains.{NAMES[1]}.p": 1e-300}), q, q_desired)
    expected = at_desired.copy()
    expected[1] += 100.0 * 0.01
    np.testing.assert_allclose(with_gain, expected, rtol=0, atol=1e-12)
    assert not np.allclose(with_gain, without)


def test_a_live_change_of_one_joint_gain_keeps_the_others():
    base = settings_from(per_joint(KP, KD))
    changed = settings_from({f"gains.{NAMES[0]}.p": 1.0}, base)
    assert dict(((j, k), v) for j, k, v in changed.joint_gains)[(NAMES[0], "p")] == 1.0
    assert len(changed.joint_gains) == len(base.joint_gains)


@pytest.mark.parametrize(
    ("values", "why"),
    [
        ({"kp": [5.0], "gains.joint1.p": 1.0}, "give one of the two"),
        ({"gains.joint1.i": 1.0}, "gains.<joint>.p and gains.<joint>.d"),
        ({"gains.joint1.p": -1.0}, "finite number ≥ 0"),
        ({"gains.joint1.d": "high"}, "finite number ≥ 0"),
    ],
)
def test_gains_given_wrongly_are_refused_with_the_reason(values, why):
    with pytest.raises(ValueError, match=why):
        settings_from(values)


def test_a_gain_for_an_unknown_joint_is_refused_with_the_closest_name():
    with pytest.raises(ConfigurationError, match="'joint_2' is no command joint \\(did you mean 'joint2'\\?\\)"):
        build_live_model(ARM_URDF, settings_from({"gains.joint_2.p": 10.0}))
    with pytest.raises(ConfigurationError, match="is no command joint"):  # a model joint, but no command joint
        build_live_model(ARM_URDF, settings_from({"command_joints": ["joint1"], "gains.joint2.p": 10.0}))


@pytest.mark.ros
def test_gains_from_a_params_file_act_over_dds_and_change_live(tmp_path):
    import rclpy  # here: the rest of the file is the inner loop's, which imports no rclpy

    from rnea_ros.testing.ros_harness import Client, init_rclpy, running_node

    """As a JTC's users write them (nested: gains: {joint2: {p: ...}}), then ``ros2 param set``."""
    init_rclpy()
    parameters = {"robot_description": ARM_URDF, "acceleration_timeout": 60.0, "gains": {"joint2": {"p": 50.0}}}
    try:
        with running_node(tmp_path, "joint_gains", parameters, lambda ns: Client(ns, NAMES)) as (_, client):
            client.wait_until_serving()
            client.send_desired(np.zeros(len(NAMES)), np.full(len(NAMES), 0.02), np.zeros(len(NAMES)))
            client.spin_for(0.5)

            def command_at(q: np.ndarray) -> np.ndarray:
                msg = client.send_state(q, np.zeros(len(NAMES)))
                assert client.result_for(msg.header.stamp.sec) is not None
                k = next(i for i, m in enumerate(client.efforts) if m.header.stamp.sec == msg.header.stamp.sec)
                assert client.spin_until(lambda: len(client.commands) > k)
                return np.array(client.commands[k].data)

            q0, q1 = np.zeros(len(NAMES)), np.full(len(NAMES), 0.01)
            # the source is computed at the desired state: the measured state moves the feedback alone
            np.testing.assert_allclose(
                command_at(q0) - command_at(q1), [0.0, 0.5] + [0.0] * (len(NAMES) - 2), atol=1e-9
            )
            assert client.set_parameter("gains.joint2.p", 10.0).successful
            np.testing.assert_allclose(
                command_at(q0) - command_at(q1), [0.0, 0.1] + [0.0] * (len(NAMES) - 2), atol=1e-9
            )
            refused = client.set_parameter("kp", [1.0])
            assert not refused.successful and "give one of the two" in refused.reason, refused.reason
    finally:
        rclpy.try_shutdown()
