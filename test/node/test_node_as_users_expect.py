"""rnea_node as ROS users expect it, over loopback DDS: live parameter changes applied or refused
with a reason, the shipped config under any namespace, console messages that say why nothing
is published, and a bad description parameter that stops the node."""

from __future__ import annotations

import math
import os
import time

import numpy as np
import pytest
import rclpy
import yaml
from std_msgs.msg import String

from rnea_ros import RobotModel
from rnea_ros.dynamics.corrections import Corrections, JointCorrection, save_corrections
from rnea_ros.testing.reference import ARM_URDF, HEAVY_ARM_URDF, PinocchioReference
from rnea_ros.testing.ros_harness import ROOT, Client, NodeProcess, init_rclpy, running_node

pytestmark = pytest.mark.ros

ARM = RobotModel.from_urdf(ARM_URDF)


@pytest.fixture(scope="module", autouse=True)
def ros():
    init_rclpy()
    yield
    rclpy.try_shutdown()


def arm_client(namespace: str) -> Client:
    return Client(namespace, ARM.joint_names)


def test_live_parameter_changes_are_applied_or_refused_with_a_reason(tmp_path):
    with running_node(tmp_path, "live_params", {"robot_description": ARM_URDF}, arm_client) as (_, client):
        client.wait_until_serving()
        q = np.random.default_rng(5).uniform(-1, 1, ARM.nv)

        result = client.set_parameter("gravity", [0.0, 0.0, -1.0])
        assert result.successful, result.reason
        weak = RobotModel.from_urdf(ARM_URDF, gravity=(0.0, 0.0, -1.0))
        np.testing.assert_allclose(client.efforts_at(q, attempts=3), weak.gravity_torques(q), rtol=1e-12, atol=1e-12)

        for name, value, why in [
            ("wrench_timeout", -5.0, ""),  # outside the declared range: rclpy says so
            ("gravity", [math.nan, 0.0, 0.0], "gravity"),
            ("command_joints", ["joint1"], "read-only"),
            ("robot_description", "<robot name='broken'><link name='a'/>", "cannot be built"),
            ("robot_description", "", "cannot be emptied"),
        ]:
            result = client.set_parameter(name, value)
            assert not result.successful, name
            assert result.reason and why in result.reason, (name, result.reason)
        np.testing.assert_allclose(client.efforts_at(q, attempts=3), weak.gravity_torques(q), rtol=1e-12, atol=1e-12)

        result = client.set_parameter("robot_description", HEAVY_ARM_URDF)  # a hot reload
        assert result.successful, result.reason
        heavy = RobotModel.from_urdf(HEAVY_ARM_URDF, gravity=(0.0, 0.0, -1.0))
        np.testing.assert_allclose(client.efforts_at(q, attempts=3), heavy.gravity_torques(q), rtol=1e-12, atol=1e-12)

        result = client.set_parameter("wrench_timeout", 0.01)
        assert result.successful
        client.send_wrench("tcp", [0.0, 0.0, -50.0, 0.0, 0.0, 0.0])
        client.spin_for(0.1)  # the wrench expires after 10 ms
        np.testing.assert_allclose(client.efforts_at(q, attempts=3), heavy.gravity_torques(q), rtol=1e-12, atol=1e-12)


def test_corrections_are_loaded_live_and_a_bad_file_keeps_the_previous_ones(tmp_path):
    good, partial = tmp_path / "corrections.yaml", tmp_path / "partial.yaml"
    good.write_text(yaml.safe_dump({"version": 1, "joints": {"joint2": {"viscous": 3.0, "offset": 0.5}}}))
    partial.write_text("version: 1\njoints:\n  joint2: {viscous: 3.0, offset:")  # cut short
    with running_node(tmp_path, "corrected", {"robot_description": ARM_URDF}, arm_client) as (_, client):
        client.wait_until_serving()
        q, qd = np.full(ARM.nv, 0.3), np.full(ARM.nv, 0.2)
        expected = PinocchioReference(ARM_URDF, ARM).node_torques(q, qd, np.zeros(ARM.nv))
        expected[1] += 3.0 * 0.2 + 0.5  # viscous·q̇ + offset on joint2
        assert client.set_parameter("corrections_file", str(good)).successful
        np.testing.assert_allclose(client.efforts_at(q, qd, attempts=3), expected, rtol=1e-9, atol=1e-9)
        fifo = tmp_path / "fifo.yaml"
        os.mkfifo(fifo)  # nobody writes to it: a read would block the parameter service
        for bad, why in (
            (partial, "corrections file"),
            (tmp_path / "missing.yaml", "No such file"),
            (fifo, "not a regular file"),
        ):
            result = client.set_parameter("corrections_file", str(bad))
            assert not result.successful and why in result.reason and "previous corrections kept" in result.reason
        np.testing.assert_allclose(client.efforts_at(q, qd, attempts=3), expected, rtol=1e-9, atol=1e-9)
        other = tmp_path / "other.yaml"
        save_corrections(Corrections({"joint2": JointCorrection(offset=-2.0)}), other)
        result = client.set_parameters_atomically({"corrections_file": str(other), "kp": [1.0, 2.0]})  # 2 gains: wrong
        assert not result.successful and "kp" in result.reason
        np.testing.assert_allclose(client.efforts_at(q, qd, attempts=3), expected, rtol=1e-9, atol=1e-9)  # unchanged


