"""Contact forces the ground can provide: the base residual distributed by a small QP (quadprog
is imported only when a QP is solved from scratch: an optional dependency of the core).

Unknowns x, in the world frame, per contact: a point contact has a force at the link's origin
(3), or, with a radius r (a spherical foot centred on the link's origin), at the sphere's lowest
point along the contact normal, d = −r n from the origin, which moves over the foot as it rolls:
the Jacobian's force columns are then J_f + J_m [d]× (the link's moment columns fold the lever
in; the link-frame wrench reported about the origin is [f, d × f]); a plane contact (a sole
centred on the link's origin, in the link's x-y plane) has a force and a moment about that origin
(6). With A the base rows of the contact Jacobian for x (the
link-frame wrench columns of ``RobotModel.wrench_jacobian_transpose``, turned to the world) and
r the base residual (the wrench the base still needs), x minimises

    ½ xᵀ W x    subject to  A x = r                                         (exact)

where such forces exist, and otherwise

    ½ |A x − r|² + ½ ε |x|²                                                 (closest)

both subject to the inequalities below. W is the objective in physical units, per contact:
    ½ [ (n·f)² + w_t |f − (n·f) n|² + |m|² / L² ]
tangential forces weigh w_t (``tangential_weight``) times as much as normal ones, so that among
the forces that produce r those nearest the contact normal win, and a sole's moment m weighs as
a force at the length L (``moment_length``), so that its centre of pressure is drawn toward the
sole's centre (the moment of a centre of pressure d off the centre is d·n·f: at d = L it costs as
much as the normal force itself). With w_t = 1 and L = 1 m, W = I: the smallest forces.
Inequalities, per contact, with n its unit normal (default: against gravity) and f its force:
    n·f ≥ min_normal_force;
    friction: an inner pyramid of FACETS faces, d·f ≤ μ' cos(π/FACETS) n·f for each facet
    direction d in the tangent plane, so every force is inside the cone of μ' = friction_margin·μ
    (a margin: a solution sits on its constraints, and a stance whose forces use all of the
    ground's μ slides at the first disturbance);
    plane contacts, moments in the link frame: |m_x| ≤ w·n·f and |m_y| ≤ l·n·f with l, w the
    sole's half length and half width times sole_margin (the centre of pressure inside that
    central part of the sole), |m_z| ≤ μ'·min(l, w)·n·f (yaw).
When no admissible forces produce r (tipping, an impossible base acceleration) the closest
admissible ones are used, and r − A x is the residual that is left; ε (relative,
``REGULARISATION``) makes that solution unique. Solved with quadprog (dense Goldfarb–Idnani;
chosen by ``benchmarks/contact_qp.py``), warm-started: the previous solution's active
constraints are tried first as equalities (the exact problem first, then the closest one if that
is what the last state needed), and their answer is kept when it satisfies every optimality
condition (primal feasible, inequality multipliers ≥ 0: then it is the QP's unique solution);
otherwise quadprog solves from scratch, the exact problem first. A robot standing still keeps
the same active set for long.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from rnea_ros.dynamics import algorithms
from rnea_ros.dynamics import rnea as kernel
from rnea_ros.dynamics.compiled import entry_point
from rnea_ros.dynamics.contact_options import MAX_RADIUS, ContactQPOptions
from rnea_ros.dynamics.data import ModelData
from rnea_ros.dynamics.jit import njit
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.dynamics.spatial import quaternion_to_rotation

FACETS = 8
REGULARISATION = 1e-9  # ε relative to the largest diagonal entry of AᵀA
KKT_TOLERANCE = 1e-9  # relative: constraint violation and negative multipliers the warm start accepts
TAU_UNSOLVED, GRAVITY_UNSOLVED, NON_FINITE = 1, 2, 4  # the hot path kernel's status bits
BASE_ROWS = 6  # the equalities A x = r of the exact problem


class QPConstants(NamedTuple):
    """What the QP's kernels read and never write, for one set of contacts."""

    offsets: np.ndarray  # where each contact's unknowns start in x (and the end)
    normals: np.ndarray  # (contacts, 3) unit normals, world frame
    sole_limits: np.ndarray  # (contacts, 3) half length, half width, yaw bound (zeros: a point)
    first_sole_row: int  # the soles' rows of C start here (the friction pyramids' before)
    regularisation: float  # ε, relative
    b: np.ndarray  # C x ≥ b
    columns: np.ndarray  # the compact Jacobian columns among 6 per contact
    jacobian_offsets: np.ndarray  # where each contact's Jacobian columns start (6 for a rounded point)
    radii: np.ndarray  # (contacts,) a point contact's foot radius (0: at the link's origin)
    W: np.ndarray  # the exact problem's objective (world frame; constant: the normals are)


