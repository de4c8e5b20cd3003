"""ROS messages <-> arrays, with the checks that decide whether a message is usable.

No node state lives here: every function takes a message and returns arrays in the
message's own order, or raises ``InvalidMessageError`` with a reason that the node counts
in its diagnostics. Checks that need the robot model (names, frames) are ``LiveModel``'s.
"""

from __future__ import annotations

import array
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, NamedTuple

import numpy as np
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import AccelStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, MultiArrayLayout, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros.controller.inputs import JointStateReading, PlannedTrajectory
from rnea_ros.controller.state import (
    BaseAccelerationReading,
    ContactScheduleReading,
    DesiredPoints,
    ImuMessage,
    InvalidMessageError,
    OdometryReading,
    WrenchReading,
)
from rnea_ros.controller.trajectory_feedforward import FeedforwardTrajectory
from rnea_ros.dynamics.rnea import QUATERNION_TOLERANCE
from rnea_ros.dynamics.rotations import quaternion_matrix
from rnea_ros.motion import trajectory
from rnea_ros.motion.trajectory import MAX_TRAJECTORY_POINTS, Trajectory, floats
from rnea_ros.plumbing import fixed_cdr
from rnea_ros.plumbing.trajectory_cdr import TrajectoryMessage, read_joint_trajectory, write_joint_trajectory

MAX_SCHEDULE_EVENTS = 10_000  # a planner sends seconds ahead; a million events would be a mistake


