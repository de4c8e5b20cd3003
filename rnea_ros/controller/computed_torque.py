"""Computed torque (Drake's InverseDynamicsController): τ = ID(q, q̇, q̈_d + Kp e + Kd ė [+ Ki ∫e]).

Gains in acceleration units, per joint: ``ct_kp`` [1/s²], ``ct_kd`` [1/s] (default 2√kp: critically
damped), ``ct_ki`` [1/s³] with the integral term held within ±``ct_i_clamp`` [rad/s²] (anti-windup:
the integral itself stops there). The model's inverse dynamics at the measured state, with the
measured wrenches, the payload of a corrections file in the model and the joint terms (friction,
armature, offset) at the commanded acceleration, as the other laws add them. With a perfect model
every joint's error obeys ë + Kd ė + Kp e = 0, in every pose and for any payload: the same natural
frequency (√Kp) and damping stretched and folded. Fixed base only.

Sampled at the joint_states' period h (the last interval between two stamps, up to
MAX_INTEGRATION_STEP; 0 before the second state), the command held until the next state:

- the measured velocity is the mean over the last period (a simulator's semi-implicit Euler step
  reports the velocity its last position step used; a finite difference of positions is the same),
  the velocity at t − h/2, so ė compares it with the desired velocity then: q̇_d(t) − (h/2) q̈_d(t);
- the joint terms act over the period the command is held, at that period's mean velocity
  q̇ + h q̈ (q̈ the commanded acceleration; MuJoCo integrates joint damping so, implicitly).

Without the two (both laws' floor on the example arm, docs/figures/computed_torque.md) ė is biased
by (h/2) q̈_d, which leaves e ≈ −(Kd h/2) q̈_d / Kp behind the reference, and the damping the
simulator applies at the step's end velocity is a torque error that M(q)⁻¹ spreads over the joints.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from rnea_ros.controller.law import CommandLaw, LawInputs, check_length, per_joint
from rnea_ros.dynamics import algorithms
from rnea_ros.dynamics.corrections import CorrectedModel

# a gap between two joint_states longer than this (or a stamp that goes back) adds nothing to the integral
MAX_INTEGRATION_STEP = 0.1  # s
PARAMETERS = ("ct_kp", "ct_kd", "ct_ki", "ct_i_clamp")
FIXED_BASE_ONLY = "command_source computed_torque is for fixed-base robots (a floating base: inverse_dynamics)"


class ComputedTorque(CommandLaw):
    """See the module docstring; ``integral`` [rad·s] is its state, in model order."""

    name = "computed_torque"
    label = "computed torque"
    trajectory_efforts = "inverse_dynamics"

    def __init__(self, corrected: CorrectedModel, command_rows: np.ndarray, params: object) -> None:
        super().__init__(corrected, command_rows, params)
        if self.model.floating_base:
            raise ValueError(FIXED_BASE_ONLY)
        kp, kd, ki, clamp = (getattr(params, name) for name in PARAMETERS)
        self.kp = per_joint(kp, command_rows, self.n)
        self.kd = per_joint(kd, command_rows, self.n) if kd else 2.0 * np.sqrt(self.kp)
        self.ki = per_joint(ki, command_rows, self.n) if any(ki) else None
        if self.ki is not None:
            limit = per_joint(clamp, command_rows, self.n)
            with np.errstate(divide="ignore", invalid="ignore"):  # ki 0: no integral on that joint
                self.bound = np.where(self.ki > 0.0, limit / np.where(self.ki > 0.0, self.ki, 1.0), 0.0)
        self.integral = np.zeros(self.n)
        self.integrating = False  # the integral has a state before this one
        self.last_stamp = -math.inf
        self.period = 0.0  # s: the joint_states' (the last interval between two stamps), 0 before the second

    @classmethod
    def parameters(cls, params: object) -> tuple:
        return tuple(getattr(params, name) for name in PARAMETERS)

    @classmethod
    def check(cls, params: object, command_joints: Sequence[str]) -> None:
        if getattr(params, "floating_base", False):  # a live change too (a floating root joint: at the build)
            raise ValueError(FIXED_BASE_ONLY)
        for name in PARAMETERS:
            check_length(name, getattr(params, name), command_joints)

    @classmethod
    def closes_loop(cls, params: object) -> bool:
        return True  # the measured and the desired state, even at zero gains (ID of the desired accelerations)

    def source(self, inputs: LawInputs, tau: np.ndarray, held: np.ndarray, stamp: float) -> np.ndarray:
        q, qd = inputs.q_measured, inputs.qd_measured
        qdd = self.acceleration(inputs, stamp)
        tau = algorithms.inverse_dynamics(self.model, self.data, q, qd, qdd, inputs.wrenches)
        return self.corrected.joint_torques(qd + self.period * qdd, qdd, tau)

    def acceleration(self, inputs: LawInputs, stamp: float) -> np.ndarray:
        """q̈_d + Kp e + Kd ė [+ Ki ∫e], ė against the desired velocity half a period earlier (the
        module docstring): the joints the desired point does not name get q̈_d alone (their desired
        acceleration, 0); without a desired state, q̈_d and the integral restarts."""
        step = stamp - self.last_stamp
        self.last_stamp = stamp
        step = step if 0.0 < step <= MAX_INTEGRATION_STEP else 0.0
        self.period = step or self.period  # a repeated stamp or a gap keeps the period
        if inputs.q_desired is None or inputs.qd_desired is None:
            self.integral[:] = 0.0
            self.integrating = False
            return inputs.qdd
        e = np.nan_to_num(inputs.q_desired - inputs.q_measured, nan=0.0)
        qd_desired = inputs.qd_desired - 0.5 * self.period * inputs.qdd
        e_dot = np.nan_to_num(qd_desired - inputs.qd_measured, nan=0.0)
        qdd = inputs.qdd + self.kp * e + self.kd * e_dot
        if self.ki is None:
            return qdd
        if self.integrating:
            self.integral = np.clip(self.integral + e * step, -self.bound, self.bound)
        self.integrating = True
        return qdd + self.ki * self.integral
