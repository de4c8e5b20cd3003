"""rnea_node's ~/controller_state (control_msgs/JointTrajectoryControllerState, as a JTC publishes
it) over loopback DDS: stamped with the joint_states it answers, in command_joints order, reference
and feedback as sent, error their difference, output the effort commands: checked against
Pinocchio's inverse dynamics at the desired state plus the torque-space PD, computed here. And its
joint_commands (sensor_msgs/JointState, for motor drivers that close the PD): the reference and the
feed-forward, by name."""

from __future__ import annotations

import time

import numpy as np
import pytest
import rclpy
from control_msgs.msg import JointTrajectoryControllerState
from sensor_msgs.msg import JointState

from rnea_ros import RobotModel
from rnea_ros.testing.reference import ARM_URDF, PinocchioReference
from rnea_ros.testing.ros_harness import Client, init_rclpy, running_node

pytestmark = pytest.mark.ros

ARM = RobotModel.from_urdf(ARM_URDF)
COMMAND_JOINTS = ["joint7", "joint1", "joint4", "joint2"]
KP, KD = [40.0, 30.0, 20.0, 10.0], [4.0, 3.0, 2.0, 1.0]


@pytest.fixture(scope="module", autouse=True)
def ros():
    init_rclpy()
    yield
    rclpy.try_shutdown()


def controller_state_answering(client: Client, states: list, q, qd):
    """The message (of ``states``) stamped as one joint_states sent with (q, q̇): sent again until the
    node has counted the subscriber (every 0.5 s) and answered, at most 20 times."""
    for _ in range(20):
        stamp = client.send_state(q, qd).header.stamp
        if client.spin_until(lambda stamp=stamp: any(m.header.stamp == stamp for m in states), 0.5):
            return next(m for m in states if m.header.stamp == stamp)
    raise AssertionError("no controller_state answered joint_states")


def serving(process, client: Client) -> None:
    """``client.wait_until_serving()``, the node's output in the message if it never answers."""
    try:
        client.wait_until_serving()
    except AssertionError as silent:
        raise AssertionError(f"{silent}; its output:\n{process.output()}") from None


# [s], count: how long, and how many joint_states, the node may take to take a desired point. It
# reads desired_accelerations on its executor and joint_states on a thread of their own, so the
# answers to the first joint_states after a desired point may come before it has taken it (as a JTC
# answers with its last reference). Sent just after the node first answers (16:39 UTC): taken
# 0.13-0.21 s later at load 4.5 (2 answers without it); 0.22-0.84 s with 4-5 busy processes beside
# it, load 7-9.4 (2-5 answers without it; the joint_states answers stall ~0.3 s then too); sent 3 s
# later, 0.06-0.08 s (4 busy).
TAKE_TIMEOUT, TAKE_ATTEMPTS = 20.0, 100


def first_answer_with_reference(client: Client, messages: list, q, qd, has_reference) -> tuple:
    """joint_states (q, q̇) sent again (after each answer, or 0.5 s without one) until the answer among
    ``messages`` (matched by stamp) ``has_reference``: (that answer, the answers before it that had
    none). Bounded by TAKE_ATTEMPTS and TAKE_TIMEOUT."""
    deadline, before = time.monotonic() + TAKE_TIMEOUT, []
    for _ in range(TAKE_ATTEMPTS):
        if time.monotonic() > deadline:
            break
        stamp = client.send_state(q, qd).header.stamp
        if not client.spin_until(lambda stamp=stamp: any(m.header.stamp == stamp for m in messages), 0.5):
            continue  # the subscriber not counted yet, or the answer late: the next one
        answer = next(m for m in messages if m.header.stamp == stamp)
        if has_reference(answer):
            return answer, before
        before.append(answer)
        client.spin_for(0.05)
    raise AssertionError(f"no answer carried the desired point in {TAKE_TIMEOUT} s ({len(before)} without it)")


def answer_near_a_desired_point(process, client: Client, messages: list, seed: int, has_reference) -> tuple:
    """A random desired point sent, then a state near it: ((q_d, q̇_d, q̈_d, q, q̇), the first answer
    among ``messages`` that ``has_reference``, the answers before it)."""
    serving(process, client)
    rng = np.random.default_rng(seed)
    q_desired, qd_desired, qdd = (rng.uniform(-0.3, 0.3, ARM.nv) for _ in range(3))
    q, qd = q_desired + rng.uniform(-0.02, 0.02, ARM.nv), qd_desired + rng.uniform(-0.05, 0.05, ARM.nv)
    client.send_desired(qdd, q_desired, qd_desired)
    answer, before = first_answer_with_reference(client, messages, q, qd, has_reference)
    return (q_desired, qd_desired, qdd, q, qd), answer, before


