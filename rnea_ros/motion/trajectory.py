"""A joint trajectory sampled the way ros2_control's joint_trajectory_controller samples it (no ROS).

Mirrors ros2_controllers (jazzy) ``joint_trajectory_controller/src/trajectory.cpp``,
``Trajectory::interpolate_between_points``: between two points, positions and velocities are a
linear interpolation when the points have positions only, a cubic when both have velocities, a
quintic when both also have accelerations; efforts are always interpolated linearly. Before the
first point and after the last the JTC holds (it interpolates from the state it started from to
the first point, which this module, given no state, leaves to the caller: ``sample`` holds the
first point there).

This is why a feed-forward has to be computed on the JTC's own spline: between two points
0.1 s apart the JTC's effort is a straight line while the torque the motion needs is not.
``resampled`` puts points on the spline at a chosen spacing; their efforts then follow it.
"""

from __future__ import annotations

import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

MAX_TRAJECTORY_POINTS = 100_000  # in a message, and after resampling


class TrajectoryError(ValueError):
    """A trajectory message that cannot be used whole; ``reason`` is its diagnostics key."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


@dataclass(frozen=True)
class Trajectory:
    """A JointTrajectory's content as arrays, in its own joint order (velocities, accelerations and
    efforts None when its points do not all have them)."""

    joint_names: list[str]
    times: np.ndarray  # time_from_start [s]
    positions: np.ndarray
    velocities: np.ndarray | None = None
    accelerations: np.ndarray | None = None
    efforts: np.ndarray | None = None


FIELDS = ("positions", "velocities", "accelerations", "effort")  # a JointTrajectoryPoint's arrays


def checked_trajectory(
    joint_names: list[str], times: np.ndarray, fields: Mapping[str, np.ndarray | Sequence[np.ndarray]]
) -> Trajectory:
    """The trajectory of points given field by field (an (N, L) array, or one array per point), or
    TrajectoryError: positions for every point; velocities, accelerations, efforts for all or none."""
    n = len(joint_names)
    if len(times) == 0 or n == 0:
        raise TrajectoryError("empty_trajectory", "the trajectory has no points or no joints")
    if len(times) > MAX_TRAJECTORY_POINTS:
        raise TrajectoryError("too_many_points", f"{len(times)} points, at most {MAX_TRAJECTORY_POINTS}")
    arrays = []
    for field in FIELDS:
        block = uniform_block(fields[field])
        if block is not None and block.shape[1] == 0 and field != "positions":
            arrays.append(None)
        elif block is not None and block.shape[1] == n:
            if not np.isfinite(block).all():
                raise TrajectoryError("non_finite", f"the trajectory's {field} are not all finite")
            arrays.append(block)
        else:
            rule = "" if field == "positions" else ", or none"
            raise TrajectoryError("wrong_length", f"{field}: {n} for every point{rule}")
    return Trajectory(list(joint_names), np.asarray(times, dtype=float), *arrays)


def uniform_block(values: np.ndarray | Sequence[np.ndarray]) -> np.ndarray | None:
    """Per-point values as one (N, L) array; None when the points have different lengths."""
    if isinstance(values, np.ndarray):
        return values
    if len({len(v) for v in values}) != 1:
        return None
    return np.stack(values)


def floats(values) -> np.ndarray:
    """A message's float64[] field as an array: received ones are ``array.array('d')``, read in place."""
    if isinstance(values, array.array) and values.typecode == "d":
        return np.frombuffer(values, dtype=np.float64)
    return np.asarray(values, dtype=float)


