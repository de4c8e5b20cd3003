"""The node's settings: every parameter's value, validated, as one immutable object.

Plain Python (no rclpy): the fields and their defaults are those of ``parameters.py``'s
specification (a test holds them equal); ``ros_parameters`` declares them and ``settings_from`` builds a
``Settings`` from their values; a live change builds a new one (or is refused with the
``ValueError``'s message) and the node swaps it in whole.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from rnea_ros.node.parameters import COMMAND_SOURCES, CONTACT_DISTRIBUTIONS, NODE_PARAMETERS
from rnea_ros.parameter_spec import defaults, typed_values

MAX_TOPICS = 32  # wrench topics: each is a subscription; a thousand would be a mistake, not a robot
MIN_NORMAL = 1e-9  # a contact normal whose largest component is smaller gives no direction
_DEFAULT = defaults(NODE_PARAMETERS)  # the one source of every default (and of every field's meaning)


@dataclass(frozen=True)
class Settings:
    robot_description: str = _DEFAULT["robot_description"]
    strict_inertia: bool = _DEFAULT["strict_inertia"]
    gravity: tuple[float, float, float] = _DEFAULT["gravity"]
    state_timeout: float = _DEFAULT["state_timeout"]
    acceleration_timeout: float = _DEFAULT["acceleration_timeout"]
    wrench_timeout: float = _DEFAULT["wrench_timeout"]
    future_stamp_tolerance: float = _DEFAULT["future_stamp_tolerance"]
    use_desired_state: bool = _DEFAULT["use_desired_state"]
    wrench_topics: tuple[str, ...] = _DEFAULT["wrench_topics"]
    flip_wrench_topics: tuple[str, ...] = _DEFAULT["flip_wrench_topics"]
    command_joints: tuple[str, ...] = _DEFAULT["command_joints"]
    kp: tuple[float, ...] = _DEFAULT["kp"]
    kd: tuple[float, ...] = _DEFAULT["kd"]
    command_source: str = _DEFAULT["command_source"]
    trajectory_resampling: float = _DEFAULT["trajectory_resampling"]
    urdf_joint_dynamics: bool = _DEFAULT["urdf_joint_dynamics"]
    corrections_file: str = _DEFAULT["corrections_file"]
    floating_base: bool = _DEFAULT["floating_base"]
    base_timeout: float = _DEFAULT["base_timeout"]
    contact_links: tuple[str, ...] = _DEFAULT["contact_links"]
    contact_distribution: str = _DEFAULT["contact_distribution"]
    friction_coefficient: float = _DEFAULT["friction_coefficient"]
    min_normal_force: float = _DEFAULT["min_normal_force"]
    friction_margin: float = _DEFAULT["friction_margin"]
    sole_margin: float = _DEFAULT["sole_margin"]
    tangential_weight: float = _DEFAULT["tangential_weight"]
    moment_length: float = _DEFAULT["moment_length"]
    sole_size: tuple[float, ...] = _DEFAULT["sole_size"]
    contact_radius: tuple[float, ...] = _DEFAULT["contact_radius"]
    contact_normals: tuple[float, ...] = _DEFAULT["contact_normals"]

    def __post_init__(self) -> None:
        if len(self.gravity) != 3 or not all(math.isfinite(g) for g in self.gravity):
            raise ValueError(f"gravity must be 3 finite numbers, got {list(self.gravity)}")
        for name in ("state_timeout", "acceleration_timeout", "wrench_timeout", "base_timeout"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"{name} must be a positive number of seconds, got {value}")
        if not (math.isfinite(self.future_stamp_tolerance) and self.future_stamp_tolerance >= 0.0):
            raise ValueError(f"future_stamp_tolerance must be ≥ 0 s, got {self.future_stamp_tolerance}")
        for name in ("kp", "kd"):
            gains = getattr(self, name)
            if not all(math.isfinite(k) and k >= 0.0 for k in gains):
                raise ValueError(f"{name} must be finite and ≥ 0, got {list(gains)}")
        if self.contact_distribution not in CONTACT_DISTRIBUTIONS:
            raise ValueError(
                f"contact_distribution must be one of {list(CONTACT_DISTRIBUTIONS)}, got '{self.contact_distribution}'"
            )
        links = len(self.contact_links)
        if len(self.sole_size) not in (2, 2 * links) or not all(math.isfinite(x) and x >= 0.0 for x in self.sole_size):
            raise ValueError(
                f"sole_size must be [length, width] ≥ 0 for every contact link, or one pair per link ({2 * links} "
                f"values), got {list(self.sole_size)}"
            )
        if len(self.contact_normals) not in (3, 3 * links) or not all(math.isfinite(x) for x in self.contact_normals):
            raise ValueError(
                f"contact_normals must be 3 finite numbers for every contact link, or 3 per link ({3 * links} "
                f"values), got {list(self.contact_normals)}"
            )
        if len(self.contact_radius) not in (1, links) or not all(0.0 <= r <= 1.0 for r in self.contact_radius):
            raise ValueError(
                f"contact_radius must be in [0, 1] m, one for every contact link or one per link ({links} values), "
                f"got {list(self.contact_radius)}"
            )
        for k in range(links):
            if self.contact_shapes()[k][0] is not None and self._radius(k) > 0.0:
                raise ValueError(f"contact '{self.contact_links[k]}' has a sole: its contact_radius must be 0")
        for k in range(0, len(self.contact_normals), 3):
            normal = self.contact_normals[k : k + 3]
            if any(normal) and max(abs(x) for x in normal) < MIN_NORMAL:
                raise ValueError(
                    f"contact_normals: {list(normal)} is too small to give a direction (all zero: against gravity)"
                )
        for name in ("command_joints", "contact_links"):
            names = getattr(self, name)
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                raise ValueError(f"{name} lists {twice} more than once")
        if self.command_source not in COMMAND_SOURCES:
            raise ValueError(f"command_source must be one of {list(COMMAND_SOURCES)}, got '{self.command_source}'")
        if len(self.wrench_topics) > MAX_TOPICS:
            raise ValueError(f"wrench_topics lists {len(self.wrench_topics)} topics, at most {MAX_TOPICS}")

    @property
    def feedback(self) -> bool:
        return any(self.kp) or any(self.kd)

    def check_gains(self, joints: int) -> None:
        """ValueError unless kp and kd each hold 0, 1 or ``joints`` (the command joints) values."""
        for name in ("kp", "kd"):
            if len(getattr(self, name)) not in (0, 1, joints):
                raise ValueError(
                    f"{name} has {len(getattr(self, name))} values: give 1, or one per command joint ({joints})"
                )

    def contact_shapes(self) -> list[tuple[tuple[float, float] | None, tuple[float, float, float] | None]]:
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
        return [self._radius(k) for k in range(len(self.contact_links))]

    def _radius(self, k: int) -> float:
        return self.contact_radius[k] if len(self.contact_radius) > 1 else self.contact_radius[0]

    def with_values(self, **values) -> Settings:
        """A copy with some values changed; ValueError (with the reason) when one is not valid."""
        return replace(self, **values)


def settings_from(values: dict[str, object], base: Settings | None = None) -> Settings:
    """Settings from ROS parameter values (all, or only those that change, applied to ``base``);
    ValueError with the reason when one is not valid."""
    return (base or Settings()).with_values(**typed_values(NODE_PARAMETERS, values))


def _unit(vector) -> tuple[float, float, float]:
    """``vector`` scaled to length 1, without overflow or underflow on the way."""
    largest = max(abs(x) for x in vector)
    scaled = [x / largest for x in vector]
    length = math.sqrt(sum(x * x for x in scaled))
    return tuple(x / length for x in scaled)
