"""Messages of a fixed layout as CDR bytes (plumbing/fixed_cdr.py): rnea_sim's joint_states and
base_odometry written from templates, rnea_node's base_odometry read at its offsets. rclpy's
serializer is the oracle: what it reads from the template's bytes, and what it writes for a message."""

from __future__ import annotations

import numpy as np
import pytest
from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState

from rnea_ros.controller.state import InvalidMessageError
from rnea_ros.node import messages
from rnea_ros.plumbing.fixed_cdr import read_odometry
from rnea_ros.simulation.state_publishers import joint_state_template, odometry_template

pytestmark = pytest.mark.ros
NAMES = [["FL_hip_joint", "a", "bc", "def", "ünïcode_joint"], ["j"]]  # a simulated robot has joints


@pytest.mark.parametrize("names", NAMES)
def test_joint_states_from_the_template_read_back_as_rclpy_reads_them(names):
    rng = np.random.default_rng(len(names))
    template = joint_state_template(names)
    for stamp in ((1_764_378_000, 123_456_789), (-3, 999_999_999), (0, 0)):
        values = rng.normal(size=(3, len(names)))
        template.set_stamp(*stamp)
        for field, row in zip(("position", "velocity", "effort"), values, strict=True):
            template.set(field, row)
        data = template.message()
        msg = deserialize_message(data, JointState)
        assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == stamp
        assert msg.header.frame_id == "" and list(msg.name) == names
        for field, row in zip(("position", "velocity", "effort"), values, strict=True):
            assert np.array_equal(np.array(getattr(msg, field)), row), field
        assert len(data) == len(serialize_message(msg))  # nothing more, nothing less than rclpy writes


def random_odometry(rng, child: str = "base_link") -> Odometry:
    msg = Odometry(child_frame_id=child)
    msg.header.frame_id = "world"
    msg.header.stamp.sec, msg.header.stamp.nanosec = int(rng.integers(0, 2**31)), int(rng.integers(0, 10**9))
    x = rng.normal(size=13)
    x[3:7] /= np.linalg.norm(x[3:7])
    pose, twist = msg.pose.pose, msg.twist.twist
    pose.position.x, pose.position.y, pose.position.z = x[:3]
    pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w = x[3:7]
    twist.linear.x, twist.linear.y, twist.linear.z = x[7:10]
    twist.angular.x, twist.angular.y, twist.angular.z = x[10:]
    msg.pose.covariance = rng.normal(size=36)
    return msg


def pose_and_twist(msg: Odometry) -> tuple[list[float], list[float]]:
    p, o, v, w = msg.pose.pose.position, msg.pose.pose.orientation, msg.twist.twist.linear, msg.twist.twist.angular
    return [p.x, p.y, p.z, o.x, o.y, o.z, o.w], [v.x, v.y, v.z, w.x, w.y, w.z]


@pytest.mark.parametrize("child", ["base_link", "b", "trunk_ünïcode"])
def test_odometry_from_the_template_reads_back_and_reads_at_its_offsets(child):
    rng = np.random.default_rng(7)
    sent = random_odometry(rng, child)
    sent.pose.covariance = np.zeros(36)  # the template's covariances are zero
    template = odometry_template("world", child)
    template.set_stamp(sent.header.stamp.sec, sent.header.stamp.nanosec)
    pose, twist = pose_and_twist(sent)
    template.set("pose", pose)
    template.set("twist", twist)
    data = template.message()
    got = deserialize_message(data, Odometry)
    assert got.header == sent.header and got.child_frame_id == child
    assert pose_and_twist(got) == (pose, twist)
    assert np.array_equal(got.pose.covariance, np.zeros(36)) and np.array_equal(got.twist.covariance, np.zeros(36))
    assert len(data) == len(serialize_message(sent))
    for message in (sent, random_odometry(rng, child)):  # the reader on rclpy's bytes
        values = read_odometry(serialize_message(message))
        assert values.stamp == (message.header.stamp.sec, message.header.stamp.nanosec)
        assert values.child_frame_id == child
        assert (list(values.pose), list(values.twist)) == pose_and_twist(message)


def test_the_nodes_odometry_reading_from_bytes_is_the_messages():
    rng = np.random.default_rng(3)
    for _ in range(5):
        msg = random_odometry(rng, "trunk")
        from_bytes, from_message = messages.read_odometry(serialize_message(msg)), messages.read_odometry(msg)
        assert np.array_equal(from_bytes.q_base, from_message.q_base)
        assert np.array_equal(from_bytes.twist, from_message.twist)
        assert (from_bytes.child_frame, from_bytes.stamp) == (from_message.child_frame, from_message.stamp)


def test_refusals_of_odometry_bytes_are_those_of_the_message_and_a_cut_message_is_malformed():
    rng = np.random.default_rng(4)
    msg = random_odometry(rng)
    msg.twist.twist.angular.z = float("nan")
    with pytest.raises(InvalidMessageError) as from_message:
        messages.read_odometry(msg)
    with pytest.raises(InvalidMessageError) as from_bytes:
        messages.read_odometry(serialize_message(msg))
    assert from_bytes.value.reason == from_message.value.reason == "non_finite"
    msg = random_odometry(rng)
    msg.pose.pose.orientation.w = 3.0
    with pytest.raises(InvalidMessageError) as from_bytes:
        messages.read_odometry(serialize_message(msg))
    assert from_bytes.value.reason == "bad_quaternion"
    whole = serialize_message(random_odometry(rng))
    assert read_odometry(whole[:-8]) is None and read_odometry(whole[:40]) is None
    with pytest.raises(InvalidMessageError) as cut:
        messages.read_odometry(whole[:-8])
    assert cut.value.reason == "malformed"
