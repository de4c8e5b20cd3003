"""Inverse dynamics: PD in torque space (the node's ``kp``, ``kd``) + τ = ID(q_d, q̇_d, q̈_d), the default."""

from __future__ import annotations

import numpy as np

from rnea_ros.controller.law import CommandLaw, LawInputs


class InverseDynamics(CommandLaw):
    """The feed-forward τ (at the desired state with feedback, else at the measured one)."""

    name = "inverse_dynamics"
    label = "inverse dynamics"
    trajectory_efforts = "inverse_dynamics"

    def source(self, inputs: LawInputs, tau: np.ndarray, held: np.ndarray, stamp: float) -> np.ndarray:
        return tau
