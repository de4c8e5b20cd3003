"""Unmeasured contacts on a floating-base robot: the base residual distributed onto contact links.

A wrench f_c that the environment applies on link c changes the generalized forces by
−J_cᵀ f_c. With the base rows of τ = ID(q, q̇, q̈, measured wrenches) called the base
residual r (the wrench the base would still need), the contact wrenches of the links
assumed in contact are the minimum-norm f with J_c,baseᵀ f = r; the torques τ − J_cᵀ f
then have base rows ~0. Friction cones and unilaterality are not modelled. J_cᵀ comes
from the inverse dynamics itself (``RobotModel.wrench_jacobian_transpose``).
"""

from __future__ import annotations

import numpy as np

from rnea_ros.dynamics.floating_base import BASE_DOFS
from rnea_ros.dynamics.model import RobotModel


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
