"""How the base residual of a floating-base robot is spread onto its contact links: one interface,
two implementations.

A ``ContactDistribution`` is called with the base's and the joints' state (as
``ContactConsistentTorques``) and returns (τ − Jᵀf, g − Jᵀf_g, f): the torques and gravity
torques with the contacts' share removed, and the contact wrenches f (6 per link, link frame,
about its origin). The base rows of the results are what the contacts could not provide.

- ``MinimumNormTorques``: the minimum-norm wrenches (``ContactLinks.distribute``): any wrench,
  even a pull or a torque at a point foot.
- ``ContactConsistentTorques`` (``contact_forces``): forces the ground can provide, by a QP.
"""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np

from rnea_ros.dynamics.contact_forces import Contact, ContactConsistentTorques, ContactForceQP
from rnea_ros.dynamics.contacts import ContactLinks
from rnea_ros.dynamics.model import RobotModel

KINDS = ("minimum_norm", "qp")


class ContactDistribution(Protocol):
    checks_finite: bool  # whether a result it returns is known finite (τ, g and f)

    def __call__(
        self, q_base, v_base, qdd_base, q, qd, qdd, wrenches=None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...


class MinimumNormTorques:
    """The minimum-norm contact wrenches for the base rows of τ and of g (see the module docstring)."""

    checks_finite = False  # f is not checked

    def __init__(self, model: RobotModel, links: list[str]) -> None:
        self.model, self.contacts = model, ContactLinks(model, links)

    def __call__(
        self, q_base, v_base, qdd_base, q, qd, qdd, wrenches=None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        state = (np.concatenate([q_base, q]), np.concatenate([v_base, qd]), np.concatenate([qdd_base, qdd]))
        tau, gravity, JT = self.model.with_contact_terms(*state, wrenches, self.contacts.links)
        f = self.contacts.distribute(JT, tau[:6])
        tau = tau - JT @ f
        gravity = gravity - JT @ self.contacts.distribute(JT, gravity[:6])
        if not math.isfinite(float(tau.sum() + gravity.sum())):  # one NaN or ±inf makes the sum so
            raise ValueError("the contact distribution gave non-finite torques")
        return tau, gravity, f


def contact_distribution(
    kind: str,
    model: RobotModel,
    contacts: list[Contact],
    friction_coefficient: float = 0.7,
    min_normal_force: float = 0.0,
    friction_margin: float = 1.0,
    sole_margin: float = 1.0,
    tangential_weight: float = 1.0,
    moment_length: float = 1.0,
) -> ContactDistribution:
    """The distribution ``kind`` (one of KINDS) onto ``contacts`` (their shapes and normals are the
    QP's; the minimum-norm distribution uses only their links)."""
    links = [contact.link for contact in contacts]
    if kind == "minimum_norm":
        return MinimumNormTorques(model, links)
    if kind == "qp":
        qp = ContactForceQP(
            contacts, model.gravity, friction_coefficient, min_normal_force, friction_margin, sole_margin,
            tangential_weight, moment_length,
        )  # fmt: skip
        return ContactConsistentTorques(model, links, qp)
    raise ValueError(f"contact distribution must be one of {list(KINDS)}, got '{kind}'")
