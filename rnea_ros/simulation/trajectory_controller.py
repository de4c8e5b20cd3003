"""A joint_trajectory_controller stand-in for rnea_sim, inside its step loop (no ROS).

What ros2_controllers' ``joint_trajectory_controller`` (jazzy) does with an ``effort`` command
interface, per control cycle: sample the active trajectory at the current time (the state to
track) and one period ahead (the command's feed-forward), then

    effort = sampled effort(t + dt) + PID(q_d(t) − q, q̇_d(t) − q̇)

per joint (``joint_trajectory_controller.cpp``, ``update``; ``trajectory.cpp``, ``sample``). A new
trajectory replaces the old from its first sample: it starts at its ``header.stamp`` (zero: when it
arrives), and until its first point the JTC interpolates from the state it started from; after
its last point it holds it. Without a trajectory it holds the position it started at.

Goals and their tolerances (the FollowJointTrajectory action) are the stand-in's
(``jtc_stand_in``, ``goal_tolerances``); ``last`` keeps each cycle's sample for them and for the
controller state. Where it differs from the real JTC: no partial joint goals (every commanded
joint must be in the trajectory), no angle wraparound, no speed scaling; gains per joint in
parameter arrays instead of ``gains.<joint>.p``; the integral term is clamped to ±i_clamp (the
JTC's PID from control_toolbox also offers anti-windup variants).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from rnea_ros.motion.trajectory import JointSpline, Trajectory, linear_efforts


class Sample(NamedTuple):
    """One cycle: the trajectory's time, the state it asked for, the state measured, the command, and
    when it ran."""

    time: float  # time_from_start of the active trajectory [s]
    after_last_point: float  # time past its last point [s] (negative before it)
    desired: tuple[np.ndarray, np.ndarray, np.ndarray]  # q, q̇, q̈
    actual: tuple[np.ndarray, np.ndarray]  # q, q̇
    command: np.ndarray  # the efforts commanded (feed-forward included)
    tag: object  # what came with the active trajectory (its goal)
    now: float  # the cycle's time on the caller's clock [s] (``command``'s ``now``; rnea_sim: simulated time)


KEEP = object()  # a trajectory that keeps the active one's tag (the JTC's topic: the goal stays)


@dataclass(frozen=True)
class Gains:
    p: np.ndarray
    i: np.ndarray
    d: np.ndarray
    i_clamp: np.ndarray


class TrajectoryController:
    """One JTC over ``joints`` (the order of the efforts it returns)."""

    def __init__(self, joints: list[str], gains: Gains) -> None:
        self.joints = list(joints)
        self.gains = gains
        self.integral = np.zeros(len(joints))  # the i term, clamped
        self._pending: tuple[Trajectory, float | None, object] | None = None
        self.tag: object = None  # the active trajectory's
        self._spline: JointSpline | None = None
        self._efforts: tuple[np.ndarray, np.ndarray] | None = None  # (times, efforts)
        self._start = 0.0  # the active trajectory's time 0, in the caller's clock
        self.trajectories = 0  # taken
        self.last: Sample | None = None  # this cycle's (one assignment: read by other threads)
        self.holding = False  # holding a position (not following a trajectory): no tolerances checked

    @property
    def has_trajectory(self) -> bool:
        """A trajectory was taken, or one waits for the next ``command``."""
        return self.trajectories > 0 or self._pending is not None

    def receive(self, trajectory: Trajectory, start: float | None, tag: object = KEEP) -> None:
        """A new trajectory (its joints in any order; ``start``: its time 0, None: when first sampled)
        and its ``tag`` (each Sample of it carries it; KEEP: the active one's, or that of one not yet
        taken). ValueError when it does not name every joint of this controller exactly once.
        Called from one thread; ``command`` from another."""
        names = list(trajectory.joint_names)
        if sorted(names) != sorted(self.joints) or len(set(names)) != len(names):
            raise ValueError(f"the trajectory must name exactly the joints {self.joints}, got {names}")
        pending = self._pending
        if tag is KEEP and pending is not None:
            tag = pending[2]
        self._pending = (trajectory, start, tag)  # taken by the next ``command`` (one assignment: thread-safe)

    def hold(self, q: np.ndarray) -> None:
        """Holds ``q`` (what the JTC does on activation, before any trajectory)."""
        self._spline = JointSpline(np.array([0.0]), np.asarray(q, dtype=float)[None, :])
        self._efforts, self._start = None, 0.0
        self.holding = True

    def command(self, now: float, dt: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """The efforts of this cycle at time ``now`` with the measured ``q``, ``qd``."""
        pending, self._pending = self._pending, None
        if pending is not None:
            self._activate(*pending, now, q, qd)
        if self._spline is None:
            self.hold(q)
        t = now - self._start
        q_d, qd_d, qdd_d = self._spline.sample(np.array([t]))
        feedforward = np.zeros(len(self.joints))
        if self._efforts is not None:
            feedforward = linear_efforts(*self._efforts, np.array([t + dt]))[0]
        error, error_dot = q_d[0] - q, qd_d[0] - qd
        g = self.gains
        self.integral = np.clip(self.integral + g.i * error * dt, -g.i_clamp, g.i_clamp)
        command = feedforward + g.p * error + self.integral + g.d * error_dot
        after = t - self._spline.times[-1]
        desired, actual = (q_d[0], qd_d[0], qdd_d[0]), (np.array(q), np.array(qd))
        self.last = Sample(t, after, desired, actual, command, self.tag, now)
        return command

    def _activate(self, trajectory: Trajectory, start: float | None, tag: object, now: float, q, qd) -> None:
        """The new trajectory, in this controller's joint order, from the state it starts from."""
        self.tag = self.tag if tag is KEEP else tag
        order = [list(trajectory.joint_names).index(name) for name in self.joints]
        self._start = now if start is None else start
        times = trajectory.times
        positions = trajectory.positions[:, order]
        velocities = trajectory.velocities[:, order] if trajectory.velocities is not None else None
        accelerations = trajectory.accelerations[:, order] if trajectory.accelerations is not None else None
        efforts = trajectory.efforts[:, order] if trajectory.efforts is not None else np.zeros_like(positions)
        before = now - self._start
        if before < times[0]:  # from the state it starts from to the first point (efforts from zero)
            times = np.concatenate([[before], times])
            positions = np.vstack([q, positions])
            efforts = np.vstack([np.zeros(len(order)), efforts])
            if velocities is not None:
                velocities = np.vstack([qd, velocities])
            if accelerations is not None:
                accelerations = np.vstack([np.zeros(len(order)), accelerations])
        self._spline = JointSpline(times, positions, velocities, accelerations)
        self._efforts = (times, efforts)
        self.holding = False
        self.trajectories += 1
