"""rnea_node's FollowJointTrajectory relay, its fast way, by plain calls on messages (no ROS graph):
a goal read from its point objects with numpy, checked on arrays, and forwarded in its own points
when resampling adds none. The forwarded goal is compared, bit for bit, with the one the relay used
to build: the points read one by one, ``RneaCore.trajectory``, a new point object per answer row."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointComponentTolerance
from rclpy.serialization import deserialize_message, serialize_message
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros.controller.core import RneaCore, build_live_model
from rnea_ros.controller.settings import Settings
from rnea_ros.demo.closed_loop import planned_trajectory
from rnea_ros.demo.demo import START
from rnea_ros.motion.multisine import fast_multisine
from rnea_ros.motion.trajectory import Trajectory
from rnea_ros.node import messages
from rnea_ros.node.action_relay import with_efforts
from rnea_ros.plumbing.trajectory_cdr import write_joint_trajectory
from rnea_ros.testing.action_client import goal
from rnea_ros.testing.reference import ARM_URDF

pytestmark = pytest.mark.ros

JOINTS = [*(f"joint{i}" for i in range(1, 8)), "finger_left_joint"]
FIELDS = ("positions", "velocities", "accelerations", "effort")
Result = FollowJointTrajectory.Result


@functools.cache
def core_of(resampling: float) -> RneaCore:
    """The relay's computation on the example arm (no node, no action server)."""
    settings = Settings(trajectory_resampling=resampling)
    core = RneaCore(settings)
    core.load(build_live_model(ARM_URDF, settings))
    return core


def planner_goal(spacing: float, seconds: float, given: tuple[str, ...] = FIELDS[:3]) -> FollowJointTrajectory.Goal:
    """A planner's goal on the example arm (7 joints moving, the finger held at -0.0: a sign only the
    bits tell), stamped, with tolerances, as it arrives (deserialized: fresh point objects)."""
    trajectory = planned_trajectory(JOINTS, fast_multisine(np.array(START), moving=7), seconds, spacing=spacing)
    for point in trajectory.points:
        point.positions[-1] = -0.0
        for field in set(FIELDS[:3]) - set(given):
            setattr(point, field, [])
    trajectory.header.stamp.sec, trajectory.header.stamp.nanosec = 1_700_000_000, 250_000_000
    trajectory.header.frame_id = "world"
    sent = goal(trajectory, path=0.05, at_goal=0.01, goal_time=0.5)
    sent.component_path_tolerance = [JointComponentTolerance(joint_name="joint2", component=1, position=0.1)]
    sent.multi_dof_trajectory.joint_names = ["base"]
    return arrived(sent)


def arrived(sent: FollowJointTrajectory.Goal) -> FollowJointTrajectory.Goal:
    return deserialize_message(serialize_message(sent), FollowJointTrajectory.Goal)


def forwarded_the_old_way(resampling: float, sent: FollowJointTrajectory.Goal) -> FollowJointTrajectory.Goal:
    """The forwarded goal as the relay built it before: every value read point by point, the answer
    written into new point objects."""
    points = sent.trajectory.points
    times = np.array([point.time_from_start.sec + point.time_from_start.nanosec * 1e-9 for point in points])

    def block(field: str) -> np.ndarray | None:
        rows = [list(getattr(point, field)) for point in points]
        return np.array(rows) if rows[0] else None

    blocks = [block(field) for field in FIELDS[:3]]
    answer = core_of(resampling).trajectory(Trajectory(list(sent.trajectory.joint_names), times, *blocks))
    new_points = []
    for k, seconds in enumerate(answer.times):
        sec, nanosec = divmod(round(seconds * 1e9), 1_000_000_000)
        new_points.append(
            JointTrajectoryPoint(
                positions=answer.positions[k].tolist(),
                velocities=answer.velocities[k].tolist(),
                accelerations=answer.accelerations[k].tolist(),
                effort=answer.efforts[k].tolist(),
                time_from_start=Duration(sec=sec, nanosec=nanosec),
            )
        )
    trajectory = JointTrajectory(header=sent.trajectory.header, joint_names=answer.joint_names, points=new_points)
    kept = ("multi_dof_trajectory", "path_tolerance", "component_path_tolerance", "goal_tolerance")
    kept += ("component_goal_tolerance", "goal_time_tolerance")
    return FollowJointTrajectory.Goal(trajectory=trajectory, **{name: getattr(sent, name) for name in kept})


