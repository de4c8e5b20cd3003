"""The identified URDF on the robot, in real time: rnea_sim runs the true arm (with damping, friction
loss and armature no URDF holds), its joint_trajectory_controller stand-in tracks a fast multi-sine
with rnea_node's feed-forward, once from the URDF whose every link is 20–30 % and 1–3 cm off, once
from what `rnea_analyze --identify --inertia` made of 60 s of rnea_excite's excitation recorded on
that robot: corrected.urdf and corrections.yaml. The recording is made in its own process (MuJoCo
in-process must not load before DDS, see rnea_ros/simulation/sim_node.py)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import rclpy

from rnea_ros.analysis.cli import main as rnea_analyze
from rnea_ros.demo.closed_loop import planned_trajectory, run_trajectory_loop
from rnea_ros.demo.demo import KD, KP, START
from rnea_ros.demo.trajectories import fast_multisine
from rnea_ros.testing.arm_in_mujoco import ARM, TRUTH
from rnea_ros.testing.reference import ARM_URDF
from rnea_ros.testing.ros_harness import ROS_ENV, init_rclpy

pytestmark = [pytest.mark.ros, pytest.mark.slow]
SECONDS = 4.0


@pytest.fixture(scope="module", autouse=True)
def ros():
    init_rclpy()
    yield
    rclpy.try_shutdown()


def track(tmp_path, name: str, description: str, corrections: str = "") -> np.ndarray:
    trajectory = fast_multisine(np.array(START), moving=7)
    planned = planned_trajectory(list(ARM.joint_names), trajectory, SECONDS, spacing=0.1)
    sim = {
        "robot_description": ARM_URDF,  # the true robot
        "keep_urdf_damping": False,
        "damping": [*TRUTH["damping"].tolist(), 0.0],
        "friction_loss": [*TRUTH["frictionloss"].tolist(), 0.0],
        "armature": [*TRUTH["armature"].tolist(), 0.0],
        "realtime": True,
        "initial_positions": START,
        "duration": SECONDS + 0.5,
        "pid_p": KP,
        "pid_d": KD,
    }
    node = {"robot_description": description, "corrections_file": corrections}
    run = run_trajectory_loop(tmp_path, name, sim, node, planned, ROS_ENV, reference=trajectory)
    error = run.tracking_error(list(ARM.joint_names))
    return np.degrees(np.sqrt((error**2).mean(axis=0)))[:7]


def test_the_corrected_urdf_tracks_three_times_better_in_real_time(tmp_path):
    recorder = [sys.executable, "-m", "rnea_ros.testing.arm_in_mujoco", "1", str(tmp_path)]
    subprocess.run(recorder, check=True, timeout=600)
    out = tmp_path / "identified"
    argv = [str(tmp_path / "excitation.csv"), "--urdf", str(tmp_path / "wrong.urdf"), "--out", str(out), "--no-csv"]
    assert rnea_analyze([*argv, "--identify", "--inertia"]) == 0
    wrong_urdf = (tmp_path / "wrong.urdf").read_text()
    wrong = track(tmp_path, "rt_wrong_urdf", wrong_urdf)
    corrected = track(tmp_path, "rt_corrected", (out / "corrected.urdf").read_text(), str(out / "corrections.yaml"))
    print("real time, RMS tracking error per joint [°]")
    print("  the wrong URDF:                   ", np.round(wrong, 4))
    print("  corrected.urdf + corrections.yaml:", np.round(corrected, 4), "ratio", np.round(wrong / corrected, 1))
    assert np.sqrt(np.mean(corrected**2)) * 3.0 < np.sqrt(np.mean(wrong**2))
