"""From the inputs of one instant to everything the node publishes for it, as arrays.

Plain Python (no rclpy). Every output of one state is computed before any is published,
so that they go out all together or not at all: any failure raises ``ValueError`` (or
``LinAlgError``) and nothing is published.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rnea_ros.dynamics.floating_base import BASE_DOFS, base_acceleration
from rnea_ros.node.state import Inputs, LiveModel


@dataclass(frozen=True)
class Outputs:
    """The joints' part of the state used and of the torques, in model order; ``commands`` in
    ``command_joints`` order. Floating base: the base residual wrench and the contact wrenches."""

    live: LiveModel
    q: np.ndarray
    qd: np.ndarray
    tau: np.ndarray
    commands: np.ndarray
    gravity: np.ndarray
    base_residual: np.ndarray | None = None
    contact_wrenches: dict[str, np.ndarray] | None = None


def compute_outputs(live: LiveModel, inputs: Inputs) -> Outputs | None:
    """Inverse dynamics and gravity torques at ``inputs``; None when a floating base has no fresh state."""
    if not live.floating:
        model = live.model
        tau = model.inverse_dynamics(inputs.q, inputs.qd, inputs.qdd, inputs.wrenches)
        gravity = model.gravity_torques(inputs.q)
        return Outputs(live, inputs.q, inputs.qd, tau, tau[live.command_order], gravity)
    if inputs.base is None:
        return None
    return _floating_outputs(live, inputs)


def _floating_outputs(live: LiveModel, inputs: Inputs) -> Outputs:
    """Joint torques at the base state from odometry or IMU; the base rows of τ are the residual
    wrench, distributed onto contact_links when set."""
    base = inputs.base
    base_qdd = (
        np.zeros(BASE_DOFS) if inputs.base_acceleration is None else base_acceleration(inputs.base_acceleration, base.v)
    )
    q = np.concatenate([base.q, inputs.q])
    qd = np.concatenate([base.v, inputs.qd])
    qdd = np.concatenate([base_qdd, inputs.qdd])
    tau = live.model.inverse_dynamics(q, qd, qdd, inputs.wrenches)
    gravity = live.model.gravity_torques(q)
    contact_wrenches = None
    if live.contacts is not None:
        JT = live.contacts.jacobian_transpose(q)
        f = live.contacts.distribute(JT, tau[:BASE_DOFS])
        tau = tau - JT @ f
        gravity = gravity - JT @ live.contacts.distribute(JT, gravity[:BASE_DOFS])
        contact_wrenches = live.contacts.wrenches(f)
    joints = tau[BASE_DOFS:]
    if not (np.all(np.isfinite(tau)) and np.all(np.isfinite(gravity))):
        raise ValueError("the contact distribution gave non-finite torques")
    return Outputs(
        live,
        inputs.q,
        inputs.qd,
        joints,
        joints[live.command_order],
        gravity[BASE_DOFS:],
        tau[:BASE_DOFS],
        contact_wrenches,
    )
