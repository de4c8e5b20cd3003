"""rnea_record, the documented way to record without a ROS install: joint_states and the latched
robot_description from DDS into a rosbag2 that rnea_analyze reads as it is (its URDF from the bag)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import rclpy
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from rnea_ros import RobotModel
from rnea_ros.analysis.cli import main as analyze
from rnea_ros.demo.example_robot import example_arm_urdf, smooth_trajectory
from rnea_ros.testing.ros_harness import DESCRIPTION_QOS, ROS_ENV, at_rate

pytestmark = pytest.mark.ros

URDF = example_arm_urdf()
ARM = RobotModel.from_urdf(URDF)


def test_a_recording_made_with_rnea_record_is_analysed(tmp_path):
    bag = tmp_path / "bag"
    os.environ.update(ROS_ENV)
    recorder = subprocess.Popen(
        [sys.executable, "-m", "rnea_ros.demo.recorder", str(bag), "--ros-args", "-r", "__ns:=/rec"],
        env={**os.environ, **ROS_ENV},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    rclpy.init()
    try:
        node = rclpy.create_node("publisher", namespace="rec")
        description = node.create_publisher(String, "robot_description", DESCRIPTION_QOS)
        description.publish(String(data=URDF))
        states = node.create_publisher(JointState, "joint_states", 100)
        deadline = time.monotonic() + 60.0
        while states.get_subscription_count() == 0 and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.05)
        assert states.get_subscription_count() > 0, "rnea_record never subscribed"
        start = node.get_clock().now().nanoseconds * 1e-9
        for elapsed in at_rate(200.0, 3.0):
            q, qd, qdd = (x[0] for x in smooth_trajectory(ARM.nv, np.array([elapsed])))
            msg = JointState(name=ARM.joint_names, position=q.tolist(), velocity=qd.tolist())
            msg.effort = ARM.inverse_dynamics(q, qd, qdd).tolist()
            stamp = start + elapsed
            msg.header.stamp.sec, msg.header.stamp.nanosec = int(stamp), int(stamp % 1 * 1e9)
            states.publish(msg)
        time.sleep(0.5)
    finally:
        rclpy.try_shutdown()
        recorder.send_signal(signal.SIGINT)
        output, _ = recorder.communicate(timeout=60)
    assert recorder.returncode == 0, output
    recorded = int(output.split("recorded ")[1].split()[0])
    assert recorded >= 550, output  # 600 states and the description, a few lost at the start at most
    assert analyze([str(bag), "--topic", "/rec/joint_states", "--out", str(tmp_path / "out"), "--no-csv"]) == 0
