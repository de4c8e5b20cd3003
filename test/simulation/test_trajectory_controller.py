"""The joint_trajectory_controller stand-in, without ROS: its command law, and the example arm in
MuJoCo tracking a planner's sparse trajectory with the feed-forward rnea_node computes for it
(``with_efforts``) against the same PID alone: the feedback inside the step loop, as ros2_control
runs it, the feed-forward computed for the whole trajectory ahead of time."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.controller.core import build_live_model
from rnea_ros.controller.settings import Settings
from rnea_ros.controller.trajectory_feedforward import with_efforts
from rnea_ros.motion.multisine import fast_multisine
from rnea_ros.motion.trajectory import Trajectory
from rnea_ros.simulation.trajectory_controller import Gains, TrajectoryController
from rnea_ros.testing.reference import ARM_URDF

START = [0.0, 1.0, 0.0, -1.5, 0.0, 1.5, 0.0, 0.02]
KP = np.array([600.0, 900.0, 250.0, 150.0, 12.0, 15.0, 1.0, 40.0])
KD = np.array([60.0, 90.0, 25.0, 15.0, 1.2, 1.5, 0.1, 4.0])


def gains(p=KP, d=KD) -> Gains:
    return Gains(np.asarray(p, float), np.zeros(len(p)), np.asarray(d, float), np.zeros(len(p)))


def test_the_command_is_the_next_cycles_effort_plus_the_pid_of_this_ones_error():
    controller = TrajectoryController(["a", "b"], Gains(np.array([10.0, 20.0]), np.array([1.0, 0.0]),
                                                        np.array([2.0, 3.0]), np.array([0.5, 0.5])))  # fmt: skip
    q0 = np.array([0.1, -0.2])
    held = controller.command(0.0, 0.001, q0, np.zeros(2))  # no trajectory: holds where it started
    np.testing.assert_allclose(held, 0.0)
    np.testing.assert_allclose(controller.command(0.001, 0.001, q0 + 0.01, np.zeros(2)), [-0.1 - 1e-5, -0.2])
    trajectory = Trajectory(["b", "a"], np.array([0.0, 1.0]), np.array([[0.0, 0.0], [1.0, 2.0]]),
                            efforts=np.array([[0.0, 0.0], [10.0, 20.0]]))  # fmt: skip
    controller.integral[:] = 0.0
    controller.receive(trajectory, start=5.0)
    q, qd = np.array([0.5, 0.2]), np.array([0.1, 0.0])
    u = controller.command(5.5, 0.01, q, qd)
    # linear positions (no velocities given): a at 1.0, b at 0.5; velocity 2 and 1; efforts at t + dt
    q_d, qd_d, ff = np.array([1.0, 0.5]), np.array([2.0, 1.0]), np.array([20.0 * 0.51, 10.0 * 0.51])
    error = q_d - q
    np.testing.assert_allclose(u, ff + [10.0, 20.0] * error + [0.005, 0.0] + [2.0, 3.0] * (qd_d - qd))
    with pytest.raises(ValueError, match="exactly the joints"):
        controller.receive(Trajectory(["a"], np.array([0.0]), np.zeros((1, 1))), None)


def track(feedforward: bool, seconds: float = 4.0) -> np.ndarray:
    """RMS tracking error per joint [°] of the arm following a planner's points 0.1 s apart."""
    from rnea_ros.simulation.physics import SimOptions, SimRobot

    live = build_live_model(ARM_URDF, Settings(urdf_joint_dynamics=True))  # as the simulator applies them
    names = list(live.bound.model.joint_names)
    multisine = fast_multisine(np.array(START), moving=7)
    times = np.arange(0.0, seconds + 1e-9, 0.1)
    q, qd, qdd = multisine.at_times(times)
    planned = Trajectory(names, times, q, qd, qdd)
    sent = with_efforts(live, planned, 0.01) if feedforward else None
    robot = SimRobot(ARM_URDF, SimOptions(), names)  # the URDF's joint damping and friction kept
    robot.set_positions(dict(zip(names, START, strict=True)))
    controller = TrajectoryController(names, gains())
    if sent is not None:
        planned = Trajectory(names, sent.times, sent.positions, sent.velocities, sent.accelerations, sent.efforts)
    controller.receive(planned, start=0.0)
    rows = [robot.joint_names.index(name) for name in names]  # its joints include the mimic
    dt, errors = 0.001, []
    for k in range(int(seconds / dt)):
        position, velocity = robot.positions()[rows], robot.velocities()[rows]
        robot.step(controller.command(k * dt, dt, position, velocity))
        errors.append(multisine.at((k + 1) * dt)[0] - robot.positions()[rows])
    return np.degrees(np.sqrt((np.array(errors) ** 2).mean(axis=0)))[:7]


def test_with_the_trajectorys_feedforward_the_arm_tracks_far_better_than_with_the_pid_alone():
    pid_alone, with_feedforward = track(False), track(True)
    print(
        "PID alone [°]:", np.round(pid_alone, 4), "\nPID + the trajectory's efforts [°]:", np.round(with_feedforward, 4)
    )
    assert np.all(with_feedforward < 0.05)
    assert np.all(pid_alone > 10 * with_feedforward)