def assert_same_bits(mine: FollowJointTrajectory.Goal, reference: FollowJointTrajectory.Goal) -> None:
    assert mine == reference  # header, names, times, tolerances (values compared as numbers)
    for ours, theirs in zip(mine.trajectory.points, reference.trajectory.points, strict=True):
        for field in FIELDS:
            assert getattr(ours, field).tobytes() == getattr(theirs, field).tobytes(), field


@pytest.mark.parametrize("given", [FIELDS[:3], FIELDS[:2], FIELDS[:1]], ids=["quintic", "cubic", "linear"])
def test_a_goal_needing_no_resampling_is_forwarded_in_its_own_points_with_the_same_bits(given):
    sent, copy = planner_goal(0.01, 3.0, given), planner_goal(0.01, 3.0, given)
    reference = forwarded_the_old_way(0.01, copy)
    own_points = list(sent.trajectory.points)
    forwarded = with_efforts(core_of(0.01), sent)
    assert isinstance(forwarded, FollowJointTrajectory.Goal), forwarded
    assert len(forwarded.trajectory.points) == len(own_points) == 301
    assert all(a is b for a, b in zip(forwarded.trajectory.points, own_points, strict=True))
    assert_same_bits(forwarded, reference)
    assert np.all(np.signbit([point.positions[-1] for point in copy.trajectory.points]))
    finger = np.signbit([point.positions[-1] for point in forwarded.trajectory.points])
    if "accelerations" in given:  # every point whole: its own values, the finger's -0.0 kept
        assert np.all(finger)
    else:  # the spline gives the accelerations, and turns -0.0 into 0.0 (-0.0 + 0.0 · v)
        assert not np.any(finger)


@pytest.mark.parametrize("given", [FIELDS[:3], FIELDS[:2], FIELDS[:1]], ids=["quintic", "cubic", "linear"])
def test_a_goal_needing_resampling_is_forwarded_with_the_same_bits(given):
    sent, copy = planner_goal(0.1, 3.0, given), planner_goal(0.1, 3.0, given)
    forwarded = with_efforts(core_of(0.01), sent)
    assert isinstance(forwarded, FollowJointTrajectory.Goal), forwarded
    assert len(forwarded.trajectory.points) == 301  # 31 points, 9 added between each two
    assert_same_bits(forwarded, forwarded_the_old_way(0.01, copy))


def test_times_the_forwarded_goal_writes_differently_are_replaced():
    """No resampling (0): the answer's times are the points' own, but a Duration given as 1 s +
    1.01e9 ns is written normalised, 2.01 s, as before."""
    sent = planner_goal(0.01, 2.0)
    sent.trajectory.points[-1].time_from_start = Duration(sec=1, nanosec=1_010_000_000)
    sent = arrived(sent)
    copy = arrived(sent)
    forwarded = with_efforts(core_of(0.0), sent)
    assert isinstance(forwarded, FollowJointTrajectory.Goal), forwarded
    assert forwarded.trajectory.points[-1].time_from_start == Duration(sec=2, nanosec=10_000_000)
    assert_same_bits(forwarded, forwarded_the_old_way(0.0, copy))


def test_efforts_the_planner_gave_are_replaced_by_the_relays():
    sent = planner_goal(0.01, 1.0)
    for point in sent.trajectory.points:
        point.effort = [1.0] * len(JOINTS)
    sent = arrived(sent)
    reference = forwarded_the_old_way(0.01, arrived(sent))
    forwarded = with_efforts(core_of(0.01), sent)
    assert_same_bits(forwarded, reference)
    assert forwarded.trajectory.points[50].effort[1] != 1.0


def small_goal(*, names=tuple(JOINTS), seconds=(0.0, 0.5, 1.0), fields=None) -> FollowJointTrajectory.Goal:
    """A goal of a few points at rest, with ``fields`` {(point, field): values} replaced."""
    points = []
    for t in seconds:
        sec, nanosec = divmod(round(t * 1e9), 1_000_000_000)
        point = JointTrajectoryPoint(positions=list(START), time_from_start=Duration(sec=sec, nanosec=nanosec))
        point.velocities = [0.0] * len(JOINTS)
        points.append(point)
    for (k, field), values in (fields or {}).items():
        setattr(points[k], field, values)
    return arrived(goal(JointTrajectory(joint_names=list(names), points=points)))


