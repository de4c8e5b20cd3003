"""URDF text → validated links and joints (plain numpy data, no dynamics yet).

The XML is parsed with entity expansion, DTD loading and network access disabled.
Only what the dynamics read can make a description fail: link names and ``<inertial>``,
joint type, parent, child, origin, axis and mimic. Everything else (visual, collision,
material, transmission, gazebo, ros2_control, sensors, unknown elements) is cut from the
tree before ``urdf_parser_py`` reads the rest. Every problem raises :class:`ModelError`
naming the element; inertias that are not physical are kept with a warning (or refused
with ``strict=True``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
from lxml import etree
from urdf_parser_py import urdf as urdf_parser
from urdf_parser_py.xml_reflection import core as xml_reflection

# urdf_parser_py prints every unknown tag (gazebo, transmission, ...) to stderr.
xml_reflection.on_error = lambda message: None

MOVABLE_TYPES = ("revolute", "continuous", "prismatic")
SUPPORTED_TYPES = (*MOVABLE_TYPES, "fixed", "floating")

# Real URDFs (TIAGo, ANYmal) carry inertias a few 1e-8..1e-6 kg·m² outside the physical
# set: such slips are kept silently. Larger violations are kept with a warning (as Pinocchio
# and robot_state_publisher keep them), or refused with strict=True.
INERTIA_TOLERANCE = 1e-5  # kg·m², plus 1e-6 of the largest principal moment

# Bounds on time and memory for hostile input (README, Reliability: build time and peak
# memory against size). The largest URDF of example-robot-data is 0.2 MiB and 100 links.
MAX_DESCRIPTION_BYTES = 16 * 2**20
MAX_LINKS = 10_000  # and as many joints: ~4 s and ~120 MiB to build on a 2-core machine


class ModelError(ValueError):
    """A robot description that rnea_ros cannot turn into a correct model."""


# What the dynamics read; everything else is dropped unread (URDF elements by parent tag).
KEPT_CHILDREN = {
    "robot": {"link", "joint"},
    "link": {"inertial"},
    "inertial": {"origin", "mass", "inertia"},
    "joint": {"origin", "parent", "child", "axis", "mimic"},
}
XACRO_NAMESPACE = "http://www.ros.org/wiki/xacro"
XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
DECLARED_ENCODING = re.compile(rb"""^\s*<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")


@dataclass(frozen=True)
class Link:
    name: str
    mass: float
    com: np.ndarray  # centre of mass in the link frame
    inertia: np.ndarray  # 3×3 about the centre of mass, in the link frame


@dataclass(frozen=True)
class Mimic:
    joint: str
    multiplier: float
    offset: float


@dataclass(frozen=True)
class Joint:
    name: str
    type: str
    parent: str
    child: str
    rotation: np.ndarray  # pose of the joint frame in the parent link frame
    translation: np.ndarray
    axis: np.ndarray  # unit vector in the joint frame
    mimic: Mimic | None


@dataclass(frozen=True)
class URDFTree:
    name: str
    links: list[Link]
    joints: list[Joint]
    warnings: tuple[str, ...] = ()  # non-physical inertias kept as written
    effort_limits: dict[str, float] = field(default_factory=dict)  # joint -> <limit effort>, when positive
    # joint -> (damping, friction) of <dynamics>, when either is non-zero
    joint_dynamics: dict[str, tuple[float, float]] = field(default_factory=dict)
    # joint -> (lower, upper) of <limit>, revolute and prismatic joints that give both as finite numbers
    position_limits: dict[str, tuple[float, float]] = field(default_factory=dict)


