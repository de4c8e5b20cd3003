"""A newcomer's usual mistakes over loopback DDS (issue 36): each answered on the console and in
/diagnostics with what is wrong and what to do, nothing silent."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import time

import numpy as np
import pytest
import rclpy
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from rnea_ros import RobotModel
from rnea_ros.testing.reference import ARM_URDF
from rnea_ros.testing.ros_harness import ROOT, ROS_ENV, Client, init_rclpy, running_node

pytestmark = pytest.mark.ros

ARM = RobotModel.from_urdf(ARM_URDF)
BOLTED = (
    "<robot name='bolted'><link name='base'/><link name='tool'><inertial><mass value='1'/>"
    "<inertia ixx='0.1' iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    "<joint name='bolt' type='fixed'><parent link='base'/><child link='tool'/></joint></robot>"
)


arm_client = functools.partial(Client, joint_names=ARM.joint_names)


@pytest.fixture(scope="module", autouse=True)
def ros():
    """One rclpy context for the module's clients; each node under test is a process of its own."""
    init_rclpy()
    yield
    rclpy.try_shutdown()


def test_use_sim_time_without_clock_is_named_and_diagnostics_keep_coming(tmp_path):
    parameters = {"robot_description": ARM_URDF, "use_sim_time": True}
    with running_node(tmp_path, "sim_time", parameters, arm_client) as (process, client):
        client.stamp_sec = int(time.time())  # a driver's wall-clock stamps; nothing publishes /clock
        deadline = time.monotonic() + 20.0
        while time.monotonic() < deadline and not (client.diagnostics and "/clock" in process.output()):
            client.send_state(np.zeros(ARM.nv), np.zeros(ARM.nv))
            client.spin_for(0.2)
        said = process.output()
        assert "use_sim_time" in said and "/clock" in said, said
        assert client.diagnostics, "no /diagnostics while the ROS clock stands still"
        assert client.diagnostic_says("rejected: future_stamp")


def test_a_params_file_without_description_then_a_model_without_a_movable_joint(tmp_path):
    with running_node(tmp_path, "bolted", {"gravity": [0.0, 0.0, -9.81]}, arm_client) as (process, client):
        assert client.spin_until(lambda: "--with-description" in process.output(), 15.0), process.output()
        assert "params file given sets no robot_description" in process.output()
        client.description.publish(String(data=BOLTED))
        assert client.spin_until(lambda: "no movable joint" in process.output(), 15.0), process.output()
        refused = next(line for line in process.output().splitlines() if "no movable joint" in line)
        assert "ERROR" in refused and "robot model loaded" not in process.output()
        assert client.diagnostic_says("no movable joint")
        values = client.latest_diagnostic_values()  # the refusal stays: the next one says it too
        assert values["level"] == b"\x02" and "no movable joint" in values["message"], values


def test_best_effort_joint_states_are_warned_and_taken_with_sensor_data_qos_and_a_name_map(tmp_path):
    driver_names = [f"joint_a{k + 1}" for k in range(ARM.nv)]
    state = JointState(name=driver_names, position=[0.0] * ARM.nv, velocity=[0.0] * ARM.nv)
    with running_node(tmp_path, "reliable", {"robot_description": ARM_URDF}, arm_client) as (process, client):
        driver = client.node.create_publisher(JointState, "joint_states", qos_profile_sensor_data)
        warned = client.spin_until(lambda: (driver.publish(state), "joint_states_qos" in process.output())[1], 15.0)
        assert warned, process.output()
        assert not client.efforts
    parameters = {
        "robot_description": ARM_URDF,
        "joint_states_qos": "sensor_data",
        "joint_names": [f"{driver}:={urdf}" for driver, urdf in zip(driver_names, ARM.joint_names, strict=True)],
    }
    with running_node(tmp_path, "sensor_data", parameters, arm_client) as (process, client):
        driver = client.node.create_publisher(JointState, "joint_states", qos_profile_sensor_data)
        q = np.linspace(-0.5, 0.5, ARM.nv)
        state.position = q.tolist()
        assert client.spin_until(lambda: (driver.publish(state), bool(client.efforts))[1], 20.0), process.output()
        answer = client.efforts[-1]
        assert list(answer.name) == driver_names
        np.testing.assert_allclose(answer.effort, ARM.gravity_torques(q), rtol=1e-12, atol=1e-12)
        assert "joint_states_qos" not in process.output()


def test_a_urdf_given_with_p_is_answered_in_one_line(tmp_path):
    command = [sys.executable, "-m", "rnea_ros.node", "--ros-args", "-p", f"robot_description:={ARM_URDF}"]
    done = subprocess.run(command, env={**os.environ, **ROS_ENV}, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    said = done.stderr.strip().splitlines()  # rcl's own two lines come first, from C
    assert "Traceback" not in done.stderr and said[-1].startswith("rnea_node: "), done.stderr
    assert "params file" in said[-1] and "--with-description" in said[-1]
