"""The lockstep closed loop in one process, for quick ablations: MuJoCo (rnea_sim's ``SimRobot``)
stepped with the commands rnea_node's core (``RneaCore``: the node's code from a joint_states
reading to effort_commands) computes from each state, as rnea_sim in lockstep waits at every step
for the node's answer to the state before it. The node's parameters and the whole stamped
trajectory are those of ``closed_loop_runner``; no DDS, no rclpy.init. benchmarks/computed_torque.py
checks that its figures equal the runs over DDS.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rnea_ros.controller.core import RneaCore, build_live_model
from rnea_ros.controller.settings import settings_from
from rnea_ros.node import messages
from rnea_ros.simulation.physics import SimRobot
from rnea_ros.testing.closed_loop_runner import whole_trajectory

T0 = 1000.0  # s: the stamp of the first state (the trajectory's time 0)


@dataclass(frozen=True)
class EarlierVelocities:
    """A trajectory whose velocities are its own ``shift`` [s] earlier (positions and accelerations
    unchanged): what a velocity measured as the mean over the last step compares with."""

    trajectory: object
    shift: float

    def at_times(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        q, _, qdd = self.trajectory.at_times(t)
        return q, self.trajectory.at_times(np.asarray(t) - self.shift)[1], qdd

    def at(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        q, qd, qdd = self.at_times(np.array([t]))
        return q[0], qd[0], qdd[0]


def tracking_error(
    robot: SimRobot,
    node_parameters: dict,
    trajectory,
    seconds: float,
    moving: Sequence[str],
    velocity_shift: float = 0.0,
) -> np.ndarray:
    """(steps, moving joints): desired − measured position at every state of ``seconds`` of
    ``trajectory`` (from time 0 at the first state), rnea_node's core with ``node_parameters``
    commanding ``robot`` (already at the trajectory's start); ``velocity_shift``: the node is sent
    the desired velocities that much earlier (``EarlierVelocities``)."""
    settings = settings_from(node_parameters)
    core = RneaCore(settings)
    core.load(build_live_model(node_parameters["robot_description"], settings))
    if settings.corrections_file:
        core.set_corrections(settings.corrections_file)
    dt = robot.model.opt.timestep
    names = robot.joint_names
    model_names = list(core.live.bound.model.joint_names)
    sent = EarlierVelocities(trajectory, velocity_shift) if velocity_shift else trajectory
    desired = whole_trajectory(model_names, sent, T0, dt, seconds + 10 * dt)
    core.live.set_desired(messages.READERS["desired_accelerations"].read(desired), 0.0)
    to_robot = [list(core.live.bound.command_names).index(name) for name in robot.command_joints]
    rows = [names.index(name) for name in moving]
    steps = round(seconds / dt)
    errors = np.empty((steps, len(rows)))
    for k in range(steps):
        t, q, qd = robot.time, robot.positions(), robot.velocities()
        errors[k] = trajectory.at(t)[0][[model_names.index(name) for name in moving]] - q[rows]
        stamp = T0 + t
        outputs = core.joint_states(names, q, qd, True, stamp, lambda stamp=stamp: stamp)
        if outputs is None:
            raise RuntimeError(f"rnea_node's core gave no command at t = {t:.3f} s ({core.waiting_for})")
        robot.step(outputs.commands[to_robot])
    return errors