def test_corrections_given_at_start_up_with_the_description_on_the_topic(tmp_path):
    corrections = tmp_path / "corrections.yaml"
    corrections.write_text(yaml.safe_dump({"version": 1, "joints": {"joint1": {"offset": 0.25}}}))
    with running_node(tmp_path, "corrected_topic", {"corrections_file": str(corrections)}, arm_client) as (_, c):
        c.description.publish(String(data=ARM_URDF))  # the model comes from the topic, after the corrections
        c.wait_until_serving()
        q = np.full(ARM.nv, 0.3)
        expected = ARM.gravity_torques(q)
        expected[0] += 0.25
        np.testing.assert_allclose(c.efforts_at(q, attempts=3), expected, rtol=1e-12, atol=1e-12)
    broken = NodeProcess(tmp_path, "corrected_bad", {"corrections_file": str(tmp_path / "missing.yaml")})
    assert broken.process.wait(timeout=30) == 1  # a node that cannot apply its configuration stops
    assert "missing.yaml" in broken.output()
    broken.stop()


def test_the_shipped_config_applies_under_a_namespace(tmp_path):
    config = yaml.safe_load((ROOT / "config/rnea.yaml").read_text())
    config["/**"]["ros__parameters"]["robot_description"] = ARM_URDF
    config["/**"]["ros__parameters"]["gravity"] = [0.0, 0.0, -3.0]  # one value not the default
    params = tmp_path / "rnea.yaml"
    params.write_text(yaml.safe_dump(config))
    process = NodeProcess(tmp_path, "robot1", {}, params_file=params)
    client = arm_client("robot1")
    try:
        client.wait_until_serving()
        q = np.random.default_rng(6).uniform(-1, 1, ARM.nv)
        expected = RobotModel.from_urdf(ARM_URDF, gravity=(0.0, 0.0, -3.0)).gravity_torques(q)
        np.testing.assert_allclose(client.efforts_at(q, attempts=3), expected, rtol=1e-12, atol=1e-12)
    finally:
        client.close()
        assert process.stop() == 0, process.output()


def test_the_console_says_why_nothing_is_published(tmp_path):
    with running_node(tmp_path, "silent", {}, arm_client) as (process, client):
        assert client.spin_until(lambda: "no robot model yet" in process.output(), 15.0), process.output()
        said = process.output()
        assert "/silent/robot_description" in said
        assert "nothing publishes it" in said or "1 publisher(s), none has sent a valid one" in said  # the client's
        from std_msgs.msg import String

        client.description.publish(String(data=ARM_URDF))
        assert client.spin_until(lambda: "robot model loaded" in process.output(), 15.0)
        names = ["joint_2" if name == "joint2" else name for name in ARM.joint_names]  # a typo
        deadline = time.monotonic() + 15.0
        while "did you mean" not in process.output() and time.monotonic() < deadline:
            client.send_state(np.zeros(ARM.nv), np.zeros(ARM.nv), names=names)
            client.spin_for(0.2)
        output = process.output()
        assert "joint_states never cover the model" in output and "['joint2']" in output
        assert "'joint2' for 'joint_2'" in output
        assert "/silent/joint_states" in output


def test_a_bad_description_parameter_stops_the_node_at_start_up(tmp_path):
    process = NodeProcess(tmp_path, "bad_description", {"robot_description": "<robot name='x'><link name='a'/>"})
    assert process.process.wait(timeout=30) == 1
    assert "robot_description parameter is refused" in process.output()
    process.stop()


