"""FIGAROH's documented identification on the same recording, for side-by-side figures (a test
and benchmark dependency, never a runtime one): Pinocchio's joint-torque regressor with viscous,
Coulomb (sign), armature and offset columns per joint (``build_regressor_basic``), the columns
that do not act removed, the base parameters by FIGAROH's double QR, and ordinary least squares
on them. Its held-out prediction uses the same base columns and values."""

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

    def predict(self, model_and_data, q, qd, qdd) -> np.ndarray:
        W = _regressor(model_and_data, q, qd, qdd, self.joints)
        return (W[:, self.kept][:, self.base] @ self.phi).reshape(self.joints, -1).T


class _Robot:
    def __init__(self, model, data) -> None:
        self.model, self.data = model, data


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
    return FigarohFit(joints, kept, list(decomposer.base_indices), np.asarray(phi), time.perf_counter() - started)


def figaroh_held_out(urdf: str, names: list[str], followers: dict[str, str], recording, held_out, joints: int):
    """(per joint held-out residual RMS, the fit): FIGAROH fitted on ``recording`` and predicting
    ``held_out``, both (q, q̇, q̈, τ) in our coordinates, its model built from ``urdf``."""
    import pinocchio

    model = pinocchio.buildModelFromXML(urdf)
    model_and_data = (model, model.createData())
    fit = figaroh_fit(
        model_and_data, *pinocchio_states(model, names, followers, *recording[:3]), recording[3][:, :joints], joints
    )
    q, qd, qdd, tau = held_out
    predicted = fit.predict(model_and_data, *pinocchio_states(model, names, followers, q, qd, qdd))
    return np.sqrt(np.mean((tau[:, :joints] - predicted) ** 2, axis=0)), fit
