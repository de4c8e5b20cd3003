"""What the URDF leaves out of a joint's torque, identified from recordings (no ROS).

Per joint: τ_joint = τ_RNEA + viscous·q̇ + coulomb·tanh(q̇ / coulomb_width) + armature·q̈ + offset.
Values in SI units (N·m·s/rad, N·m, rad/s, kg·m², N·m; N and m for prismatic joints). The
file form (``corrections.yaml``) is a mapping with a schema ``version`` and ``joints``:
joint name → the parameters it has (a parameter left out is zero).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

SCHEMA_VERSION = 1
PARAMETERS = ("viscous", "coulomb", "armature", "offset")
DEFAULT_COULOMB_WIDTH = 0.01  # rad/s: tanh(q̇ / width) is within 1 % of sign(q̇) beyond 2.6·width


class CorrectionsError(ValueError):
    """A corrections file that cannot be used as a whole."""


@dataclass(frozen=True)
class JointCorrection:
    viscous: float = 0.0
    coulomb: float = 0.0
    armature: float = 0.0
    offset: float = 0.0
    coulomb_width: float = DEFAULT_COULOMB_WIDTH


@dataclass(frozen=True)
class Corrections:
    joints: Mapping[str, JointCorrection] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: object) -> Corrections:
        """Corrections from the parsed file; CorrectionsError naming what is wrong otherwise."""
        if not isinstance(data, Mapping):
            raise CorrectionsError("corrections: expected a mapping with 'version' and 'joints'")
        if data.get("version") != SCHEMA_VERSION:
            raise CorrectionsError(f"corrections: version must be {SCHEMA_VERSION}, got {data.get('version')!r}")
        joints = data.get("joints")
        if not isinstance(joints, Mapping):
            raise CorrectionsError("corrections: 'joints' must map joint names to their parameters")
        return cls({str(name): _joint(str(name), values) for name, values in joints.items()})

    def to_dict(self) -> dict:
        return {
            "version": SCHEMA_VERSION,
            "joints": {
                name: {key: float(getattr(c, key)) for key in (*PARAMETERS, "coulomb_width")}
                for name, c in self.joints.items()
            },
        }

    def check_joints(self, joint_names: Sequence[str]) -> None:
        unknown = sorted(set(self.joints) - set(joint_names))
        if unknown:
            raise CorrectionsError(f"corrections name joints the model does not have: {unknown}")

    def torques(self, joint_names: Sequence[str], qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """The corrections' torque per joint (``joint_names`` order; joints without one: 0)."""
        return self.for_joints(joint_names).torques(qd, qdd)

    def for_joints(self, joint_names: Sequence[str]) -> JointArrays:
        """The parameters as arrays in ``joint_names`` order (joints without corrections: 0)."""
        rows = [self.joints.get(name, JointCorrection()) for name in joint_names]
        return JointArrays(*(np.array([getattr(r, key) for r in rows]) for key in (*PARAMETERS, "coulomb_width")))


@dataclass(frozen=True)
class JointArrays:
    """One model's corrections, as arrays in its joint order (built once per model)."""

    viscous: np.ndarray
    coulomb: np.ndarray
    armature: np.ndarray
    offset: np.ndarray
    coulomb_width: np.ndarray

    def torques(self, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        return self.viscous * qd + self.coulomb * np.tanh(qd / self.coulomb_width) + self.armature * qdd + self.offset


def _joint(name: str, values: object) -> JointCorrection:
    if not isinstance(values, Mapping):
        raise CorrectionsError(f"corrections: joint '{name}' must map parameters to numbers")
    unknown = set(values) - {*PARAMETERS, "coulomb_width"}
    if unknown:
        raise CorrectionsError(f"corrections: joint '{name}' has unknown parameters {sorted(unknown)}")
    numbers = {}
    for key, value in values.items():
        try:
            number = float(value)
        except (TypeError, ValueError) as error:
            raise CorrectionsError(f"corrections: joint '{name}' {key} is not a number: {value!r}") from error
        if not math.isfinite(number):
            raise CorrectionsError(f"corrections: joint '{name}' {key} is not finite")
        numbers[key] = number
    if numbers.get("coulomb_width", DEFAULT_COULOMB_WIDTH) <= 0.0:
        raise CorrectionsError(f"corrections: joint '{name}' coulomb_width must be > 0")
    if numbers.get("armature", 0.0) < 0.0:
        raise CorrectionsError(f"corrections: joint '{name}' armature must be ≥ 0")
    return JointCorrection(**numbers)
