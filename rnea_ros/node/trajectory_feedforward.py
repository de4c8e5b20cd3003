"""A planner's trajectory with every point's effort filled: the feed-forward handed to ros2_control's
joint_trajectory_controller with the trajectory (plain Python, no rclpy).

The JTC with an ``effort`` command interface adds each sampled point's ``effort`` to its PID
(ros2_controllers PR #1200); it interpolates efforts linearly between points. So the trajectory is
first resampled on the JTC's own spline (``dynamics.trajectory``: linear, cubic or quintic, as its
points allow) every ``spacing`` seconds, the original points kept; then one batch call gives the
corrected model's torque at every point's desired position, velocity and acceleration: the same
numbers ``feedforward_efforts`` gives at that state, the URDF's joint damping and friction and the
loaded corrections (friction, armature, a payload) included. External wrenches are not: a
measured force/torque wrench is not a planned quantity; a known payload belongs in the corrections.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rnea_ros.node.state import InvalidMessageError, LiveModel
from rnea_ros.trajectory import MAX_TRAJECTORY_POINTS, JointSpline, Trajectory, resampling_times


@dataclass(frozen=True)
class FeedforwardTrajectory:
    joint_names: list[str]
    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray
    efforts: np.ndarray


def with_efforts(
    live: LiveModel, trajectory: Trajectory, spacing: float, source: str = "inverse_dynamics"
) -> FeedforwardTrajectory:
    """``trajectory`` resampled every ``spacing`` s (0: its own points only) with each point's
    feed-forward effort: the inverse dynamics, the gravity torques at its positions (``source``
    gravity: the payload included, and a corrections file's offsets) or zero (none);
    InvalidMessageError(reason) for what cannot be used whole."""
    if live.floating:
        raise InvalidMessageError("floating_base", "trajectories are for fixed-base robots (no base trajectory)")
    names = list(trajectory.joint_names)
    if len(set(names)) != len(names):
        raise InvalidMessageError("duplicate_names", "the trajectory names a joint twice")
    unknown = [name for name in names if name not in live.matcher.index]
    if unknown:
        raise InvalidMessageError("unknown_joints", f"joints the model does not have: {unknown[:10]}")
    missing = [name for name in live.model.joint_names if name not in names]
    if missing:
        raise InvalidMessageError(
            "missing_joints", f"the model's joints {missing[:10]} are not in the trajectory: their motion is unknown"
        )
    try:
        spline = JointSpline(trajectory.times, trajectory.positions, trajectory.velocities, trajectory.accelerations)
    except ValueError as error:
        raise InvalidMessageError("bad_trajectory", str(error)) from error
    times = (
        resampling_times(trajectory.times, spacing) if spacing > 0.0 and len(trajectory.times) > 1 else trajectory.times
    )
    if len(times) > MAX_TRAJECTORY_POINTS:
        raise InvalidMessageError(
            "too_many_points", f"{len(times)} points after resampling, at most {MAX_TRAJECTORY_POINTS}"
        )
    q, qd, qdd = spline.sample(times)
    rows = [live.matcher.index[name] for name in names]  # trajectory column → model joint
    order = np.argsort(rows)  # model order ← trajectory columns
    if source == "inverse_dynamics":
        efforts_model = live.corrected.inverse_dynamics(q[:, order], qd[:, order], qdd[:, order])
    elif source == "gravity":
        efforts_model = live.model.gravity_torques(q[:, order]) + live.corrected.offset
    else:
        efforts_model = np.zeros_like(q)
    efforts = np.empty_like(efforts_model)
    efforts[:, order] = efforts_model
    if not np.isfinite(efforts).all():
        raise InvalidMessageError("compute_error", "the trajectory's efforts are not finite")
    return FeedforwardTrajectory(names, times, q, qd, qdd, efforts)
