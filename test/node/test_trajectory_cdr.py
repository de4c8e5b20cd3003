"""JointTrajectory read from its CDR bytes (``rnea_ros.plumbing.trajectory_cdr``) against rclpy's own
serializer and deserializer: every field of every point, for every mix of lengths (the strided
read and the point-by-point one), and hostile bytes refused with a reason, never an exception of
another kind."""

from __future__ import annotations

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from rclpy.serialization import deserialize_message, serialize_message
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros.controller.state import InvalidMessageError
from rnea_ros.motion.trajectory import FIELDS, MAX_TRAJECTORY_POINTS, TrajectoryError
from rnea_ros.node import messages
from rnea_ros.plumbing.trajectory_cdr import read_joint_trajectory, write_joint_trajectory

pytestmark = pytest.mark.ros


def message(rng: np.random.Generator, points: int, joints: int, lengths) -> JointTrajectory:
    msg = JointTrajectory(joint_names=[f"joint_{k}" * (k % 3 + 1) for k in range(joints)])
    msg.header.stamp.sec, msg.header.stamp.nanosec, msg.header.frame_id = 1_700_000_000, 987_654_321, "wörld"
    for k in range(points):
        point = JointTrajectoryPoint(time_from_start=Duration(sec=k // 3, nanosec=(k * 123_457) % 1_000_000_000))
        for field, n in zip(FIELDS, lengths(k), strict=True):
            setattr(point, field, rng.normal(size=int(n)).tolist())
        msg.points.append(point)
    return msg


def assert_read_as_written(msg: JointTrajectory) -> None:
    read = read_joint_trajectory(serialize_message(msg), 100_000)
    assert read.stamp == (msg.header.stamp.sec, msg.header.stamp.nanosec) and read.frame_id == msg.header.frame_id
    assert read.joint_names == list(msg.joint_names)
    for field in FIELDS:
        assert len(read.fields[field]) == len(msg.points)
        for k, point in enumerate(msg.points):
            np.testing.assert_array_equal(read.fields[field][k], np.asarray(getattr(point, field)))
    seconds = [p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in msg.points]
    np.testing.assert_array_equal(read.time_from_start, seconds)


@pytest.mark.parametrize("joints", [1, 2, 3, 7, 8])
@pytest.mark.parametrize("points", [1, 2, 3, 4, 1000])
@pytest.mark.parametrize("filled", [(1, 1, 1, 1), (1, 0, 0, 0), (1, 1, 0, 0), (1, 1, 1, 0), (1, 0, 1, 0), (0, 0, 0, 1)])
def test_points_of_equal_lengths_are_read_as_rclpy_wrote_them(points, joints, filled):
    rng = np.random.default_rng(points * 100 + joints)
    assert_read_as_written(message(rng, points, joints, lambda k: np.multiply(filled, joints)))


def test_points_of_different_lengths_are_read_one_by_one():
    rng = np.random.default_rng(7)
    for _ in range(200):
        points, joints = int(rng.integers(1, 7)), int(rng.integers(0, 4))
        assert_read_as_written(message(rng, points, joints, lambda k: rng.integers(0, 4, size=4)))


def test_hostile_bytes_are_refused_with_a_reason():
    rng = np.random.default_rng(3)
    data = serialize_message(message(rng, 50, 6, lambda k: (6, 6, 6, 0)))
    whole = read_joint_trajectory(data, 100_000)
    refused = 0
    for cut in range(0, len(data), 7):  # rclpy's buffer may run past the message: cutting there is harmless
        try:
            read = read_joint_trajectory(data[:cut], 100_000)
        except TrajectoryError as error:
            assert error.reason == "malformed"
            refused += 1
            continue
        assert all(np.array_equal(read.fields[f], whole.fields[f]) for f in FIELDS), cut  # never a part
    assert refused > len(data) // 7 * 0.9
    for _ in range(2000):  # flipped bytes: read or refused, nothing else
        corrupt = bytearray(data)
        for position in rng.integers(0, len(data), size=int(rng.integers(1, 4))):
            corrupt[position] = int(rng.integers(0, 256))
        try:
            read_joint_trajectory(bytes(corrupt), 100_000)
        except TrajectoryError as error:
            assert error.reason in ("malformed", "too_many_points")
    # a stamp, an empty frame_id (its NUL, padding) and 2³¹ − 1 names in 20 bytes
    claims_a_billion_names = data[:4] + b"\x00" * 8 + b"\x01\x00\x00\x00" + b"\x00" * 4 + b"\xff\xff\xff\x7f"
    with pytest.raises(TrajectoryError, match="cannot fit"):
        read_joint_trajectory(claims_a_billion_names, 100_000)


def test_the_node_reads_the_same_trajectory_from_bytes_and_from_the_message():
    rng = np.random.default_rng(5)
    msg = message(rng, 300, 7, lambda k: (7, 7, 7, 0))
    from_bytes = messages.trajectory_arrays(messages.read_trajectory(serialize_message(msg), 1000, "t"))
    from_message = messages.trajectory_arrays(msg)
    for field in ("times", "positions", "velocities", "accelerations", "efforts"):
        a, b = getattr(from_bytes, field), getattr(from_message, field)
        assert (a is None and b is None) or np.array_equal(a, b), field
    desired = messages.desired_points(serialize_message(msg))
    expected = messages.desired_points(msg)
    for a, b in zip(desired, expected, strict=True):
        assert a == b if isinstance(a, list) else np.array_equal(a, b)
    with pytest.raises(InvalidMessageError) as error:
        messages.read_trajectory(serialize_message(msg), 299, "desired_accelerations")
    assert error.value.reason == "too_many_points"


@pytest.mark.parametrize("filled", [(1, 1, 1, 1), (1, 0, 0, 0), (1, 1, 1, 0), (0, 1, 0, 1), (0, 0, 0, 0)])
@pytest.mark.parametrize(("points", "joints"), [(1, 1), (2, 3), (5, 7), (1000, 8)])
def test_written_bytes_are_what_rclpy_reads(points, joints, filled):
    rng = np.random.default_rng(points + joints)
    names = [f"j{k}" * (k + 1) for k in range(joints)]
    fields = {field: rng.normal(size=(points, joints * f)) for field, f in zip(FIELDS, filled, strict=True)}
    times = np.cumsum(rng.uniform(0.001, 2.0, points))
    data = write_joint_trajectory((-5, 999_999_999), "frame_é", names, times, fields)
    msg = deserialize_message(data, JointTrajectory)
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec, msg.header.frame_id) == (-5, 999_999_999, "frame_é")
    assert list(msg.joint_names) == names and len(msg.points) == points
    for k, point in enumerate(msg.points):
        for field in FIELDS:
            np.testing.assert_array_equal(np.asarray(getattr(point, field)), fields[field][k])
        nanoseconds = round(times[k] * 1e9)
        assert (point.time_from_start.sec, point.time_from_start.nanosec) == divmod(nanoseconds, 1_000_000_000)


def test_a_million_points_are_refused_before_anything_is_allocated_for_them():
    """10⁶ points of one joint written as bytes (32 MB): refused at the documented caps, read no further."""
    n_points = 1_000_000
    data = write_joint_trajectory(
        (1, 0), "", ["joint1"], np.arange(n_points) * 1e-3, {"accelerations": np.zeros((n_points, 1))}
    )
    for read in (
        lambda: messages.desired_points(data),
        lambda: messages.trajectory_arrays(messages.read_trajectory(data, MAX_TRAJECTORY_POINTS, "joint_trajectory")),
    ):
        with pytest.raises(InvalidMessageError) as error:
            read()
        assert error.value.reason == "too_many_points" and "1000000 points" in str(error.value)
