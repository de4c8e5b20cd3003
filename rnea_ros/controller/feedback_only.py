"""No model: the torque-space PD alone (for comparisons)."""

from __future__ import annotations

import numpy as np

from rnea_ros.controller.law import CommandLaw, LawInputs


class FeedbackOnly(CommandLaw):
    """Zero: effort_commands are the feedback alone."""

    name = "none"
    label = "feedback only"
    trajectory_efforts = "none"

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.zeros = np.zeros(self.n)

    def source(self, inputs: LawInputs, tau: np.ndarray, held: np.ndarray, stamp: float) -> np.ndarray:
        return self.zeros
