"""FIGAROH's documented identification on the same recording, for side-by-side figures (a test
and benchmark dependency, never a runtime one): Pinocchio's joint-torque regressor with viscous,
Coulomb (sign), armature and offset columns per joint (``build_regressor_basic``), the columns
that do not act removed, the base parameters by FIGAROH's double QR, and ordinary least squares
on them. Its held-out prediction uses the same base columns and values.

``standalone_joint_terms`` reads which of its joint terms the fit determines alone (and so says whether
they are physical: no negative armature, viscous or Coulomb friction), ``refit_nonnegative`` fits the same
base parameters again with those held at zero or above."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class FigarohFit:
    joints: int  # the actuated joints fitted (their rows only)
    kept: np.ndarray  # columns of the full regressor that act
    base: list[int]  # base columns, among ``kept``
    phi: np.ndarray  # their values (base parameters)
    seconds: float  # wall time of the regressor and the fit
    W: np.ndarray | None = None  # the training regressor's base columns (rows joint by joint)
    tau: np.ndarray | None = None  # the training torques, in the same order

    def predict(self, model_and_data, q, qd, qdd) -> np.ndarray:
        W = _regressor(model_and_data, q, qd, qdd, self.joints)
        return (W[:, self.kept][:, self.base] @ self.phi).reshape(self.joints, -1).T


class _Robot:
    def __init__(self, model, data) -> None:
        self.model, self.data = model, data


def _builder_options() -> dict:
    return {
        "has_friction": True,
        "has_actuator_inertia": True,
        "has_joint_offset": True,
        "is_joint_torques": True,
        "additional_columns": 4,
    }


def _config(joints: int) -> dict:
    return {
        "has_friction": True,
        "has_actuator_inertia": True,
        "has_joint_offset": True,
        "is_joint_torques": True,
        "act_idxv": list(range(joints)),
    }


def _regressor(model_and_data, q, qd, qdd, joints: int) -> np.ndarray:
    """The rows of the first ``joints`` joints, joint by joint (FIGAROH's order: row j·N + i)."""
    from figaroh.tools.regressor import build_regressor_basic

    W = build_regressor_basic(_Robot(*model_and_data), q, qd, qdd, _config(joints))
    return W[: joints * len(q)]


def pinocchio_states(model, names: list[str], followers: dict[str, str], q, qd, qdd):
    """Our (N, joints) states in the coordinates of Pinocchio's ``model`` built without mimic joints:
    continuous joints as cos, sin; each follower joint as the joint it mimics (multiplier 1)."""
    import pinocchio as pin

    columns = {**{name: k for k, name in enumerate(names)}, **{f: names.index(m) for f, m in followers.items()}}
    out_q = np.tile(pin.neutral(model), (len(q), 1))
    out_v, out_a = np.zeros((len(q), model.nv)), np.zeros((len(q), model.nv))
    for name, k in columns.items():
        joint = model.joints[model.getJointId(name)]
        if joint.nq == 2:
            out_q[:, joint.idx_q], out_q[:, joint.idx_q + 1] = np.cos(q[:, k]), np.sin(q[:, k])
        else:
            out_q[:, joint.idx_q] = q[:, k]
        out_v[:, joint.idx_v], out_a[:, joint.idx_v] = qd[:, k], qdd[:, k]
    return out_q, out_v, out_a


def figaroh_fit(model_and_data, q, qd, qdd, tau: np.ndarray, joints: int) -> FigarohFit:
    """``model_and_data``: Pinocchio's (model, data); states in its coordinates; ``tau`` (N, joints)."""
    import time

    from figaroh.tools.qrdecomposition import QRDecomposer

    started = time.perf_counter()
    W = _regressor(model_and_data, q, qd, qdd, joints)
    kept = np.flatnonzero(np.einsum("ij,ij->j", W, W) >= 1e-6)
    names = [f"p{k}" for k in kept]
    decomposer = QRDecomposer()
    _, _, _, phi = decomposer.double_decomposition(tau.T.reshape(-1), W[:, kept], names)
    base = list(decomposer.base_indices)
    seconds = time.perf_counter() - started
    return FigarohFit(joints, kept, base, np.asarray(phi), seconds, W[:, kept][:, base], tau.T.reshape(-1))


JOINT_TERM_BLOCKS = ("fv", "fs", "ia", "off")  # FIGAROH's names: viscous, Coulomb, armature, offset
NEVER_NEGATIVE = ("fv", "fs", "ia")  # in a physical model
STANDALONE = 0.05  # a column with less than this fraction of its norm outside the others' span is combined


def standalone_joint_terms(model_and_data, fit: FigarohFit, q, qd, qdd, every: int = 10) -> dict[str, int]:
    """{"ia4": k, …}: the joint terms whose base parameter is that term alone (its column has more
    than STANDALONE of its norm outside the span of every other column, on every ``every``-th
    sample), each with its base parameter's index (``fit.phi[k]`` is that physical parameter's value)."""
    from figaroh.tools.regressor import RegressorBuilder, RegressorConfig

    model = model_and_data[0]
    builder = RegressorBuilder(_Robot(*model_and_data), RegressorConfig(**_builder_options()))
    name_of = {
        builder._extra_col(block, model.nv, j): f"{block}{j + 1}"
        for j in range(fit.joints)
        for block in JOINT_TERM_BLOCKS
    }
    W = _regressor(model_and_data, q[::every], qd[::every], qdd[::every], fit.joints)[:, fit.kept]
    out = {}
    for k, column in enumerate(fit.base):
        name = name_of.get(int(fit.kept[column]))
        if name is None:
            continue
        others = np.delete(W, column, axis=1)
        projected = others @ np.linalg.lstsq(others, W[:, column], rcond=None)[0]
        if np.linalg.norm(W[:, column] - projected) > STANDALONE * np.linalg.norm(W[:, column]):
            out[name] = k
    return out


def refit_nonnegative(fit: FigarohFit, standalone: dict[str, int]) -> FigarohFit:
    """The same base parameters fitted again by least squares with every standalone armature,
    viscous and Coulomb term at zero or above (scipy's bounded least squares)."""
    from scipy.optimize import lsq_linear

    lower = np.full(len(fit.base), -np.inf)
    for name, k in standalone.items():
        if name.rstrip("0123456789") in NEVER_NEGATIVE:
            lower[k] = 0.0
    result = lsq_linear(fit.W, fit.tau, bounds=(lower, np.inf))
    return FigarohFit(fit.joints, fit.kept, fit.base, result.x, fit.seconds, fit.W, fit.tau)


def figaroh_held_out(urdf: str, names: list[str], followers: dict[str, str], recording, held_out, joints: int):
    """(per joint held-out residual RMS, the fit): FIGAROH fitted on ``recording`` and predicting
    ``held_out``, both (q, q̇, q̈, τ) in our coordinates, its model built from ``urdf``."""
    model_and_data, training, held = _states(urdf, names, followers, recording, held_out)
    fit = figaroh_fit(model_and_data, *training, recording[3][:, :joints], joints)
    return _held_out_rms(model_and_data, fit, held, held_out[3][:, :joints]), fit


def figaroh_nonnegative_held_out(
    urdf: str, names: list[str], followers: dict[str, str], recording, held_out, joints: int
):
    """As ``figaroh_held_out``, refitted with its standalone armature and friction terms at zero or
    above (``refit_nonnegative``): (per joint held-out residual RMS of the refit, {term: the value
    FIGAROH's own fit gives it} of every standalone joint term)."""
    model_and_data, training, held = _states(urdf, names, followers, recording, held_out)
    fit = figaroh_fit(model_and_data, *training, recording[3][:, :joints], joints)
    standalone = standalone_joint_terms(model_and_data, fit, *training)
    refit = refit_nonnegative(fit, standalone)
    values = {name: float(fit.phi[k]) for name, k in standalone.items()}
    return _held_out_rms(model_and_data, refit, held, held_out[3][:, :joints]), values


def joint_terms_held_out(urdf: str, names: list[str], followers: dict[str, str], recording, held_out, joints: int):
    """FIGAROH's joint terms alone, the URDF's rigid bodies kept (Pinocchio's RNEA of the URDF): per
    joint, least squares of τ − RNEA on its columns [q̇, sign(q̇), q̈, 1] (viscous, Coulomb, armature,
    offset, any sign). (Per joint held-out residual RMS, the (joints, 4) coefficients)."""
    import pinocchio

    model_and_data, training, held = _states(urdf, names, followers, recording, held_out)

    def residual_and_columns(states, ours):
        rigid = np.array([pinocchio.rnea(*model_and_data, *x)[:joints] for x in zip(*states, strict=True)])
        residual = ours[3][:, :joints] - rigid
        columns = [
            np.column_stack([ours[1][:, j], np.sign(ours[1][:, j]), ours[2][:, j], np.ones(len(residual))])
            for j in range(joints)
        ]
        return residual, columns

    (r_fit, X_fit), (r_held, X_held) = residual_and_columns(training, recording), residual_and_columns(held, held_out)
    coefficients = np.array([np.linalg.lstsq(X_fit[j], r_fit[:, j], rcond=None)[0] for j in range(joints)])
    predicted = np.column_stack([X_held[j] @ coefficients[j] for j in range(joints)])
    return np.sqrt(np.mean((r_held - predicted) ** 2, axis=0)), coefficients


def _states(urdf: str, names: list[str], followers: dict[str, str], recording, held_out):
    """(Pinocchio's (model, data), the training and the held-out (q, q̇, q̈) in its coordinates)."""
    import pinocchio

    model = pinocchio.buildModelFromXML(urdf)
    states = (pinocchio_states(model, names, followers, *x[:3]) for x in (recording, held_out))
    return (model, model.createData()), *states


def _held_out_rms(model_and_data, fit: FigarohFit, held, tau: np.ndarray) -> np.ndarray:
    return np.sqrt(np.mean((tau - fit.predict(model_and_data, *held)) ** 2, axis=0))
