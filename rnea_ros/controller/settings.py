"""The node's settings: every parameter's value, validated, as one immutable object.

Plain Python (no rclpy). ``Settings`` is generated from ``parameters.py``'s specification (one
field per parameter, its default, its type, range, choices and lengths checked as an instance is
made: ``parameter_spec.settings_class``); ``SettingsMethods`` adds what the node derives from the
values and the two rules across values that the specification cannot say. ``settings_from`` builds
one from ROS parameter values; a live change builds a new one (or is refused with the
``ValueError``'s message) and the node swaps it in whole.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import fields, replace
from typing import NamedTuple

from rnea_ros.controller.law import check_length
from rnea_ros.controller.laws import LAWS
from rnea_ros.controller.parameters import NODE_PARAMETERS
from rnea_ros.dynamics.contact_forces import Contact
from rnea_ros.dynamics.contact_options import ContactQPOptions
from rnea_ros.dynamics.contact_schedule import PeriodicGait
from rnea_ros.parameter_spec import settings_class

MIN_NORMAL = 1e-9  # a contact normal whose largest component is smaller gives no direction
_NAMES = frozenset(spec.name for spec in NODE_PARAMETERS)

# Per-joint gains as joint_trajectory_controller spells them: gains.<joint>.p and gains.<joint>.d.
GAINS_PREFIX = "gains."
GAIN_KINDS = ("p", "d")
JointGains = tuple[tuple[str, str, float], ...]  # (joint, "p" or "d", value), sorted

# ROS names (topics, services, actions), as rcl expands and rmw validates them: what may stand in one
_NAME_CHARACTERS = re.compile(r"[A-Za-z0-9_/~{}]*")
_SUBSTITUTION = re.compile(r"\{([^{}]*)\}")
_SUBSTITUTIONS = ("node", "ns", "namespace")  # rcl's; any other is an error when the name is expanded

Shape = tuple[tuple[float, float] | None, tuple[float, float, float] | None]


class ContactQP(NamedTuple):
    """``contact_distribution``'s arguments (``kind``, ``contacts``, ``options``), comparable: a cache key."""

    kind: str
    contacts: tuple[Contact, ...]
    options: ContactQPOptions


