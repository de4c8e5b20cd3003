"""Legged robots of example-robot-data in their standing poses, and joint gains for them."""

from __future__ import annotations

import itertools
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
    sway: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The trot planner's desired base acceleration (``testing/trot.py``'s BaseFeedback): (a, α) in the
    base frame at trajectory time ``t``, ``gains`` (Kp, Kd, Kp_r, Kd_r), ``p`` the base's position in
    the world, ``quaternion`` (x, y, z, w) world ← base, ``v`` and ``w`` its linear and angular
    velocity in the base frame. ``sway``: the orientation's reference (rotation vector, angular
    velocity and acceleration in the world, ``SupportLineSway``); None: level."""
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
    theta, omega_ref, alpha_ref = (np.zeros(3),) * 3 if sway is None else sway
    R_ref = _rotations(theta / max(np.linalg.norm(theta), 1e-300), np.array([np.linalg.norm(theta)]))[0]
    error = rotation_vectors((R @ R_ref.T)[None])[0]  # in the world
    alpha = alpha_ref - kp_rotation * error - kd_rotation * (R @ np.asarray(w, dtype=float) - omega_ref)
    return R.T @ a_world, R.T @ alpha


class SupportLineSway:
    """The base's orientation reference while a trot walks: the rotation about the support line
    that it takes anyway. While a diagonal pair alone stands, no foot force has a moment about the
    line through its two feet's contact points: the moment about it of the base wrench the trajectory
    needs with the base level (``RobotModel.inverse_dynamics`` at the trajectory's joint motion and
    the base's X(t); gravity's, the centre of mass crossing the line as the base moves on, and the
    swing legs' own, swinging forward) is not there, and the base turns about the line by
    α = −M(t) / I_line (I_line the robot's inertia about the line, legs as standing). Levelled at
    both ends of the phase, the base turns one way all along it (nose up: 2.4° walking at 0.1 m/s).
    The reference is that rotation, θ(t) = ∬α plus the linear term that makes it zero at both ends
    of the phase: the base starts the phase already turning and swings to either side of level.
    Between two such phases (all feet down: the base controllable), a cubic Hermite from the one's
    end (θ = 0, its angular velocity) to the next one's start. Standing still, or without a pair
    standing alone: level. Tabulated every ``step`` s up to ``seconds``; vectors in the world (the
    base level facing +x)."""

    def __init__(self, model: RobotModel, trot: GaitTrajectory, radius: float, seconds: float, step: float = 1e-3):
        self.gait = gait = trot.gait
        n = model.nv
        self.t = np.arange(0.0, seconds + gait.period + step / 2, step)  # a period more: the last phase whole
        q, qd, qdd = trot.at_times(self.t)
        _, Xd, Xdd = gait.base_x(self.t)
        feet = trot.feet(self.t)[0] - np.array([0.0, 0.0, radius])  # contact points, base frame
        stance = gait.in_stance(self.t)
        standing = np.r_[np.zeros(6), 1.0, trot.standing]
        zeros = np.zeros(n)
        alpha = np.zeros((len(self.t), 3))
        inertia: dict[tuple[int, ...], float] = {}
        for i in range(len(self.t)):
            pair = tuple(np.flatnonzero(stance[i]))
            if len(pair) != 2 or not Xd[i]:
                continue
            a, b = feet[i, list(pair)]
            u = (b - a) / np.linalg.norm(b - a)
            if pair not in inertia:  # about the line through the standing feet, legs as standing
                turn = np.zeros(n)
                turn[:3], turn[3:6] = -np.cross(u, a), u
                wrench = (
                    model.inverse_dynamics(standing, zeros, turn)[:6]
                    - model.inverse_dynamics(standing, zeros, zeros)[:6]
                )
                inertia[pair] = float(u @ (wrench[3:] - np.cross(a, wrench[:3])))
            v, acc = np.r_[Xd[i], 0.0, 0.0, 0.0, 0.0, 0.0, qd[i]], np.r_[Xdd[i], 0.0, 0.0, 0.0, 0.0, 0.0, qdd[i]]
            wrench = model.inverse_dynamics(np.r_[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, q[i]], v, acc)[:6]
            alpha[i] = -float(u @ (wrench[3:] - np.cross(a, wrench[:3]))) / inertia[pair] * u
        tables = _centred_phases(self.t, alpha, stance.sum(axis=1) == 2)
        kept = self.t <= seconds + step / 2
        self.t, self.theta, self.omega, self.alpha = self.t[kept], *(table[kept] for table in tables)

    def __call__(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(θ, ω, α) at trajectory time ``t`` (the nearest tabulated; level outside the table)."""
        i = round(t / (self.t[1] - self.t[0]))
        if i < 0 or i >= len(self.t):
            return np.zeros(3), np.zeros(3), np.zeros(3)
        return self.theta[i], self.omega[i], self.alpha[i]


def _centred_phases(t: np.ndarray, alpha: np.ndarray, alone: np.ndarray):
    """(θ, ω, α) tables from the angular accelerations ``alpha`` of the phases where ``alone``: in each,
    twice integrated (trapezoids) from rest, less half the rotation it ends with (the phase starts
    turned back by half of it and ends turned on by the other half); between them, and from level at
    rest at ``t[0]`` to the first, a cubic Hermite from the one's end (its θ and ω) to the next one's
    start (θ, at rest). A phase the table cuts is left level (the caller's table reaches past it)."""
    theta, omega, acceleration = np.zeros_like(alpha), np.zeros_like(alpha), alpha.copy()
    phases = [(0, 1)] + [(a, b) for a, b in _runs(alone) if a > 0 and b < len(t)]  # level at rest first
    for a, b in phases[1:]:
        dt = np.diff(t[a:b])[:, None]
        w = np.r_[np.zeros((1, 3)), np.cumsum((alpha[a + 1 : b] + alpha[a : b - 1]) / 2 * dt, axis=0)]
        th = np.r_[np.zeros((1, 3)), np.cumsum((w[1:] + w[:-1]) / 2 * dt, axis=0)]
        theta[a:b], omega[a:b] = th - th[-1] / 2, w
    for (_, end), (start, _) in itertools.pairwise(phases):
        p0, m0, p1, m1 = theta[end - 1], omega[end - 1], theta[start], omega[start]
        gap = t[start] - t[end - 1]
        x = ((t[end:start] - t[end - 1]) / gap)[:, None]
        theta[end:start] = (
            (2 * x**3 - 3 * x * x + 1) * p0 + gap * (x**3 - 2 * x * x + x) * m0
            + (3 * x * x - 2 * x**3) * p1 + gap * (x**3 - x * x) * m1
        )  # fmt: skip
        omega[end:start] = (
            (6 * x * x - 6 * x) * (p0 - p1) / gap + (3 * x * x - 4 * x + 1) * m0 + (3 * x * x - 2 * x) * m1
        )
        acceleration[end:start] = (12 * x - 6) * (p0 - p1) / gap**2 + ((6 * x - 4) * m0 + (6 * x - 2) * m1) / gap
    return theta, omega, acceleration


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) index pairs of the True runs of a 1-D mask."""
    edges = np.flatnonzero(np.diff(np.r_[0, mask.astype(int), 0]))
    return list(zip(edges[::2], edges[1::2], strict=True))


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
