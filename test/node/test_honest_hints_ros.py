"""Hints that point at the actual fix (issue 45), over loopback DDS: a node in another namespace than
the driver's names the joint_states seen elsewhere; a params file keyed for another node names its
keys; a file path as robot_description is said to be one; the first clip of each joint is a WARN on
the console; rnea_play exits 1 when joint_states stop (no nan figures) and quietly on SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import yaml
from rclpy.node import Node
from sensor_msgs.msg import JointState

from rnea_ros import RobotModel
from rnea_ros.testing.reference import ARM_URDF, EXAMPLE_ARM
from rnea_ros.testing.ros_harness import ROOT, ROS_ENV, Client, NodeProcess, rclpy_running, running_node, spin_until

pytestmark = pytest.mark.ros

ARM = RobotModel.from_urdf(ARM_URDF)
WEAK_ARM_URDF = ARM_URDF.replace('effort="87"', 'effort="1"')  # the shoulder joints cannot hold the arm
WEAK_ARM = RobotModel.from_urdf(WEAK_ARM_URDF)


@pytest.fixture(scope="module", autouse=True)
def ros():
    """One rclpy context for the module's clients; each node under test is a process of its own."""
    yield from rclpy_running()


def wait_for(process: NodeProcess, text: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in process.output():
            return True
        time.sleep(0.2)
    return False


def test_a_node_in_another_namespace_names_the_joint_states_published_elsewhere(tmp_path):
    def driver(_namespace: str) -> Client:  # the driver publishes in its own namespace, not the node's
        return Client("driver45", ARM.joint_names)

    with running_node(tmp_path, "arm45", {"robot_description": ARM_URDF}, driver) as (process, client):
        said = "nothing publishes '/arm45/joint_states'"
        publishing = lambda: (client.send_state(np.zeros(ARM.nv), np.zeros(ARM.nv)), said in process.output())[1]  # noqa: E731
        assert client.spin_until(publishing, 20.0), process.output()
        line = next(line for line in process.output().splitlines() if said in line)
        assert "WARN" in line and "'/driver45/joint_states'" in line and "-r joint_states:=" in line, line


def test_a_params_file_keyed_for_another_node_is_told_the_keys_it_holds(tmp_path):
    params = tmp_path / "robot.yaml"
    params.write_text(yaml.safe_dump({"/arm/rnea_node": {"ros__parameters": {"robot_description": ARM_URDF}}}))
    process = NodeProcess(tmp_path, "keys45", {}, params_file=params)
    try:
        assert wait_for(process, "not this node's name", 20.0), process.output()
        said = process.output()
        assert "['/arm/rnea_node']" in said and "'/keys45/rnea_node'" in said, said
        assert "made without --with-description" not in said
    finally:
        assert process.stop() == 0, process.output()


def test_a_file_path_given_as_robot_description_is_said_to_be_one(tmp_path):
    process = NodeProcess(tmp_path, "path45", {"robot_description": str(EXAMPLE_ARM)})
    try:
        code = process.process.wait(timeout=60)
    finally:
        output = process.output()
        process.stop()
    assert code == 1, output
    assert "is an existing file" in output and "not a URDF's text" in output, output
    assert "XML" not in output.replace("takes the XML itself", ""), output  # not a parse error


def test_the_first_clip_of_each_joint_is_a_warning_on_the_console(tmp_path):
    q = np.zeros(WEAK_ARM.nv)
    q[1] = 0.8  # the upper arm out: gravity over 1 N·m at the shoulder joints
    gravity, limits = WEAK_ARM.gravity_torques(q), WEAK_ARM.effort_limits
    clipped = [name for name, g, limit in zip(WEAK_ARM.joint_names, gravity, limits, strict=True) if abs(g) > limit]
    assert clipped
    arm_client = lambda namespace: Client(namespace, WEAK_ARM.joint_names)  # noqa: E731
    with running_node(tmp_path, "clip45", {"robot_description": WEAK_ARM_URDF}, arm_client) as (process, client):
        client.wait_until_serving()
        for _ in range(20):
            assert client.efforts_at(q, timeout=2.0, attempts=3) is not None
        said = [line for line in process.output().splitlines() if "clipped to the URDF's effort limit" in line]
        assert said and all("WARN" in line for line in said), process.output()
        for name in clipped:  # each joint once, however many states were clipped
            assert sum(f"'{name}' at 1 N·m" in line for line in said) == 1, said


def player(tmp_path, namespace: str, *args: str) -> subprocess.Popen:
    command = [sys.executable, "-c", "from rnea_ros.demo.player import main; main()", *args]
    command += ["--ros-args", "-r", f"__ns:=/{namespace}"]
    log = (tmp_path / f"{namespace}.log").open("w")
    return subprocess.Popen(command, env={**os.environ, **ROS_ENV}, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)


def test_rnea_play_exits_1_when_joint_states_stop_and_prints_no_nan(tmp_path):
    process = player(tmp_path, "play45", "--seconds", "30", "--wait", "20", "--urdf", str(EXAMPLE_ARM))
    node = Node("robot45", namespace="play45")
    publisher = node.create_publisher(JointState, "joint_states", 10)
    try:
        names = list(ARM.joint_names)
        start = time.monotonic()
        while time.monotonic() - start < 4.0 and process.poll() is None:  # a robot for 4 s, then gone
            now = time.time()
            msg = JointState(name=names, position=[0.0] * len(names), velocity=[0.0] * len(names))
            msg.header.stamp.sec, msg.header.stamp.nanosec = int(now), int((now % 1) * 1e9)
            publisher.publish(msg)
            spin_until(node, lambda: False, 0.01)
        code = process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
        node.destroy_node()
    output = (tmp_path / "play45.log").read_text()
    assert code == 1, output
    assert "joint_states stopped" in output and "nan" not in output.lower(), output
    assert "Traceback" not in output and "RuntimeWarning" not in output, output


def test_rnea_play_is_quiet_on_sigterm(tmp_path):
    process = player(tmp_path, "term45", "--wait", "60")
    node = Node("observer45")
    try:  # once it waits for joint_states (its node seen), as a user's kill finds it
        started = lambda: ("rnea_play", "/term45") in node.get_node_names_and_namespaces()  # noqa: E731
        assert spin_until(node, started, 40.0) and process.poll() is None
    finally:
        node.destroy_node()
    process.send_signal(signal.SIGTERM)
    try:
        code = process.wait(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    output = (tmp_path / "term45.log").read_text()
    assert code == 143, output
    assert "Traceback" not in output and "Error" not in output, output