class SettingsMethods:
    """Every parameter of rnea_node (``NODE_PARAMETERS``), validated: an instance is never invalid."""

    def check(self) -> None:
        """The rules across values: a sole's contact has no radius; a normal gives a direction;
        gains given one way (kp/kd arrays or gains.<joint>.p/d), each a number ≥ 0."""
        self._check_joint_gains()
        self._check_action_names()
        self.contact_schedule()
        self.joint_name_map()
        shapes, radii = self.contact_shapes(), self.contact_radii()
        for link, (half, _), radius in zip(self.contact_links, shapes, radii, strict=True):
            if half is not None and radius > 0.0:
                raise ValueError(f"contact '{link}' has a sole: its contact_radius must be 0")
        for k in range(0, len(self.contact_normals), 3):
            normal = self.contact_normals[k : k + 3]
            if any(normal) and max(abs(x) for x in normal) < MIN_NORMAL:
                raise ValueError(
                    f"contact_normals: {list(normal)} is too small to give a direction (all zero: against gravity)"
                )

    def joint_name_map(self) -> dict[str, str]:
        """``joint_names`` as {driver name: URDF name}; ValueError with the entry that is not one."""
        return parse_joint_name_map(self.joint_names)

    def _check_joint_gains(self) -> None:
        for joint, kind, value in self.joint_gains:
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if kind not in GAIN_KINDS or not number or not 0.0 <= value < math.inf:
                raise ValueError(f"{GAINS_PREFIX}{joint}.{kind} must be a finite number ≥ 0, got {value!r}")
        if self.joint_gains and (self.kp or self.kd):
            raise ValueError(
                "gains given twice, as kp/kd and as gains.<joint>.p/d: give one of the two (kp: [] and kd: [] "
                "clear the arrays)"
            )

    def _check_action_names(self) -> None:
        """follow_joint_trajectory_action empty (no action served) or a ROS name; controller_action a
        ROS name, empty only while no action is served (then unused)."""
        served = bool(self.follow_joint_trajectory_action)
        for name in ("follow_joint_trajectory_action", "controller_action"):
            value = getattr(self, name)
            if not value and (name == "follow_joint_trajectory_action" or not served):
                continue
            problem = ros_name_problem(value)
            if problem is not None:
                used = "" if served else " (unused while follow_joint_trajectory_action is empty)"
                raise ValueError(f"{name}: {value!r} is no valid action name{used}: {problem}")

    @property
    def torque_feedback(self) -> bool:
        """Torque-space gains (kp, kd or gains.<joint>), added to every law's source."""
        return any(self.kp) or any(self.kd) or any(value for _, _, value in self.joint_gains)

    @property
    def feedback(self) -> bool:
        """Whether effort_commands close a loop: torque-space gains, or a law with gains of its own."""
        return self.torque_feedback or LAWS[self.command_source].closes_loop(self)

    def check_gains(self, command_joints: Sequence[str]) -> None:
        """ValueError unless kp and kd (and the command law's own arrays) each hold 0, 1 or one value per
        command joint, and gains.<joint> name command joints only (with the closest name when one is a
        near miss)."""
        for name in ("kp", "kd"):
            check_length(name, getattr(self, name), command_joints)
        LAWS[self.command_source].check(self, command_joints)
        for joint in sorted({joint for joint, _, _ in self.joint_gains} - set(command_joints)):
            close = difflib.get_close_matches(joint, command_joints, n=1, cutoff=0.6)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ValueError(f"{GAINS_PREFIX}{joint}: '{joint}' is no command joint{hint}")

    def contact_shapes(self) -> list[Shape]:
        """Per contact link: (sole half length and half width, or None for a point; the world-frame
        normal, or None for against gravity)."""
        shapes = []
        for k in range(len(self.contact_links)):
            length, width = self.sole_size[2 * k : 2 * k + 2] if len(self.sole_size) > 2 else self.sole_size
            normal = self.contact_normals[3 * k : 3 * k + 3] if len(self.contact_normals) > 3 else self.contact_normals
            half = (length / 2, width / 2) if length > 0.0 and width > 0.0 else None
            shapes.append((half, _unit(normal) if any(normal) else None))
        return shapes

    def contact_radii(self) -> list[float]:
        """Per contact link: its foot's radius (0: the contact at the link's origin)."""
        radius = self.contact_radius
        return [radius[k] if len(radius) > 1 else radius[0] for k in range(len(self.contact_links))]

    def contact_schedule(self) -> PeriodicGait | None:
        """The periodic gait over contact_links (None: no gait, every link in stance); ValueError
        (``ScheduleError``, with the reason) when it cannot be walked."""
        if self.gait_period == 0.0:
            return None
        if not self.contact_links:
            raise ValueError("gait_period: a gait needs contact_links")
        return PeriodicGait(self.contact_links, self.gait_period, self.gait_duty, self.gait_phases)

    def contact_qp(self, links: Sequence[str]) -> ContactQP:
        """The contact distribution these settings ask for onto ``links`` (contact_links, in order):
        the one place where parameters become the library's arguments."""
        contacts = tuple(
            Contact(link, half, normal, radius)
            for link, (half, normal), radius in zip(links, self.contact_shapes(), self.contact_radii(), strict=True)
        )
        options = ContactQPOptions(**{option.name: getattr(self, option.name) for option in fields(ContactQPOptions)})
        return ContactQP(self.contact_distribution, contacts, options)

    def with_values(self, **values) -> Settings:
        """A copy with some values changed; ValueError (with the reason) when one is not valid."""
        return replace(self, **values)


Settings = settings_class("Settings", NODE_PARAMETERS, SettingsMethods, extra=(("joint_gains", JointGains, ()),))


