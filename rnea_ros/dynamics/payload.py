"""A rigid load on one link: its 10 inertial parameters, their physical consistency, and the
joint torques they cause, which are linear in them (the payload regressor). No ROS.

Parameter vector π, in the link frame, about the link's origin (Pinocchio's order):
[m, m·cx, m·cy, m·cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] with I = I_c + m (|c|² 1 − c cᵀ).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rnea_ros.dynamics import rnea as kernel

PARAMETER_NAMES = ("m", "m·cx", "m·cy", "m·cz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
_INERTIA_ENTRIES = ((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))  # Ixx, Ixy, Iyy, Ixz, Iyz, Izz


@dataclass(frozen=True)
class Inertial:
    """Like a URDF <inertial>: mass [kg], centre of mass [m] and inertia about it [kg·m²], in the link frame."""

    mass: float
    com: np.ndarray  # (3,)
    inertia: np.ndarray  # (3, 3) about the centre of mass

    def parameters(self) -> np.ndarray:
        """π (see the module docstring)."""
        c = np.asarray(self.com, dtype=float)
        I_o = np.asarray(self.inertia, dtype=float) + self.mass * (c @ c * np.eye(3) - np.outer(c, c))
        return np.r_[self.mass, self.mass * c, [I_o[i, j] for i, j in _INERTIA_ENTRIES]]

    @classmethod
    def from_parameters(cls, pi: np.ndarray) -> Inertial:
        """The inertial whose π this is (mass must not be zero)."""
        m = float(pi[0])
        c = np.asarray(pi[1:4], dtype=float) / m
        return cls(m, c, symmetric(pi[4:10]) - m * (c @ c * np.eye(3) - np.outer(c, c)))


def symmetric(entries: np.ndarray) -> np.ndarray:
    """The 3×3 symmetric matrix of [xx, xy, yy, xz, yz, zz]."""
    out = np.zeros((3, 3))
    for value, (i, j) in zip(entries, _INERTIA_ENTRIES, strict=True):
        out[i, j] = out[j, i] = value
    return out


def consistency_problems(inertial: Inertial, tolerance: float = 1e-9) -> list[str]:
    """Why a rigid body cannot have this inertial (empty: it can): positive finite mass, finite
    centre of mass, an inertia about it that is symmetric positive semi-definite and whose
    principal moments satisfy the triangle inequality."""
    problems = []
    I_c = np.asarray(inertial.inertia, dtype=float)
    if not (np.isfinite(inertial.mass) and np.all(np.isfinite(inertial.com)) and np.all(np.isfinite(I_c))):
        return ["not finite"]
    if inertial.mass <= 0.0:
        problems.append(f"mass {inertial.mass:.4g} kg ≤ 0")
    if not np.allclose(I_c, I_c.T, atol=tolerance):
        problems.append("inertia not symmetric")
    moments = np.linalg.eigvalsh((I_c + I_c.T) / 2)
    slack = tolerance * max(1.0, float(np.abs(moments).max()))
    if moments[0] < -slack:
        problems.append(f"inertia not positive semi-definite (principal moments {np.round(moments, 6).tolist()})")
    elif moments[2] > moments[0] + moments[1] + slack:
        problems.append(f"principal moments {np.round(moments, 6).tolist()} break the triangle inequality")
    return problems


def body_parameters(R: np.ndarray, p: np.ndarray, pi: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, first moment, inertia about the origin) in the frame of the body that carries the
    link, for π in the link frame placed at (R, p) in it. Linear in π: unit π give the regressor."""
    m, h, I_link = pi[0], R @ pi[1:4], R @ symmetric(pi[4:10]) @ R.T
    I_o = I_link + 2 * (p @ h) * np.eye(3) - np.outer(h, p) - np.outer(p, h) + m * (p @ p * np.eye(3) - np.outer(p, p))
    return m, m * p + h, I_o


def with_parameters(bodies: np.ndarray, body: int, R: np.ndarray, p: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """A copy of the kernel's body rows with π (link frame at (R, p) in ``body``) added to ``body``."""
    out = bodies.copy()
    m, h, I_o = body_parameters(R, p, pi)
    out[body, kernel.MASS] += m
    out[body, kernel.FIRST_MOMENT : kernel.FIRST_MOMENT + 3] += h
    out[body, kernel.ROT_INERTIA : kernel.ROT_INERTIA + 9] += I_o.ravel()
    return out
