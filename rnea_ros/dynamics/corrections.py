"""What the URDF leaves out of a joint's torque, identified from recordings (no ROS).

Per joint: τ_joint = τ_RNEA + viscous·q̇ + coulomb·tanh((q̇ + coulomb_lead·q̈) / coulomb_width) + armature·q̈ + offset
(the joint terms and their law: ``dynamics.regressor``, ``JOINT_TERMS``).
``coulomb_lead`` [s] (0 unless identified): friction that settles within a time constant instead of
at once (MuJoCo's soft friction loss, a joint's presliding) follows the velocity that far ahead.
Values in SI units (N·m·s/rad, N·m, rad/s, kg·m², N·m; N and m for prismatic joints). The
file form (``corrections.yaml``) is a mapping with a schema ``version`` and ``joints``:
joint name → the parameters it has (a parameter left out is zero). Version 2 adds an optional
``payload``: a rigid load merged into one link's inertia, written like a URDF <inertial> in
that link's frame::

    payload: {link: tool, mass: 1.5, com: [0.0, 0.0, 0.05],
              inertia: {ixx: 0.002, ixy: 0.0, ixz: 0.0, iyy: 0.002, iyz: 0.0, izz: 0.001}}

(mass [kg], centre of mass [m], inertia about the centre of mass [kg·m²]; it must be one a rigid
body can have). Version 3 ends with ``end: true``, the last key: a file caught while it is being
written lacks it and is refused (``save_corrections`` also writes atomically). Versions 1 (no
payload) and 2 are read as they were, without that protection.

The file is read defensively: a regular file of at most ``MAX_FILE_BYTES`` (a FIFO or a device is
refused without waiting on it), YAML without anchors, aliases or duplicate keys, numbers that are
numbers (``true`` is not 1), each within ``MAX_VALUE`` (and a payload within ``MAX_PAYLOAD_MASS``):
finite values that large only come from a broken tool, and would make the efforts overflow.
"""

from __future__ import annotations

import difflib
import math
import os
import stat
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, make_dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from rnea_ros.dynamics.payload import Inertial, consistency_problems
from rnea_ros.dynamics.regressor import (
    DEFAULT_COULOMB_WIDTH,
    JOINT_TERMS,
    MAX_COULOMB_LEAD,
    SHAPE,
    SHAPE_DEFAULTS,
    TERM_NAMES,
    joint_torques,
)

if TYPE_CHECKING:
    from rnea_ros.dynamics.data import ModelData
    from rnea_ros.dynamics.model import RobotModel

SCHEMA_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
MAX_FILE_BYTES = 1 << 20  # 1 MiB: thousands of joints
MAX_VALUE = 1e6  # |viscous|, |coulomb|, armature, |offset|, coulomb_width; payload com [m] and inertia
MAX_PAYLOAD_MASS = 1e4  # kg
INERTIA_KEYS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
PARAMETERS = TERM_NAMES


class CorrectionsError(ValueError):
    """A corrections file that cannot be used as a whole."""


