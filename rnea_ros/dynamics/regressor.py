"""Every term the identification fits, each as its law and its column, in one place (no ROS).

Beyond the rigid body, a joint's torque is linear in its joint terms (``JOINT_TERMS``):

    τ_j = Σ_k value_k · column_k(q̇_j, q̈_j)
        = viscous·q̇ + coulomb·tanh((q̇ + coulomb_lead·q̈) / coulomb_width) + armature·q̈ + offset

(the Coulomb term has a shape, its width and lead: fixed, or chosen per joint among several, one
column each). The rigid body is linear in each link's 10 inertial parameters π_l
(``dynamics.payload``): τ = Σ_l Y_l(q, q̇, q̈) π_l (``link_regressor``; a payload is a load on one
link, with the same columns).

Everything else reads the terms from here: the corrections file's keys and ``JointCorrection``'s
fields, the law the node and rnea_analyze add (``joint_torques``), the identification's columns,
its excitation rules and table, rnea_excite's regressor, the friction plot. A new joint term is
its ``JointTerm`` in ``JOINT_TERMS`` and its product in ``joint_torques``, here, and its test
(docs/development.md has the recipe).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from rnea_ros.dynamics import payload as payloads
from rnea_ros.dynamics import rnea as kernel

if TYPE_CHECKING:
    from rnea_ros.dynamics.model import RobotModel

DEFAULT_COULOMB_WIDTH = 0.01  # rad/s: tanh(q̇ / width) is within 1 % of sign(q̇) beyond 2.6·width
MAX_COULOMB_LEAD = 1.0  # s
SHAPE = ("coulomb_width", "coulomb_lead")  # the Coulomb term's shape, written with a Coulomb term only
SHAPE_DEFAULTS = (DEFAULT_COULOMB_WIDTH, 0.0)


@dataclass(frozen=True)
class JointTerm:
    """One joint term: ``value · column(q̇, q̈, width, lead)`` is its torque."""

    name: str  # its key in corrections.yaml, its field in JointCorrection
    label: str  # its column's title in the identification table
    unit: str  # SI, revolute joints (prismatic: N and m for N·m and rad)
    column: Callable[[np.ndarray, np.ndarray, np.ndarray | float, np.ndarray | float], np.ndarray]
    # how the recording must excite its column for it to be fitted: its RMS ("rms"), its spread about
    # its mean ("spread"), always ("constant"), above ``excitation``
    excited_by: str
    excitation: float
    friction: bool = False  # part of the friction curve (plotted against q̇, binned)
    shaped: bool = False  # one column per Coulomb shape tried
    nonnegative: str = ""  # why it cannot be negative (a negative estimate is not identified; a file refused)
    derivative: str = ""  # "qdd": its column is q̈, whose noise the differentiation window sets


def _viscous(qd, qdd, width, lead):
    return qd


def _coulomb(qd, qdd, width, lead):
    if np.all(np.asarray(width) > 0.0):
        return np.tanh((qd + lead * qdd) / width)
    return np.sign(qd + lead * qdd)  # width 0: tanh's limit, the step (rnea_analyze's summary table)


def _armature(qd, qdd, width, lead):
    return qdd


def _offset(qd, qdd, width, lead):
    return 1.0  # broadcast where a column is needed


JOINT_TERMS = (
    JointTerm(
        "viscous",
        "viscous",
        "N·m·s/rad",
        _viscous,
        "rms",
        0.05,
        friction=True,
        nonnegative="friction takes energy from the motion, a negative one would drive the joint",
    ),
    JointTerm(
        "coulomb",
        "Coulomb",
        "N·m",
        _coulomb,
        "spread",
        0.3,
        friction=True,
        shaped=True,
        nonnegative="dry friction opposes the motion, a negative one would drive the joint",
    ),
    JointTerm(
        "armature",
        "armature",
        "kg·m²",
        _armature,
        "spread",
        0.2,
        nonnegative="no rotor has a negative inertia",
        derivative="qdd",
    ),
    JointTerm("offset", "offset", "N·m", _offset, "constant", 0.0),
)
TERM_NAMES = tuple(term.name for term in JOINT_TERMS)
VELOCITY_TERM = "viscous"  # its column is q̇: the friction plot's abscissa


def joint_torques(values: Sequence, qd: np.ndarray, qdd: np.ndarray, width, lead) -> np.ndarray:
    """The law: Σ_k values[k] · column_k (``values`` in JOINT_TERMS order; arrays per joint or
    numbers), written out as one expression: the node adds it at every state, and the loop over
    JOINT_TERMS took 4.0–4.6 µs a call for 2.8 (7 joints). test_regressor.py checks it against the columns."""
    viscous, coulomb, armature, offset = values
    return viscous * qd + coulomb * np.tanh((qd + lead * qdd) / width) + armature * qdd + offset


# --- the identification's columns of one joint ---------------------------------------------------
def joint_columns(qd: np.ndarray, qdd: np.ndarray, shapes: Sequence[tuple[float, float]]) -> np.ndarray:
    """(..., ``column_count(len(shapes))``): each term's column, a shaped term's once per (width, lead)."""
    columns = []
    for term in JOINT_TERMS:
        for width, lead in shapes if term.shaped else (SHAPE_DEFAULTS,):
            columns.append(np.broadcast_to(term.column(qd, qdd, width, lead), np.shape(qd)))
    return np.stack(columns, axis=-1)


def friction_law_columns(qd: np.ndarray) -> np.ndarray:
    """(..., 3): the columns of the quick friction law viscous·q̇ + Coulomb·sign(q̇) + offset (rnea_analyze's
    summary table): ``joint_columns``' viscous, Coulomb at width 0 (the step) and offset, at q̈ = 0."""
    where = term_columns(1)
    kept = [where[t.name][0] for t in JOINT_TERMS if t.friction or t.excited_by == "constant"]
    return joint_columns(qd, np.zeros_like(qd), [(0.0, 0.0)])[..., kept]


