"""rnea_node over real loopback DDS, started through its own entry point.

Torques are checked against RobotModel on the same state (the core itself is
checked against Pinocchio elsewhere) and, for the wrench, against Pinocchio.
"""

from __future__ import annotations

import signal

import numpy as np
import pytest
import rclpy
from std_msgs.msg import String

from rnea_ros import RobotModel
from rnea_ros.testing.reference import ARM_URDF, HEAVY_ARM_URDF, PinocchioReference
from rnea_ros.testing.ros_harness import Client, NodeProcess, init_rclpy, running_node

pytestmark = pytest.mark.ros

ARM = RobotModel.from_urdf(ARM_URDF)
NV = ARM.nv
COMMAND_JOINTS = ["joint7", "joint1", "finger_left_joint"]


def arm_client(namespace: str) -> Client:
    return Client(namespace, ARM.joint_names)


@pytest.fixture(scope="module", autouse=True)
def ros():
    init_rclpy()
    yield
    rclpy.try_shutdown()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A node with the arm as a parameter, command_joints set and long input timeouts."""
    parameters = {
        "robot_description": ARM_URDF,
        "command_joints": COMMAND_JOINTS,
        "acceleration_timeout": 5.0,
        "wrench_timeout": 5.0,
    }
    with running_node(tmp_path_factory.mktemp("served"), "served", parameters, arm_client) as (process, client):
        client.wait_until_serving()
        yield process, client


def test_torques_equal_the_library_with_reordered_names(served):
    _, client = served
    rng = np.random.default_rng(1)
    q, qd = rng.normal(size=NV), rng.normal(size=NV)
    order = rng.permutation(NV)
    names = [*(ARM.joint_names[k] for k in order), "some_other_joint"]
    msg = client.send_state([*q[order], 9.0], [*qd[order], 9.0], names=names)
    result = client.result_for(msg.header.stamp.sec)
    assert result.name == ARM.joint_names
    np.testing.assert_allclose(result.position, q, rtol=1e-15)
    np.testing.assert_allclose(result.velocity, qd, rtol=1e-15)
    # the rigid bodies (urdf_joint_dynamics false by default), from Pinocchio
    expected = PinocchioReference(ARM_URDF, ARM).node_torques(q, qd, np.zeros(NV))
    np.testing.assert_allclose(result.effort, expected, rtol=1e-9, atol=1e-9)
    gravity = client.gravity_for(msg.header.stamp.sec)
    np.testing.assert_allclose(gravity.effort, ARM.gravity_torques(q), rtol=1e-12)


def test_effort_commands_follow_command_joints(served):
    _, client = served
    q, qd = np.linspace(-1.0, 1.0, NV), np.linspace(2.0, -1.0, NV)
    tau = client.efforts_at(q, qd)
    order = [ARM.joint_names.index(name) for name in COMMAND_JOINTS]
    assert np.all(np.abs(tau[order]) > 1e-3)
    assert client.spin_until(lambda: any(np.allclose(m.data, tau[order], rtol=1e-15) for m in client.commands))


def test_partial_messages_are_merged(served):
    _, client = served
    q = np.linspace(-0.5, 0.5, NV)
    client.send_state(q[:4], [0.0] * 4, names=ARM.joint_names[:4])
    msg = client.send_state(q[4:], [0.0] * 4, names=ARM.joint_names[4:], new_stamp=False)  # a second publisher
    result = client.result_for(msg.header.stamp.sec)
    np.testing.assert_allclose(result.effort, ARM.gravity_torques(q), rtol=1e-12)


def test_empty_velocity_means_zero_with_a_warning(served):
    _, client = served
    q = np.full(NV, 0.2)
    msg = client.send_state(q)
    result = client.result_for(msg.header.stamp.sec)
    np.testing.assert_allclose(result.effort, ARM.gravity_torques(q), rtol=1e-12)
    assert client.diagnostic_says("joint_states without velocity: zero velocity used")


@pytest.mark.parametrize(
    "position, velocity, names, reason",
    [
        ([float("nan")] * NV, [0.0] * NV, None, "non_finite"),
        ([0.0] * NV, [float("inf")] * NV, None, "non_finite"),
        ([0.0] * (NV - 1), [0.0] * NV, None, "wrong_length"),
        ([0.0] * NV, [0.0] * 2, None, "wrong_length"),
        ([0.0] * NV, [0.0] * NV, ["joint1"] * NV, "duplicate_names"),
    ],
)
def test_bad_joint_states_are_rejected_and_counted(served, position, velocity, names, reason):
    _, client = served
    before = int(client.latest_diagnostic_values().get(f"rejected: {reason}", 0))
    bad = client.send_state(position, velocity, names=names)
    assert client.result_for(bad.header.stamp.sec, timeout=0.5) is None
    assert client.spin_until(lambda: int(client.latest_diagnostic_values().get(f"rejected: {reason}", 0)) > before, 5.0)
    assert client.efforts_at(np.zeros(NV)) is not None  # still serving


def test_out_of_order_joint_states_are_dropped(served):
    _, client = served
    client.efforts_at(np.zeros(NV))
    client.stamp_sec -= 5
    old = client.send_state(np.zeros(NV), [0.0] * NV)
    assert client.result_for(old.header.stamp.sec, timeout=0.5) is None
    client.stamp_sec += 10
    assert client.diagnostic_says("rejected: out_of_order")


def test_desired_accelerations_and_tool_wrench_against_pinocchio(served):
    _, client = served
    qdd = np.arange(NV, dtype=float) * 0.1
    tool_wrench = [1.0, -2.0, -10.0, 0.1, 0.2, -0.3]
    q = np.full(NV, 0.3)
    expected = PinocchioReference(ARM_URDF, ARM).inverse_dynamics(q, np.zeros(NV), qdd, {"tcp": tool_wrench})
    client.send_desired(qdd)
    client.send_wrench("tcp", tool_wrench)
    assert client.spin_until(lambda: _close(client.efforts_at(q), expected), 10.0)


def test_unknown_wrench_frame_is_ignored_and_reported(served):
    _, client = served
    client.send_wrench("no_such_link", [1.0] * 6)
    assert client.spin_until(lambda: "rejected: unknown_wrench_frame" in client.latest_diagnostic_values(), 5.0)


def test_diagnostics_content(served):
    _, client = served
    client.efforts_at(np.zeros(NV))
    values = client.latest_diagnostic_values()
    assert values["model joints"] == str(NV)
    assert float(values["joint_states rate [Hz]"]) >= 0.0
    assert float(values["joint_states age [s]"]) < 5.0
    assert float(values["compute time p50 [us]"]) > 0.0
    assert float(values["compute time p99 [us]"]) >= float(values["compute time p50 [us]"])
    assert int(values["published"]) > 0


def test_desired_state_and_input_timeouts(tmp_path):
    parameters = {
        "robot_description": ARM_URDF,
        "use_desired_state": True,
        "acceleration_timeout": 0.5,
        "wrench_timeout": 0.5,
    }
    with running_node(tmp_path, "timeouts", parameters, arm_client, signal.SIGTERM) as (_, client):
        client.wait_until_serving()
        measured = np.full(NV, 0.1)
        q_desired, qd_desired, qdd = np.full(NV, -0.4), np.full(NV, 0.5), np.full(NV, 1.5)
        reference = PinocchioReference(ARM_URDF, ARM)
        with_desired = reference.node_torques(q_desired, qd_desired, qdd, {"link4": [0, 0, -20.0, 0, 0, 0]})
        client.send_desired(qdd, q_desired, qd_desired)
        client.send_wrench("link4", [0, 0, -20.0, 0, 0, 0])
        assert client.spin_until(lambda: _close(client.efforts_at(measured), with_desired), 5.0)
        client.spin_for(0.8)  # both inputs are now older than their timeouts
        np.testing.assert_allclose(client.efforts_at(measured, attempts=3), ARM.gravity_torques(measured), rtol=1e-12)
        values = client.latest_diagnostic_values()
        assert "desired_accelerations stale" in values["message"]
        assert "wrench on 'link4' expired" in values["message"]


def test_description_by_topic_hot_reload_and_refused_description(tmp_path):
    with running_node(tmp_path, "by_topic", {}, arm_client) as (process, client):
        assert client.efforts_at(np.zeros(NV), timeout=1.0) is None  # no model: nothing published
        assert "waiting for robot_description" in client.latest_diagnostic_values(timeout=5.0)["message"]
        q = np.full(NV, 0.25)
        client.description.publish(String(data=ARM_URDF))
        client.wait_until_serving()
        np.testing.assert_allclose(client.efforts_at(q, attempts=3), ARM.gravity_torques(q), rtol=1e-12)

        heavy = RobotModel.from_urdf(HEAVY_ARM_URDF)
        client.description.publish(String(data=HEAVY_ARM_URDF))
        assert client.spin_until(lambda: _close(client.efforts_at(q), heavy.gravity_torques(q)), 10.0)

        client.description.publish(String(data="<robot name='broken'><link name='a'/>"))
        assert client.spin_until(lambda: "rejected: bad_robot_description" in client.latest_diagnostic_values(), 5.0)
        np.testing.assert_allclose(client.efforts_at(q, attempts=3), heavy.gravity_torques(q), rtol=1e-12)
        assert "robot_description refused" in process.output()


def test_command_joints_naming_an_unknown_joint_is_a_startup_error(tmp_path):
    parameters = {"robot_description": ARM_URDF, "command_joints": ["joint1", "no_such_joint"]}
    process = NodeProcess(tmp_path, "bad_command", parameters)
    assert process.process.wait(timeout=30) == 1
    assert "no_such_joint" in process.output()
    process.stop()


def _close(effort: np.ndarray | None, expected: np.ndarray) -> bool:
    return effort is not None and np.allclose(effort, expected, rtol=1e-12, atol=1e-12)
