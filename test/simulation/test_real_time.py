"""Real time, the way ros2_control runs it: rnea_sim's joint_trajectory_controller stand-in keeps the
feedback inside its own 1 kHz step loop, and rnea_node hands it the feed-forward with the trajectory,
computed once, ahead (joint_trajectory → feedforward_trajectory). The example arm carries a 2 kg
payload that the node knows from a corrections file. Wall-clock paced; nothing crosses DDS in the
loop, so the figures do not depend on the machine's load, and stopping the node in the middle of
the trajectory changes nothing."""

from __future__ import annotations

import numpy as np
import pytest
import rclpy

from rnea_ros import RobotModel
from rnea_ros.demo.closed_loop import planned_trajectory, run_trajectory_loop
from rnea_ros.demo.demo import KD, KP, PAYLOAD, START, payload_corrections  # the demo's arm, gains and load
from rnea_ros.motion.multisine import fast_multisine
from rnea_ros.testing.reference import ARM_URDF
from rnea_ros.testing.ros_harness import ROS_ENV, init_rclpy

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ARM = RobotModel.from_urdf(ARM_URDF)
SECONDS = 4.0


@pytest.fixture(scope="module", autouse=True)
def ros():
    init_rclpy()
    yield
    rclpy.try_shutdown()


def rms_degrees(run) -> np.ndarray:
    error = run.tracking_error(list(ARM.joint_names))  # from the trajectory's start to its last point
    return np.degrees(np.sqrt((error**2).mean(axis=0)))[:7]


def track(tmp_path, name: str, feedforward: bool, pause_node=None):
    trajectory = fast_multisine(np.array(START), moving=7)
    planned = planned_trajectory(list(ARM.joint_names), trajectory, SECONDS, spacing=0.1)  # a planner's points
    sim = {
        "robot_description": ARM_URDF,
        "realtime": True,
        "initial_positions": START,
        "duration": SECONDS + 0.5,
        "pid_p": KP,
        "pid_d": KD,
        **PAYLOAD,
    }
    node = {"robot_description": ARM_URDF, "corrections_file": str(payload_corrections(tmp_path))}
    run = run_trajectory_loop(
        tmp_path, name, sim, node if feedforward else None, planned, ROS_ENV, pause_node=pause_node,
        reference=trajectory,
    )  # fmt: skip
    return rms_degrees(run), run


def test_the_trajectorys_feedforward_tracks_the_payload_in_real_time_and_a_stopped_node_changes_nothing(tmp_path):
    pid_alone, _ = track(tmp_path, "rt_pid", feedforward=False)
    with_feedforward, run = track(tmp_path, "rt_ff", feedforward=True)
    paused, _ = track(tmp_path, "rt_paused", feedforward=True, pause_node=(1.0, 0.2))
    print("real time, 2 kg payload; RMS tracking error per joint [°]")
    print("  PID alone (JTC stand-in):        ", np.round(pid_alone, 4))
    print("  PID + the node's feed-forward:   ", np.round(with_feedforward, 4))
    print("  the same, node SIGSTOP for 0.2 s:", np.round(paused, 4))
    assert np.all(with_feedforward < 0.05), run.sim_log[-1500:]
    assert np.all(pid_alone > 10 * with_feedforward)
    assert np.all(np.abs(paused - with_feedforward) <= 0.1 * with_feedforward + 1e-4)