class QPWork(NamedTuple):
    """The QP's buffers, rewritten at every state, and its warm start."""

    active: np.ndarray  # (2, constraints) the last active sets of τ's and g's series
    A: np.ndarray
    H: np.ndarray
    to_link: np.ndarray
    C: np.ndarray
    X: np.ndarray  # (2, unknowns) the solutions for τ's and g's base rows
    JT: np.ndarray  # (nv, unknowns) the Jacobian at the contact points (the radii folded in)
    levers: np.ndarray  # (contacts, 3) each contact point from its link's origin, link frame
    exact: np.ndarray  # (2,) whether τ's and g's last solutions were of the exact problem


class StateBuffers(NamedTuple):
    """The whole floating-base state and the dynamics' outputs of one call."""

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    g: np.ndarray
    JT: np.ndarray


@dataclass(frozen=True)
class Contact:
    link: str
    half_size: tuple[float, float] | None = None  # sole half length (link x) and half width (link y); None: a point
    normal: tuple[float, float, float] | None = None  # world frame; None: against gravity
    radius: float = 0.0  # a point contact's spherical foot, centred on the link's origin [m]

    @property
    def size(self) -> int:
        return 3 if self.half_size is None else 6

    @property
    def jacobian_size(self) -> int:
        """Jacobian columns: a rounded point needs the link's moment columns too."""
        return 6 if self.radius > 0.0 else self.size


DEFAULT_OPTIONS = ContactQPOptions()


