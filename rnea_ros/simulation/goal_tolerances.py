"""A FollowJointTrajectory goal's checks in rnea_sim's joint_trajectory_controller stand-in (no ROS).

As ros2_controllers' JTC (jazzy) has them: ``validate_trajectory_msg`` (which goals it accepts),
``tolerances.hpp`` (the default tolerances from its ``constraints.*`` parameters, a goal's own
tolerances over them: > 0 replaces, -1 erases, 0 keeps the default, another negative value is
illegal and the defaults apply; a tolerance of 0 is not checked) and ``update()`` (a path tolerance
checked before the last point, the goal tolerance after it, within ``goal_time_tolerance``; the
error codes and strings it sets). The error is desired − actual, position and velocity (the
stand-in's state has no acceleration, so acceleration tolerances never fail, as on a JTC without an
acceleration state interface).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

# control_msgs/action/FollowJointTrajectory's Result.error_code
SUCCESSFUL = 0
INVALID_GOAL = -1
INVALID_JOINTS = -2
OLD_HEADER_TIMESTAMP = -3
PATH_TOLERANCE_VIOLATED = -4
GOAL_TOLERANCE_VIOLATED = -5

ERASE = -1.0  # a goal's tolerance of -1: not checked, whatever the default


@dataclass(frozen=True)
class StateTolerances:
    """Per joint; 0: not checked."""

    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray


@dataclass(frozen=True)
class SegmentTolerances:
    path: StateTolerances  # before the last point
    goal: StateTolerances  # at and after it
    goal_time: float  # [s] after the last point to be within ``goal``; 0: forever


class Outcome(NamedTuple):
    """How a goal ended: its error code and the JTC's error string for it."""

    error_code: int
    error_string: str


class JointTolerance(NamedTuple):
    """control_msgs/JointTolerance as plain values."""

    name: str
    position: float
    velocity: float
    acceleration: float


def default_tolerances(
    n: int, trajectory: list[float], goal: list[float], stopped_velocity: float, goal_time: float
) -> SegmentTolerances:
    """The JTC's ``get_segment_tolerances`` from its ``constraints`` parameters (``trajectory`` and
    ``goal`` per joint)."""
    zeros = np.zeros(n)
    path = StateTolerances(np.array(trajectory, dtype=float), zeros, zeros)
    at_goal = StateTolerances(np.array(goal, dtype=float), np.full(n, float(stopped_velocity)), zeros)
    return SegmentTolerances(path, at_goal, float(goal_time))


def _resolved(default: float, value: float) -> float:
    """``resolve_tolerance_source``: ValueError for an illegal (negative, not -1) value."""
    if value > 0.0:
        return value
    if abs(value - ERASE) < np.finfo(np.float32).eps:
        return 0.0
    if value < 0.0 or math.isnan(value):
        raise ValueError("illegal tolerance")
    return default


def _with_joint_tolerances(
    defaults: StateTolerances, given: list[JointTolerance], joints: list[str]
) -> StateTolerances:
    position, velocity, acceleration = (a.copy() for a in (defaults.position, defaults.velocity, defaults.acceleration))
    for tolerance in given:
        if tolerance.name not in joints:
            raise ValueError(f"joint '{tolerance.name}' does not exist")
        i = joints.index(tolerance.name)
        position[i] = _resolved(defaults.position[i], tolerance.position)
        velocity[i] = _resolved(defaults.velocity[i], tolerance.velocity)
        acceleration[i] = _resolved(defaults.acceleration[i], tolerance.acceleration)
    return StateTolerances(position, velocity, acceleration)


