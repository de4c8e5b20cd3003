"""The contact QP in Python, one state at a time: what tests and benchmarks compare the node's fused
kernel (``dynamics.contact_forces.ContactConsistentTorques``) with, and inspect (the forces in the
world frame, the residual, which problem was solved).

``problem(qp, JT_base, R_world_links)`` builds the QP of a state from the same compiled pieces as
the kernel; ``ContactProblem.solve`` solves it for one base residual, warm-started per series of
residuals (``use``) from the last active set of that series on that ``qp``.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np

from rnea_ros.dynamics.contact_forces import (
    ContactForceQP,
    _fold_radii,
    _problem_matrices,
    _solve_from_scratch,
    _solve_warm,
)

# per qp, the last active sets of its series: shared by the problems of successive states
_ACTIVE_SETS: weakref.WeakKeyDictionary[ContactForceQP, dict] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class Distribution:
    x: np.ndarray  # the QP's unknowns: per contact its force (and moment, for a sole) in the world frame
    compact: np.ndarray  # the link-frame wrenches with only each contact's components (3 or 6), as x
    residual: np.ndarray  # (6,) r − A x: what admissible contact forces could not provide
    problem: ContactProblem

    @property
    def wrenches(self) -> np.ndarray:
        """(6·contacts,) link-frame wrenches [f, m] about each link's origin."""
        wrenches = np.zeros(6 * len(self.problem.offsets))
        wrenches[self.problem.expand] = self.compact
        return wrenches

    @property
    def forces_world(self) -> np.ndarray:
        """(contacts, 3)."""
        return np.array([self.x[o : o + 3] for o in self.problem.offsets])


@dataclass(frozen=True)
class ContactProblem:
    """The QP of one state: ½ xᵀ H x − (Aᵀ r)ᵀ x subject to C x ≥ b; one per state, solved for
    each base residual r of that state (the torques' and the gravity torques')."""

    A: np.ndarray
    H: np.ndarray  # the closest problem's: AᵀA + εI
    C: np.ndarray
    b: np.ndarray
    to_link: np.ndarray  # x → link-frame wrenches, each contact's components only
    offsets: np.ndarray  # where each contact's unknowns start in x
    expand: np.ndarray  # where each row of the compact link-frame wrenches goes among 6 per contact
    W: np.ndarray  # the exact problem's objective
    # warm start: per use, the last active constraints and whether the solution was exact
    active_sets: dict = field(default_factory=dict)

    def solve(self, residual: np.ndarray, use: str = "") -> Distribution:
        """The contact forces for base residual ``residual``; ``use`` names the series of
        residuals it belongs to (the torques', the gravity torques'), whose last active set is
        the warm start."""
        x = np.empty(len(self.H))
        active, exact = self.active_sets.get(use, (None, np.ones(1, dtype=np.bool_)))
        if active is None or not _solve_warm(self.W, self.H, self.A, residual, self.C, self.b, active, exact, 0, x):
            x, active, exact[0] = _solve_from_scratch(self.W, self.H, self.A, residual, self.C, self.b)
        self.active_sets[use] = (active, exact)
        return Distribution(x, self.to_link @ x, residual - self.A @ x, self)

    @property
    def exact(self) -> dict[str, bool]:
        """Per use, whether its last solution produced the residual exactly."""
        return {use: bool(exact[0]) for use, (_, exact) in self.active_sets.items()}


def problem(qp: ContactForceQP, JT_base: np.ndarray, R_world_links: list[np.ndarray]) -> ContactProblem:
    """The QP at one state, for any base residual; ``JT_base`` the base rows of the link-frame
    contact Jacobian (6 columns per contact, or ``qp.jacobian_components``), ``R_world_links``
    each contact link's rotation."""
    constants = qp.constants()
    rotations = np.ascontiguousarray(np.array(R_world_links, dtype=float))
    JT = _by_contact(qp, JT_base)
    points, levers = np.empty((JT.shape[0], qp.n)), np.zeros((len(qp.contacts), 3))
    _fold_radii(
        JT, rotations, constants.jacobian_offsets, constants.offsets, constants.normals, constants.radii, points, levers
    )
    n = qp.n
    A, H, to_link, C = np.empty((6, n)), np.empty((n, n)), np.zeros((n, n)), qp.inequalities()
    _problem_matrices(
        points, rotations, constants.offsets, constants.normals, constants.sole_limits,
        constants.first_sole_row, constants.regularisation, A, H, to_link, C,
    )  # fmt: skip
    active_sets = _ACTIVE_SETS.setdefault(qp, {})
    return ContactProblem(A, H, C, constants.b, to_link, qp.offsets[:-1], qp.columns, constants.W, active_sets)


def distribute(
    qp: ContactForceQP, JT_base: np.ndarray, residual: np.ndarray, R_world_links: list[np.ndarray]
) -> Distribution:
    """Contact wrenches for the base residual ``residual`` (see ``problem``)."""
    return problem(qp, JT_base, R_world_links).solve(residual)


def _by_contact(qp: ContactForceQP, JT_base: np.ndarray) -> np.ndarray:
    """The Jacobian with ``jacobian_components`` columns per contact (from 6 per contact, or as given)."""
    if JT_base.shape[1] == qp.jacobian_offsets[-1]:
        return np.ascontiguousarray(JT_base, dtype=float)
    if JT_base.shape[1] == 6 * len(qp.contacts):
        keep = np.concatenate([6 * k + np.arange(c) for k, c in enumerate(qp.jacobian_components)])
        return np.ascontiguousarray(JT_base[:, keep], dtype=float)
    raise ValueError(f"the contact Jacobian has {JT_base.shape[1]} columns for contacts of {qp.jacobian_components}")