def test_controller_state_says_reference_feedback_error_and_command(tmp_path):
    parameters = {
        "robot_description": ARM_URDF,
        "command_joints": COMMAND_JOINTS,
        "kp": KP,
        "kd": KD,
        "acceleration_timeout": 30.0,
    }
    with running_node(tmp_path, "plotted", parameters, lambda ns: Client(ns, ARM.joint_names)) as (node, client):
        states: list[JointTrajectoryControllerState] = []
        client.node.create_subscription(
            JointTrajectoryControllerState, "/plotted/rnea_node/controller_state", states.append, 100
        )
        (q_desired, qd_desired, qdd, q, qd), state, before = answer_near_a_desired_point(
            node, client, states, seed=7, has_reference=lambda m: len(m.reference.positions) > 0
        )

    rows = [ARM.joint_names.index(name) for name in COMMAND_JOINTS]
    # before the node took the desired point: no reference nor error at all (not part of one)
    for early in before:
        assert max(map(len, (early.reference.positions, early.reference.velocities, early.error.positions))) == 0
        np.testing.assert_array_equal(early.feedback.positions, q[rows])
    assert list(state.joint_names) == COMMAND_JOINTS
    np.testing.assert_array_equal(state.feedback.positions, q[rows])
    np.testing.assert_array_equal(state.feedback.velocities, qd[rows])
    np.testing.assert_array_equal(state.reference.positions, q_desired[rows])
    np.testing.assert_array_equal(state.reference.velocities, qd_desired[rows])
    np.testing.assert_array_equal(state.reference.accelerations, qdd[rows])
    np.testing.assert_allclose(state.error.positions, q_desired[rows] - q[rows], rtol=0, atol=1e-15)
    np.testing.assert_allclose(state.error.velocities, qd_desired[rows] - qd[rows], rtol=0, atol=1e-15)
    feedforward = PinocchioReference(ARM_URDF, ARM).node_torques(q_desired, qd_desired, qdd)
    expected = feedforward[rows] + np.array(KP) * (q_desired - q)[rows] + np.array(KD) * (qd_desired - qd)[rows]
    np.testing.assert_allclose(state.output.effort, expected, rtol=1e-9, atol=1e-9)
    assert state.speed_scaling_factor == 1.0


def test_without_a_desired_point_the_reference_has_no_positions(tmp_path):
    parameters = {"robot_description": ARM_URDF, "command_joints": COMMAND_JOINTS, "command_source": "gravity"}
    with running_node(tmp_path, "unplanned", parameters, lambda ns: Client(ns, ARM.joint_names)) as (node, client):
        states: list[JointTrajectoryControllerState] = []
        client.node.create_subscription(
            JointTrajectoryControllerState, "/unplanned/rnea_node/controller_state", states.append, 100
        )
        serving(node, client)
        q = np.linspace(-0.4, 0.4, ARM.nv)
        state = controller_state_answering(client, states, q, np.zeros(ARM.nv))
    rows = [ARM.joint_names.index(name) for name in COMMAND_JOINTS]
    assert len(state.reference.positions) == 0 and len(state.error.positions) == 0
    np.testing.assert_array_equal(state.feedback.positions, q[rows])
    np.testing.assert_allclose(state.output.effort, ARM.gravity_torques(q)[rows], rtol=1e-12, atol=1e-12)


def test_joint_commands_carry_the_reference_and_the_feed_forward_by_name(tmp_path):
    """Without the node's own gains (the motor drivers close the PD): effort = the inverse dynamics
    at the measured state with the desired accelerations (Pinocchio, here); position and velocity
    the desired point, in command_joints order."""
    parameters = {"robot_description": ARM_URDF, "command_joints": COMMAND_JOINTS, "acceleration_timeout": 30.0}
    with running_node(tmp_path, "motors", parameters, lambda ns: Client(ns, ARM.joint_names)) as (node, client):
        commands: list[JointState] = []
        client.node.create_subscription(JointState, "/motors/joint_commands", commands.append, 100)
        (q_desired, qd_desired, qdd, q, qd), command, before = answer_near_a_desired_point(
            node, client, commands, seed=11, has_reference=lambda m: len(m.position) > 0
        )
    rows = [ARM.joint_names.index(name) for name in COMMAND_JOINTS]
    # before the node took the desired point: no position nor velocity (not part of one)
    assert all((len(early.position), len(early.velocity)) == (0, 0) for early in before)
    assert list(command.name) == COMMAND_JOINTS
    np.testing.assert_array_equal(command.position, q_desired[rows])
    np.testing.assert_array_equal(command.velocity, qd_desired[rows])
    feedforward = PinocchioReference(ARM_URDF, ARM).node_torques(q, qd, qdd)
    np.testing.assert_allclose(command.effort, feedforward[rows], rtol=1e-9, atol=1e-9)
