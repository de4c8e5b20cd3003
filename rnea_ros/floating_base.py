"""Floating-base pieces of the node: the base state it computes at, and unmeasured contacts.

Contacts: a wrench f_c that the environment applies on link c changes the generalized
forces by −J_cᵀ f_c. With the base rows of τ = ID(q, q̇, q̈, measured wrenches) called
the base residual r (the wrench the base would still need), the contact wrenches of the
links assumed in contact are the minimum-norm f with J_c,baseᵀ f = r; the published
torques are τ − J_cᵀ f, whose base rows are then ~0. Friction cones and unilaterality are
not modelled. J_cᵀ comes from the inverse dynamics itself: J_cᵀ e_i = g(q) − ID(q, 0, 0, e_i)
for each unit wrench e_i, one batch call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rnea_ros.model import RobotModel

BASE_DOFS = 6


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
        n = BASE_DOFS * len(links)
        self._zeros = np.zeros((n, model.nv))
        self._unit_wrenches = {link: np.zeros((n, 6)) for link in links}
        for i in range(n):
            self._unit_wrenches[links[i // 6]][i, i % 6] = 1.0

    def jacobian_transpose(self, q: np.ndarray) -> np.ndarray:
        """J_cᵀ (nv, 6·links): column i maps unit contact wrench i (link frame, about its origin) to τ."""
        n = len(self._zeros)
        tau = self.model.inverse_dynamics(np.tile(q, (n, 1)), self._zeros, self._zeros, self._unit_wrenches)
        return (self.model.gravity_torques(q) - tau).T

    @staticmethod
    def distribute(JT: np.ndarray, base_wrench: np.ndarray) -> np.ndarray:
        """Minimum-norm contact wrenches f with J_c,baseᵀ f = base_wrench."""
        return np.linalg.lstsq(JT[:BASE_DOFS], base_wrench, rcond=None)[0]

    def wrenches(self, f: np.ndarray) -> dict[str, np.ndarray]:
        return {link: f[6 * k : 6 * k + 6] for k, link in enumerate(self.links)}
