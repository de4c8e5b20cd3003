"""ROS messages <-> arrays, with the checks that decide whether a message is usable.

No node state lives here: every function takes a message (and the joint index of
the model) and returns arrays, or raises ``InvalidMessageError`` with a reason that the node
counts in its diagnostics.
"""

from __future__ import annotations

import array
import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from rnea_ros.spatial import quaternion_to_rotation

MAX_CACHED_NAME_LISTS = 64


class InvalidMessageError(ValueError):
    """A message that cannot be used; ``reason`` is the diagnostics key it is counted under."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


def stamp_seconds(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


def finite_array(values, what: str) -> np.ndarray:
    """``values`` as float64; NaN and Inf (and values so large that their sum overflows) are refused."""
    if not math.isfinite(sum(values)):  # NaN and Inf survive a sum: one cheap pass, no numpy warnings
        raise InvalidMessageError("non_finite", f"{what} contains NaN or Inf")
    return np.asarray(values, dtype=np.float64)


class NameMatch(NamedTuple):
    message_rows: np.ndarray  # rows of the message whose names the model knows ...
    model_rows: np.ndarray  # ... and the model rows they go to
    full: np.ndarray | None  # when the message names every model joint: its row for each model joint


class NameMatcher:
    """Maps a message's joint names to model rows; the mapping of each distinct name list is cached.

    Publishers send the same name list every time, so the hot path does one dictionary
    lookup on the tuple of names.
    """

    def __init__(self, index: Mapping[str, int]) -> None:
        self.index = dict(index)
        self._cache: dict[tuple[str, ...], NameMatch] = {}

    def match(self, names: Sequence[str]) -> NameMatch:
        key = tuple(names)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        if len(set(key)) != len(key):
            raise InvalidMessageError("duplicate_names", "message has duplicate joint names")
        pairs = [(k, self.index[name]) for k, name in enumerate(key) if name in self.index]
        message_rows = np.array([k for k, _ in pairs], dtype=np.intp)
        model_rows = np.array([j for _, j in pairs], dtype=np.intp)
        full = None
        if len(pairs) == len(self.index):
            full = np.empty(len(pairs), dtype=np.intp)
            full[model_rows] = message_rows
        if len(self._cache) >= MAX_CACHED_NAME_LISTS:  # hostile publishers must not grow memory
            self._cache.clear()
        self._cache[key] = match = NameMatch(message_rows, model_rows, full)
        return match


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


def desired_point(
    msg: JointTrajectory, matcher: NameMatcher, nv: int
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """(qdd, q, qd) in model order from the first point; q and qd are None when the point has no state.

    Joints the message does not name get zero acceleration; q and qd then only cover named joints
    and the caller fills the rest.
    """
    if not msg.points:
        raise InvalidMessageError("empty_trajectory", "desired_accelerations has no points")
    point = msg.points[0]
    n = len(msg.joint_names)
    if len(point.accelerations) != n:
        raise InvalidMessageError(
            "wrong_length", f"desired_accelerations has {n} joint names but {len(point.accelerations)} accelerations"
        )
    message_rows, model_rows, _ = matcher.match(msg.joint_names)
    qdd = np.zeros(nv)
    qdd[model_rows] = finite_array(point.accelerations, "desired_accelerations")[message_rows]
    if len(point.positions) != n or len(point.velocities) != n:
        return qdd, None, None
    q = np.full(nv, math.nan)
    qd = np.full(nv, math.nan)
    q[model_rows] = finite_array(point.positions, "desired positions")[message_rows]
    qd[model_rows] = finite_array(point.velocities, "desired velocities")[message_rows]
    return qdd, q, qd


def _vector6(first, second, what: str) -> np.ndarray:
    """Two geometry_msgs/Vector3 as one finite 6-vector."""
    return finite_array([first.x, first.y, first.z, second.x, second.y, second.z], what)


def wrench_array(msg: WrenchStamped) -> np.ndarray:
    """[fx, fy, fz, tx, ty, tz] of a WrenchStamped."""
    return _vector6(msg.wrench.force, msg.wrench.torque, "wrench")


def base_acceleration_array(msg, base_link: str) -> np.ndarray:
    """[a, α] of a geometry_msgs/AccelStamped, which must be in the root link frame (or say none)."""
    if msg.header.frame_id not in ("", base_link):
        raise InvalidMessageError("wrong_frame", f"frame '{msg.header.frame_id}' is not the root link '{base_link}'")
    return _vector6(msg.accel.linear, msg.accel.angular, "desired_base_acceleration")


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


def matrix_quaternion(R: np.ndarray) -> np.ndarray:
    """Unit quaternion [x, y, z, w] of a rotation matrix (Shepperd's method)."""
    trace = R[0, 0] + R[1, 1] + R[2, 2]
    k = int(np.argmax([trace, R[0, 0], R[1, 1], R[2, 2]]))
    if k == 0:
        s = 2.0 * np.sqrt(1.0 + trace)
        q = [(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, s / 4]
    elif k == 1:
        s = 2.0 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = [s / 4, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s, (R[2, 1] - R[1, 2]) / s]
    elif k == 2:
        s = 2.0 * np.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = [(R[0, 1] + R[1, 0]) / s, s / 4, (R[1, 2] + R[2, 1]) / s, (R[0, 2] - R[2, 0]) / s]
    else:
        s = 2.0 * np.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = [(R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, s / 4, (R[1, 0] - R[0, 1]) / s]
    q = np.array(q)
    return q / np.linalg.norm(q)


def odometry_base_state(msg, base_link: str) -> tuple[np.ndarray, np.ndarray]:
    """(q_base [x, y, z, qx, qy, qz, qw], v_base [v, ω] in the base frame) of a nav_msgs/Odometry
    whose pose is the base link's in the world and whose twist is in child_frame_id = the base link."""
    if msg.child_frame_id != base_link:
        raise InvalidMessageError(
            "wrong_child_frame",
            f"base_odometry child_frame_id is '{msg.child_frame_id}', but the twist must be in the "
            f"robot's root link '{base_link}'",
        )
    p, o = msg.pose.pose.position, msg.pose.pose.orientation
    position = finite_array([p.x, p.y, p.z], "base_odometry position")
    quaternion = unit_quaternion(o.x, o.y, o.z, o.w, "base_odometry orientation")
    twist = _vector6(msg.twist.twist.linear, msg.twist.twist.angular, "base_odometry twist")
    return np.concatenate([position, quaternion]), twist


def imu_reading(msg) -> tuple[np.ndarray, np.ndarray]:
    """(R_world_imu, ω_imu in the IMU frame) of a sensor_msgs/Imu that carries an orientation."""
    if msg.orientation_covariance[0] == -1.0:
        raise InvalidMessageError("imu_without_orientation", "imu message has no orientation (covariance[0] = -1)")
    o, w = msg.orientation, msg.angular_velocity
    quaternion = unit_quaternion(o.x, o.y, o.z, o.w, "imu orientation")
    R_world_imu = np.array(quaternion_to_rotation(*quaternion)).reshape(3, 3)  # the kernel's own formula
    return R_world_imu, finite_array([w.x, w.y, w.z], "imu angular velocity")


def base_acceleration(classical: np.ndarray, base_twist: np.ndarray) -> np.ndarray:
    """The free flyer's q̈ from [a, α] in the base frame (geometry_msgs/AccelStamped's content).

    ``a`` is the classical acceleration of the base origin (what a planner or an accelerometer
    without gravity gives); the kernel's base acceleration is the derivative of the body-frame
    velocity, which differs by ω × v."""
    v, omega = base_twist[:3], base_twist[3:]
    return np.concatenate([classical[:3] - np.cross(omega, v), classical[3:]])
