"""Legged robots of example-robot-data in their standing poses, and joint gains for them."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from rnea_ros import RobotModel
from rnea_ros.motion.multisine import MultiSine
from rnea_ros.testing.reference import EXAMPLE_ROBOT_DATA, robot_urdf

SOLO_URDF = robot_urdf("solo_description/robots/solo12.urdf")
SOLO_FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
SOLO_FOOT_RADIUS = 0.0175  # its spherical feet (the URDF's collision spheres), centred on the foot links
TALOS_URDF = robot_urdf("talos_data/robots/talos_reduced.urdf")
TALOS_SOLES = ["left_sole_link", "right_sole_link"]
TALOS_SOLE_SIZE = [0.2, 0.13]  # [length, width] of Talos's foot [m], centred on its sole link


def solo_standing_pose(joint_names: Sequence[str]) -> np.ndarray:
    """Solo12's SRDF "standing" pose (hind legs' pitch and knee mirrored, right legs' abduction too)."""
    standing = {"HAA": 0.1, "HFE": 0.8, "KFE": -1.6}
    pose = []
    for name in joint_names:
        leg, joint = name.split("_")
        sign = (-1.0 if leg[0] == "H" and joint != "HAA" else 1.0) * (-1.0 if leg[1] == "R" and joint == "HAA" else 1.0)
        pose.append(sign * standing[joint])
    return np.array(pose)


def talos_half_sitting(joint_names: Sequence[str], hip_roll: float = 0.0) -> np.ndarray:
    """Talos's SRDF "half_sitting" pose; ``hip_roll`` [rad] on both hips, undone at both ankles,
    shifts the pelvis sideways with the soles flat."""
    srdf = (EXAMPLE_ROBOT_DATA / "talos_data/srdf/talos.srdf").read_text()
    state = srdf[srdf.index('name="half_sitting"') :]
    values = dict(re.findall(r'<joint name="([^"]+)" value="([^" ]+)" */>', state[: state.index("</group_state>")]))
    values = {name: float(value) for name, value in values.items()}
    for side in ("left", "right"):
        values[f"leg_{side}_2_joint"] = hip_roll
        values[f"leg_{side}_6_joint"] = -hip_roll
    return np.array([values.get(name, 0.0) for name in joint_names])


def joint_gains(model: RobotModel, pose: np.ndarray, omega: float) -> tuple[np.ndarray, np.ndarray]:
    """kp = ω² M_ii, kd = 2 ω M_ii per joint (critically damped at ω [rad/s] on each joint's own
    inertia, the base free), M the joint-space inertia at ``pose`` (base upright at the origin)."""
    q = np.r_[np.zeros(6), 1.0, pose] if model.floating_base else np.asarray(pose, dtype=float)
    first = 6 if model.floating_base else 0
    zeros = np.zeros(model.nv)
    bias = model.inverse_dynamics(q, zeros, zeros)
    inertia = np.empty(model.nv - first)
    for k in range(len(inertia)):
        unit = zeros.copy()
        unit[first + k] = 1.0
        inertia[k] = (model.inverse_dynamics(q, zeros, unit) - bias)[first + k]
    return omega**2 * inertia, 2.0 * omega * inertia


def solo_crouch(model: RobotModel) -> MultiSine:
    """Solo12 from its standing pose down to 1.2 times it (knees −1.6 → −1.92 rad) and up, every 2 s."""
    stand = solo_standing_pose(model.joint_names)
    return MultiSine(stand, 0.1 * stand[:, None], np.array([0.5]))


def solo_on_its_trajectory_controller(
    model: RobotModel, realtime: bool, seconds: float, omega: float = 40.0
) -> tuple[dict, dict]:
    """(rnea_sim, rnea_node) parameters: Solo12 on flat ground (μ 0.8) under the JTC stand-in, its
    PID critically damped at ``omega`` on each joint's inertia; the node distributing its base onto
    the four spherical feet by the QP, for ``run_trajectory_loop``."""
    stand = solo_standing_pose(model.joint_names)
    kp, kd = joint_gains(model, stand, omega)
    sim = {
        "robot_description": SOLO_URDF, "realtime": realtime, "joints": list(model.joint_names),
        "initial_positions": stand.tolist(), "duration": seconds + 0.3, "floating_base": True,
        "contact_links": SOLO_FEET, "contact_radius": SOLO_FOOT_RADIUS, "friction": 0.8,
        "pid_p": kp.tolist(), "pid_d": kd.tolist(),
    }  # fmt: skip
    node = {
        "robot_description": SOLO_URDF, "floating_base": True, "contact_links": SOLO_FEET,
        "contact_distribution": "qp", "contact_radius": [SOLO_FOOT_RADIUS], "friction_coefficient": 0.8,
    }  # fmt: skip
    return sim, node
