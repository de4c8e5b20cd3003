"""Gravity compensation: PD in torque space + what holds the measured state (hand-guiding, holding)."""

from __future__ import annotations

import numpy as np

from rnea_ros.controller.law import CommandLaw, LawInputs


class Gravity(CommandLaw):
    """g(q) − Σ Jᵀw at the measured state, with the measured wrenches and a corrections file's offsets."""

    name = "gravity"
    label = "gravity compensation"
    trajectory_efforts = "gravity"
    holds = True

    def source(self, inputs: LawInputs, tau: np.ndarray, held: np.ndarray, stamp: float) -> np.ndarray:
        return held