def settings_from(values: dict[str, object], base: Settings | None = None) -> Settings:
    """Settings from ROS parameter values (all, or only those that change, applied to ``base``);
    ValueError with the reason when one is not valid. Parameters that are not rnea_node's own
    (those rclpy declares: use_sim_time, qos_overrides.*, ...) are rclpy's business, not the settings'.
    ``gains.<joint>.p`` and ``.d`` become ``joint_gains``, merged into ``base``'s."""
    base = base or Settings()
    own = {name: v for name, v in values.items() if name in _NAMES}
    joint_gains = joint_gains_from(values, base.joint_gains)
    if joint_gains is not None:
        own["joint_gains"] = joint_gains
    return base.with_values(**own)


def joint_gains_from(values: Mapping[str, object], base: JointGains = ()) -> JointGains | None:
    """The gains.<joint>.p and .d among ROS parameter values, merged into ``base``; None when there are none."""
    given = {name: value for name, value in values.items() if name.startswith(GAINS_PREFIX)}
    if not given:
        return None
    merged = {(joint, kind): value for joint, kind, value in base}
    for name, value in given.items():
        joint, _, kind = name[len(GAINS_PREFIX) :].rpartition(".")
        if not joint or kind not in GAIN_KINDS:
            raise ValueError(f"{name}: per-joint gains are {GAINS_PREFIX}<joint>.p and {GAINS_PREFIX}<joint>.d")
        merged[(joint, kind)] = value
    return tuple(sorted((joint, kind, value) for (joint, kind), value in merged.items()))


def parse_joint_name_map(entries: Sequence[str]) -> dict[str, str]:
    """{driver name: URDF name} from entries 'driver:=urdf' (or 'driver=urdf'); ValueError otherwise."""
    mapping: dict[str, str] = {}
    for entry in entries:
        driver, separator, urdf = entry.partition(":=" if ":=" in entry else "=")
        driver, urdf = driver.strip(), urdf.strip()
        if not separator or not driver or not urdf:
            raise ValueError(f"joint_names: {entry!r} is not 'driver_name:=urdf_name'")
        if driver in mapping:
            raise ValueError(f"joint_names maps '{driver}' twice")
        if urdf in mapping.values():
            raise ValueError(f"joint_names maps two driver names onto '{urdf}'")
        mapping[driver] = urdf
    return mapping


def ros_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a topic, service or action (as given to a node: relative, absolute,
    ``~`` private, with rcl's ``{node}``-style substitutions); None when it can. The rules of rcl's
    name validation and expansion and rmw's check of the expanded name, but for its length (which
    depends on the namespace)."""
    if not name:
        return "it is empty"
    if not _NAME_CHARACTERS.fullmatch(name):
        bad = sorted({c for c in name if not _NAME_CHARACTERS.fullmatch(c)})
        listed = ", ".join(repr(c) for c in bad)
        return f"it contains {listed}: only letters, digits, '_', '/', '~' at the start and {{substitutions}}"
    if "~" in name[1:] or (name.startswith("~") and name[1:2] not in ("", "/")):
        return "'~' may only stand alone or start it as '~/'"
    for content in _SUBSTITUTION.findall(name):
        if content not in _SUBSTITUTIONS:
            return f"{{{content}}} is no substitution ({', '.join('{' + s + '}' for s in _SUBSTITUTIONS)})"
    plain = _SUBSTITUTION.sub(lambda found: "x" if found[1] == "node" else "/x", name)  # {ns}: "/" + namespace
    if "{" in plain or "}" in plain:
        return "a '{' or '}' without its pair"
    if name.endswith("/"):
        return "it ends with '/'"
    if "//" in plain:
        return "it contains '//'" if "//" in name else "it contains '//' once {ns} is replaced ('/' + namespace)"
    if any(token[:1].isdigit() for token in plain.split("/")):
        return "a part starts with a digit"
    return None


def _unit(vector) -> tuple[float, float, float]:
    """``vector`` scaled to length 1, without overflow or underflow on the way."""
    largest = max(abs(x) for x in vector)
    scaled = [x / largest for x in vector]
    length = math.sqrt(sum(x * x for x in scaled))
    return tuple(x / length for x in scaled)