def stamp_seconds(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


def finite_array(values, what: str) -> np.ndarray:
    """``values`` as float64; NaN and Inf (and values so large that their sum overflows) are refused."""
    if isinstance(values, np.ndarray):
        with np.errstate(over="ignore", invalid="ignore"):
            total = float(np.sum(values))
    else:
        total = sum(values)
    if not math.isfinite(total):  # NaN and Inf survive a sum: one cheap pass, no numpy warnings
        raise InvalidMessageError("non_finite", f"{what} contains NaN or Inf")
    return np.asarray(values, dtype=np.float64)


def joint_state_arrays(msg: JointState) -> tuple[np.ndarray, np.ndarray, bool]:
    """(position, velocity, velocity_given) of a JointState, in the message's own order."""
    n = len(msg.name)
    if len(msg.position) != n:
        raise InvalidMessageError("wrong_length", f"joint_states has {n} names but {len(msg.position)} positions")
    velocity_given = len(msg.velocity) > 0
    if velocity_given and len(msg.velocity) != n:
        raise InvalidMessageError("wrong_length", f"joint_states has {n} names but {len(msg.velocity)} velocities")
    position = finite_array(msg.position, "joint_states position")
    velocity = finite_array(msg.velocity, "joint_states velocity") if velocity_given else np.zeros(n)
    return position, velocity, velocity_given


MAX_DESIRED_POINTS = 60_000  # a minute of points at 1 kHz: a whole trajectory sent ahead


def desired_points(msg: JointTrajectory | bytes) -> DesiredPoints:
    """(names, qdd, q, qd, times) of a desired trajectory (a message or its CDR bytes), in the
    message's joint order.

    A zero ``header.stamp`` means "now": only the first point is used (qdd, q, qd are 1-D and
    times is None). A stamped message gives every point (2-D arrays, one row per point) with
    its time, ``header.stamp + time_from_start`` [s], increasing: the node uses the point of
    each joint_states stamp. q and qd are None unless every point used has both."""
    content = read_trajectory(msg, MAX_DESIRED_POINTS, "desired_accelerations")
    if len(content.time_from_start) == 0:
        raise InvalidMessageError("empty_trajectory", "desired_accelerations has no points")
    stamped = content.stamp != (0, 0)
    used = slice(None) if stamped else slice(0, 1)
    fields = {field: content.fields[field][used] for field in trajectory.FIELDS}
    n = len(content.joint_names)
    blocks = {field: trajectory.uniform_block(values) for field, values in fields.items()}
    qdd = blocks["accelerations"]
    if qdd is None or qdd.shape[1] != n:
        raise InvalidMessageError("wrong_length", f"desired_accelerations: every point needs {n} accelerations")
    qdd = finite_array(qdd, "desired_accelerations")
    q, qd = blocks["positions"], blocks["velocities"]
    if q is None or qd is None or q.shape[1] != n or qd.shape[1] != n:
        q = qd = None
    else:
        q, qd = finite_array(q, "desired positions"), finite_array(qd, "desired velocities")
    if not stamped:
        return DesiredPoints(content.joint_names, qdd[0], None if q is None else q[0], None if qd is None else qd[0])
    times = content.stamp[0] + content.stamp[1] * 1e-9 + content.time_from_start
    if np.any(np.diff(times) <= 0.0):
        raise InvalidMessageError("unordered_points", "desired_accelerations: time_from_start must increase")
    return DesiredPoints(content.joint_names, qdd, q, qd, times)


def read_trajectory(msg: JointTrajectory | bytes, max_points: int, topic: str) -> TrajectoryMessage:
    """A JointTrajectory's content, from a raw subscription's bytes (the fast way: no Python object
    per point) or from a message; InvalidMessageError when it is malformed or too long."""
    if not isinstance(msg, JointTrajectory):
        try:
            return read_joint_trajectory(msg, max_points)
        except trajectory.TrajectoryError as error:
            raise InvalidMessageError(error.reason, f"{topic}: {error}") from error
    if len(msg.points) > max_points:
        raise InvalidMessageError("too_many_points", f"{topic} has {len(msg.points)} points, at most {max_points}")
    fields = {field: [floats(getattr(point, field)) for point in msg.points] for field in trajectory.FIELDS}
    times = np.array([p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in msg.points])
    stamp = (msg.header.stamp.sec, msg.header.stamp.nanosec)
    return TrajectoryMessage(stamp, msg.header.frame_id, list(msg.joint_names), times, fields)


def _vector6(first, second, what: str) -> np.ndarray:
    """Two geometry_msgs/Vector3 as one finite 6-vector."""
    return finite_array([first.x, first.y, first.z, second.x, second.y, second.z], what)


def wrench_array(msg: WrenchStamped) -> np.ndarray:
    """[fx, fy, fz, tx, ty, tz] of a WrenchStamped."""
    return _vector6(msg.wrench.force, msg.wrench.torque, "wrench")


def base_acceleration_array(msg: AccelStamped) -> np.ndarray:
    """[a, α] of a geometry_msgs/AccelStamped."""
    return _vector6(msg.accel.linear, msg.accel.angular, "desired_base_acceleration")


def labelled_commands(joint_names: list[str]) -> Float64MultiArray:
    """An effort_commands message whose layout names its joints, in order (one dimension labelled
    with the comma-separated names): a user reading the topic sees which value drives which joint;
    controllers read ``data`` alone."""
    dimension = MultiArrayDimension(label=",".join(joint_names), size=len(joint_names), stride=len(joint_names))
    return Float64MultiArray(layout=MultiArrayLayout(dim=[dimension], data_offset=0))


def as_float64_array(x: np.ndarray) -> array.array:
    """The storage type of float64[] message fields: assigning it skips rclpy's per-element checks."""
    out = array.array("d")
    out.frombytes(np.ascontiguousarray(x, dtype=np.float64).tobytes())
    return out


# --- floating base ----------------------------------------------------------------------------
def unit_quaternion(x: float, y: float, z: float, w: float, what: str) -> np.ndarray:
    """[x, y, z, w] normalised; refused when far from unit norm (a zero or garbage quaternion)."""
    quaternion = finite_array([x, y, z, w], what)
    if np.abs(quaternion).max() > 2.0:  # no unit quaternion has such a component (and no overflow below)
        raise InvalidMessageError("bad_quaternion", f"{what} {quaternion.tolist()} is not a unit quaternion")
    norm = float(np.linalg.norm(quaternion))
    if abs(norm - 1.0) > QUATERNION_TOLERANCE:
        raise InvalidMessageError("bad_quaternion", f"{what} has norm {norm:.4g}, not 1")
    return quaternion / norm


def odometry_base_state(msg: Odometry) -> tuple[np.ndarray, np.ndarray]:
    """(q_base [x, y, z, qx, qy, qz, qw], twist [v, ω]) of a nav_msgs/Odometry (the twist is in
    ``child_frame_id``, which ``LiveModel`` checks is the root link)."""
    p, o = msg.pose.pose.position, msg.pose.pose.orientation
    position = finite_array([p.x, p.y, p.z], "base_odometry position")
    quaternion = unit_quaternion(o.x, o.y, o.z, o.w, "base_odometry orientation")
    twist = _vector6(msg.twist.twist.linear, msg.twist.twist.angular, "base_odometry twist")
    return np.concatenate([position, quaternion]), twist


def imu_reading(msg: Imu) -> tuple[np.ndarray, np.ndarray]:
    """(R_world_imu, ω_imu in the IMU frame) of a sensor_msgs/Imu that carries an orientation."""
    if msg.orientation_covariance[0] == -1.0:
        raise InvalidMessageError("imu_without_orientation", "imu message has no orientation (covariance[0] = -1)")
    o, w = msg.orientation, msg.angular_velocity
    quaternion = unit_quaternion(o.x, o.y, o.z, o.w, "imu orientation")
    return quaternion_matrix(quaternion), finite_array([w.x, w.y, w.z], "imu angular velocity")


def trajectory_arrays(content: TrajectoryMessage | JointTrajectory) -> Trajectory:
    """A planner's JointTrajectory (its content, or the message) as arrays (``rnea_ros.motion.trajectory``);
    InvalidMessageError otherwise."""
    if isinstance(content, JointTrajectory):
        content = read_trajectory(content, trajectory.MAX_TRAJECTORY_POINTS, "joint_trajectory")
    try:
        return trajectory.checked_trajectory(content.joint_names, content.time_from_start, content.fields)
    except trajectory.TrajectoryError as error:
        raise InvalidMessageError(error.reason, str(error)) from error


def trajectory_message(header, result: FeedforwardTrajectory) -> JointTrajectory:
    """The trajectory with every point's effort (the header kept: the JTC starts it at its stamp)."""
    msg = JointTrajectory(header=header, joint_names=result.joint_names)
    seconds, nanoseconds = duration_fields(result.times)
    blocks = (result.positions, result.velocities, result.accelerations, result.efforts)
    rows = zip(*map(float64_rows, blocks), seconds.tolist(), nanoseconds.tolist(), strict=True)
    msg.points = [  # every field given to the constructor: a quarter faster than setting them after
        JointTrajectoryPoint(
            positions=q, velocities=qd, accelerations=qdd, effort=tau, time_from_start=Duration(sec=s, nanosec=ns)
        )
        for q, qd, qdd, tau, s, ns in rows
    ]
    return msg


def duration_fields(times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sec, nanosec) of each time [s] as a builtin_interfaces/Duration holds it (rounded to the nanosecond)."""
    return np.divmod(np.round(np.asarray(times) * 1e9).astype(np.int64), 1_000_000_000)


# --- a FollowJointTrajectory goal's trajectory: read from its point objects, answered in them ----
@dataclass(frozen=True)
class GoalPoints:
    """A received JointTrajectory's content (what ``read_trajectory`` gives for the message) and each
    point's time_from_start as it came."""

    content: TrajectoryMessage
    sec: np.ndarray  # (N,) int64
    nanosec: np.ndarray  # (N,) int64


def read_goal_points(msg: JointTrajectory) -> GoalPoints:
    """``msg``'s content with numpy: one join per field instead of an array per point (1,000 points:
    ~1 ms, ``read_trajectory`` ~4). No check: the points may be as many and as uneven as they came."""
    points = msg.points
    n = len(points)
    fields = {field: _field_of_points(points, field) for field in trajectory.FIELDS}
    durations = list(map(attrgetter("time_from_start"), points))
    sec = np.fromiter(map(attrgetter("sec"), durations), np.int64, n)
    nanosec = np.fromiter(map(attrgetter("nanosec"), durations), np.int64, n)
    stamp = (msg.header.stamp.sec, msg.header.stamp.nanosec)
    times = sec + nanosec * 1e-9  # as read_trajectory computes them, to the bit
    content = TrajectoryMessage(stamp, msg.header.frame_id, list(msg.joint_names), times, fields)
    return GoalPoints(content, sec, nanosec)


def _field_of_points(points, field: str) -> np.ndarray | list[np.ndarray]:
    """One float64[] field of every point: (N, L) when all have L values, else one array per point."""
    values = list(map(attrgetter(field), points))  # array.array('d'): the generated setters store nothing else
    lengths = set(map(len, values))
    if len(lengths) != 1:
        return [floats(v) for v in values]
    return np.frombuffer(bytearray().join(values), dtype=np.float64).reshape(len(values), lengths.pop())


def goal_trajectory_arrays(points: GoalPoints) -> Trajectory:
    """``trajectory_arrays`` of the message ``points`` were read from, refusing what it refuses."""
    n = len(points.content.time_from_start)
    if n > MAX_TRAJECTORY_POINTS:
        raise InvalidMessageError(
            "too_many_points", f"joint_trajectory has {n} points, at most {MAX_TRAJECTORY_POINTS}"
        )
    return trajectory_arrays(points.content)


def trajectory_with_efforts(msg: JointTrajectory, points: GoalPoints, result: FeedforwardTrajectory) -> JointTrajectory:
    """``trajectory_message(msg.header, result)``, the same values to the bit. When ``result`` has
    ``msg``'s points (no point added by resampling) these are reused: only the values that differ
    are replaced (every effort; a point's positions where the spline's rounding touched them, as at
    the last point), so ``msg`` is changed and should not be used after. Building 1,000 points costs
    ~7 ms, filling them ~1."""
    if len(result.times) != len(msg.points):
        return trajectory_message(msg.header, result)
    given = points.content.fields
    for field, block in zip(
        trajectory.FIELDS, (result.positions, result.velocities, result.accelerations, result.efforts), strict=True
    ):
        _replace_rows(msg.points, field, block, given[field])
    seconds, nanoseconds = duration_fields(result.times)
    for k in np.flatnonzero((seconds != points.sec) | (nanoseconds != points.nanosec)).tolist():
        msg.points[k].time_from_start = Duration(sec=int(seconds[k]), nanosec=int(nanoseconds[k]))
    forwarded = JointTrajectory(header=msg.header, joint_names=result.joint_names)
    forwarded.points = msg.points
    return forwarded


def _replace_rows(points, field: str, block: np.ndarray, given: np.ndarray | list[np.ndarray]) -> None:
    """Each point's ``field`` set to its row of ``block`` where it is not that row already, bit for bit."""
    block = np.ascontiguousarray(block, dtype=np.float64)
    if isinstance(given, np.ndarray) and given.shape == block.shape:
        # compared as integers: -0.0 is not 0.0, as the forwarded bytes would tell
        differ = np.flatnonzero((given.view(np.int64) != block.view(np.int64)).any(axis=1))
    else:
        differ = np.arange(len(points))
    for k, row in zip(differ.tolist(), float64_rows(block[differ]), strict=True):
        setattr(points[k], field, row)


def float64_rows(block: np.ndarray) -> list[array.array]:
    """Each row of a (N, L) block as a float64[] field's storage (``as_float64_array``), from one copy of its bytes."""
    data, width = np.ascontiguousarray(block, dtype=np.float64).tobytes(), 8 * block.shape[1]
    if width == 0:
        return [array.array("d") for _ in range(len(block))]
    return [array.array("d", data[start : start + width]) for start in range(0, len(data), width)]


def trajectory_cdr(header, result: FeedforwardTrajectory) -> bytes:
    """``trajectory_message`` serialized directly, for ``Publisher.publish``: building a thousand
    JointTrajectoryPoint objects costs ~7 ms in Python, writing their bytes with numpy a tenth of
    one. Checked against rclpy's own serialization (``test/node/test_messages.py``)."""
    fields = {"positions": result.positions, "velocities": result.velocities}
    fields.update(accelerations=result.accelerations, effort=result.efforts)
    stamp = (header.stamp.sec, header.stamp.nanosec)
    return write_joint_trajectory(stamp, header.frame_id, result.joint_names, result.times, fields)


# --- the readers of inputs.INPUTS: a message in, a reading out ---------------------------------
def description_text(msg: String) -> str:
    return msg.data


def read_joint_states(msg: JointState) -> JointStateReading:
    position, velocity, velocity_given = joint_state_arrays(msg)
    return JointStateReading(msg.name, position, velocity, velocity_given, stamp_seconds(msg.header.stamp))


def read_planned_trajectory(data: bytes) -> PlannedTrajectory:
    arrived = time.perf_counter()
    content = read_trajectory(data, MAX_TRAJECTORY_POINTS, "joint_trajectory")
    return PlannedTrajectory(content, trajectory_arrays(content), arrived)


def read_wrench(msg: WrenchStamped) -> WrenchReading:
    return WrenchReading(msg.header.frame_id, wrench_array(msg), stamp_seconds(msg.header.stamp))


def read_odometry(msg: Odometry | bytes) -> OdometryReading:
    """A base_odometry message, or its CDR bytes (the joint_states thread takes the newest as bytes:
    read at its offsets, ``fixed_cdr``, without rclpy's Odometry object)."""
    if isinstance(msg, bytes):
        values = fixed_cdr.read_odometry(msg)
        if values is None:  # big endian, or not whole: what rclpy can read
            try:
                return read_odometry(deserialize_message(msg, Odometry))
            except Exception as error:  # rclpy's own (not whole): a malformed message
                raise InvalidMessageError("malformed", f"base_odometry cannot be read: {error}") from None
        position = finite_array(values.pose[:3], "base_odometry position")
        quaternion = unit_quaternion(*values.pose[3:], "base_odometry orientation")
        twist = finite_array(values.twist, "base_odometry twist")
        stamp = values.stamp[0] + values.stamp[1] * 1e-9
        return OdometryReading(np.concatenate([position, quaternion]), twist, values.child_frame_id, stamp)
    q_base, twist = odometry_base_state(msg)
    return OdometryReading(q_base, twist, msg.child_frame_id, stamp_seconds(msg.header.stamp))


def read_imu(msg: Imu) -> ImuMessage:
    rotation, rate = imu_reading(msg)
    return ImuMessage(msg.header.frame_id, rotation, rate, stamp_seconds(msg.header.stamp))


def read_base_acceleration(msg: AccelStamped) -> BaseAccelerationReading:
    return BaseAccelerationReading(msg.header.frame_id, base_acceleration_array(msg))


def read_contact_schedule(msg: JointTrajectory) -> ContactScheduleReading:
    """A planner's contact schedule: ``joint_names`` the contact links, each point an event at
    header.stamp + time_from_start whose ``positions`` say 1 (in stance from then on) or 0 (swing)
    per link; checked alone (lengths, finite, 0 or 1)."""
    names = list(msg.joint_names)
    if len(set(names)) != len(names):
        raise InvalidMessageError("duplicate_names", "contact_schedule names a link twice")
    if len(msg.points) > MAX_SCHEDULE_EVENTS:
        raise InvalidMessageError(
            "too_many_points", f"contact_schedule has {len(msg.points)} events, at most {MAX_SCHEDULE_EVENTS}"
        )
    states = np.zeros((len(msg.points), len(names)))
    for k, point in enumerate(msg.points):
        row = floats(point.positions)
        if len(row) != len(names):
            raise InvalidMessageError(
                "wrong_length", f"contact_schedule event {k}: {len(row)} positions for {len(names)} links"
            )
        states[k] = row
    if not np.isfinite(states).all():
        raise InvalidMessageError("non_finite", "contact_schedule: a contact state is not finite")
    if not np.isin(states, (0.0, 1.0)).all():
        raise InvalidMessageError("contact_state", "contact_schedule: each position is 1 (stance) or 0 (swing)")
    times = np.array([p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in msg.points])
    return ContactScheduleReading(names, stamp_seconds(msg.header.stamp), times, states.astype(bool))


class Reader(NamedTuple):
    """An input's message class and its reader (message, or its CDR bytes for a ``raw`` row → reading)."""

    message_type: type
    read: Callable[[Any], object]


# each row of inputs.INPUTS, by topic (test/node/test_inputs.py checks the classes against the rows' types)
READERS: dict[str, Reader] = {
    "robot_description": Reader(String, description_text),
    "joint_states": Reader(JointState, read_joint_states),
    "desired_accelerations": Reader(JointTrajectory, desired_points),
    "joint_trajectory": Reader(JointTrajectory, read_planned_trajectory),
    "wrenches": Reader(WrenchStamped, read_wrench),
    "base_odometry": Reader(Odometry, read_odometry),
    "imu": Reader(Imu, read_imu),
    "desired_base_acceleration": Reader(AccelStamped, read_base_acceleration),
    "contact_schedule": Reader(JointTrajectory, read_contact_schedule),
}
