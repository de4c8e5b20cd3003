"""The feed-forward trajectory written as CDR bytes reads back, through rclpy's own deserializer, as
the message built field by field: the same names, stamps, points and values."""

from __future__ import annotations

import numpy as np
import pytest
from rclpy.serialization import deserialize_message
from std_msgs.msg import Header
from trajectory_msgs.msg import JointTrajectory

from rnea_ros.controller.trajectory_feedforward import FeedforwardTrajectory
from rnea_ros.node import messages

pytestmark = pytest.mark.ros


@pytest.mark.parametrize(("points", "joints", "frame"), [(1, 1, ""), (3, 2, "abc"), (1000, 8, "world"), (77, 7, "é")])
def test_the_cdr_bytes_are_the_message(points, joints, frame):
    rng = np.random.default_rng(points)
    result = FeedforwardTrajectory(
        [f"joint_{k}" * (k + 1) for k in range(joints)],
        np.cumsum(rng.uniform(0.001, 0.3, points)),
        *(rng.normal(size=(points, joints)) for _ in range(4)),
    )
    header = Header(frame_id=frame)
    header.stamp.sec, header.stamp.nanosec = 1_700_000_000, 123_456_789
    built = messages.trajectory_message(header, result)
    read = deserialize_message(messages.trajectory_cdr(header, result), JointTrajectory)
    assert read.header == built.header and list(read.joint_names) == list(built.joint_names)
    assert len(read.points) == len(built.points)
    for mine, theirs in zip(read.points, built.points, strict=True):
        for field in ("positions", "velocities", "accelerations", "effort"):
            np.testing.assert_array_equal(getattr(mine, field), getattr(theirs, field))
        assert mine.time_from_start == theirs.time_from_start