def column_count(shapes: int) -> int:
    return sum(shapes if term.shaped else 1 for term in JOINT_TERMS)


def term_columns(shapes: int) -> dict[str, range]:
    """Where each term's columns are among ``joint_columns``' with this many shapes."""
    out, start = {}, 0
    for term in JOINT_TERMS:
        count = shapes if term.shaped else 1
        out[term.name] = range(start, start + count)
        start += count
    return out


def chosen_columns(shape: int, shapes: int) -> np.ndarray:
    """One column per term (JOINT_TERMS order): a shaped term's ``shape``-th."""
    where = term_columns(shapes)
    return np.array([where[t.name][shape if t.shaped else 0] for t in JOINT_TERMS], dtype=int)


def friction_columns(shapes: int) -> set[int]:
    where = term_columns(shapes)
    return {c for term in JOINT_TERMS if term.friction for c in where[term.name]}


def excitation(columns_xx: np.ndarray, count: int) -> np.ndarray:
    """Per term, how much the recording excites it (compared with ``term.excitation``), from Σ x xᵀ
    of the chosen columns (one per term, the constant term's among them: its row holds Σ x)."""
    constant = next(k for k, t in enumerate(JOINT_TERMS) if t.excited_by == "constant")
    mean, rms = columns_xx[constant] / count, np.sqrt(np.diag(columns_xx) / count)
    spread = np.sqrt(np.maximum(np.diag(columns_xx) / count - mean**2, 0.0))
    measure = {"rms": rms, "spread": spread, "constant": np.ones(len(JOINT_TERMS))}
    return np.array([measure[t.excited_by][k] for k, t in enumerate(JOINT_TERMS)])


def own_regressor(qd: np.ndarray, qdd: np.ndarray, width: float = DEFAULT_COULOMB_WIDTH) -> np.ndarray:
    """(N, nv, T·nv): every joint's terms (T of them, one shape) in its own block of columns."""
    N, n = qd.shape
    T = len(JOINT_TERMS)
    own = np.zeros((N, n, T * n))
    for j in range(n):
        own[:, j, T * j : T * j + T] = joint_columns(qd[:, j], qdd[:, j], [(width, 0.0)])
    return own


# --- the links' inertial parameters --------------------------------------------------------------
def link_regressor(model: RobotModel, link: str, q, qd, qdd) -> np.ndarray:
    """Y (N, nv, 10): the torques a load on ``link`` adds are Y π, for its 10 inertial parameters π
    (``dynamics.payload``), at the states (N, nq), (N, nv), (N, nv). Column k is the inverse
    dynamics of the robot with no inertia but π = e_k on the link (τ is linear in the inertias),
    gravity included."""
    frame = model.tree.link_frames.get(link)
    if frame is None:
        raise ValueError(f"unknown link '{link}' (links: {model.link_names})")
    q, qd, qdd = (np.ascontiguousarray(x, dtype=np.float64) for x in (q, qd, qdd))
    if q.ndim != 2 or qd.ndim != 2 or qdd.ndim != 2 or not len(q) == len(qd) == len(qdd):
        raise ValueError(f"the link regressor needs batches (N, nq), (N, nv), (N, nv); got {q.shape}, {qd.shape}")
    Y = np.zeros((len(q), model.nv, 10))
    if frame.body < 0:
        return Y
    massless = _massless(model.tree.bodies)
    for k, unit in enumerate(np.eye(10)):
        bodies = payloads.with_parameters(massless, frame.body, frame.R, frame.p, unit)
        unit_model = type(model)(replace(model.tree, bodies=bodies), model.gravity)
        Y[:, :, k] = unit_model.inverse_dynamics(q, qd, qdd)
    return Y


def links_regressor(model: RobotModel, links: Sequence[str], q, qd, qdd) -> np.ndarray:
    """(N, nv, 10·len(links)): the torques are Σ_l Y_l π_l."""
    return np.concatenate([link_regressor(model, link, q, qd, qdd) for link in links], axis=-1)


def _massless(bodies: np.ndarray) -> np.ndarray:
    out = np.array(bodies)
    out[:, kernel.MASS : kernel.ROT_INERTIA + 9] = 0.0
    return out
