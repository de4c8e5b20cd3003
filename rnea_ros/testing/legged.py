"""Legged robots of example-robot-data in their standing poses, and joint gains for them."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from rnea_ros import RobotModel
from rnea_ros.dynamics import rnea as kernel
from rnea_ros.motion.gait import Gait, GaitTrajectory
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


def feet_poses(model: RobotModel, feet: Sequence[str]) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Forward kinematics of the ``feet`` links in the floating base's frame, for many joint states
    at once: joint positions (N, joints) in model order → (rotations (N, feet, 3, 3), origins (N,
    feet, 3) [m]). The tree's own joint frames, axes and mimic couplings (``RobotModel.link_rotation_in_base``'s
    chain, with positions); checked against Pinocchio in test/simulation/test_trot_gait.py."""
    joints, bodies, first = model.joints, model.bodies, 7 if model.floating_base else 0
    chains = []
    for foot in feet:
        frame = model.tree.link_frames[foot]
        chain, i = [], frame.body
        while i >= 0 and joints[i, kernel.JTYPE] != kernel.FREE_FLYER:
            if joints[i, kernel.JTYPE] != kernel.REVOLUTE:
                raise ValueError(f"{foot}: only revolute joints between the base and the feet")
            chain.append(i)
            i = joints[i, kernel.PARENT]
        chains.append((list(reversed(chain)), frame.R, frame.p))

    def poses(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        q = np.atleast_2d(q)
        rotations, origins = np.empty((len(q), len(chains), 3, 3)), np.empty((len(q), len(chains), 3))
        for k, (chain, link_R, link_p) in enumerate(chains):
            R, p = None, np.zeros((len(q), 3))
            for i in chain:
                R_T = bodies[i, kernel.TREE_R : kernel.TREE_R + 9].reshape(3, 3)
                p_T = bodies[i, kernel.TREE_P : kernel.TREE_P + 3]
                p = p + (p_T if R is None else R @ p_T)
                R = R_T if R is None else R @ R_T
                angle = bodies[i, kernel.MULT] * q[:, joints[i, kernel.Q_INDEX] - first] + bodies[i, kernel.OFFSET]
                R = np.matmul(R, _rotations(bodies[i, kernel.AXIS : kernel.AXIS + 3], angle))
            origins[:, k] = p + R @ link_p
            rotations[:, k] = R @ link_R
        return rotations, origins

    return poses


def feet_kinematics(
    model: RobotModel, feet: Sequence[str], radius: float = 0.0, standing: np.ndarray | None = None
) -> Callable[[np.ndarray], np.ndarray]:
    """Joint positions (N, joints) → (N, feet, 3): the feet links' origins in the base frame; with a
    foot ``radius`` [m], the point that stays put while the spherical foot rolls on level ground:
    its centre c + r (−φ_y, φ_x, 0), φ the rotation vector of the foot from its orientation at
    ``standing`` (the base level; a foot rolling without sliding turns by ω and moves its centre by
    ω × r ẑ). A trajectory that holds this point still makes a stance foot roll, not slide."""
    poses = feet_poses(model, feet)
    if not radius:
        return lambda q: poses(q)[1]
    reference = poses(np.asarray(standing, dtype=float)[None])[0][0]  # (feet, 3, 3)

    def rolling_points(q: np.ndarray) -> np.ndarray:
        R, c = poses(q)
        phi = rotation_vectors(R @ np.swapaxes(reference, 1, 2))
        return c + radius * np.stack([-phi[..., 1], phi[..., 0], np.zeros_like(phi[..., 0])], axis=-1)

    return rolling_points


def rotation_vectors(R: np.ndarray) -> np.ndarray:
    """(..., 3): the rotation vectors (axis · angle, angle < π) of rotations (..., 3, 3)."""
    skew = np.stack([R[..., 2, 1] - R[..., 1, 2], R[..., 0, 2] - R[..., 2, 0], R[..., 1, 0] - R[..., 0, 1]], axis=-1)
    angle = np.arccos(np.clip((np.trace(R, axis1=-2, axis2=-1) - 1) / 2, -1.0, 1.0))
    small = angle < 1e-6
    scale = np.where(small, 0.5 + angle**2 / 12, angle / (2 * np.sin(np.where(small, 1.0, angle))))
    return scale[..., None] * skew


def base_acceleration(
    gait: Gait,
    height: float,
    gains: tuple[float, float, float, float],
    t: float,
    p: np.ndarray,
    quaternion: np.ndarray,
    v: np.ndarray,
    w: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The trot planner's desired base acceleration (``testing/trot.py``'s BaseFeedback): (a, α) in the
    base frame at trajectory time ``t``, ``gains`` (Kp, Kd, Kp_r, Kd_r), ``p`` the base's position in
    the world, ``quaternion`` (x, y, z, w) world ← base, ``v`` and ``w`` its linear and angular
    velocity in the base frame."""
    kp, kd, kp_rotation, kd_rotation = gains
    x, xd, xdd = (float(k[0]) for k in gait.base_x(np.array([max(t, 0.0)])))
    x_, y, z, w_ = np.asarray(quaternion, dtype=float)
    R = np.array([
        [1 - 2 * (y * y + z * z), 2 * (x_ * y - z * w_), 2 * (x_ * z + y * w_)],
        [2 * (x_ * y + z * w_), 1 - 2 * (x_ * x_ + z * z), 2 * (y * z - x_ * w_)],
        [2 * (x_ * z - y * w_), 2 * (y * z + x_ * w_), 1 - 2 * (x_ * x_ + y * y)],
    ])  # fmt: skip
    a_world = (
        np.array([xdd, 0.0, 0.0]) + kp * (np.array([x, 0.0, height]) - p) + kd * (np.array([xd, 0.0, 0.0]) - R @ v)
    )
    # log(R)'s axis is R's own: the same in both frames
    alpha = -kp_rotation * rotation_vectors(R[None])[0] - kd_rotation * np.asarray(w, dtype=float)
    return R.T @ a_world, alpha


def _rotations(axis: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """(N, 3, 3): rotations by ``angles`` about the unit ``axis`` (Rodrigues)."""
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    s, c = np.sin(angles), 1.0 - np.cos(angles)
    return np.eye(3) + np.multiply.outer(s, K) + np.multiply.outer(c, K @ K)


TROT_PHASES = (0.0, 0.5, 0.5, 0.0)  # feet front left, front right, hind left, hind right: diagonal pairs
SOLO_TROT_PHASES = TROT_PHASES  # SOLO_FEET's order: FL and HR together, FR and HL half a period later
GO2_URDF = robot_urdf("go2_description/urdf/go2.urdf")
GO2_FEET = ["FL_foot", "FR_foot", "RL_foot", "RR_foot"]
GO2_FOOT_RADIUS = 0.022  # Unitree's Go2 description: a 22 mm sphere on each foot link's origin


def go2_standing_pose(joint_names: Sequence[str]) -> np.ndarray:
    """Go2's SRDF "standing" pose (right legs' abduction mirrored)."""
    standing = {"hip": 0.068, "thigh": 0.785, "calf": -1.44}
    return np.array([(-1.0 if name[1] == "R" and "hip" in name else 1.0) * standing[name.split("_")[1]]
                     for name in joint_names])  # fmt: skip


def quadruped_trot(
    model: RobotModel,
    feet: Sequence[str],
    legs: Sequence[Sequence[str]],
    stand: np.ndarray,
    radius: float,
    speed: float = 0.0,
    walk_from: float = 3.0,
    ramp: float = 2.0,
    roll: bool = True,
) -> GaitTrajectory:
    """A quadruped trotting about its standing pose ``stand``: diagonal pairs (TROT_PHASES for ``feet``),
    period 0.5 s, duty 0.6, feet lifted 5 cm; in place, or from ``walk_from`` s on walking forward at
    ``speed`` [m/s], reached over ``ramp`` s. ``legs``: each foot's three joints. ``roll``: the stance
    feet roll on their spheres of ``radius`` (``feet_kinematics``); else their centres stay put,
    which makes a foot whose shank turns slide by r·Δθ."""
    gait = Gait(0.5, 0.6, TROT_PHASES, 0.05, speed, walk_from, ramp)
    indices = [[model.joint_names.index(joint) for joint in leg] for leg in legs]
    kinematics = feet_kinematics(model, feet, radius, stand) if roll else feet_kinematics(model, feet)
    return GaitTrajectory(gait, kinematics, stand, indices)


def centred_stance(model: RobotModel, feet: Sequence[str], legs: Sequence[Sequence[str]], stand: np.ndarray):
    """``stand`` with the feet moved together, horizontally, until their centre is under the robot's
    centre of mass (base level): a diagonal pair's support line then passes under it, as a trot
    needs. The centre of mass from the base rows of g(q) (the wrench that holds the robot up)."""
    kinematics = feet_kinematics(model, feet)
    indices = [[model.joint_names.index(joint) for joint in leg] for leg in legs]
    spots = kinematics(stand[None])[0]
    placed = stand
    for _ in range(8):  # the legs move the centre of mass a little: to a fixed point
        wrench = model.gravity_torques(np.r_[np.zeros(6), 1.0, placed])[:6]
        centre = np.array([-wrench[4], wrench[3]]) / wrench[2]
        spots[:, :2] += centre - spots[:, :2].mean(axis=0)
        placing = GaitTrajectory(Gait(1.0, 1.0, (0.0,) * len(feet), 0.0), kinematics, stand, indices)
        placed = placing.solve(spots[None])[0]
    return placed


def solo_trot(model: RobotModel, speed: float = 0.0, walk_from: float = 3.0, ramp: float = 2.0, roll: bool = True):
    """Solo12's trot (``quadruped_trot``)."""
    legs = [[f"{foot[:2]}_{joint}" for joint in ("HAA", "HFE", "KFE")] for foot in SOLO_FEET]
    stand = solo_standing_pose(model.joint_names)
    return quadruped_trot(model, SOLO_FEET, legs, stand, SOLO_FOOT_RADIUS, speed, walk_from, ramp, roll)


def go2_trot(model: RobotModel, speed: float = 0.0, walk_from: float = 3.0, ramp: float = 2.0, roll: bool = True):
    """Go2's trot (``quadruped_trot``) about its standing pose with the feet centred under its centre
    of mass (``centred_stance``: 1.9 cm forward; its hind feet are further from the base's origin)."""
    legs = [[f"{foot[:2]}_{joint}_joint" for joint in ("hip", "thigh", "calf")] for foot in GO2_FEET]
    stand = centred_stance(model, GO2_FEET, legs, go2_standing_pose(model.joint_names))
    return quadruped_trot(model, GO2_FEET, legs, stand, GO2_FOOT_RADIUS, speed, walk_from, ramp, roll)
