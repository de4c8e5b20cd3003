"""rnea_node over real loopback DDS: started through its own entry point, checked against RobotModel."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import rclpy
import yaml
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from reference import EXAMPLE_ARM
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import RobotModel

ROOT = Path(__file__).resolve().parents[1]
DOMAIN_ID = str(100 + os.getpid() % 100)
ENV = {**os.environ, "ROS_DOMAIN_ID": DOMAIN_ID, "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
ARM = RobotModel.from_urdf(EXAMPLE_ARM.read_text())
COMMAND_JOINTS = ["joint7", "joint1", "finger_left_joint"]


@pytest.fixture(scope="module")
def node_process(tmp_path_factory):
    params = tmp_path_factory.mktemp("params") / "params.yaml"
    params.write_text(
        yaml.safe_dump(
            {
                "rnea_node": {
                    "ros__parameters": {
                        "robot_description": EXAMPLE_ARM.read_text(),
                        "command_joints": COMMAND_JOINTS,
                        "acceleration_timeout": 5.0,
                        "wrench_timeout": 5.0,
                    }
                }
            }
        )
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "rnea_ros.node", "--ros-args", "--params-file", str(params)],
        env=ENV,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    yield process
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture(scope="module")
def client(node_process):
    os.environ.update(ROS_DOMAIN_ID=DOMAIN_ID, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    rclpy.init()
    node = Node("rnea_test_client")
    yield Client(node)
    node.destroy_node()
    rclpy.try_shutdown()


class Client:
    def __init__(self, node: Node) -> None:
        self.node = node
        self.received: dict[str, list] = {"efforts": [], "gravity": [], "commands": [], "diagnostics": []}
        node.create_subscription(JointState, "feedforward_efforts", self.received["efforts"].append, 100)
        node.create_subscription(JointState, "gravity_torques", self.received["gravity"].append, 100)
        node.create_subscription(Float64MultiArray, "effort_commands", self.received["commands"].append, 100)
        node.create_subscription(DiagnosticArray, "/diagnostics", self.received["diagnostics"].append, 100)
        self.joint_states = node.create_publisher(JointState, "joint_states", 10)
        self.desired = node.create_publisher(JointTrajectory, "desired_accelerations", 10)
        self.wrench = node.create_publisher(WrenchStamped, "external_wrenches", 10)
        self.stamp_sec = 1

    def spin_until(self, predicate, timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rclpy.spin_once(self.node, timeout_sec=0.05)
            if predicate():
                return True
        return False

    def send_state(self, names, q, qd=None, new_stamp: bool = True) -> JointState:
        self.stamp_sec += new_stamp
        msg = JointState(name=list(names), position=list(map(float, q)), velocity=list(map(float, qd or [])))
        msg.header.stamp.sec = self.stamp_sec
        self.joint_states.publish(msg)
        return msg

    def result_for(self, stamp_sec: int, timeout: float = 5.0):
        def found():
            return any(m.header.stamp.sec == stamp_sec for m in self.received["efforts"])

        assert self.spin_until(found, timeout), "no feedforward_efforts for that joint_states"
        return next(m for m in self.received["efforts"] if m.header.stamp.sec == stamp_sec)

    def wait_for_connection(self) -> None:
        names, q = ARM.joint_names, np.zeros(ARM.nv)

        def answered():
            msg = self.send_state(names, q, list(q))
            return self.spin_until(
                lambda: any(m.header.stamp.sec == msg.header.stamp.sec for m in self.received["efforts"]), 0.5
            )

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not answered():
            pass


def test_torques_equal_the_library_with_reordered_names(client):
    client.wait_for_connection()
    rng = np.random.default_rng(1)
    q, qd = rng.normal(size=ARM.nv), rng.normal(size=ARM.nv)
    order = rng.permutation(ARM.nv)
    names = [*(ARM.joint_names[k] for k in order), "some_other_joint"]
    msg = client.send_state(names, [*q[order], 9.0], [*qd[order], 9.0])
    result = client.result_for(msg.header.stamp.sec)
    assert result.name == ARM.joint_names
    np.testing.assert_allclose(result.effort, ARM.inverse_dynamics(q, qd, np.zeros(ARM.nv)), rtol=1e-12)
    stamp = msg.header.stamp.sec
    assert client.spin_until(lambda: any(m.header.stamp.sec == stamp for m in client.received["gravity"]))
    gravity = next(m for m in client.received["gravity"] if m.header.stamp.sec == stamp)
    np.testing.assert_allclose(gravity.effort, ARM.gravity_torques(q), rtol=1e-12)
    assert client.spin_until(lambda: len(client.received["commands"]) > 0)
    command = client.received["commands"][-1].data
    assert len(command) == len(COMMAND_JOINTS)


def test_partial_messages_are_merged(client):
    client.wait_for_connection()
    q = np.linspace(-0.5, 0.5, ARM.nv)
    client.send_state(ARM.joint_names[:4], q[:4], [0.0] * 4)
    msg = client.send_state(ARM.joint_names[4:], q[4:], [0.0] * 4, new_stamp=False)  # two publishers
    result = client.result_for(msg.header.stamp.sec)
    np.testing.assert_allclose(result.effort, ARM.gravity_torques(q), rtol=1e-12)


def test_empty_velocity_means_zero(client):
    client.wait_for_connection()
    q = np.full(ARM.nv, 0.2)
    msg = client.send_state(ARM.joint_names, q)
    result = client.result_for(msg.header.stamp.sec)
    np.testing.assert_allclose(result.effort, ARM.gravity_torques(q), rtol=1e-12)


def test_bad_messages_are_rejected_not_published(client):
    client.wait_for_connection()
    before = len(client.received["efforts"])
    bad = client.send_state(ARM.joint_names, [float("nan")] * ARM.nv, [0.0] * ARM.nv)
    client.spin_until(lambda: False, 0.5)
    assert all(m.header.stamp.sec != bad.header.stamp.sec for m in client.received["efforts"][before:])


def test_desired_accelerations_and_wrench(client):
    client.wait_for_connection()
    qdd = np.arange(ARM.nv, dtype=float) * 0.1
    traj = JointTrajectory(joint_names=ARM.joint_names, points=[JointTrajectoryPoint(accelerations=qdd.tolist())])
    wrench = WrenchStamped()
    wrench.header.frame_id = "tcp"
    wrench.wrench.force.z = -10.0
    q = np.full(ARM.nv, 0.3)
    expected = ARM.inverse_dynamics(q, np.zeros(ARM.nv), qdd, {"tcp": [0, 0, -10.0, 0, 0, 0]})

    def matches():
        client.desired.publish(traj)
        client.wrench.publish(wrench)
        client.spin_until(lambda: False, 0.2)
        msg = client.send_state(ARM.joint_names, q, [0.0] * ARM.nv)
        got = client.result_for(msg.header.stamp.sec)
        return np.allclose(got.effort, expected, rtol=1e-12)

    assert any(matches() for _ in range(20))


def test_diagnostics(client):
    assert client.spin_until(
        lambda: any(
            "rejected: non_finite" in [kv.key for kv in d.status[0].values] for d in client.received["diagnostics"]
        ),
        5.0,
    )


def test_sigterm_stops_the_node(node_process, client):
    node_process.send_signal(signal.SIGTERM)
    assert node_process.wait(timeout=10) is not None