class ContactForceQP:
    def __init__(
        self, contacts: list[Contact], gravity: np.ndarray, options: ContactQPOptions = DEFAULT_OPTIONS
    ) -> None:
        """The QP onto ``contacts`` under ``gravity`` (the default normals are against it), as
        ``options`` asks (``ContactQPOptions``: checked against its bounds when it was made)."""
        for contact in contacts:
            if not 0.0 <= contact.radius <= MAX_RADIUS or (contact.radius > 0.0 and contact.half_size is not None):
                raise ValueError(
                    f"contact '{contact.link}': a radius is in [0, {MAX_RADIUS}] m and for a point contact, "
                    f"got {contact.radius} (a sole's contact is its face)"
                )
        self.contacts, self.options = list(contacts), options
        self.mu, self.min_normal_force = (
            options.friction_coefficient * options.friction_margin,
            options.min_normal_force,
        )
        self.sole_margin = options.sole_margin
        up = -np.asarray(gravity, dtype=float)
        up = up / np.linalg.norm(up) if np.linalg.norm(up) > 0 else np.array([0.0, 0.0, 1.0])
        self.normals = [_unit(c.normal) if c.normal is not None else up for c in self.contacts]
        self.components = tuple(c.size for c in self.contacts)  # unknowns per contact
        self.jacobian_components = tuple(c.jacobian_size for c in self.contacts)  # Jacobian columns per contact
        self.offsets = np.cumsum([0, *self.components])
        self.jacobian_offsets = np.cumsum([0, *self.jacobian_components])
        self.radii = np.array([c.radius for c in self.contacts], dtype=float)
        self.n = int(self.offsets[-1])
        # the compact columns among 6 per contact (a full Jacobian may be given)
        self.columns = np.concatenate([6 * k + np.arange(c) for k, c in enumerate(self.components)])
        cone_rows, cone_bounds = self._cone_inequalities()
        sole_rows = 6 * sum(1 for c in self.contacts if c.half_size is not None)
        self._C = np.zeros((len(cone_rows) + sole_rows, self.n))
        self._C[: len(cone_rows)] = cone_rows
        self._b = np.r_[cone_bounds, np.zeros(sole_rows)]
        self._cone_count = len(cone_rows)
        self._sole_limits = np.array(
            [
                (*(self.sole_margin * h for h in c.half_size), self.mu * self.sole_margin * min(c.half_size))
                if c.half_size is not None
                else (0.0, 0.0, 0.0)
                for c in self.contacts
            ]
        )
        self._normals = np.array(self.normals)
        self._W = self._objective(options.tangential_weight, options.moment_length)
        # ContactConsistentTorques: the work buffers and the last active sets of τ's and g's series
        m = len(self._b)
        self._A, self._H, self._to_link = np.empty((6, self.n)), np.empty((self.n, self.n)), np.zeros((self.n, self.n))
        self._C_now, self._X = self._C.copy(), np.empty((2, self.n))
        self._active_sets_by_series = np.zeros((2, m), dtype=np.bool_)
        self._levers = np.zeros((len(self.contacts), 3))
        self._exact_by_series = np.ones(2, dtype=np.bool_)
        self._JT_points: np.ndarray | None = None  # (nv, n), sized at kernel_arrays

    def constants(self) -> QPConstants:
        """What the QP's kernels read and never write."""
        return QPConstants(
            self.offsets, self._normals, self._sole_limits, self._cone_count, REGULARISATION, self._b, self.columns,
            self.jacobian_offsets, self.radii, self._W,
        )  # fmt: skip

    def inequalities(self) -> np.ndarray:
        """A new C of C x ≥ b with the friction pyramids' rows (the soles' rows, zeros here, depend on the state)."""
        return self._C.copy()

    def kernel_arrays(self, nv: int) -> tuple[QPConstants, QPWork]:
        """What ``_contact_forces_warm_started`` takes besides the state: the constants, and the
        work buffers with the warm start (``nv``: the model's)."""
        constants = self.constants()
        self._JT_points = np.zeros((nv, self.n))
        work = QPWork(
            self._active_sets_by_series, self._A, self._H, self._to_link, self._C_now, self._X, self._JT_points,
            self._levers, self._exact_by_series,
        )  # fmt: skip
        return constants, work

    def finish(
        self,
        status: int,
        JT: np.ndarray,
        tau: np.ndarray,
        gravity: np.ndarray,
        torques: np.ndarray,
        wrenches: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """After ``_contact_forces_warm_started`` returned ``status``: quadprog from scratch for a
        series whose active set changed (contacts changing, or the first state), then the results.
        ``JT``: the Jacobian at the contact points (``QPWork.JT``)."""
        if status & (TAU_UNSOLVED | GRAVITY_UNSOLVED):
            H, A, X, active, exact = self._H, self._A, self._X, self._active_sets_by_series, self._exact_by_series
            for k, (residual, unsolved) in enumerate(((tau[:6], TAU_UNSOLVED), (gravity[:6], GRAVITY_UNSOLVED))):
                if status & unsolved:
                    X[k], active[k], exact[k] = _solve_from_scratch(
                        self._W, H, A, residual.copy(), self._C_now, self._b
                    )
            status = _subtract_contact_forces(
                JT, tau, gravity, self._to_link, X, self.columns, self._levers, torques, wrenches
            )
        if status:
            raise ValueError("the contact forces gave non-finite torques")
        return torques[0], torques[1], wrenches

    def _objective(self, tangential_weight: float, moment_length: float) -> np.ndarray:
        """W: per contact, n nᵀ + w_t (I − n nᵀ) on its force, I / L² on a sole's moment."""
        W = np.zeros((self.n, self.n))
        for o, size, n in zip(self.offsets[:-1], self.components, self.normals, strict=True):
            normal = np.outer(n, n)
            W[o : o + 3, o : o + 3] = normal + tangential_weight * (np.eye(3) - normal)
            if size == 6:
                W[o + 3 : o + 6, o + 3 : o + 6] = np.eye(3) / moment_length**2
        return W

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

    def _row(self, offset: int, force: np.ndarray) -> np.ndarray:
        """One constraint row on the force of the contact whose unknowns start at ``offset``."""
        row = np.zeros(self.n)
        row[offset : offset + 3] = force
        return row


@njit(cache=True)
def _link_rotations(JT, R_world_base, offsets, rotations) -> None:
    """Each contact link's rotation in the world: R_world_base times the base's force rows of
    the link's unit forces (R_base_link's columns)."""
    for k in range(len(offsets) - 1):
        o = offsets[k]
        for i in range(3):
            for j in range(3):
                rotations[k, i, j] = (
                    R_world_base[i, 0] * JT[0, o + j]
                    + R_world_base[i, 1] * JT[1, o + j]
                    + R_world_base[i, 2] * JT[2, o + j]
                )


@njit(cache=True)
def _fold_radii(JT, rotations, jacobian_offsets, offsets, normals, radii, points, levers) -> None:
    """``points``: the Jacobian at each contact's point, from ``JT`` at the links' origins; a rounded
    point's lever d = −r Rᵀn (link frame) folds its moment columns into its force columns,
    J_f + J_m [d]×. ``levers``: each d (zeros at the origin)."""
    for k in range(len(offsets) - 1):
        o, oj, width = offsets[k], jacobian_offsets[k], offsets[k + 1] - offsets[k]
        for i in range(JT.shape[0]):
            for j in range(width):
                points[i, o + j] = JT[i, oj + j]
        levers[k, :] = 0.0
        if radii[k] > 0.0:
            R, n = rotations[k], normals[k]
            for a in range(3):
                levers[k, a] = -radii[k] * (R[0, a] * n[0] + R[1, a] * n[1] + R[2, a] * n[2])
            dx, dy, dz = levers[k, 0], levers[k, 1], levers[k, 2]
            for i in range(JT.shape[0]):
                mx, my, mz = JT[i, oj + 3], JT[i, oj + 4], JT[i, oj + 5]
                # [J_m [d]×] columns: J_m (d × e_x) = J_m (0, dz, −dy), and so on
                points[i, o] += mz * -dy + my * dz
                points[i, o + 1] += mx * -dz + mz * dx
                points[i, o + 2] += my * -dx + mx * dy


@njit(cache=True)
def _problem_matrices(
    JT, rotations, offsets, normals, sole_limits, first_sole_row, regularisation, A, H, to_link, C
) -> None:
    """A = JT[:6] · to_link, H = AᵀA + εI and the soles' rows of C, in place (see the module
    docstring); to_link is block-diagonal, Rᵀ per block of three."""
    row = first_sole_row
    for k in range(len(offsets) - 1):
        o, R = offsets[k], rotations[k]
        for block in range(o, offsets[k + 1], 3):  # the force, and a sole's moment
            for i in range(3):
                for j in range(3):
                    to_link[block + i, block + j] = R[j, i]
            for r in range(6):
                for j in range(3):
                    A[r, block + j] = JT[r, block] * R[j, 0] + JT[r, block + 1] * R[j, 1] + JT[r, block + 2] * R[j, 2]
        if offsets[k + 1] - o == 6:  # a sole
            # link-frame moment component i = R[:, i]·m (world): |m_x| ≤ half_width n·f,
            # |m_y| ≤ half_length n·f, |m_z| ≤ yaw bound·n·f
            half_length, half_width, yaw = sole_limits[k]
            limits = (half_width, half_length, yaw)
            for axis in range(3):
                for sign in (-1.0, 1.0):
                    C[row, o : o + 3] = limits[axis] * normals[k]
                    C[row, o + 3 : o + 6] = sign * R[:, axis]
                    row += 1
    n = H.shape[0]
    largest = 1e-12
    for i in range(n):
        for j in range(i, n):
            h = 0.0
            for r in range(6):
                h += A[r, i] * A[r, j]
            H[i, j] = H[j, i] = h
        largest = max(largest, H[i, i])
    for i in range(n):
        H[i, i] += regularisation * largest


@njit(cache=True)
def _contact_forces_warm_started(JT, base_quaternion, tau, gravity, qp, work, torques, wrenches) -> int:
    """The QP of the state (``work``'s A, H, to_link, C in place) and, in X's two rows, its
    solutions for the base rows of τ and of g on their active sets. Returns which failed the
    optimality check (TAU_UNSOLVED, GRAVITY_UNSOLVED), or when none did, ``_subtract_contact_forces``'s status."""
    x, y, z, w = base_quaternion[0], base_quaternion[1], base_quaternion[2], base_quaternion[3]
    norm = (x * x + y * y + z * z + w * w) ** 0.5
    R_world_base = np.array(quaternion_to_rotation(x / norm, y / norm, z / norm, w / norm)).reshape(3, 3)
    rotations = np.empty((len(qp.offsets) - 1, 3, 3))
    _link_rotations(JT, R_world_base, qp.jacobian_offsets, rotations)
    _fold_radii(JT, rotations, qp.jacobian_offsets, qp.offsets, qp.normals, qp.radii, work.JT, work.levers)
    JT = work.JT
    _problem_matrices(
        JT, rotations, qp.offsets, qp.normals, qp.sole_limits, qp.first_sole_row, qp.regularisation,
        work.A, work.H, work.to_link, work.C,
    )  # fmt: skip
    status = 0
    if not _solve_warm(qp.W, work.H, work.A, tau[:6], work.C, qp.b, work.active[0], work.exact, 0, work.X[0]):
        status |= TAU_UNSOLVED
    if not _solve_warm(qp.W, work.H, work.A, gravity[:6], work.C, qp.b, work.active[1], work.exact, 1, work.X[1]):
        status |= GRAVITY_UNSOLVED
    if status == 0:
        status = _subtract_contact_forces(
            JT, tau, gravity, work.to_link, work.X, qp.columns, work.levers, torques, wrenches
        )
    return status


@njit(cache=True)
def _subtract_contact_forces(JT, tau, gravity, to_link, X, columns, levers, torques, wrenches) -> int:
    """torques = [τ − Jᵀ f, g − Jᵀ f_g] with f, f_g the link-frame forces of X's rows (J at the
    contact points); wrenches: f, 6 per contact, about each link's origin (a rounded point's force
    with its moment d × f). Returns 0, or NON_FINITE when a torque or a wrench is not finite (or
    beyond ``kernel.LARGEST_OUTPUT``)."""
    n = X.shape[1]
    f = np.zeros((2, n))
    for s in range(2):
        for i in range(n):
            for j in range(n):
                f[s, i] += to_link[i, j] * X[s, j]
    for i in range(JT.shape[0]):
        t, g = tau[i], gravity[i]
        for j in range(n):
            t -= JT[i, j] * f[0, j]
            g -= JT[i, j] * f[1, j]
        torques[0, i], torques[1, i] = t, g
    wrenches[:] = 0.0
    for k in range(n):
        wrenches[columns[k]] = f[0, k]
    for c in range(levers.shape[0]):
        d, w = levers[c], wrenches[6 * c : 6 * c + 6]
        if d[0] != 0.0 or d[1] != 0.0 or d[2] != 0.0:  # a point contact: its force is w[:3]
            w[3], w[4], w[5] = d[1] * w[2] - d[2] * w[1], d[2] * w[0] - d[0] * w[2], d[0] * w[1] - d[1] * w[0]
    for i in range(JT.shape[0]):
        if not (abs(torques[0, i]) < kernel.LARGEST_OUTPUT and abs(torques[1, i]) < kernel.LARGEST_OUTPUT):
            return NON_FINITE
    for i in range(len(wrenches)):
        if not abs(wrenches[i]) < kernel.LARGEST_OUTPUT:
            return NON_FINITE
    return 0


def _solve_from_scratch(W, H, A, residual, C, b) -> tuple[np.ndarray, np.ndarray, bool]:
    """The QP's solution from scratch, its active inequalities and whether it is exact: the exact
    problem's when admissible forces produce ``residual``, else the closest problem's."""
    import quadprog  # only for contact_distribution qp: not a dependency of the core

    active = np.zeros(len(b), dtype=np.bool_)
    try:
        solution = quadprog.solve_qp(W, np.zeros(len(W)), np.hstack([A.T, C.T]), np.r_[residual, b], BASE_ROWS)
    except ValueError:  # "constraints are inconsistent": no admissible forces produce the residual
        solution = quadprog.solve_qp(H, A.T @ residual, C.T, b, 0)
        active[solution[5] - 1] = True  # quadprog's active constraints, 1-based
        return solution[0], active, False
    inequalities = solution[5][solution[5] > BASE_ROWS]
    active[inequalities - 1 - BASE_ROWS] = True
    return solution[0], active, True


@njit(cache=True)
def _solve_warm(W, H, A, r, C, b, active, exact, series, x) -> bool:
    """The warm start of one series: the exact problem on ``active``, else, when the series' last
    solution was the closest problem's (``exact[series]`` false), that one; True when x is the
    solution (``exact[series]`` then says which problem's)."""
    if _solve_on_active_set(W, A, r, C, b, active, x, True):
        exact[series] = True
        return True
    return not exact[series] and _solve_on_active_set(H, A, r, C, b, active, x, False)


@njit(cache=True)
def _solve_on_active_set(H, A, r, C, b, active, x, exact) -> bool:
    """With the ``active`` rows of C x ≥ b as equalities, x minimising ½ xᵀHx subject to A x = r
    (``exact``; H is then W), or ½ xᵀHx − (Aᵀr)ᵀx; True when x satisfies every condition of
    optimality of the whole QP (then it is its solution)."""
    n, rows = H.shape[0], np.flatnonzero(active)
    first = n + BASE_ROWS if exact else n  # the inequalities' multipliers start here
    size = first + len(rows)
    K, rhs = np.zeros((size, size)), np.zeros(size)
    K[:n, :n] = H
    if exact:
        for k in range(BASE_ROWS):
            K[:n, n + k] = -A[k]
            K[n + k, :n] = A[k]
            rhs[n + k] = r[k]
    else:
        for i in range(n):
            for k in range(BASE_ROWS):
                rhs[i] += A[k, i] * r[k]
    for j in range(len(rows)):
        K[:n, first + j] = -C[rows[j]]
        K[first + j, :n] = C[rows[j]]
        rhs[first + j] = b[rows[j]]
    if not _solve_in_place(K, rhs):
        return False  # a singular active set: let quadprog decide
    x[:] = rhs[:n]
    largest_multiplier, largest_x, largest_c = 0.0, 0.0, 0.0
    for j in range(first, size):
        largest_multiplier = max(largest_multiplier, abs(rhs[j]))
    for j in range(first, size):
        if rhs[j] < -KKT_TOLERANCE * (1.0 + largest_multiplier):
            return False  # a constraint that pulls: the active set has changed
    for i in range(n):
        largest_x = max(largest_x, abs(x[i]))
    for row in range(C.shape[0]):
        for i in range(n):
            largest_c = max(largest_c, abs(C[row, i]))
    tolerance = KKT_TOLERANCE * (1.0 + largest_x) * (1.0 + largest_c)
    for row in range(C.shape[0]):
        slack = -b[row]
        for i in range(n):
            slack += C[row, i] * x[i]
        if not slack >= -tolerance:
            return False
    return True


@njit(cache=True)
def _solve_in_place(K, rhs) -> bool:
    """K y = rhs by Gaussian elimination with partial pivoting, y into ``rhs``; False when K is
    singular at working precision or anything is not finite."""
    size = K.shape[0]
    scale = 0.0
    for i in range(size):
        for j in range(size):
            scale = max(scale, abs(K[i, j]))
    if not scale > 0.0 or not np.isfinite(scale):
        return False
    for col in range(size):
        pivot = col
        for i in range(col + 1, size):
            if abs(K[i, col]) > abs(K[pivot, col]):
                pivot = i
        if not abs(K[pivot, col]) > 1e-14 * scale:
            return False
        if pivot != col:
            for j in range(col, size):
                K[col, j], K[pivot, j] = K[pivot, j], K[col, j]
            rhs[col], rhs[pivot] = rhs[pivot], rhs[col]
        for i in range(col + 1, size):
            factor = K[i, col] / K[col, col]
            if factor != 0.0:
                for j in range(col, size):
                    K[i, j] -= factor * K[col, j]
                rhs[i] -= factor * rhs[col]
    for i in range(size - 1, -1, -1):
        y = rhs[i]
        for j in range(i + 1, size):
            y -= K[i, j] * rhs[j]
        rhs[i] = y / K[i, i]
    for i in range(size):
        if not np.isfinite(rhs[i]):
            return False
    return True


class FusedContactTorques:
    """τ and g of a floating-base robot on its contact links with the contacts' share removed,
    (τ − Jᵀf, g − Jᵀf_g, f), f and f_g the contact wrenches that carry the base rows of τ and of g,
    from the base's and the joints' states, in one kernel call: the state's assembly,
    ``RobotModel.with_contact_terms`` and the distribution (the node's hot path: each Python call
    costs microseconds, more than the work). A subclass gives the distribution: its kernel, which
    takes the state, f_ext, the outputs and ``_constants``, and returns (the dynamics' status, its
    own: 0 when done); and ``_finish`` for what its kernel left undone. The results are checked
    finite (and below ``kernel.LARGEST_OUTPUT``) by the kernel."""

    _kernel_function = None  # the subclass's njit kernel

    def __init__(
        self,
        model: RobotModel,
        links: list[str],
        components: tuple[int, ...],
        extra: tuple,
        data: ModelData | None = None,
    ) -> None:
        """``components``: the Jacobian's columns per link (3: a force, 6: a wrench); ``extra``: the
        kernel's arguments after the model's and the state's; ``data``: the model's data it writes
        (its own by default). Like a data, an instance serves one thread at a time."""
        if not model.floating_base:
            raise ValueError("contact forces need a floating base")
        self.model = model
        nv = model.nv
        self._shapes = ((7,), (6,), (6,), (nv - 6,), (nv - 6,), (nv - 6,))
        self._state = StateBuffers(
            np.empty(model.nq), np.empty(nv), np.empty(nv), np.empty(nv), np.empty(nv),
            np.empty((nv, sum(components))),
        )  # fmt: skip
        data = model.create_data() if data is None else data
        self._constants = (algorithms.contact_kernel_arrays(model, data, links, components), self._state, *extra)
        self._wrench_count = 6 * len(links)
        self._kernel = None  # its compiled entry point, at the first call

    def __call__(
        self, q_base, v_base, qdd_base, q, qd, qdd, wrenches=None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``q_base`` [x, y, z, qx, qy, qz, qw], ``v_base`` and ``qdd_base`` [v, ω] (base frame),
        the joints' ``q``, ``qd``, ``qdd`` in model order and the measured ``wrenches`` (as for
        ``RobotModel.inverse_dynamics``); returns (τ, g, f), nv and 6 per contact."""
        c = np.ascontiguousarray
        state = (c(q_base, float), c(v_base, float), c(qdd_base, float), c(q, float), c(qd, float), c(qdd, float))
        shapes = (state[0].shape, state[1].shape, state[2].shape, state[3].shape, state[4].shape, state[5].shape)
        if shapes != self._shapes:  # (written out: a generator costs microseconds on the node's hot path)
            raise ValueError(f"state shapes {list(shapes)}, expected {list(self._shapes)}")
        torques, f = np.empty((2, self.model.nv)), np.empty(self._wrench_count)
        args = (*state, algorithms.kernel_external_forces(self.model, wrenches), torques, f, *self._constants)
        if self._kernel is None:
            self._kernel = entry_point(type(self)._kernel_function, *args)
        dynamics_status, status = self._kernel(*args)
        if dynamics_status != kernel.OK:
            state = self._state
            raise algorithms.status_error(self.model, dynamics_status, state.q, state.qd, state.qdd)
        if status:
            return self._finish(status, torques, f)
        return torques[0], torques[1], f

    def _finish(self, status: int, torques: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        raise NotImplementedError


@njit(cache=True)
def _state_and_contact_terms(q_base, v_base, qdd_base, q_joints, qd_joints, qdd_joints, f_ext, dynamics, state) -> int:
    """The whole state assembled in ``state``, then ``kernel.with_contact_terms`` into its τ, g and
    JT; the dynamics' status. ``dynamics``: the model's ``ContactKernelArrays``."""
    q, qd, qdd = state.q, state.qd, state.qdd
    q[:7] = q_base
    q[7:] = q_joints
    qd[:6] = v_base
    qd[6:] = qd_joints
    qdd[:6] = qdd_base
    qdd[6:] = qdd_joints
    return kernel.with_contact_terms(
        dynamics.joints, dynamics.bodies, q, qd, qdd, f_ext, dynamics.F_unit, dynamics.work, state.tau, state.g,
        state.JT,
    )  # fmt: skip


@njit(cache=True, nogil=True)
def _contact_consistent_torques(
    q_base, v_base, qdd_base, q_joints, qd_joints, qdd_joints, f_ext, torques, wrenches, dynamics, state, qp, work
) -> tuple[int, int]:
    """``_state_and_contact_terms``, then ``_contact_forces_warm_started``: (the dynamics' status, the QP's)."""
    status = _state_and_contact_terms(q_base, v_base, qdd_base, q_joints, qd_joints, qdd_joints, f_ext, dynamics, state)
    if status != kernel.OK:
        return status, 0
    qp_status = _contact_forces_warm_started(state.JT, state.q[3:7], state.tau, state.g, qp, work, torques, wrenches)
    return kernel.OK, qp_status


class ContactConsistentTorques(FusedContactTorques):
    """``FusedContactTorques`` with forces the ground can provide: the QP of ``ContactForceQP`` at the
    state (the links' rotations read from the Jacobian itself) solved for τ's and g's base rows,
    each series warm-started from its own last active set. The base rows of the results are what
    admissible contact forces could not provide."""

    _kernel_function = _contact_consistent_torques

    def __init__(self, model: RobotModel, links: list[str], qp: ContactForceQP, data: ModelData | None = None) -> None:
        self.qp = qp
        super().__init__(model, links, qp.jacobian_components, qp.kernel_arrays(model.nv), data)

    def _finish(self, status: int, torques: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.qp.finish(status, self._constants[3].JT, self._state.tau, self._state.g, torques, f)


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
