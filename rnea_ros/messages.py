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


def wrench_array(msg: WrenchStamped) -> np.ndarray:
    """[fx, fy, fz, tx, ty, tz] of a WrenchStamped."""
    f, t = msg.wrench.force, msg.wrench.torque
    return finite_array([f.x, f.y, f.z, t.x, t.y, t.z], "wrench")


def as_float64_array(x: np.ndarray) -> array.array:
    """The storage type of float64[] message fields: assigning it skips rclpy's per-element checks."""
    out = array.array("d")
    out.frombytes(np.ascontiguousarray(x, dtype=np.float64).tobytes())
    return out