NAN, INF = float("nan"), float("inf")
REFUSALS = {
    "unknown joint": (
        small_goal(names=["elbow", *JOINTS[1:]]),
        Result.INVALID_JOINTS,
        "joints unknown to the robot model: ['elbow']",
    ),
    "no joint": (small_goal(names=[]), Result.INVALID_JOINTS, "joints unknown to the robot model: none named"),
    "a joint twice": (
        small_goal(names=[*JOINTS[:7], "joint1"]),
        Result.INVALID_JOINTS,
        f"joints named twice: {[*JOINTS[:7], 'joint1']}",
    ),
    "no point": (small_goal(seconds=()), Result.INVALID_GOAL, "the trajectory has no points"),
    "a time repeated": (
        small_goal(seconds=(0.0, 0.5, 0.5)),
        Result.INVALID_GOAL,
        "time_from_start must increase strictly from point to point",
    ),
    "a time going back": (
        small_goal(seconds=(0.0, 0.5, 0.4)),
        Result.INVALID_GOAL,
        "time_from_start must increase strictly from point to point",
    ),
    "a NaN position": (
        small_goal(fields={(1, "positions"): [*START[:3], NAN, *START[4:]]}),
        Result.INVALID_GOAL,
        "the trajectory's positions are not all finite",
    ),
    "an infinite acceleration": (
        small_goal(fields={(k, "accelerations"): [0.0] * 7 + [INF if k == 2 else 0.0] for k in range(3)}),
        Result.INVALID_GOAL,
        "the trajectory's accelerations are not all finite",
    ),
    "a NaN effort": (
        small_goal(fields={(0, "effort"): [NAN]}),
        Result.INVALID_GOAL,
        "the trajectory's effort are not all finite",
    ),
    "an infinite velocity in points of different lengths": (
        small_goal(fields={(1, "velocities"): [-INF]}),
        Result.INVALID_GOAL,
        "the trajectory's velocities are not all finite",
    ),
    "points of different lengths": (
        small_goal(fields={(1, "velocities"): [0.0]}),
        Result.INVALID_GOAL,
        "wrong_length: velocities: 8 for every point, or none",
    ),
    "a time going back before a NaN": (
        small_goal(seconds=(0.0, 0.5, 0.4), fields={(1, "positions"): [NAN] * 8}),
        Result.INVALID_GOAL,
        "time_from_start must increase strictly from point to point",
    ),
}


@pytest.mark.parametrize("fault", REFUSALS)
def test_a_bad_goal_is_refused_with_its_error_code_and_reason(fault):
    sent, code, reason = REFUSALS[fault]
    refused = with_efforts(core_of(0.01), sent)
    assert isinstance(refused, Result)
    assert (refused.error_code, refused.error_string) == (code, reason)


def test_a_goal_of_too_many_points_is_refused_as_before():
    n = 100_001
    data = write_joint_trajectory((0, 0), "", JOINTS, np.arange(n) * 1e-3, {"positions": np.zeros((n, 8))})
    sent = FollowJointTrajectory.Goal(trajectory=deserialize_message(data, JointTrajectory))
    refused = with_efforts(core_of(0.01), sent)
    assert isinstance(refused, Result)
    assert (refused.error_code, refused.error_string) == (
        Result.INVALID_GOAL,
        "too_many_points: joint_trajectory has 100001 points, at most 100000",
    )


@pytest.mark.parametrize("uneven", [False, True])
def test_the_points_read_with_numpy_are_what_read_trajectory_gives(uneven):
    trajectory = planner_goal(0.05, 1.0).trajectory
    trajectory.points[3].time_from_start = Duration(sec=0, nanosec=150_000_001)
    if uneven:
        trajectory.points[4].velocities = [0.5, -0.0]
    read = messages.read_goal_points(trajectory)
    expected = messages.read_trajectory(trajectory, 1000, "joint_trajectory")
    assert (read.content.stamp, read.content.frame_id) == ((1_700_000_000, 250_000_000), "world")
    assert read.content.joint_names == expected.joint_names == JOINTS
    assert read.content.time_from_start.tobytes() == expected.time_from_start.tobytes()
    assert read.sec.tolist() == [point.time_from_start.sec for point in trajectory.points]
    assert read.nanosec.tolist() == [point.time_from_start.nanosec for point in trajectory.points]
    for field in FIELDS:
        mine, theirs = read.content.fields[field], expected.fields[field]
        assert isinstance(mine, np.ndarray) == (not uneven or field != "velocities")  # one block when even
        assert [np.asarray(row).tobytes() for row in mine] == [np.asarray(row).tobytes() for row in theirs]
