"""Every link's inertial parameters from a recording, kept physically consistent (no ROS).

The torques are linear in the links' inertial parameters: τ = Σ_l Y_l(q, q̇, q̈) π_l, Y_l the
regressor of a load on link l (``dynamics.regressor.link_regressor``), π_l its 10 parameters
(``dynamics.payload``). A recording determines only some combinations of them (the base
parameters: the rank of the stacked regressor); the rest stays at the URDF's values.

The estimate keeps every link a rigid body: its pseudo-inertia

    J = [[½ tr(I_o) 1 − I_o, m c], [(m c)ᵀ, m]]      (Wensing, Kim, Slotine 2017)

is positive definite. J is written as U Uᵀ with U upper triangular in the log-Cholesky
parametrisation of Rucker and Wensing (2022), so that any 10 real numbers give a physical body,
and the least-squares cost (the identification's normal equations) plus a small pull toward the
URDF, in physical units, is minimised over them by Levenberg–Marquardt.

Only the link that a movable joint carries is changed (its ``<inertial>``): links fixed to it
keep theirs, and what they get wrong is absorbed by it.

Every body written has a margin (``margin``): J − diag(s, s, s, μ) is positive semi-definite, so its
mass is at least μ (``MASS_MARGIN`` of the URDF's) and every second moment about its centre of mass
at least s = m_URDF·``THICKNESS``² (every principal moment at least 2s, and the triangle inequality
with 2s to spare: MuJoCo loads it after the file's 9 digits). Its centre of mass must lie within
``COM_BOUND`` × the link's reach of its origin (``body_problems``; the reach: the farthest of its
URDF centre of mass, its child joints' origins and its own joint's offset from its parent).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from lxml import etree

from rnea_ros.analysis.fold_sums import BASE_TOLERANCE
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.dynamics.payload import Inertial, symmetric
from rnea_ros.dynamics.rnea import V_INDEX
from rnea_ros.dynamics.urdf import parse_urdf

# the pull toward the URDF: χ² per (parameter / its physical unit)². At 1e-6 the directions a 60 s
# recording barely determines followed its noise (joint1's held-out residual 0.51 N·m for 0.09)
PRIOR_WEIGHT = 1e-4
PRIOR_FLOOR = 1e-9  # the least pull, relative to the scaled information of a parameter (1)
LENGTH = 0.1  # m: the length the prior measures first moments and inertias with
CONVERGED = 1e-16  # χ²: the search ends when a Gauss-Newton step would lower the cost less than this
REGULARISATION = 1e-9  # what is added to a URDF pseudo-inertia that is not positive definite (massless links)
MASS_MARGIN = 0.01  # an identified link weighs at least this fraction of its URDF mass
MIN_MASS = 0.001  # kg: ... or of this when the URDF gives it none
THICKNESS = 0.001  # m: every second moment about the centre of mass at least m_URDF × this²
COM_BOUND = 1.5  # × the link's reach: the farthest its centre of mass may be from the link's origin
MIN_REACH = 0.05  # m: the least reach of a link (a link whose URDF puts everything at its origin)


# --- the pseudo-inertia and its log-Cholesky parameters ------------------------------------------
def pseudo_inertia(pi: np.ndarray) -> np.ndarray:
    """J (4×4) of π = [m, m·c, I_o entries] (link frame, about its origin)."""
    I_o = symmetric(pi[4:10])
    J = np.empty((4, 4))
    J[:3, :3] = 0.5 * np.trace(I_o) * np.eye(3) - I_o
    J[:3, 3] = J[3, :3] = pi[1:4]
    J[3, 3] = pi[0]
    return J


def parameters_of(J: np.ndarray) -> np.ndarray:
    """π of a pseudo-inertia J."""
    sigma = J[:3, :3]
    I_o = np.trace(sigma) * np.eye(3) - sigma
    return np.array([J[3, 3], *J[:3, 3], I_o[0, 0], I_o[0, 1], I_o[1, 1], I_o[0, 2], I_o[1, 2], I_o[2, 2]])


def from_log_cholesky(theta: np.ndarray) -> np.ndarray:
    """π of θ = [α, d1, d2, d3, s12, s23, s13, t1, t2, t3]: J = U Uᵀ, U = e^α [[e^d1, s12, s13, t1],
    [0, e^d2, s23, t2], [0, 0, e^d3, t3], [0, 0, 0, 1]]."""
    with np.errstate(over="ignore", invalid="ignore"):  # a trial step too far gives inf: refused by its cost
        U = _upper(theta)
        return parameters_of(U @ U.T)


def to_log_cholesky(pi: np.ndarray) -> np.ndarray:
    """θ of π (made positive definite first if it is not: a massless or flat link)."""
    J = pseudo_inertia(pi)
    moments, axes = np.linalg.eigh(0.5 * (J + J.T))
    floor = REGULARISATION * max(1.0, float(np.abs(moments).max()))
    if moments[0] < floor:  # the nearest positive definite matrix: eigenvalues clipped
        J = (axes * np.maximum(moments, floor)) @ axes.T
    flip = np.eye(4)[::-1]
    U = flip @ np.linalg.cholesky(flip @ J @ flip) @ flip  # upper triangular, J = U Uᵀ
    scale = U[3, 3]
    U = U / scale
    return np.array([math.log(scale), *np.log(np.diag(U)[:3]), U[0, 1], U[1, 2], U[0, 2], U[0, 3], U[1, 3], U[2, 3]])


def _jacobian(theta: np.ndarray) -> np.ndarray:
    """∂π/∂θ (10×10), exact: with J = U Uᵀ, ∂J = ∂U Uᵀ + U ∂Uᵀ, and π linear in J. (Central
    differences were off by ~1e-10: at that level the search found no descent and stopped at
    points that moved with the last bits of the sums.)"""
    alpha, d1, d2, d3 = theta[:4]
    scale, diagonal = math.exp(alpha), np.exp([d1, d2, d3])
    U = _upper(theta)
    dU = np.zeros((10, 4, 4))
    dU[0] = U
    for i in range(3):
        dU[1 + i, i, i] = scale * diagonal[i]
    for k, (row, column) in enumerate(((0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3))):
        dU[4 + k, row, column] = scale
    return np.stack([parameters_of(d @ U.T + U @ d.T) for d in dU], axis=1)


def _upper(theta: np.ndarray) -> np.ndarray:
    """U of θ (J = U Uᵀ)."""
    alpha, d1, d2, d3, s12, s23, s13, t1, t2, t3 = theta
    e = np.exp([alpha, d1, d2, d3])
    return e[0] * np.array([[e[1], s12, s13, t1], [0.0, e[2], s23, t2], [0.0, 0.0, e[3], t3], [0.0, 0.0, 0.0, 1.0]])


# --- which links ---------------------------------------------------------------------------------
def urdf_link_inertials(model: RobotModel, urdf: str) -> dict[str, Inertial]:
    """The link each moving body is made of (the child link of its joint, whose frame is the
    body's), with its own URDF inertial: the links whose parameters are identified."""
    own = {link.name: Inertial(link.mass, link.com, link.inertia) for link in parse_urdf(urdf).links}
    chosen: dict[int, str] = {}
    for name, frame in model.tree.link_frames.items():
        if frame.body < 0 or not (np.allclose(frame.R, np.eye(3)) and np.allclose(frame.p, 0.0)):
            continue
        if frame.body not in chosen or (own[chosen[frame.body]].mass == 0.0 and own[name].mass > 0.0):
            chosen[frame.body] = name
    return {chosen[b]: own[chosen[b]] for b in sorted(chosen)}


@dataclass(frozen=True)
class LinkContext:
    """What the data cannot say about a link: the joint that moves it ("": unknown, always
    identified) and its reach [m] (its centre of mass must stay within COM_BOUND of it)."""

    joint: str = ""
    reach: float = MIN_REACH


def link_contexts(model: RobotModel, urdf: str, links: Mapping[str, Inertial]) -> dict[str, LinkContext]:
    """Per identified link (``urdf_link_inertials``): the joint of its body and its reach."""
    parsed = parse_urdf(urdf)
    out = {}
    for name, inertial in links.items():
        body = model.tree.link_frames[name].body
        joint = model.joint_names[int(model.tree.joints[body, V_INDEX])] if body >= 0 else ""
        offsets = [np.asarray(inertial.com, dtype=float)]
        offsets += [np.asarray(j.translation, dtype=float) for j in parsed.joints if name in (j.parent, j.child)]
        out[name] = LinkContext(joint, max(MIN_REACH, *(float(np.linalg.norm(x)) for x in offsets)))
    return out


def margin(urdf: Inertial) -> np.ndarray:
    """π of diag(s, s, s, μ), the least a link identified from this URDF inertial keeps (module doc)."""
    mass = max(float(urdf.mass), MIN_MASS)
    return parameters_of(np.diag([mass * THICKNESS**2] * 3 + [MASS_MARGIN * mass]))


def body_problems(identified: Inertial, urdf: Inertial, context: LinkContext) -> list[str]:
    """Why ``identified`` is not a body to write (empty: it is): below the margin, or its centre of
    mass beyond COM_BOUND × the link's reach."""
    floor = margin(urdf)
    mass, com = float(identified.mass), np.asarray(identified.com, dtype=float)
    problems = []
    if not mass >= floor[0] * (1 - 1e-6):
        problems.append(f"mass {mass:.4g} kg below {floor[0]:.3g}")
    else:
        second = np.linalg.eigvalsh(pseudo_inertia(identified.parameters())[:3, :3] - mass * np.outer(com, com))
        if not second[0] >= floor[4] / 2 * (1 - 1e-6):
            problems.append(f"a second moment {second[0]:.3g} kg·m² below {floor[4] / 2:.3g}")
    distance = float(np.linalg.norm(com))
    if not distance <= COM_BOUND * context.reach:
        problems.append(
            f"centre of mass {distance:.3g} m from its origin, beyond {COM_BOUND:g} × {context.reach:.3g} m"
        )
    return problems


# --- the consistent estimate ---------------------------------------------------------------------
def consistent_estimate(
    A: np.ndarray,
    b: np.ndarray,
    priors: Sequence[np.ndarray],
    iterations: int = 1000,
    floors: Sequence[np.ndarray] | None = None,
) -> tuple[np.ndarray, int]:
    """x = [δπ_1 … δπ_L, β] minimising xᵀAx − 2bᵀx + Σ_k max(PRIOR_WEIGHT (x_k / u_k)², PRIOR_FLOOR A_kk x_k²),
    with every link's prior π_l + δπ_l a physical body. ``A``, ``b``: normal equations of the
    whole fit (weighted: xᵀAx is a χ²), the links' 10 columns each first; β (the joint terms) is
    free. u_k: a physical unit of each parameter (the link's mass, times 0.1 m, times (0.1 m)²; 1
    for the joint terms): where the data hold less than that, the prior wins. Starts from the
    regularised least-squares solution, each link moved to the nearest body. ``floors``: per link, π
    of a pseudo-inertia its body keeps above (``margin``; none by default). The combinations the data
    do not determine are held at the prior (``_unidentified_pull``). Returns (x, iterations used)."""
    links = len(priors)
    floors = list(floors) if floors is not None else [np.zeros(10)] * links
    P = 10 * links
    units = np.ones(len(b))
    for l, p in enumerate(priors):
        mass = max(float(p[0]), 0.01)
        units[10 * l : 10 * l + 10] = mass * np.array([1.0, *[LENGTH] * 3, *[LENGTH**2] * 6])
    # scaled by the whole cost's curvature, data and prior: by the data's alone, a parameter the
    # recording barely moves got a prior 1e18 times its unit and the search stalled where it began
    s = np.sqrt(np.maximum(np.diag(A), 0.0) + PRIOR_WEIGHT / units**2)
    A_s = A / np.outer(s, s)
    # never below PRIOR_FLOOR of the (unit) diagonal: a direction the data leave free stays solvable
    A_s += np.diag(np.maximum(PRIOR_WEIGHT / (s * units) ** 2, PRIOR_FLOOR))
    A_s += _unidentified_pull(A) / np.outer(s, s)
    b_s = b / s
    prior = np.concatenate(priors) if links else np.zeros(0)
    start = np.linalg.solve(A_s, b_s) / s
    thetas = [to_log_cholesky(p + start[10 * l : 10 * l + 10] - floors[l]) for l, p in enumerate(priors)]
    beta = start[P:].copy()

    def scaled(thetas, beta) -> np.ndarray:
        pis = (
            np.concatenate([from_log_cholesky(t) + f for t, f in zip(thetas, floors, strict=True)])
            if links
            else np.zeros(0)
        )
        return np.r_[(pis - prior) * s[:P], beta * s[P:]]

    def cost(y) -> float:
        return float(y @ A_s @ y - 2.0 * b_s @ y)

    def cost_change(y, trial) -> float:
        # as a difference: the cost itself is too large for the prior's share of it to show
        return float((trial - y) @ (A_s @ (trial + y) - 2.0 * b_s))

    y = scaled(thetas, beta)
    current, damping, used = cost(y), 1e-3, 0
    while used < iterations:
        used += 1
        J = np.zeros((len(b), len(b)))
        for l, theta in enumerate(thetas):
            J[10 * l : 10 * l + 10, 10 * l : 10 * l + 10] = s[10 * l : 10 * l + 10, None] * _jacobian(theta)
        J[P:, P:] = np.diag(s[P:])
        H = J.T @ A_s @ J
        g = J.T @ (A_s @ y - b_s)
        ridge = 1e-12 * np.eye(len(b))
        if float(g @ np.linalg.solve(H + ridge, g)) < CONVERGED:  # what a Gauss-Newton step would still gain
            break
        improved = False
        while damping < 1e12:
            step = np.linalg.solve(H + damping * np.diag(np.diag(H)) + ridge, -g)
            trial_thetas = [t + step[10 * l : 10 * l + 10] for l, t in enumerate(thetas)]
            with np.errstate(over="ignore", invalid="ignore"):  # a step too far gives inf: refused below
                trial = scaled(trial_thetas, beta + step[P:])
                change = cost_change(y, trial) if np.all(np.isfinite(trial)) else math.inf
            if change < 0.0:
                improved = True
                thetas, beta, y, current = trial_thetas, beta + step[P:], trial, current + change
                damping = max(damping / 5.0, 1e-9)
                break
            damping *= 10.0
        if not improved:
            break
    return y / s, used


def _unidentified_pull(A: np.ndarray) -> np.ndarray:
    """A pull toward the prior (x = 0) in the combinations the data do not determine: the null space
    of the Jacobi-scaled ``A`` (eigenvalues at or below BASE_TOLERANCE × the largest, the rank of
    ``identify_fit.weighted_fit``), as stiff there as the least determined combination the data do
    determine. Without it only PRIOR_FLOOR held them: where a link's body bound was active, the
    estimate slid along them with the last digits of the sums (the example arm, seed 2, hand-made
    excitation: its normal equations' b scaled by 1 + 1e-12 or 2e-12 noise moved link3's mass by
    up to 1.7 g; with the pull, by under 0.1 g)."""
    diagonal = np.sqrt(np.maximum(np.diag(A), 0.0))
    scale = np.where(diagonal > 0.0, diagonal, 1.0)
    eigenvalues, vectors = np.linalg.eigh(A / np.outer(scale, scale))
    null = eigenvalues <= BASE_TOLERANCE * max(float(eigenvalues[-1]), 0.0)
    if not null.any() or null.all():
        return np.zeros_like(A)
    stiffness = float(eigenvalues[~null][0])
    return stiffness * (vectors[:, null] @ vectors[:, null].T) * np.outer(scale, scale)


# --- the corrected URDF --------------------------------------------------------------------------
def corrected_urdf(urdf: str, inertials: Mapping[str, Inertial]) -> str:
    """The URDF with only these links' ``<inertial>`` replaced (centre of mass as the origin,
    the inertia about it in the link's axes); everything else as it was written (none: the URDF's text)."""
    if not inertials:
        return urdf
    root = etree.fromstring(urdf.encode(), etree.XMLParser(remove_blank_text=False, resolve_entities=False))
    links = {element.get("name"): element for element in root.iterchildren("link")}  # <robot>'s, as the parser
    for name, inertial in inertials.items():
        link = links[name]
        old = link.find("inertial")
        new = _inertial_element(inertial)
        if old is not None:
            new.tail = old.tail
            link.replace(old, new)
        else:
            link.insert(0, new)
    return etree.tostring(root, encoding="unicode")


def _inertial_element(inertial: Inertial) -> etree._Element:
    element = etree.Element("inertial")
    c, I = np.asarray(inertial.com, dtype=float), np.asarray(inertial.inertia, dtype=float)
    etree.SubElement(element, "origin", xyz=" ".join(f"{x:.9g}" for x in c), rpy="0 0 0")
    etree.SubElement(element, "mass", value=f"{inertial.mass:.9g}")
    entries = {"ixx": I[0, 0], "ixy": I[0, 1], "ixz": I[0, 2], "iyy": I[1, 1], "iyz": I[1, 2], "izz": I[2, 2]}
    etree.SubElement(element, "inertia", **{k: f"{v:.9g}" for k, v in entries.items()})
    return element
