"""The identified URDF on the robot in real time (test and benchmark helpers): the wrong arm's
excitation recorded in its own process (MuJoCo in-process must not load before DDS, see
rnea_ros/simulation/sim_node.py), identified with rnea_analyze, and rnea_sim's JTC stand-in
tracking a fast multi-sine with rnea_node's feed-forward from a given description."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from rnea_ros.testing.arm_in_mujoco import ARM, TRUTH
from rnea_ros.testing.reference import ARM_URDF

SECONDS = 4.0


def identify_wrong_arm(folder: Path, seed: int, soft_friction: bool = False) -> tuple[str, str, Path]:
    """(wrong URDF, corrected URDF, corrections.yaml) of rnea_analyze --identify --inertia on 60 s
    of rnea_excite's excitation recorded on the true arm (``soft_friction``: MuJoCo's default)."""
    from rnea_ros.analysis.cli import main as rnea_analyze

    recorder = [sys.executable, "-m", "rnea_ros.testing.arm_in_mujoco", str(seed), str(folder)]
    recorder += ["soft"] if soft_friction else []
    subprocess.run(recorder, check=True, timeout=600)
    out = folder / "identified"
    argv = [str(folder / "excitation.csv"), "--urdf", str(folder / "wrong.urdf"), "--out", str(out), "--no-csv"]
    if rnea_analyze([*argv, "--identify", "--inertia"]) != 0:
        raise RuntimeError("rnea_analyze --identify --inertia failed")
    return (folder / "wrong.urdf").read_text(), (out / "corrected.urdf").read_text(), out / "corrections.yaml"


def track_in_real_time(
    folder: Path, name: str, description: str, env: dict, corrections: str = "", soft_friction: bool = False
) -> np.ndarray:
    """RMS tracking error per arm joint [°] of the true arm (damping, friction loss and armature in
    the simulator only; ``soft_friction``: MuJoCo's default) with rnea_node's feed-forward computed
    from ``description``."""
    from rnea_ros.demo.closed_loop import planned_trajectory, run_trajectory_loop
    from rnea_ros.demo.demo import KD, KP, START
    from rnea_ros.motion.multisine import fast_multisine

    trajectory = fast_multisine(np.array(START), moving=7)
    planned = planned_trajectory(list(ARM.joint_names), trajectory, SECONDS, spacing=0.1)
    sim = {
        "robot_description": ARM_URDF,  # the true robot
        "keep_urdf_damping": False,
        "damping": [*TRUTH["damping"].tolist(), 0.0],
        "friction_loss": [*TRUTH["frictionloss"].tolist(), 0.0],
        "armature": [*TRUTH["armature"].tolist(), 0.0],
        "soft_friction": soft_friction,
        "realtime": True,
        "initial_positions": START,
        "duration": SECONDS + 0.5,
        "pid_p": KP,
        "pid_d": KD,
    }
    node = {"robot_description": description, "corrections_file": corrections}
    run = run_trajectory_loop(folder, name, sim, node, planned, env, reference=trajectory)
    error = run.tracking_error(list(ARM.joint_names))
    return np.degrees(np.sqrt((error**2).mean(axis=0)))[:7]
