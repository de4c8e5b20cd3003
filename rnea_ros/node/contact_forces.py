"""Contact forces the ground can provide: the base residual distributed by a small QP (no ROS;
in the node room because quadprog is not a dependency of the dynamics core).

Unknowns x, in the world frame, per contact: a point contact has a force at the link's origin
(3); a plane contact (a sole centred on the link's origin, in the link's x-y plane) has a force
and a moment about that origin (6). With A the base rows of the contact Jacobian for x (the
link-frame wrench columns of ``RobotModel.wrench_jacobian_transpose``, turned to the world), x
minimises

    ½ |A x − r|² + ½ ε |x|²        (r: the base residual, the wrench the base still needs)

subject to, per contact, with n its unit normal (default: against gravity) and f its force:
    n·f ≥ min_normal_force;
    friction: an inner pyramid of FACETS faces, d·f ≤ μ cos(π/FACETS) n·f for each facet
    direction d in the tangent plane, so every force is inside its cone;
    plane contacts, moments in the link frame: |m_x| ≤ half_width·n·f and |m_y| ≤ half_length·n·f
    (the centre of pressure inside the sole), |m_z| ≤ μ·min(half sizes)·n·f (yaw).
The equality is soft: when no admissible forces produce r (tipping, an impossible base
acceleration) the solution is the admissible one closest to it, and r − A x is the residual
that is left. ε (relative, ``REGULARISATION``) makes the solution unique: among equal fits the
smallest forces. Solved with quadprog (dense Goldfarb–Idnani; chosen by
``benchmarks/contact_qp.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

FACETS = 8
REGULARISATION = 1e-9  # ε relative to the largest diagonal entry of AᵀA


@dataclass(frozen=True)
class Contact:
    link: str
    half_size: tuple[float, float] | None = None  # sole half length (link x) and half width (link y); None: a point
    normal: tuple[float, float, float] | None = None  # world frame; None: against gravity

    @property
    def size(self) -> int:
        return 3 if self.half_size is None else 6


@dataclass(frozen=True)
class Distribution:
    wrenches: np.ndarray  # (6·contacts,) link-frame wrenches [f, m] about each link's origin
    residual: np.ndarray  # (6,) r − A x: what admissible contact forces could not provide
    forces_world: np.ndarray  # (contacts, 3)


@dataclass(frozen=True)
class ContactProblem:
    """The QP of one state: ½ xᵀ H x − (Aᵀ r)ᵀ x subject to C x ≥ b; one per state, solved for
    each base residual r of that state (the torques' and the gravity torques')."""

    A: np.ndarray
    H: np.ndarray
    C: np.ndarray
    b: np.ndarray
    to_link: np.ndarray  # x → link-frame wrenches
    offsets: np.ndarray  # where each contact's unknowns start in x

    def solve(self, residual: np.ndarray) -> Distribution:
        import quadprog  # only for contact_distribution qp: not a dependency of the core

        x = quadprog.solve_qp(self.H, self.A.T @ residual, self.C.T, self.b, 0)[0]
        forces = np.array([x[o : o + 3] for o in self.offsets])
        return Distribution(self.to_link @ x, residual - self.A @ x, forces)


class ContactForceQP:
    def __init__(
        self,
        contacts: list[Contact],
        gravity: np.ndarray,
        friction_coefficient: float = 0.7,
        min_normal_force: float = 0.0,
    ) -> None:
        if not friction_coefficient > 0.0 or not min_normal_force >= 0.0:
            raise ValueError("friction_coefficient must be > 0 and min_normal_force ≥ 0")
        self.contacts = list(contacts)
        self.mu, self.min_normal_force = float(friction_coefficient), float(min_normal_force)
        up = -np.asarray(gravity, dtype=float)
        up = up / np.linalg.norm(up) if np.linalg.norm(up) > 0 else np.array([0.0, 0.0, 1.0])
        self.normals = [_unit(c.normal) if c.normal is not None else up for c in self.contacts]
        self.offsets = np.cumsum([0] + [c.size for c in self.contacts])
        self.n = int(self.offsets[-1])
        self._cone_rows, self._cone_bounds = self._cone_inequalities()

    def problem(self, JT_base: np.ndarray, R_world_links: list[np.ndarray]) -> ContactProblem:
        """The QP at one state, for any base residual; ``JT_base`` the base rows (6, 6·contacts) of
        the link-frame contact Jacobian, ``R_world_links`` each contact link's rotation."""
        to_link = self._to_link_frame(R_world_links)  # (6·contacts, n): x → link-frame wrenches
        A = JT_base @ to_link
        H = A.T @ A
        H += (REGULARISATION * max(float(np.max(np.diag(H))), 1e-12)) * np.eye(self.n)
        C, b = self._inequalities(R_world_links)
        return ContactProblem(A, H, C, b, to_link, self.offsets[:-1])

    def problem_at(self, JT_base: np.ndarray, R_world_base: np.ndarray) -> ContactProblem:
        """``problem`` with the links' rotations read from the Jacobian itself: the base's force
        rows of a link-frame unit force are that force in the base frame, R_base_link's column."""
        rotations = [R_world_base @ JT_base[0:3, 6 * k : 6 * k + 3] for k in range(len(self.contacts))]
        return self.problem(JT_base, rotations)

    def distribute(self, JT_base: np.ndarray, residual: np.ndarray, R_world_links: list[np.ndarray]) -> Distribution:
        """Contact wrenches for the base residual ``residual`` (see ``problem``)."""
        return self.problem(JT_base, R_world_links).solve(residual)

    def _to_link_frame(self, R_world_links: list[np.ndarray]) -> np.ndarray:
        T = np.zeros((6 * len(self.contacts), self.n))
        for k, (contact, R) in enumerate(zip(self.contacts, R_world_links, strict=True)):
            o = self.offsets[k]
            T[6 * k : 6 * k + 3, o : o + 3] = R.T
            if contact.half_size is not None:
                T[6 * k + 3 : 6 * k + 6, o + 3 : o + 6] = R.T
        return T

    def _inequalities(self, R_world_links: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Rows of C x ≥ b: the unilateral and friction rows (constant, built once) and the soles'."""
        rows, bounds = [self._cone_rows], [self._cone_bounds]
        for k, contact in enumerate(self.contacts):
            if contact.half_size is None:
                continue
            o, n, R = self.offsets[k], self.normals[k], R_world_links[k]
            half_length, half_width = contact.half_size
            yaw = self.mu * min(half_length, half_width)
            # link-frame moment component i = R[:, i]·m (world): |m_x| ≤ half_width n·f, |m_y| ≤ half_length n·f
            for axis, limit in ((R[:, 0], half_width), (R[:, 1], half_length), (R[:, 2], yaw)):
                rows.append(np.array([self._row(o, limit * n, -axis), self._row(o, limit * n, axis)]))
                bounds.append(np.zeros(2))
        return np.concatenate(rows), np.concatenate(bounds)

    def _cone_inequalities(self) -> tuple[np.ndarray, np.ndarray]:
        """n·f ≥ min_normal_force and d·f ≤ μ cos(π/FACETS) n·f for each facet direction d."""
        rows, bounds = [], []
        cone = self.mu * math.cos(math.pi / FACETS)
        for o, n in zip(self.offsets[:-1], self.normals, strict=True):
            t1, t2 = _tangents(n)
            rows.append(self._row(o, n))
            bounds.append(self.min_normal_force)
            for i in range(FACETS):
                angle = 2 * math.pi * i / FACETS
                rows.append(self._row(o, cone * n - (math.cos(angle) * t1 + math.sin(angle) * t2)))
                bounds.append(0.0)
        return np.array(rows), np.array(bounds)

    def _row(self, offset: int, force: np.ndarray, moment: np.ndarray | None = None) -> np.ndarray:
        """One constraint row: ``force``·f (+ ``moment``·m) of the contact whose unknowns start at ``offset``."""
        row = np.zeros(self.n)
        row[offset : offset + 3] = force
        if moment is not None:
            row[offset + 3 : offset + 6] = moment
        return row


def _unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    norm = np.linalg.norm(v)
    if not norm > 0.0 or not np.isfinite(norm):
        raise ValueError(f"a contact normal must be a non-zero finite vector, got {v.tolist()}")
    return v / norm


def _tangents(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    helper = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    t1 = np.cross(n, helper)
    t1 /= np.linalg.norm(t1)
    return t1, np.cross(n, t1)
