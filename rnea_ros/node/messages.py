"""ROS messages <-> arrays, with the checks that decide whether a message is usable.

No node state lives here: every function takes a message and returns arrays in the
message's own order, or raises ``InvalidMessageError`` with a reason that the node counts
in its diagnostics. Checks that need the robot model (names, frames) are ``LiveModel``'s.
"""

from __future__ import annotations

import array
import math
import struct

import numpy as np
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import AccelStamped, WrenchStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, MultiArrayLayout
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import trajectory
from rnea_ros.dynamics.rotations import quaternion_matrix
from rnea_ros.node.state import InvalidMessageError
from rnea_ros.node.trajectory_feedforward import FeedforwardTrajectory
from rnea_ros.trajectory import Trajectory, floats


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


def desired_points(
    msg: JointTrajectory,
) -> tuple[list[str], np.ndarray, np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """(names, qdd, q, qd, times) of a desired trajectory, in the message's joint order.

    A zero ``header.stamp`` means "now": only the first point is used (qdd, q, qd are 1-D and
    times is None). A stamped message gives every point (2-D arrays, one row per point) with
    its time, ``header.stamp + time_from_start`` [s], increasing: the node uses the point of
    each joint_states stamp. q and qd are None unless every point used has both."""
    if not msg.points:
        raise InvalidMessageError("empty_trajectory", "desired_accelerations has no points")
    stamped = msg.header.stamp.sec != 0 or msg.header.stamp.nanosec != 0
    points = msg.points if stamped else msg.points[:1]
    if len(points) > MAX_DESIRED_POINTS:
        raise InvalidMessageError(
            "too_many_points", f"desired_accelerations has {len(points)} points, at most {MAX_DESIRED_POINTS}"
        )
    n = len(msg.joint_names)
    if any(len(point.accelerations) != n for point in points):
        raise InvalidMessageError("wrong_length", f"desired_accelerations: every point needs {n} accelerations")
    shape = (len(points), n)
    # np.frombuffer on each point's array: a whole trajectory (60,000 points) in milliseconds, not a
    # tenth of a second of Python that would hold the joint_states thread back
    qdd = finite_array(_stacked(points, "accelerations"), "desired_accelerations").reshape(shape)
    q = qd = None
    if all(len(point.positions) == n and len(point.velocities) == n for point in points):
        q = finite_array(_stacked(points, "positions"), "desired positions").reshape(shape)
        qd = finite_array(_stacked(points, "velocities"), "desired velocities").reshape(shape)
    if not stamped:
        return list(msg.joint_names), qdd[0], None if q is None else q[0], None if qd is None else qd[0], None
    start = stamp_seconds(msg.header.stamp)
    times = np.array([start + p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in points])
    if np.any(np.diff(times) <= 0.0):
        raise InvalidMessageError("unordered_points", "desired_accelerations: time_from_start must increase")
    return list(msg.joint_names), qdd, q, qd, times


def _stacked(points, field: str) -> np.ndarray:
    return np.concatenate([floats(getattr(point, field)) for point in points])


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
QUATERNION_TOLERANCE = 1e-3


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


def trajectory_arrays(msg: JointTrajectory) -> Trajectory:
    """A planner's JointTrajectory as arrays (``rnea_ros.trajectory``); InvalidMessageError otherwise."""
    try:
        return trajectory.trajectory_arrays(msg)
    except trajectory.TrajectoryError as error:
        raise InvalidMessageError(error.reason, str(error)) from error


def trajectory_message(header, result: FeedforwardTrajectory) -> JointTrajectory:
    """The trajectory with every point's effort (the header kept: the JTC starts it at its stamp)."""
    msg = JointTrajectory(header=header, joint_names=result.joint_names)
    nanoseconds = np.round(result.times * 1e9).astype(np.int64)
    points = []
    for k in range(len(result.times)):
        point = JointTrajectoryPoint()
        point.positions = as_float64_array(result.positions[k])
        point.velocities = as_float64_array(result.velocities[k])
        point.accelerations = as_float64_array(result.accelerations[k])
        point.effort = as_float64_array(result.efforts[k])
        point.time_from_start = Duration(
            sec=int(nanoseconds[k] // 1_000_000_000), nanosec=int(nanoseconds[k] % 1_000_000_000)
        )
        points.append(point)
    msg.points = points
    return msg


def trajectory_cdr(header, result: FeedforwardTrajectory) -> bytes:
    """``trajectory_message`` serialized directly (CDR, little endian), for ``Publisher.publish``:
    building a thousand JointTrajectoryPoint objects costs ~7 ms in Python, writing their bytes well
    under one. Field order and alignment of trajectory_msgs/JointTrajectory; checked against rclpy's
    own serialization (``test/node/test_messages.py``)."""
    out = bytearray(b"\x00\x01\x00\x00")  # encapsulation: CDR little endian; offsets below are after it

    def align(size: int) -> None:
        out.extend(b"\x00" * (-(len(out) - 4) % size))

    def string(text: str) -> None:
        data = text.encode("utf-8") + b"\x00"
        align(4)
        out.extend(struct.pack("<I", len(data)))
        out.extend(data)

    align(4)
    out.extend(struct.pack("<iI", header.stamp.sec, header.stamp.nanosec))
    string(header.frame_id)
    align(4)
    out.extend(struct.pack("<I", len(result.joint_names)))
    for name in result.joint_names:
        string(name)
    align(4)
    out.extend(struct.pack("<I", len(result.times)))
    nanoseconds = np.round(result.times * 1e9).astype(np.int64)
    seconds, rest = np.divmod(nanoseconds, 1_000_000_000)
    columns = [np.ascontiguousarray(a, dtype="<f8") for a in (result.positions, result.velocities)]
    columns += [np.ascontiguousarray(a, dtype="<f8") for a in (result.accelerations, result.efforts)]
    length = struct.pack("<I", columns[0].shape[1])
    for k in range(len(result.times)):
        for column in columns:
            align(4)
            out.extend(length)
            align(8)
            out.extend(column[k].tobytes())
        align(4)
        out.extend(struct.pack("<iI", int(seconds[k]), int(rest[k])))
    return bytes(out)
