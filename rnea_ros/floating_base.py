"""Floating-base pieces of the node: the base state it computes at, and unmeasured contacts.

Contacts: a wrench f_c that the environment applies on link c changes the generalized
forces by −J_cᵀ f_c. With the base rows of τ = ID(q, q̇, q̈, measured wrenches) called
the base residual r (the wrench the base would still need), the contact wrenches of the
links assumed in contact are the minimum-norm f with J_c,baseᵀ f = r; the published
torques are τ − J_cᵀ f, whose base rows are then ~0. Friction cones and unilaterality are
not modelled. J_cᵀ comes from the inverse dynamics itself
(``RobotModel.wrench_jacobian_transpose``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rnea_ros import rnea as kernel
from rnea_ros.messages import matrix_quaternion
from rnea_ros.model import RobotModel
from rnea_ros.spatial import axis_angle

BASE_DOFS = 6


@dataclass(frozen=True)
class ImuReading:
    """An IMU's orientation in the world and angular velocity in its own frame, on link ``link``."""

    R_world_imu: np.ndarray
    omega_imu: np.ndarray
    link: str
    received: float  # time.monotonic()


@dataclass(frozen=True)
class BaseState:
    """q_base = [x, y, z, qx, qy, qz, qw] (world), v_base = [v, ω] (base frame), from one source."""

    q: np.ndarray
    v: np.ndarray
    source: str  # "base_odometry" or "imu"
    received: float  # time.monotonic()


class ContactLinks:
    """The links assumed in contact, and the distribution of the base residual onto them."""

    def __init__(self, model: RobotModel, links: list[str]) -> None:
        unknown = [link for link in links if link not in model.link_names]
        if unknown:
            raise ValueError(f"contact_links names links the robot model lacks: {unknown}")
        self.model, self.links = model, list(links)

    def jacobian_transpose(self, q: np.ndarray) -> np.ndarray:
        """J_cᵀ (nv, 6·links): column i maps unit contact wrench i (link frame, about its origin) to τ."""
        return self.model.wrench_jacobian_transpose(q, self.links)

    @staticmethod
    def distribute(JT: np.ndarray, base_wrench: np.ndarray) -> np.ndarray:
        """Minimum-norm contact wrenches f with J_c,baseᵀ f = base_wrench: f = Aᵀ (A Aᵀ)⁻¹ r.

        A = J_c,baseᵀ has full row rank as soon as one link is in contact (a full wrench on a
        link reaches every base direction), so A Aᵀ is invertible."""
        A = JT[:BASE_DOFS]
        try:
            return A.T @ np.linalg.solve(A @ A.T, base_wrench)
        except np.linalg.LinAlgError:
            return np.linalg.lstsq(A, base_wrench, rcond=None)[0]

    def wrenches(self, f: np.ndarray) -> dict[str, np.ndarray]:
        return {link: f[6 * k : 6 * k + 6] for k, link in enumerate(self.links)}


def link_in_base(model: RobotModel, link: str, q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R_base_link, ω_rel): the rotation of ``link`` in the base frame and its angular velocity
    relative to the base, in the base frame, at the full state (q, qd) (base entries unused).
    Walks the tree from the link's body up to the base, then composes the joints back down."""
    frame = model.tree.link_frames[link]
    joints, bodies = model.tree.joints, model.tree.bodies
    chain, i = [], frame.body
    while i > 0:
        chain.append(i)
        i = joints[i, kernel.PARENT]
    if i != 0:
        raise ValueError(f"link '{link}' is not carried by the floating base")
    R, omega = np.eye(3), np.zeros(3)
    for i in reversed(chain):
        R = R @ bodies[i, kernel.TREE_R : kernel.TREE_R + 9].reshape(3, 3)
        if joints[i, kernel.JTYPE] == kernel.REVOLUTE:
            axis = bodies[i, kernel.AXIS : kernel.AXIS + 3]
            mult, offset = bodies[i, kernel.MULT], bodies[i, kernel.OFFSET]
            angle = mult * q[joints[i, kernel.Q_INDEX]] + offset
            R = R @ np.array(axis_angle(axis, angle)).reshape(3, 3)  # the kernel's own jcalc rotation
            omega = omega + R @ axis * (mult * qd[joints[i, kernel.V_INDEX]])
    return R @ frame.R, omega


def base_state_from_imu(
    reading: ImuReading, R_base_imu: np.ndarray, omega_rel: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(q_base, v_base) from an IMU reading: R_world_base = R_world_imu R_base_imuᵀ and
    ω_base = R_base_imu ω_imu − ω_rel; position and linear velocity zero (an IMU measures neither)."""
    R_world_base = reading.R_world_imu @ R_base_imu.T
    omega_base = R_base_imu @ reading.omega_imu - omega_rel
    return np.concatenate([np.zeros(3), matrix_quaternion(R_world_base)]), np.concatenate([np.zeros(3), omega_base])
