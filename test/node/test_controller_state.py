"""rnea_node's ~/controller_state (control_msgs/JointTrajectoryControllerState, as a JTC publishes
it) over loopback DDS: stamped with the joint_states it answers, in command_joints order, reference
and feedback as sent, error their difference, output the effort commands: checked against
Pinocchio's inverse dynamics at the desired state plus the torque-space PD, computed here. And its
joint_commands (sensor_msgs/JointState, for motor drivers that close the PD): the reference and the
feed-forward, by name."""

from __future__ import annotations

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


def answer_near_a_desired_point(client: Client, messages: list, seed: int):
    """A random desired point sent, then a state near it: ((q_d, q̇_d, q̈_d, q, q̇), the answer among ``messages``)."""
    client.wait_until_serving()
    rng = np.random.default_rng(seed)
    q_desired, qd_desired, qdd = (rng.uniform(-0.3, 0.3, ARM.nv) for _ in range(3))
    q, qd = q_desired + rng.uniform(-0.02, 0.02, ARM.nv), qd_desired + rng.uniform(-0.05, 0.05, ARM.nv)
    client.send_desired(qdd, q_desired, qd_desired)
    client.spin_for(0.3)
    return (q_desired, qd_desired, qdd, q, qd), controller_state_answering(client, messages, q, qd)


def test_controller_state_says_reference_feedback_error_and_command(tmp_path):
    parameters = {
        "robot_description": ARM_URDF,
        "command_joints": COMMAND_JOINTS,
        "kp": KP,
        "kd": KD,
        "acceleration_timeout": 30.0,
    }
    with running_node(tmp_path, "plotted", parameters, lambda ns: Client(ns, ARM.joint_names)) as (_, client):
        states: list[JointTrajectoryControllerState] = []
        client.node.create_subscription(
            JointTrajectoryControllerState, "/plotted/rnea_node/controller_state", states.append, 100
        )
        (q_desired, qd_desired, qdd, q, qd), state = answer_near_a_desired_point(client, states, seed=7)

    rows = [ARM.joint_names.index(name) for name in COMMAND_JOINTS]
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
    with running_node(tmp_path, "unplanned", parameters, lambda ns: Client(ns, ARM.joint_names)) as (_, client):
        states: list[JointTrajectoryControllerState] = []
        client.node.create_subscription(
            JointTrajectoryControllerState, "/unplanned/rnea_node/controller_state", states.append, 100
        )
        client.wait_until_serving()
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
    with running_node(tmp_path, "motors", parameters, lambda ns: Client(ns, ARM.joint_names)) as (_, client):
        commands: list[JointState] = []
        client.node.create_subscription(JointState, "/motors/joint_commands", commands.append, 100)
        (q_desired, qd_desired, qdd, q, qd), command = answer_near_a_desired_point(client, commands, seed=11)
    rows = [ARM.joint_names.index(name) for name in COMMAND_JOINTS]
    assert list(command.name) == COMMAND_JOINTS
    np.testing.assert_array_equal(command.position, q_desired[rows])
    np.testing.assert_array_equal(command.velocity, qd_desired[rows])
    feedforward = PinocchioReference(ARM_URDF, ARM).node_torques(q, qd, qdd)
    np.testing.assert_allclose(command.effort, feedforward[rows], rtol=1e-9, atol=1e-9)
