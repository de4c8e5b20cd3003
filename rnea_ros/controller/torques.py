"""From the inputs of one instant to everything the node publishes for it, as arrays.

Plain Python (no rclpy). Every output of one state is computed before any is published,
so that they go out all together or not at all: any failure raises ``ValueError`` (or
``LinAlgError``) and nothing is published; so do outputs that are not finite (finite inputs can
still overflow: absurd but finite values). This is the node's hot path, timed in /diagnostics:
what a kernel already checked (the contact distribution's torques and wrenches, the commands)
is not checked again, and nothing is built that the node may not publish.

``effort_commands`` = source + Kp (q_d − q) + Kd (q̇_d − q̇), clipped to the URDF's effort
limits: the source is the command law's (``command_source``, one class each in
``rnea_ros.controller``): the inverse dynamics (at the desired state when there is feedback and
a fresh desired state), the holding torques at the measured state (gravity and the measured
wrenches, ``holding_torques``), nothing, or computed torque; the torque-space feedback
acts only while a fresh desired point gives positions and velocities, on the joints it names.
Every kernel writes the joint_states thread's own data (``live.data``; ``dynamics.algorithms``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from rnea_ros.controller.law import CommandLaw
from rnea_ros.controller.settings import Settings
from rnea_ros.controller.state import Inputs, LiveModel
from rnea_ros.dynamics import algorithms
from rnea_ros.dynamics.compiled import LazyEntryPoint
from rnea_ros.dynamics.floating_base import BASE_DOFS, base_acceleration
from rnea_ros.dynamics.jit import njit

_NO_BASE_ACCELERATION = np.zeros(BASE_DOFS)


class Outputs(NamedTuple):
    """The joints' part of the state used and of the torques, in model order; ``commands`` in
    ``command_joints`` order. Floating base: the base residual wrench and the contact wrenches
    (6 per link of ``live.bound.contacts``, each [f, m] in the link's frame about its origin)."""

    live: LiveModel
    q: np.ndarray
    qd: np.ndarray
    tau: np.ndarray
    commands: np.ndarray
    gravity: np.ndarray
    base_residual: np.ndarray | None = None
    wrenches: np.ndarray | None = None
    clipped: int = 0  # command joints clipped to their effort limit
    stance: np.ndarray | None = None  # with a contact schedule: each contact link's stance weight (0: swing)
    inputs: Inputs | None = None  # what they were computed from: the reference and the feedback

    @property
    def contact_wrenches(self) -> dict[str, np.ndarray] | None:
        """The contact wrenches by link (views of ``wrenches``); None without contacts."""
        if self.wrenches is None:
            return None
        return self.live.bound.contacts.wrenches(self.wrenches)


def compute_outputs(live: LiveModel, inputs: Inputs, settings: Settings | None = None) -> Outputs | None:
    """Inverse dynamics and gravity torques at ``inputs``; None when a floating base has no fresh state."""
    settings = settings or Settings()
    if not live.floating:
        model, data = live.bound.model, live.data
        tau = algorithms.inverse_dynamics(model, data, inputs.q, inputs.qd, inputs.qdd, inputs.wrenches)
        gravity = algorithms.gravity_torques(model, data, inputs.q)
        held = gravity
        law = live.settings_cache.command_law(settings)
        if law.holds and (inputs.wrenches or inputs.q is not inputs.q_measured):
            held = holding_torques(live, inputs)  # gravity alone at the measured state is ``gravity``
        tau, held = with_corrections(live, inputs, tau, held)
        commands, clipped = effort_commands(live, inputs, settings, tau, held, law)
        _check_finite(tau, gravity)
        return Outputs(live, inputs.q, inputs.qd, tau, commands, gravity, clipped=clipped, inputs=inputs)
    if inputs.base is None:
        return None
    return _floating_outputs(live, inputs, settings)


def with_corrections(
    live: LiveModel, inputs: Inputs, tau: np.ndarray, held: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The joint torques the rigid bodies leave out: the URDF's damping and friction and a corrections
    file's friction and armature, at the state τ was computed for, added to τ (``CorrectedModel``, as
    rnea_analyze adds them); a corrections file's offset also to the holding torques."""
    corrected = live.bound.corrected
    if corrected.joint_terms is None and corrected.urdf_terms is None:
        return tau, held
    return corrected.joint_torques(inputs.qd, inputs.qdd, tau), held + corrected.offset


def _check_finite(*arrays: np.ndarray) -> None:
    """ValueError unless every value is finite: one sum of squares (it also refuses values beyond
    1e154, which no robot has)."""
    if not math.isfinite(sum(float(a @ a) for a in arrays)):
        raise ValueError("the efforts are not finite (inputs too large?)")


def holding_torques(live: LiveModel, inputs: Inputs) -> np.ndarray:
    """What holds the robot still at its measured state against gravity and the measured
    wrenches (a payload seen by a force/torque sensor): ID(q, 0, 0, wrenches) = g(q) − Σ Jᵀ w."""
    q = inputs.q_measured if inputs.q_measured is not None else inputs.q
    return algorithms.inverse_dynamics(live.bound.model, live.data, q, live.zeros, live.zeros, inputs.wrenches)


def effort_commands(
    live: LiveModel,
    inputs: Inputs,
    settings: Settings,
    tau: np.ndarray,
    gravity: np.ndarray,
    law: CommandLaw | None = None,
) -> tuple[np.ndarray, int]:
    """The commands in ``command_joints`` order and how many were clipped (see the module docstring)."""
    law = law or live.settings_cache.command_law(settings)
    u = law.source(inputs, tau, gravity, live.newest_stamp)
    commands = np.empty(len(live.bound.command_order))  # a new array: clipping it leaves τ alone
    order, limits = live.bound.command_order, live.bound.command_limits
    u = _contiguous(u, float)  # the one layout the kernel's entry point takes
    if inputs.gains is not None and inputs.q_desired is not None and inputs.qd_desired is not None:
        kp, kd = inputs.gains
        q = _contiguous(inputs.q_desired, float), _contiguous(inputs.q_measured, float)
        qd = _contiguous(inputs.qd_desired, float), _contiguous(inputs.qd_measured, float)
        clipped = _clipped_commands(u, True, kp, kd, *q, *qd, order, limits, commands)
    else:
        clipped = _clipped_commands(u, False, u, u, u, u, u, u, order, limits, commands)
    if clipped < 0:
        raise ValueError("effort_commands are not finite")
    return commands, clipped


def compile_kernels() -> None:
    """Compiles (or loads from numba's cache) the commands' kernel, so that the first state does not wait for it."""
    one = np.zeros(1)
    _clipped_commands(one, False, one, one, one, one, one, one, np.zeros(1, dtype=np.intp), np.ones(1), one)


@njit(cache=True)
def _in_command_order_clipped(u, feedback, kp, kd, q_d, q, qd_d, qd, order, limits, commands) -> int:
    """commands = (u + Kp (q_d − q) + Kd (q̇_d − q̇))[order] (with ``feedback``, else u[order]) clipped
    to ±limits; how many were clipped, or −1 when one is not finite. Each feedback term as NumPy's
    ``nan_to_num(·, nan=0.0)`` makes it (NaN, a joint the desired point does not name: 0; ±inf: the
    largest float), added in the same order: the same bits as the array expressions."""
    clipped = 0
    for k in range(len(order)):
        command = u[order[k]]
        if feedback:
            i = order[k]
            command = command + _as_finite(kp[i] * (q_d[i] - q[i]))
            command = command + _as_finite(kd[i] * (qd_d[i] - qd[i]))
        if not math.isfinite(command):
            return -1
        if abs(command) > limits[k]:
            command = math.copysign(limits[k], command)
            clipped += 1
        commands[k] = command
    return clipped


@njit(cache=True)
def _as_finite(value: float) -> float:
    """``np.nan_to_num(value, nan=0.0)`` for one float64."""
    if math.isnan(value):
        return 0.0
    return min(max(value, -_LARGEST), _LARGEST)


_LARGEST = float(np.finfo(np.float64).max)
_clipped_commands = LazyEntryPoint(_in_command_order_clipped)  # C-contiguous float64 vectors, intp order
_contiguous = np.ascontiguousarray


def _floating_outputs(live: LiveModel, inputs: Inputs, settings: Settings) -> Outputs:
    """Joint torques at the base state from odometry or IMU; the base rows of τ are the residual
    wrench, distributed onto contact_links when set (``dynamics.contact_distribution``)."""
    base = inputs.base
    base_qdd = (
        _NO_BASE_ACCELERATION
        if inputs.base_acceleration is None
        else base_acceleration(inputs.base_acceleration, base.v)
    )
    if inputs.distribution is not None:
        distribute = inputs.distribution
        tau, gravity, f = distribute(base.q, base.v, base_qdd, inputs.q, inputs.qd, inputs.qdd, inputs.wrenches)
        outputs = _floating_base_outputs(live, inputs, settings, tau, gravity, f)
        stance = getattr(distribute, "weights", None)  # a contact schedule's (ScheduledContacts.at)
        return outputs if stance is None else outputs._replace(stance=stance)
    q = np.concatenate([base.q, inputs.q])
    qd = np.concatenate([base.v, inputs.qd])
    qdd = np.concatenate([base_qdd, inputs.qdd])
    model, data = live.bound.model, live.data
    tau = algorithms.inverse_dynamics(model, data, q, qd, qdd, inputs.wrenches)
    gravity = algorithms.gravity_torques(model, data, q)
    _check_finite(tau, gravity)
    return _floating_base_outputs(live, inputs, settings, tau, gravity, None)


def _floating_base_outputs(
    live: LiveModel,
    inputs: Inputs,
    settings: Settings,
    tau: np.ndarray,
    gravity: np.ndarray,
    wrenches: np.ndarray | None,
) -> Outputs:
    """The outputs of τ and g with base rows (both checked finite): the joints' rows, corrected and
    commanded; the base rows are the residual."""
    joints, held = tau[BASE_DOFS:], gravity[BASE_DOFS:]
    corrected, corrected_held = with_corrections(live, inputs, joints, held)
    if corrected is not joints:
        _check_finite(corrected, corrected_held)
    commands, clipped = effort_commands(live, inputs, settings, corrected, corrected_held)
    return Outputs(
        live,
        inputs.q,
        inputs.qd,
        corrected,
        commands,
        gravity[BASE_DOFS:],
        tau[:BASE_DOFS],
        wrenches,
        clipped,
        inputs=inputs,
    )
