"""rnea_sim's joint_trajectory_controller stand-in (``controller: joint_trajectory``) wired to the
simulated robot: its gains from the parameters, the trajectories it receives (topic or action goal),
its command of each step, and the active goal's tolerances checked at every step as the JTC's
``update()`` does (the action's side: ``jtc_action``)."""

from __future__ import annotations

import numpy as np

from rnea_ros.motion.trajectory import MAX_TRAJECTORY_POINTS, checked_trajectory
from rnea_ros.plumbing.trajectory_cdr import read_joint_trajectory
from rnea_ros.simulation.goal_tolerances import SUCCESSFUL, GoalMonitor, default_tolerances
from rnea_ros.simulation.parameters import SimSettings, per_joint
from rnea_ros.simulation.trajectory_controller import Gains, TrajectoryController

PID_PARAMETERS = ("pid_p", "pid_i", "pid_d", "pid_i_clamp")


class JtcStandIn:
    """The stand-in over the robot's commanded joints (ValueError for gains of the wrong length)."""

    def __init__(self, robot, p: SimSettings, start_wall: float, logger) -> None:
        joints = robot.command_joints
        gains = Gains(*(np.array(per_joint(getattr(p, name), len(joints), name)) for name in PID_PARAMETERS))
        self.controller = TrajectoryController(joints, gains)
        self.rows = [robot.joint_names.index(name) for name in joints]
        self.dt = 1.0 / p.rate
        self.start_wall = start_wall  # stamps are this wall-clock time plus the simulated time
        self.logger = logger
        self.logged = 0  # trajectories whose start was logged
        self.refused = 0
        n = len(joints)
        self.default_tolerances = default_tolerances(
            n,
            per_joint(p.constraints_trajectory, n, "constraints_trajectory"),
            per_joint(p.constraints_goal, n, "constraints_goal"),
            p.constraints_stopped_velocity_tolerance,
            p.constraints_goal_time,
        )
        self._hold_requested = False

    @property
    def joints(self) -> list[str]:
        return self.controller.joints

    def follow_goal(self, trajectory, start: float | None, monitor: GoalMonitor) -> None:
        """An accepted goal's trajectory: its monitor checks the samples of this trajectory (and of
        topic trajectories after it, as in the JTC), never those of the one before."""
        self.controller.receive(trajectory, start, monitor)

    def cancel_goal(self) -> None:
        """The active goal canceled: the robot holds where it is at the next step (no checks while it holds)."""
        self._hold_requested = True

    def on_trajectory(self, data: bytes) -> None:
        """A trajectory: it starts at its header.stamp (zero: on arrival). Read from its bytes: building
        a Python object per point would hold the simulation loop back."""
        try:
            content = read_joint_trajectory(data, MAX_TRAJECTORY_POINTS)
            trajectory = checked_trajectory(content.joint_names, content.time_from_start, content.fields)
            stamp = content.stamp[0] + content.stamp[1] * 1e-9
            self.controller.receive(trajectory, stamp - self.start_wall if stamp > 0.0 else None)
        except ValueError as error:
            self.refused += 1
            self.logger.error(f"trajectory refused: {str(error)[:300]}", throttle_duration_sec=1.0)

    def efforts(self, robot) -> np.ndarray | None:
        """The stand-in's command of this step; None (the brakes hold) until its first trajectory."""
        jtc = self.controller
        if not jtc.has_trajectory:
            return None
        q, qd = robot.positions()[self.rows], robot.velocities()[self.rows]
        if self._hold_requested:
            self._hold_requested = False
            jtc.hold(q)
        efforts = jtc.command(robot.time, self.dt, q, qd)
        self._check_goal(q)
        if jtc.trajectories > self.logged:
            self.logged = jtc.trajectories
            self.logger.info(f"trajectory {self.logged} started at simulated time {robot.time:.4f} s")
        return efforts

    def _check_goal(self, q: np.ndarray) -> None:
        """The active goal's tolerances at this step; a violation holds the position (the JTC's
        ``set_hold_position``), success holds the last point (it does already)."""
        sample = self.controller.last
        goal = sample.tag if sample is not None else None
        if not isinstance(goal, GoalMonitor) or goal.outcome is not None or self.controller.holding:
            return
        desired, actual = sample.desired, sample.actual
        before_last = sample.after_last_point < 0.0
        outcome = goal.check(before_last, sample.after_last_point, desired[0] - actual[0], desired[1] - actual[1])
        if outcome is not None and outcome.error_code != SUCCESSFUL:
            self.controller.hold(q)
            self.logger.warning(outcome.error_string)
