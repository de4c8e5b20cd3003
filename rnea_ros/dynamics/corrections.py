"""What the URDF leaves out of a joint's torque, identified from recordings (no ROS).

Per joint: τ_joint = τ_RNEA + viscous·q̇ + coulomb·tanh(q̇ / coulomb_width) + armature·q̈ + offset.
Values in SI units (N·m·s/rad, N·m, rad/s, kg·m², N·m; N and m for prismatic joints). The
file form (``corrections.yaml``) is a mapping with a schema ``version`` and ``joints``:
joint name → the parameters it has (a parameter left out is zero). Version 2 adds an optional
``payload``: a rigid load merged into one link's inertia, written like a URDF <inertial> in
that link's frame::

    payload: {link: tool, mass: 1.5, com: [0.0, 0.0, 0.05],
              inertia: {ixx: 0.002, ixy: 0.0, ixz: 0.0, iyy: 0.002, iyz: 0.0, izz: 0.001}}

(mass [kg], centre of mass [m], inertia about the centre of mass [kg·m²]; it must be one a rigid
body can have). Version 1 files (no payload) are read as they were.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from rnea_ros.dynamics.payload import Inertial, consistency_problems

if TYPE_CHECKING:
    from rnea_ros.dynamics.model import RobotModel

SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)
INERTIA_KEYS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
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
class Payload:
    link: str
    inertial: Inertial


@dataclass(frozen=True)
class Corrections:
    joints: Mapping[str, JointCorrection] = field(default_factory=dict)
    payload: Payload | None = None

    @classmethod
    def from_dict(cls, data: object) -> Corrections:
        """Corrections from the parsed file; CorrectionsError naming what is wrong otherwise."""
        if not isinstance(data, Mapping):
            raise CorrectionsError("corrections: expected a mapping with 'version' and 'joints'")
        version = data.get("version")
        if version not in READABLE_VERSIONS:
            raise CorrectionsError(f"corrections: version must be one of {READABLE_VERSIONS}, got {version!r}")
        unknown = set(data) - {"version", "joints", "payload"}
        if unknown:
            raise CorrectionsError(f"corrections: unknown keys {sorted(unknown)}")
        joints = data.get("joints")
        if not isinstance(joints, Mapping):
            raise CorrectionsError("corrections: 'joints' must map joint names to their parameters")
        if "payload" in data and version < 2:
            raise CorrectionsError("corrections: 'payload' needs version 2")
        payload = _payload(data["payload"]) if data.get("payload") is not None else None
        return cls({str(name): _joint(str(name), values) for name, values in joints.items()}, payload)

    def to_dict(self) -> dict:
        data = {
            "version": SCHEMA_VERSION,
            "joints": {
                name: {key: float(getattr(c, key)) for key in (*PARAMETERS, "coulomb_width")}
                for name, c in self.joints.items()
            },
        }
        if self.payload is not None:
            inertial = self.payload.inertial
            I = inertial.inertia
            data["payload"] = {
                "link": self.payload.link,
                "mass": float(inertial.mass),
                "com": [float(x) for x in inertial.com],
                "inertia": {k: float(I["xyz".index(k[1]), "xyz".index(k[2])]) for k in INERTIA_KEYS},
            }
        return data

    def check_joints(self, joint_names: Sequence[str], link_names: Sequence[str] | None = None) -> None:
        """CorrectionsError when a joint (or the payload's link, given ``link_names``) is not the model's."""
        unknown = sorted(set(self.joints) - set(joint_names))
        if unknown:
            raise CorrectionsError(f"corrections name joints the model does not have: {unknown}")
        if self.payload is not None and link_names is not None and self.payload.link not in link_names:
            raise CorrectionsError(f"corrections: the payload's link '{self.payload.link}' is not a link of the model")

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


def load_corrections(path: str | Path) -> Corrections:
    """A corrections.yaml as ``Corrections`` (CorrectionsError with the reason otherwise)."""
    import yaml  # the file's format: the core itself does not need it

    try:
        with open(path, encoding="utf-8") as file:
            data = yaml.safe_load(file)
    except (OSError, yaml.YAMLError) as error:
        raise CorrectionsError(f"corrections file '{path}': {error}") from error
    return Corrections.from_dict(data)


def save_corrections(corrections: Corrections, path: str | Path) -> None:
    """Writes ``corrections`` as a corrections.yaml (the schema of this module's docstring)."""
    import yaml

    Path(path).write_text(yaml.safe_dump(corrections.to_dict(), sort_keys=False), encoding="utf-8")


@dataclass(frozen=True)
class CorrectedModel:
    """A description's model with corrections applied, as rnea_node and rnea_analyze both compute:
    the payload merged into ``model`` (``urdf_model`` is the description's); the joint terms in the
    model's joint order: the URDF's own ``<dynamics damping friction>`` (``urdf_terms``, as the
    simulator and a real joint have them; None when left out or absent) and the corrections' on top
    (``joint_terms``; None without corrections)."""

    urdf_model: RobotModel
    model: RobotModel
    corrections: Corrections | None = None
    joint_terms: JointArrays | None = None
    urdf_terms: JointArrays | None = None

    @property
    def payload(self) -> Payload | None:
        return self.corrections.payload if self.corrections is not None else None

    @property
    def offset(self) -> np.ndarray | float:
        return self.joint_terms.offset if self.joint_terms is not None else 0.0

    def with_corrections(self, corrections: Corrections | None) -> CorrectedModel:
        """The description's model with other corrections (the merged model reused when the payload
        is the same); CorrectionsError when a joint or the payload's link is not the model's."""
        return apply_corrections(self.urdf_model, corrections, self.urdf_terms is not None, reuse=self)

    def joint_torques(self, qd: np.ndarray, qdd: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """τ (the joints' rows, 1-D or a batch) with the joint terms at q̇, q̈ added; τ itself without any."""
        for terms in (self.urdf_terms, self.joint_terms):
            if terms is not None:
                tau = tau + terms.torques(qd, qdd)
        return tau

    def inverse_dynamics(self, q, qd, qdd, wrenches=None) -> np.ndarray:
        """The corrected model's τ (fixed base; 1-D or a batch): rigid body with the payload, plus the joint terms."""
        return self.joint_torques(qd, qdd, self.model.inverse_dynamics(q, qd, qdd, wrenches))


def urdf_joint_terms(model: RobotModel) -> JointArrays | None:
    """The URDF's ``<dynamics damping friction>`` as joint terms: viscous = damping, Coulomb = friction
    (None when no joint has them)."""
    if not model.joint_dynamics:
        return None
    joints = {
        name: JointCorrection(viscous=damping, coulomb=friction)
        for name, (damping, friction) in model.joint_dynamics.items()
    }
    return Corrections(joints).for_joints(model.joint_names)


def apply_corrections(
    model: RobotModel,
    corrections: Corrections | None,
    urdf_dynamics: bool = True,
    reuse: CorrectedModel | None = None,
) -> CorrectedModel:
    """``model`` (a description's) with ``corrections`` applied, and its URDF's joint dynamics
    unless ``urdf_dynamics`` is False (see ``CorrectedModel``)."""
    urdf_terms = urdf_joint_terms(model) if urdf_dynamics else None
    if corrections is None:
        return CorrectedModel(model, model, urdf_terms=urdf_terms)
    corrections.check_joints(model.joint_names, model.link_names)
    payload = corrections.payload
    if payload is None:
        merged = model
    elif reuse is not None and reuse.payload is payload:
        merged = reuse.model
    else:
        try:
            merged = model.with_payload(payload.link, payload.inertial)
        except ValueError as error:  # a link fixed to the world
            raise CorrectionsError(f"corrections: payload: {error}") from error
    return CorrectedModel(model, merged, corrections, corrections.for_joints(model.joint_names), urdf_terms)


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


def _payload(values: object) -> Payload:
    if not isinstance(values, Mapping) or set(values) != {"link", "mass", "com", "inertia"}:
        raise CorrectionsError("corrections: 'payload' must have exactly link, mass, com and inertia")
    inertia = values["inertia"]
    if not isinstance(inertia, Mapping) or set(inertia) != set(INERTIA_KEYS):
        raise CorrectionsError(f"corrections: payload inertia must have exactly {list(INERTIA_KEYS)}")
    com = values["com"]
    if not isinstance(com, Sequence) or isinstance(com, str) or len(com) != 3:
        raise CorrectionsError("corrections: payload com must be [x, y, z]")
    try:
        mass = float(values["mass"])
        centre = np.array([float(x) for x in com])
        I = {k: float(v) for k, v in inertia.items()}
    except (TypeError, ValueError) as error:
        raise CorrectionsError(f"corrections: payload values must be numbers ({error})") from error
    matrix = np.array([[I["ixx"], I["ixy"], I["ixz"]], [I["ixy"], I["iyy"], I["iyz"]], [I["ixz"], I["iyz"], I["izz"]]])
    inertial = Inertial(mass, centre, matrix)
    problems = consistency_problems(inertial)
    if problems:
        raise CorrectionsError(f"corrections: the payload is not a rigid body: {'; '.join(problems)}")
    return Payload(str(values["link"]), inertial)