@dataclass(frozen=True)
class JointSpline:
    times: np.ndarray  # (N,) time_from_start [s], strictly increasing
    positions: np.ndarray  # (N, n)
    velocities: np.ndarray | None = None  # (N, n) or None: linear segments
    accelerations: np.ndarray | None = None  # (N, n) or None: cubic (with velocities) or linear

    def __post_init__(self) -> None:
        n_points = len(self.times)
        if n_points < 1 or self.positions.shape[0] != n_points:
            raise ValueError("a trajectory needs at least one point, with positions for every point")
        if np.any(np.diff(self.times) <= 0.0):
            raise ValueError("time_from_start must increase strictly from point to point")
        for name in ("velocities", "accelerations"):
            values = getattr(self, name)
            if values is not None and values.shape != self.positions.shape:
                raise ValueError(f"{name} must be given for every point and joint, or for none")
        if self.accelerations is not None and self.velocities is None:
            raise ValueError("accelerations without velocities: the JTC would interpolate linearly")

    def sample(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, q̇, q̈) at each time of ``t`` (time_from_start), one row per time; held at the first
        point before it and at the last point after it (velocities and accelerations as the points
        give them, zero when they have none, as the JTC gives them)."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        k = np.clip(np.searchsorted(self.times, t, side="right") - 1, 0, max(len(self.times) - 2, 0))
        if len(self.times) == 1:
            return self._held(np.zeros(len(t), dtype=np.intp))
        t0, t1 = self.times[k], self.times[k + 1]
        T = (t1 - t0)[:, None]
        s = np.clip(t - t0, 0.0, None)[:, None]
        # the last point itself as the end of its segment: its acceleration is the spline's there (the
        # JTC gives zero once the trajectory has played out, when the point has none)
        inside = ((t >= self.times[0]) & (t <= self.times[-1]))[:, None]
        q, qd, qdd = self._segment(k, s, T)
        before = t < self.times[0]
        held_rows = np.where(before, 0, len(self.times) - 1)
        hq, hqd, hqdd = self._held(held_rows)
        return np.where(inside, q, hq), np.where(inside, qd, hqd), np.where(inside, qdd, hqdd)

    def _held(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        q = self.positions[rows]
        qd = self.velocities[rows] if self.velocities is not None else np.zeros_like(q)
        qdd = self.accelerations[rows] if self.accelerations is not None else np.zeros_like(q)
        return q, qd, qdd

    def _segment(self, k: np.ndarray, s: np.ndarray, T: np.ndarray) -> tuple[np.ndarray, ...]:
        p0, p1 = self.positions[k], self.positions[k + 1]
        if self.velocities is None:  # linear
            c1 = (p1 - p0) / T
            return p0 + c1 * s, np.broadcast_to(c1, p0.shape).copy(), np.zeros_like(p0)
        v0, v1 = self.velocities[k], self.velocities[k + 1]
        if self.accelerations is None:  # cubic
            c2 = (-3.0 * p0 + 3.0 * p1 - 2.0 * v0 * T - v1 * T) / T**2
            c3 = (2.0 * p0 - 2.0 * p1 + v0 * T + v1 * T) / T**3
            q = p0 + v0 * s + c2 * s**2 + c3 * s**3
            return q, v0 + 2.0 * c2 * s + 3.0 * c3 * s**2, 2.0 * c2 + 6.0 * c3 * s
        a0, a1 = self.accelerations[k], self.accelerations[k + 1]
        # the JTC's quintic coefficients, with its common terms computed once
        dp, a0T2, a1T2, v0T, v1T = p1 - p0, a0 * T**2, a1 * T**2, v0 * T, v1 * T
        c2 = 0.5 * a0
        c3 = (20.0 * dp - 3.0 * a0T2 + a1T2 - 12.0 * v0T - 8.0 * v1T) / (2.0 * T**3)
        c4 = (-30.0 * dp + 3.0 * a0T2 - 2.0 * a1T2 + 16.0 * v0T + 14.0 * v1T) / (2.0 * T**4)
        c5 = (12.0 * dp - a0T2 + a1T2 - 6.0 * v0T - 6.0 * v1T) / (2.0 * T**5)
        q = p0 + s * (v0 + s * (c2 + s * (c3 + s * (c4 + s * c5))))  # Horner
        qd = v0 + s * (2.0 * c2 + s * (3.0 * c3 + s * (4.0 * c4 + s * 5.0 * c5)))
        qdd = 2.0 * c2 + s * (6.0 * c3 + s * (12.0 * c4 + s * 20.0 * c5))
        return q, qd, qdd


def linear_efforts(times: np.ndarray, efforts: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The JTC's effort at ``t``: linear between points, held before the first and after the last."""
    return np.column_stack([np.interp(t, times, efforts[:, j]) for j in range(efforts.shape[1])])


def resampling_times(times: np.ndarray, spacing: float) -> np.ndarray:
    """The original points' times and, between them, points ``spacing`` apart (at most)."""
    if not spacing > 0.0:
        raise ValueError(f"the resampling spacing must be > 0 s, got {spacing}")
    times = np.asarray(times, dtype=float)
    gaps = np.diff(times)
    counts = np.maximum(1, np.ceil(gaps / spacing - 1e-6).astype(np.int64))  # 1e-6: stamps' nanosecond rounding
    segment = np.repeat(np.arange(len(gaps)), counts)
    step = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts) + 1  # 1 … count per segment
    return np.concatenate([times[:1], times[segment] + gaps[segment] * step / counts[segment]])
