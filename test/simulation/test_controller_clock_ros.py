"""The wall-clock stand-in over DDS: a starved controller's overruns and what they cost (see
test_controller_clock.py for the controller alone)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import rclpy

from rnea_ros import RobotModel
from rnea_ros.demo.closed_loop import planned_trajectory, run_trajectory_loop
from rnea_ros.demo.demo import KD, KP, START
from rnea_ros.motion.multisine import fast_multisine
from rnea_ros.testing.reference import ARM_URDF
from rnea_ros.testing.ros_harness import ROS_ENV, init_rclpy

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ARM = RobotModel.from_urdf(ARM_URDF)
SECONDS = 2.0
SUMMARY = re.compile(r"controller on the wall clock: (\d+) updates, (\d+) overruns \((\d+) missed cycles\)")


@pytest.fixture(scope="module")
def ros():
    init_rclpy()
    yield
    rclpy.try_shutdown()


def track(tmp_path, name: str, **clock) -> tuple[np.ndarray, str]:
    """RMS tracking error per arm joint [°] of the stand-in (PID alone) and the simulator's log."""
    trajectory = fast_multisine(np.array(START), moving=7)
    planned = planned_trajectory(list(ARM.joint_names), trajectory, SECONDS, spacing=0.1)
    sim = {
        "robot_description": ARM_URDF,
        "realtime": True,
        "initial_positions": START,
        "duration": SECONDS + 0.3,
        "pid_p": KP,
        "pid_d": KD,
        **clock,
    }
    run = run_trajectory_loop(tmp_path, name, sim, None, planned, ROS_ENV, reference=trajectory)
    error = run.tracking_error(list(ARM.joint_names))
    return np.degrees(np.sqrt((error**2).mean(axis=0)))[:7], run.sim_log


@pytest.mark.ros
@pytest.mark.slow
def test_a_starved_controller_on_the_wall_clock_shows_its_overruns_and_their_cost(tmp_path, ros):
    in_step, step_log = track(tmp_path, "clock_step")
    on_wall, wall_log = track(tmp_path, "clock_wall", controller_clock="wall")
    starved, starved_log = track(tmp_path, "clock_starved", controller_clock="wall", controller_delay=0.004)
    print("RMS tracking error per joint [°], PID alone, 1 kHz")
    print("  inside the step:             ", np.round(in_step, 4))
    print("  on the wall clock:           ", np.round(on_wall, 4), SUMMARY.search(wall_log).group(0))
    print("  starved (4 ms per update):   ", np.round(starved, 4), SUMMARY.search(starved_log).group(0))
    assert SUMMARY.search(step_log) is None  # inside the step: nothing to overrun
    updates, overruns, missed = (int(x) for x in SUMMARY.search(starved_log).groups())
    assert overruns >= 0.9 * updates and missed >= 4 * overruns, starved_log[-1500:]
    assert "missed its desired rate of 1000 Hz" in starved_log
    # its last command held 4-5 steps: the fast joints' PID turns unstable (measured 15-30x on joints 1 and 3)
    assert np.all(starved > 0.9 * in_step) and np.any(starved > 5 * in_step), (starved, in_step)
