"""How the base residual of a floating-base robot is spread onto its contact links: one interface,
two implementations.

A ``ContactDistribution`` is called with the base's and the joints' state (as
``ContactConsistentTorques``) and returns (τ − Jᵀf, g − Jᵀf_g, f): the torques and gravity
torques with the contacts' share removed, and the contact wrenches f (6 per link, link frame,
about its origin). The base rows of the results are what the contacts could not provide.

- ``MinimumNormTorques``: the minimum-norm wrenches (``ContactLinks.distribute``): any wrench,
  even a pull or a torque at a point foot.
- ``ContactConsistentTorques`` (``contact_forces``): forces the ground can provide, by a QP.

Both are ``FusedContactTorques``: the whole computation of one state in one kernel call.
"""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np

from rnea_ros.dynamics import rnea as kernel
from rnea_ros.dynamics.contact_forces import (
    DEFAULT_OPTIONS,
    NON_FINITE,
    Contact,
    ContactConsistentTorques,
    ContactForceQP,
    FusedContactTorques,
    _solve_in_place,
    _state_and_contact_terms,
)
from rnea_ros.dynamics.contact_options import ContactQPOptions
from rnea_ros.dynamics.contacts import ContactLinks
from rnea_ros.dynamics.data import ModelData
from rnea_ros.dynamics.floating_base import BASE_DOFS
from rnea_ros.dynamics.jit import njit
from rnea_ros.dynamics.model import RobotModel

KINDS = ("minimum_norm", "qp")


class ContactDistribution(Protocol):
    """Returns (τ, g, f), every value finite (ValueError otherwise)."""

    def __call__(
        self, q_base, v_base, qdd_base, q, qd, qdd, wrenches=None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...


SINGULAR = 8  # the minimum-norm kernel's status: A Aᵀ singular at working precision


@njit(cache=True, nogil=True)
def _minimum_norm_torques(
    q_base, v_base, qdd_base, q_joints, qd_joints, qdd_joints, f_ext, torques, wrenches, dynamics, state, K, y, f_g
) -> tuple[int, int]:
    """``_state_and_contact_terms``, then the minimum-norm wrenches of τ's and g's base rows
    (``_minimum_norm_wrenches``) and the torques less JT f: (the dynamics' status; 0, SINGULAR or
    NON_FINITE)."""
    status = _state_and_contact_terms(q_base, v_base, qdd_base, q_joints, qd_joints, qdd_joints, f_ext, dynamics, state)
    if status != kernel.OK:
        return status, 0
    JT = state.JT
    if not (_minimum_norm_wrenches(JT, state.tau, K, y, wrenches) and _minimum_norm_wrenches(JT, state.g, K, y, f_g)):
        return kernel.OK, SINGULAR
    for i in range(JT.shape[0]):
        t, g = state.tau[i], state.g[i]
        for c in range(JT.shape[1]):
            t -= JT[i, c] * wrenches[c]
            g -= JT[i, c] * f_g[c]
        torques[0, i], torques[1, i] = t, g
        if not (abs(t) < kernel.LARGEST_OUTPUT and abs(g) < kernel.LARGEST_OUTPUT):
            return kernel.OK, NON_FINITE
    for c in range(len(wrenches)):
        if not abs(wrenches[c]) < kernel.LARGEST_OUTPUT:
            return kernel.OK, NON_FINITE
    return kernel.OK, 0


@njit(cache=True)
def _minimum_norm_wrenches(JT, torques, K, y, f) -> bool:
    """f = Aᵀ (A Aᵀ)⁻¹ r, A the base rows of JT and r the base rows of ``torques``
    (``ContactLinks.distribute``, compiled; ``K``, ``y``: work); False when A Aᵀ is singular."""
    for i in range(BASE_DOFS):
        y[i] = torques[i]
        for j in range(BASE_DOFS):
            k = 0.0
            for c in range(JT.shape[1]):
                k += JT[i, c] * JT[j, c]
            K[i, j] = k
    if not _solve_in_place(K, y):
        return False
    for c in range(JT.shape[1]):
        f[c] = 0.0
        for i in range(BASE_DOFS):
            f[c] += JT[i, c] * y[i]
    return True


class MinimumNormTorques(FusedContactTorques):
    """The minimum-norm contact wrenches for the base rows of τ and of g (see the module docstring),
    in one kernel call (``FusedContactTorques``)."""

    def __init__(self, model: RobotModel, links: list[str], data: ModelData | None = None) -> None:
        self.contacts = ContactLinks(model, links)  # checks the links
        work = (np.empty((BASE_DOFS, BASE_DOFS)), np.empty(BASE_DOFS), np.empty(6 * len(links)))
        super().__init__(model, links, (6,) * len(links), work, data)

    _kernel_function = _minimum_norm_torques

    def _finish(self, status: int, torques: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A singular A Aᵀ (the kernel's Gaussian elimination gave up): least squares, as numpy does it."""
        if status == NON_FINITE:
            raise ValueError("the contact distribution gave non-finite torques")
        JT, tau, gravity = self._state.JT, self._state.tau, self._state.g
        f = self.contacts.distribute(JT, tau[:BASE_DOFS])
        tau = tau - JT @ f
        gravity = gravity - JT @ self.contacts.distribute(JT, gravity[:BASE_DOFS])
        if not math.isfinite(float(tau @ tau + gravity @ gravity + f @ f)):
            raise ValueError("the contact distribution gave non-finite torques")
        return tau, gravity, f


def contact_distribution(
    kind: str,
    model: RobotModel,
    contacts: list[Contact],
    options: ContactQPOptions = DEFAULT_OPTIONS,
    data: ModelData | None = None,
) -> ContactDistribution:
    """The distribution ``kind`` (one of KINDS) onto ``contacts`` (their shapes and normals are the
    QP's; the minimum-norm distribution uses only their links), writing into ``data`` (its own by
    default): one distribution per thread."""
    links = [contact.link for contact in contacts]
    if kind == "minimum_norm":
        return MinimumNormTorques(model, links, data)
    if kind == "qp":
        return ContactConsistentTorques(model, links, ContactForceQP(contacts, model.gravity, options), data)
    raise ValueError(f"contact distribution must be one of {list(KINDS)}, got '{kind}'")