# One joint's terms: a float per JOINT_TERMS name (0: none), then the Coulomb shape (keyword only).
JointCorrection = make_dataclass(
    "JointCorrection",
    [(name, float, field(default=0.0)) for name in TERM_NAMES]
    + [(name, float, field(default=value, kw_only=True)) for name, value in zip(SHAPE, SHAPE_DEFAULTS, strict=True)],
    frozen=True,
    namespace={"__module__": __name__},
)


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
        if type(version) is not int or version not in READABLE_VERSIONS:
            raise CorrectionsError(f"corrections: version must be one of {READABLE_VERSIONS}, got {version!r}")
        unknown = set(data) - {"version", "joints", "payload", "end"}
        if unknown:
            raise CorrectionsError(f"corrections: unknown keys {sorted(unknown)}")
        if version >= 3 and (data.get("end") is not True or list(data)[-1] != "end"):
            raise CorrectionsError("corrections: no 'end: true' as the last key (a file cut short while written?)")
        if version < 3 and "end" in data:
            raise CorrectionsError("corrections: 'end' needs version 3")
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
            "joints": {name: _given(c) for name, c in self.joints.items()},
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
        data["end"] = True
        return data

    def check_joints(self, joint_names: Sequence[str], link_names: Sequence[str] | None = None) -> None:
        """CorrectionsError when a joint (or the payload's link, given ``link_names``) is not the
        model's, naming it and the model's nearest names. The one rule, whichever of the model and
        the file comes first: a file that does not fit is refused whole, never applied in part."""
        unknown = sorted(set(self.joints) - set(joint_names))
        if unknown:
            raise CorrectionsError(
                f"corrections name joints the model does not have: {unknown}{_near_misses(unknown, joint_names)}"
            )
        if self.payload is not None and link_names is not None and self.payload.link not in link_names:
            raise CorrectionsError(
                f"corrections: the payload's link '{self.payload.link}' is not a link of the model"
                + _near_misses([self.payload.link], link_names)
            )

    def torques(self, joint_names: Sequence[str], qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """The corrections' torque per joint (``joint_names`` order; joints without one: 0)."""
        return self.for_joints(joint_names).torques(qd, qdd)

    def for_joints(self, joint_names: Sequence[str]) -> JointArrays:
        """The parameters as arrays in ``joint_names`` order (joints without corrections: 0)."""
        rows = [self.joints.get(name, JointCorrection()) for name in joint_names]
        return JointArrays(**{key: np.array([getattr(r, key) for r in rows]) for key in (*PARAMETERS, *SHAPE)})


def _joint_arrays_torques(self, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
    """The joint terms' torques at q̇, q̈ (1-D or a batch), by the law of ``dynamics.regressor``."""
    return joint_torques(self.values, qd, qdd, self.coulomb_width, self.coulomb_lead)


def _joint_arrays_values(self) -> None:
    object.__setattr__(self, "values", tuple(getattr(self, name) for name in TERM_NAMES))


# One model's corrections, as arrays in its joint order (built once per model): a field per
# JOINT_TERMS name and the shape; ``values``: the terms' arrays in JOINT_TERMS order.
JointArrays = make_dataclass(
    "JointArrays",
    [(name, np.ndarray) for name in (*TERM_NAMES, *SHAPE)],
    frozen=True,
    namespace={"__module__": __name__, "__post_init__": _joint_arrays_values, "torques": _joint_arrays_torques},
)


def load_corrections(path: str | Path) -> Corrections:
    """A corrections.yaml as ``Corrections`` (CorrectionsError with the reason otherwise)."""
    text = read_small_file(path, MAX_FILE_BYTES, "corrections file")
    return Corrections.from_dict(strict_yaml(text, f"corrections file '{path}'"))


def read_small_file(path: str | Path, limit: int, what: str) -> str:
    """The UTF-8 text of a regular file of at most ``limit`` bytes, read without blocking on a FIFO
    or a device (they are refused); CorrectionsError otherwise."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as error:
        raise CorrectionsError(f"{what} '{path}': {error.strerror or error}") from error
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise CorrectionsError(f"{what} '{path}' is not a regular file")
        if status.st_size > limit:
            raise CorrectionsError(f"{what} '{path}' has {status.st_size} bytes, more than the {limit} allowed")
        with os.fdopen(descriptor, "rb", closefd=False) as file:
            data = file.read(limit + 1)
    except OSError as error:
        raise CorrectionsError(f"{what} '{path}': {error.strerror or error}") from error
    finally:
        os.close(descriptor)
    if len(data) > limit:  # grew since the check
        raise CorrectionsError(f"{what} '{path}' has more than the {limit} bytes allowed")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise CorrectionsError(f"{what} '{path}' is not UTF-8 text") from error


def strict_yaml(text: str, what: str) -> object:
    """YAML without anchors and aliases (which expand: a few bytes can ask for gigabytes) and
    without duplicate keys (one would silently win); CorrectionsError otherwise."""
    import yaml  # the file's format: the core itself does not need it

    class StrictLoader(yaml.SafeLoader):
        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent) or getattr(self.peek_event(), "anchor", None):
                raise CorrectionsError(f"{what}: YAML anchors and aliases are not allowed")
            return super().compose_node(parent, index)

        def construct_mapping(self, node, deep=False):
            keys = [self.construct_object(key, deep=True) for key, _ in node.value]
            duplicates = sorted({str(k) for k in keys if keys.count(k) > 1})
            if duplicates:
                raise CorrectionsError(f"{what}: keys given twice: {duplicates}")
            return super().construct_mapping(node, deep)

    try:
        return yaml.load(text, Loader=StrictLoader)
    except yaml.YAMLError as error:
        raise CorrectionsError(f"{what}: {error}") from error


def save_corrections(corrections: Corrections, path: str | Path) -> None:
    """Writes ``corrections`` as a corrections.yaml (the schema of this module's docstring),
    atomically: a reader sees the old file or the new one, never a part (CorrectionsError when the
    file cannot be written)."""
    import yaml

    path = Path(path)
    text = yaml.safe_dump(corrections.to_dict(), sort_keys=False)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise CorrectionsError(f"cannot write '{path}': {error.strerror or error}") from error


@dataclass(frozen=True)
class CorrectedModel:
    """A description's model with corrections applied, as rnea_node and rnea_analyze both compute:
    the payload merged into ``model`` (``urdf_model`` is the description's); the joint terms in the
    model's joint order, per joint either the corrections' (``joint_terms``; None without
    corrections) or, with ``urdf_dynamics``, the URDF's own ``<dynamics damping friction>``
    (``urdf_terms``, as the simulator has them; None when left out or absent), never both: a
    correction replaces the URDF's terms of the joints it names (it was fitted as the whole of them)."""

    urdf_model: RobotModel
    model: RobotModel
    corrections: Corrections | None = None
    joint_terms: JointArrays | None = None
    urdf_terms: JointArrays | None = None
    urdf_dynamics: bool = False  # whether the URDF's <dynamics> are in the model where no correction replaces them

    @property
    def payload(self) -> Payload | None:
        return self.corrections.payload if self.corrections is not None else None

    @property
    def offset(self) -> np.ndarray | float:
        return self.joint_terms.offset if self.joint_terms is not None else 0.0

    def with_corrections(self, corrections: Corrections | None) -> CorrectedModel:
        """The description's model with other corrections (the merged model reused when the payload
        is the same); CorrectionsError when a joint or the payload's link is not the model's."""
        return with_corrections(self.urdf_model, corrections, self.urdf_dynamics, reuse=self)

    def joint_torques(self, qd: np.ndarray, qdd: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """τ (the joints' rows, 1-D or a batch) with the joint terms at q̇, q̈ added; τ itself without any."""
        for terms in (self.urdf_terms, self.joint_terms):
            if terms is not None:
                tau = tau + terms.torques(qd, qdd)
        return tau

    def inverse_dynamics(self, q, qd, qdd, wrenches=None, data: ModelData | None = None) -> np.ndarray:
        """The corrected model's τ (fixed base; 1-D or a batch): rigid body with the payload, plus the
        joint terms; ``data``: the calling thread's (``RobotModel.inverse_dynamics``)."""
        return self.joint_torques(qd, qdd, self.model.inverse_dynamics(q, qd, qdd, wrenches, data))


def urdf_joint_terms(model: RobotModel, replaced: Collection[str] = ()) -> JointArrays | None:
    """The URDF's ``<dynamics damping friction>`` as joint terms: viscous = damping, Coulomb = friction,
    but for the ``replaced`` joints (None when no other joint has them)."""
    joints = {
        name: JointCorrection(viscous=damping, coulomb=friction)
        for name, (damping, friction) in model.joint_dynamics.items()
        if name not in replaced
    }
    return Corrections(joints).for_joints(model.joint_names) if joints else None


def with_corrections(
    model: RobotModel,
    corrections: Corrections | None,
    urdf_dynamics: bool = False,
    reuse: CorrectedModel | None = None,
) -> CorrectedModel:
    """``model`` (a description's) with a corrections file's terms: the payload merged in, the joint
    terms added; with ``urdf_dynamics`` also its URDF's ``<dynamics damping friction>`` on the joints
    the corrections do not name (rigid bodies only by default, as Pinocchio and ros2_control; see
    ``CorrectedModel``); CorrectionsError when they do not fit the model. ``reuse``: a corrected
    model of the same description whose merged model is taken again when the payload is the same."""
    replaced = corrections.joints if corrections is not None else ()
    urdf_terms = urdf_joint_terms(model, replaced) if urdf_dynamics else None
    if corrections is None:
        return CorrectedModel(model, model, urdf_terms=urdf_terms, urdf_dynamics=urdf_dynamics)
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
    joint_terms = corrections.for_joints(model.joint_names)
    return CorrectedModel(model, merged, corrections, joint_terms, urdf_terms, urdf_dynamics)


def _near_misses(unknown: Sequence[str], names: Sequence[str]) -> str:
    """The hint "(did you mean 'joint2' for 'jiont2'?)" for the unknown names close to one of ``names``."""
    pairs = [(name, difflib.get_close_matches(name, names, n=1, cutoff=0.6)) for name in unknown]
    hints = [f"'{match[0]}' for '{name}'" for name, match in pairs if match]
    return f" (did you mean {', '.join(hints)}?)" if hints else ""


def _joint(name: str, values: object) -> JointCorrection:
    if not isinstance(values, Mapping):
        raise CorrectionsError(f"corrections: joint '{name}' must map parameters to numbers")
    unknown = set(values) - {*PARAMETERS, *SHAPE}
    if unknown:
        raise CorrectionsError(f"corrections: joint '{name}' has unknown parameters {sorted(unknown)}")
    numbers = {}
    for key, value in values.items():
        number = _number(value, f"joint '{name}' {key}")
        if abs(number) > MAX_VALUE:
            raise CorrectionsError(f"corrections: joint '{name}' {key} = {number:g} is beyond ±{MAX_VALUE:g}")
        numbers[key] = number
    if numbers.get("coulomb_width", DEFAULT_COULOMB_WIDTH) <= 0.0:
        raise CorrectionsError(f"corrections: joint '{name}' coulomb_width must be > 0")
    if not 0.0 <= numbers.get("coulomb_lead", 0.0) <= MAX_COULOMB_LEAD:
        raise CorrectionsError(f"corrections: joint '{name}' coulomb_lead must be within [0, {MAX_COULOMB_LEAD:g}] s")
    for term in JOINT_TERMS:
        if term.nonnegative and numbers.get(term.name, 0.0) < 0.0:
            raise CorrectionsError(f"corrections: joint '{name}' {term.name} must be ≥ 0 ({term.nonnegative})")
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
    mass = _number(values["mass"], "payload mass")
    centre = np.array([_number(x, "payload com") for x in com])
    I = {k: _number(v, f"payload inertia {k}") for k, v in inertia.items()}
    if mass > MAX_PAYLOAD_MASS or np.abs(centre).max() > MAX_VALUE or max(map(abs, I.values())) > MAX_VALUE:
        raise CorrectionsError(
            f"corrections: the payload is beyond {MAX_PAYLOAD_MASS:g} kg, or its com or inertia beyond ±{MAX_VALUE:g}"
        )
    matrix = np.array([[I["ixx"], I["ixy"], I["ixz"]], [I["ixy"], I["iyy"], I["iyz"]], [I["ixz"], I["iyz"], I["izz"]]])
    inertial = Inertial(mass, centre, matrix)
    problems = consistency_problems(inertial)
    if problems:
        raise CorrectionsError(f"corrections: the payload is not a rigid body: {'; '.join(problems)}")
    return Payload(str(values["link"]), inertial)


def _number(value: object, what: str) -> float:
    """A finite int or float (a YAML ``true`` is no number); CorrectionsError otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CorrectionsError(f"corrections: {what} is not a number: {value!r}")
    if not math.isfinite(value):
        raise CorrectionsError(f"corrections: {what} is not finite")
    return float(value)


def _given(correction: JointCorrection) -> dict[str, float]:
    """A joint's parameters as the file writes them: only those that are not zero (a parameter
    that was not identified is absent, not a number), the Coulomb term's width with it, and its
    lead when there is one."""
    values = {key: float(getattr(correction, key)) for key in PARAMETERS if getattr(correction, key) != 0.0}
    if correction.coulomb != 0.0:
        values["coulomb_width"] = float(correction.coulomb_width)
        if correction.coulomb_lead != 0.0:
            values["coulomb_lead"] = float(correction.coulomb_lead)
    return values