def goal_tolerances(
    defaults: SegmentTolerances,
    path: list[JointTolerance],
    goal: list[JointTolerance],
    goal_time: float,
    joints: list[str],
) -> tuple[SegmentTolerances, str | None]:
    """The active tolerances of a goal and, when the goal's are illegal (the JTC then logs an error
    and uses its defaults), why."""
    try:
        resolved_time = _resolved(defaults.goal_time, goal_time)
    except ValueError:
        return defaults, f"illegal goal_time_tolerance {goal_time}: using the default tolerances"
    try:
        return replace(
            defaults,
            path=_with_joint_tolerances(defaults.path, path, joints),
            goal=_with_joint_tolerances(defaults.goal, goal, joints),
            goal_time=resolved_time,
        ), None
    except ValueError as error:
        return defaults, f"{error} in the goal's tolerances: using the default tolerances"


def within(tolerances: StateTolerances, error_position: np.ndarray, error_velocity: np.ndarray) -> bool:
    """``check_state_tolerance_per_joint`` for every joint (accelerations: no state, never violated)."""
    for tolerance, error in ((tolerances.position, error_position), (tolerances.velocity, error_velocity)):
        if np.any((tolerance > 0.0) & (np.abs(error) > tolerance)):
            return False
    return True


class GoalMonitor:
    """One goal's tolerances checked at every control cycle while its trajectory runs (the stand-in's
    physics thread); ``outcome`` is set once, when the goal ends (read by the action's thread)."""

    def __init__(self, tolerances: SegmentTolerances) -> None:
        self.tolerances = tolerances
        self.outcome: Outcome | None = None
        self._sampled = False

    def check(self, before_last_point: bool, after_last_point: float, error_q, error_qd) -> Outcome | None:
        """This cycle's verdict (None: running); ``after_last_point``: trajectory time past the last point [s]."""
        first, self._sampled = not self._sampled, True
        tolerances = self.tolerances
        if (before_last_point or first) and not within(tolerances.path, error_q, error_qd):
            return self._end(PATH_TOLERANCE_VIOLATED, "Aborted due to path tolerance violation")
        if before_last_point:
            return None
        if within(tolerances.goal, error_q, error_qd):
            return self._end(SUCCESSFUL, "Goal successfully reached!")
        if tolerances.goal_time != 0.0 and after_last_point > tolerances.goal_time:
            return self._end(
                GOAL_TOLERANCE_VIOLATED,
                f"Aborted due to goal_time_tolerance exceeding by {after_last_point:.6f} seconds",
            )
        return None

    def _end(self, code: int, text: str) -> Outcome:
        self.outcome = Outcome(code, text)
        return self.outcome


def goal_refusal(
    joint_names: list[str],
    times: np.ndarray,
    lengths: dict[str, list[int]],
    last_velocities: list[float],
    controller_joints: list[str],
    allow_nonzero_end_velocity: bool,
    ends_in_the_past: bool,
) -> str | None:
    """Why the JTC's ``validate_trajectory_msg`` refuses this trajectory (None: it accepts it); no
    partial joint goals, positions required (``allow_integration_in_goal_trajectories`` false)."""
    n = len(joint_names)
    if n != len(controller_joints):
        return "Joints on incoming trajectory don't match the controller's joints."
    if len(times) == 0:
        return "Empty trajectory received."
    unknown = [name for name in joint_names if name not in controller_joints]
    if unknown or len(set(joint_names)) != n:
        return f"Incoming joint {(unknown or joint_names)[0]} doesn't match the controller's joints."
    if not allow_nonzero_end_velocity and any(abs(v) > np.finfo(np.float32).eps for v in last_velocities):
        return "Velocity of the last trajectory point is not zero."
    if ends_in_the_past:
        return "Received trajectory with non-zero start time that ends in the past."
    steps = np.diff(times)
    if np.any(steps <= 0.0):
        i = int(np.argmax(steps <= 0.0))
        return f"Time between points {i} and {i + 1} is not strictly increasing, it is {times[i]} and {times[i + 1]}."
    for field, counts in lengths.items():
        for i, count in enumerate(counts):
            if count != n and (field == "positions" or count != 0):
                return f"Mismatch between joint_names size ({n}) and {field} ({count}) at point #{i}."
    return None