def test_a_planners_trajectory_comes_back_with_every_points_effort(tmp_path):
    """joint_trajectory in, feedforward_trajectory out (what a joint_trajectory_controller with an
    effort interface takes): resampled every 10 ms, each point's effort Pinocchio's at its state
    plus the URDF's joint dynamics; a trajectory missing a joint is refused and counted."""
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    with running_node(tmp_path, "planner", {"robot_description": ARM_URDF}, arm_client) as (_, client):
        client.wait_until_serving()
        answers: list[JointTrajectory] = []
        client.node.create_subscription(JointTrajectory, "feedforward_trajectory", answers.append, 10)
        planner = client.node.create_publisher(JointTrajectory, "joint_trajectory", 10)
        rng = np.random.default_rng(8)
        sent = JointTrajectory(joint_names=list(ARM.joint_names))
        start = int(time.time()) + 3600  # the JTC starts the trajectory at this stamp: kept (a past one is late)
        sent.header.stamp.sec = start
        for k in range(11):
            point = JointTrajectoryPoint(
                positions=rng.uniform(-1, 1, ARM.nv).tolist(), velocities=rng.uniform(-1, 1, ARM.nv).tolist()
            )
            point.time_from_start = Duration(sec=0, nanosec=100_000_000 * k) if k < 10 else Duration(sec=1)
            sent.points.append(point)
        assert client.spin_until(lambda: (planner.publish(sent), bool(answers))[1], 10.0)
        answer = answers[-1]
        assert answer.header.stamp.sec == start and list(answer.joint_names) == list(ARM.joint_names)
        assert len(answer.points) == 101
        reference = PinocchioReference(ARM_URDF, ARM)
        for point in answer.points[::7]:
            expected = reference.node_torques(
                np.array(point.positions), np.array(point.velocities), np.array(point.accelerations)
            )
            np.testing.assert_allclose(point.effort, expected, rtol=1e-9, atol=1e-9)

        lacking = JointTrajectory(joint_names=list(ARM.joint_names[1:]))
        lacking.points = [JointTrajectoryPoint(positions=[0.0] * (ARM.nv - 1))]
        planner.publish(lacking)
        for _ in range(5):  # /diagnostics comes once a second
            values = client.latest_diagnostic_values()
            if "rejected: missing_joints" in values:
                break
        assert "rejected: missing_joints" in values, values
        assert int(values["trajectories answered"]) >= 1 and float(values["trajectory answer p99 [us]"]) > 0


def test_commands_name_their_joints_and_diagnostics_name_the_command_source(tmp_path):
    """effort_commands' layout labels the command joints in order; the /diagnostics status says what
    the commands carry; string-array parameters left unset read as empty (no [''])."""
    order = ["joint3", "joint1", "joint2", "joint4", "joint5", "joint6", "joint7", "finger_left_joint"]
    parameters = {"robot_description": ARM_URDF, "command_joints": order, "command_source": "gravity"}
    with running_node(tmp_path, "labelled", parameters, arm_client) as (_, client):
        client.wait_until_serving()
        client.efforts_at(np.zeros(ARM.nv), attempts=3)
        assert client.spin_until(lambda: bool(client.commands), 5.0)
        (dimension,) = client.commands[-1].layout.dim
        assert dimension.label.split(",") == order and dimension.size == len(order)
        client.latest_diagnostic_values()
        assert client.diagnostics[-1].status[0].name == "rnea_node: gravity compensation"
        from rcl_interfaces.msg import ParameterType
        from rcl_interfaces.srv import DescribeParameters, GetParameters

        answers = {}
        for service, request in (
            (GetParameters, GetParameters.Request(names=["contact_links"])),
            (DescribeParameters, DescribeParameters.Request(names=["contact_links"])),
        ):
            caller = client.node.create_client(service, "/labelled/rnea_node/" + _snake(service.__name__))
            assert caller.wait_for_service(timeout_sec=10.0)
            future = caller.call_async(request)
            assert client.spin_until(future.done, 10.0)
            answers[service] = future.result()
        (descriptor,) = answers[DescribeParameters].descriptors
        assert descriptor.type == ParameterType.PARAMETER_STRING_ARRAY  # declared with its type ...
        assert [list(v.string_array_value) for v in answers[GetParameters].values] in ([], [[]])  # ... and unset


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


def test_standard_ros_parameters_are_set_live_as_rclpy_does(tmp_path):
    """``ros2 param set /rnea_node use_sim_time true`` (and any parameter rclpy declares itself) gets an
    answer as rclpy gives it, and the node lives on (it used to die of a KeyError)."""
    with running_node(tmp_path, "standard_params", {"robot_description": ARM_URDF}, arm_client) as (process, c):
        c.wait_until_serving()
        assert c.set_parameter("use_sim_time", True).successful
        assert c.set_parameter("use_sim_time", False).successful
        read_only = c.set_parameter("start_type_description_service", False)
        assert not read_only.successful and "read-only" in read_only.reason, read_only.reason
        both = c.set_parameters_atomically({"use_sim_time": False, "wrench_timeout": 0.2})
        assert both.successful, both.reason
        assert process.process.poll() is None, process.output()
        q = np.full(ARM.nv, 0.1)
        np.testing.assert_allclose(c.efforts_at(q, attempts=3), ARM.gravity_torques(q), rtol=1e-12, atol=1e-12)