def rpy_to_rotation(rpy) -> np.ndarray:
    """URDF's fixed-axis roll, pitch, yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def parse_urdf(urdf_xml: str | bytes, strict: bool = False) -> URDFTree:
    """Links and joints of a URDF; ``strict`` refuses non-physical inertias instead of warning."""
    root = _parse_xml_safely(urdf_xml)
    _refuse_xacro(root)
    effort_limits, limit_warnings = _effort_limits(root)
    joint_dynamics, dynamics_warnings = _joint_dynamics(root)
    position_limits = _position_limits(root)
    _keep_what_the_dynamics_read(root)
    _check_size(root)
    if not root.get("name"):
        root.set("name", "robot")  # urdf_parser_py requires one; the dynamics do not
    try:
        path = xml_reflection.Path(urdf_parser.URDF.XML_REFL.tag, tree=etree.ElementTree(root))
        robot = urdf_parser.URDF.from_xml(root, path)
    except Exception as error:  # urdf_parser_py raises many types on bad input
        raise ModelError(f"invalid URDF: {error}") from error
    warnings: list[str] = [*limit_warnings, *dynamics_warnings]
    links = [_read_link(link, warnings, strict) for link in robot.links]
    joints = [_read_joint(joint) for joint in robot.joints]
    _check_unique("link", [link.name for link in links])
    _check_unique("joint", [joint.name for joint in joints])
    if not links:
        raise ModelError("the URDF has no <link>")
    return URDFTree(robot.name or "", links, joints, tuple(warnings), effort_limits, joint_dynamics, position_limits)


def _xml_bytes(urdf_xml: str | bytes | bytearray | memoryview) -> bytes:
    """UTF-8 bytes of the document without its XML declaration, leading whitespace or anything
    after the root element. A ``str`` is already decoded text; bytes are decoded with the
    encoding their declaration names (UTF-8 by default)."""
    if isinstance(urdf_xml, (bytearray, memoryview)):
        urdf_xml = bytes(urdf_xml)
    if isinstance(urdf_xml, bytes):
        if len(urdf_xml) > MAX_DESCRIPTION_BYTES:
            raise _too_large(len(urdf_xml))
        declared = DECLARED_ENCODING.match(urdf_xml)
        encoding = declared.group(1).decode() if declared else "utf-8"
        try:
            urdf_xml = urdf_xml.decode(encoding)
        except (LookupError, UnicodeDecodeError) as error:
            raise ModelError(f"the robot description is not valid text: {error}") from error
    if not isinstance(urdf_xml, str):
        raise ModelError(f"the robot description must be text (str or bytes), got {type(urdf_xml).__name__}")
    text = XML_DECLARATION.sub("", urdf_xml, count=1).strip()
    end = text.rfind("</robot>")
    if end >= 0:
        text = text[: end + len("</robot>")]  # stray bytes after the root element (a NUL, a newline)
    try:
        return text.encode("utf-8", errors="strict")
    except UnicodeEncodeError as error:
        raise ModelError(f"the robot description is not valid text: {error}") from error


def _too_large(size: int) -> ModelError:
    return ModelError(
        f"the robot description is {size / 2**20:.0f} MiB, over the "
        f"{MAX_DESCRIPTION_BYTES / 2**20:.0f} MiB limit (no real robot comes near it)"
    )


def _parse_xml_safely(urdf_xml: str | bytes) -> etree._Element:
    urdf_xml = _xml_bytes(urdf_xml)
    if not urdf_xml:
        raise ModelError("the robot description is empty")
    if len(urdf_xml) > MAX_DESCRIPTION_BYTES:
        raise _too_large(len(urdf_xml))
    if b"<!DOCTYPE" in urdf_xml:  # before parsing: entities must not even reach libxml2's expansion limits
        raise ModelError("DOCTYPE declarations (and so XML entities) are not allowed in a URDF")
    parser = etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )
    try:
        root = etree.fromstring(urdf_xml, parser)
    except (etree.XMLSyntaxError, ValueError) as error:
        if b"xacro:" in urdf_xml:
            raise _xacro_error("an undeclared xacro: prefix") from error
        raise ModelError(f"the robot description is not well-formed XML: {error}") from error
    if root is None:
        raise ModelError("the robot description is empty")
    if root.getroottree().docinfo.doctype:
        raise ModelError("DOCTYPE declarations (and so XML entities) are not allowed in a URDF")
    if root.tag != "robot":
        raise ModelError(f"the root element is <{root.tag}>, expected <robot>")
    return root


def _xacro_error(what: str) -> ModelError:
    return ModelError(
        f"the description still holds xacro ({what}): run it through xacro first "
        "(`xacro robot.urdf.xacro > robot.urdf`, or the launch file's urdf:= argument)"
    )


def _refuse_xacro(root: etree._Element) -> None:
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        if element.tag.startswith(f"{{{XACRO_NAMESPACE}}}"):
            raise _xacro_error(f"<xacro:{etree.QName(element).localname}>")
        for value in element.attrib.values():
            if "${" in value or "$(" in value:
                raise _xacro_error(f"'{value[:60]}' in <{element.tag}>")


def _effort_limits(root: etree._Element) -> tuple[dict[str, float], list[str]]:
    """Each joint's ``<limit effort>`` when it is a positive finite number, and a warning for each
    one given otherwise (0, negative, NaN, inf, not a number): no limit then. The simulator applies
    the same rule (``rnea_ros/simulation/physics.py``). Not part of the dynamics: read for whoever
    clips torques."""
    limits, warnings = {}, []
    for joint in root.iterchildren("joint"):
        limit, name = joint.find("limit"), joint.get("name")
        text = limit.get("effort") if limit is not None else None
        if text is None or not name:
            continue
        try:
            effort = float(text)
        except ValueError:
            effort = math.nan
        if math.isfinite(effort) and effort > 0.0:
            limits[name] = effort
        elif joint.get("type") not in ("fixed", "floating", "planar"):
            warnings.append(f"joint '{name}': <limit effort='{text[:40]}'> is not a positive number: no effort limit")
    return limits, warnings


def _position_limits(root: etree._Element) -> dict[str, tuple[float, float]]:
    """Each revolute or prismatic joint's ``<limit lower upper>`` when both are finite numbers with
    lower ≤ upper (a continuous joint has none). Not part of the dynamics: read for whoever moves joints."""
    limits = {}
    for joint in root.iterchildren("joint"):  # <transmission><joint> names a joint, it is none
        limit, name = joint.find("limit"), joint.get("name")
        if limit is None or not name or joint.get("type") not in ("revolute", "prismatic"):
            continue
        try:
            lower, upper = float(limit.get("lower", "nan")), float(limit.get("upper", "nan"))
        except ValueError:
            continue
        if math.isfinite(lower) and math.isfinite(upper) and lower <= upper:
            limits[name] = (lower, upper)
    return limits


def _joint_dynamics(root: etree._Element) -> tuple[dict[str, tuple[float, float]], list[str]]:
    """Each joint's ``<dynamics damping friction>`` (viscous [N·m·s/rad] and dry friction [N·m], as
    MuJoCo and Gazebo apply them), and a warning for each value that is not a finite number ≥ 0
    (taken as 0)."""
    dynamics, warnings = {}, []
    for joint in root.iterchildren("joint"):
        element, name = joint.find("dynamics"), joint.get("name")
        if element is None or not name:
            continue
        values = []
        for key in ("damping", "friction"):
            text = element.get(key, "0")
            try:
                value = float(text)
            except ValueError:
                value = math.nan
            if not (math.isfinite(value) and value >= 0.0):
                warnings.append(f"joint '{name}': <dynamics {key}='{text[:40]}'> is not a number ≥ 0; taken as 0")
                value = 0.0
            values.append(value)
        if any(values):
            dynamics[name] = (values[0], values[1])
    return dynamics, warnings


def _keep_what_the_dynamics_read(root: etree._Element) -> None:
    """Removes every element the dynamics do not read, so that nothing else can fail."""
    stack = [root]
    while stack:
        element = stack.pop()
        kept = KEPT_CHILDREN.get(element.tag)
        for child in list(element):
            if kept is None or not isinstance(child.tag, str) or child.tag not in kept:
                element.remove(child)
            else:
                stack.append(child)


def _check_size(root: etree._Element) -> None:
    for kind in ("link", "joint"):
        count = sum(1 for _ in root.iterchildren(kind))
        if count > MAX_LINKS:
            raise ModelError(f"the robot has {count} <{kind}> elements, over the limit of {MAX_LINKS}")


def _check_unique(kind: str, names: list[str]) -> None:
    seen: set[str] = set()
    for name in names:
        if not name:
            raise ModelError(f"a <{kind}> has no name")
        if name in seen:
            raise ModelError(f"duplicate {kind} name '{name}'")
        seen.add(name)


def _finite_vector(values, size: int, what: str) -> np.ndarray:
    try:
        numbers = [float(x) for x in values]
    except (TypeError, ValueError) as error:
        raise ModelError(f"{what}: expected {size} numbers, got {values!r}") from error
    if len(numbers) != size:
        raise ModelError(f"{what}: expected {size} numbers, got {values!r}")
    if not all(map(math.isfinite, numbers)):
        raise ModelError(f"{what}: non-finite value in {numbers}")
    if any(abs(x) > 1e9 for x in numbers):
        raise ModelError(f"{what}: value out of range in {numbers}")
    return np.array(numbers)


def _pose(origin, what: str) -> tuple[np.ndarray, np.ndarray]:
    if origin is None:
        return np.eye(3), np.zeros(3)
    xyz = _finite_vector(origin.xyz if origin.xyz is not None else [0, 0, 0], 3, f"{what} origin xyz")
    rpy = _finite_vector(origin.rpy if origin.rpy is not None else [0, 0, 0], 3, f"{what} origin rpy")
    return rpy_to_rotation(rpy), xyz


def _read_link(link, warnings: list[str], strict: bool) -> Link:
    what = f"link '{link.name}'"
    inertial = link.inertial
    if inertial is None:
        return Link(link.name, 0.0, np.zeros(3), np.zeros((3, 3)))
    mass = _finite_vector([inertial.mass if inertial.mass is not None else 0.0], 1, f"{what} mass")[0]
    if mass < 0.0:
        raise ModelError(f"{what}: negative mass {mass}")
    rotation, com = _pose(inertial.origin, f"{what} inertial")
    i = inertial.inertia
    if i is None:
        inertia_local = np.zeros((3, 3))
    else:
        ixx, ixy, ixz, iyy, iyz, izz = _finite_vector([i.ixx, i.ixy, i.ixz, i.iyy, i.iyz, i.izz], 6, f"{what} inertia")
        inertia_local = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    problem = _inertia_problem(inertia_local)
    if problem and strict:
        raise ModelError(f"{what}: {problem} (strict: non-physical inertias are refused)")
    if problem:
        warnings.append(f"{what}: {problem}; kept as written")
    return Link(link.name, float(mass), com, rotation @ inertia_local @ rotation.T)


def _inertia_problem(inertia: np.ndarray) -> str | None:
    """Why a rotational inertia is not physical (not positive semi-definite, or its principal
    moments break the triangle inequality), with by how much; None when it is."""
    principal = np.linalg.eigvalsh(inertia)
    tolerance = INERTIA_TOLERANCE + 1e-6 * float(np.abs(principal).max())
    a, b, c = principal
    if a < -tolerance:
        return f"inertia is not positive semi-definite by {-a:.3g} kg·m²{_moments(principal)}"
    if a + b < c - tolerance:
        return f"inertia violates the triangle inequality by {c - a - b:.3g} kg·m²{_moments(principal)}"
    return None


def _moments(principal: np.ndarray) -> str:
    return f" (principal moments {np.array2string(principal, precision=4)})"


def _read_joint(joint) -> Joint:
    what = f"joint '{joint.name}'"
    if joint.type not in SUPPORTED_TYPES:
        raise ModelError(f"{what}: joint type '{joint.type}' is not supported")
    if not joint.parent or not joint.child:
        raise ModelError(f"{what}: needs a <parent> and a <child> link")
    rotation, translation = _pose(joint.origin, what)
    axis = _finite_vector(joint.axis if joint.axis is not None else [1, 0, 0], 3, f"{what} axis")
    norm = np.linalg.norm(axis)
    if joint.type in MOVABLE_TYPES and norm < 1e-9:
        raise ModelError(f"{what}: zero-length axis")
    mimic = None
    if joint.mimic is not None:
        if not joint.mimic.joint:
            raise ModelError(f"{what}: <mimic> names no joint")
        multiplier = joint.mimic.multiplier if joint.mimic.multiplier is not None else 1.0
        offset = joint.mimic.offset if joint.mimic.offset is not None else 0.0
        multiplier, offset = _finite_vector([multiplier, offset], 2, f"{what} mimic")
        mimic = Mimic(joint.mimic.joint, float(multiplier), float(offset))
    return Joint(
        joint.name,
        joint.type,
        joint.parent,
        joint.child,
        rotation,
        translation,
        axis / norm if norm > 0 else axis,
        mimic,
    )
