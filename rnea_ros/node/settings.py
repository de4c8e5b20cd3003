"""The node's settings: every parameter's value, validated, as one immutable object.

Plain Python (no rclpy): ``parameters.py`` declares the ROS parameters and builds a
``Settings`` from them; a live change builds a new one (or is refused with the
``ValueError``'s message) and the node swaps it in whole.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

MAX_TOPICS = 32  # wrench topics: each is a subscription; a thousand would be a mistake, not a robot
# What feeds effort_commands besides the feedback: full inverse dynamics, gravity compensation
# only (hand-guiding), or nothing (feedback only, for comparisons).
COMMAND_SOURCES = ("inverse_dynamics", "gravity", "none")
CONTACT_DISTRIBUTIONS = ("minimum_norm", "qp")


@dataclass(frozen=True)
class Settings:
    robot_description: str = ""
    strict_inertia: bool = False
    gravity: tuple[float, float, float] = (0.0, 0.0, -9.81)
    state_timeout: float = 0.1
    acceleration_timeout: float = 0.1
    wrench_timeout: float = 0.1
    future_stamp_tolerance: float = 1.0
    use_desired_state: bool = False
    wrench_topics: tuple[str, ...] = ("external_wrenches",)
    flip_wrench_topics: tuple[str, ...] = ()
    command_joints: tuple[str, ...] = ()
    floating_base: bool = False
    base_timeout: float = 0.1
    contact_links: tuple[str, ...] = ()
    contact_distribution: str = "minimum_norm"  # or "qp": forces the ground can provide
    friction_coefficient: float = 0.7
    min_normal_force: float = 0.0  # N
    # [length (link x), width (link y)] [m] for every contact link or per link; zeros: a point contact
    sole_size: tuple[float, ...] = (0.0, 0.0)
    contact_normals: tuple[float, ...] = (0.0, 0.0, 0.0)  # world frame, for all or per link; zeros: against gravity
    kp: tuple[float, ...] = ()  # per command joint, or one for all; empty: no feedback
    kd: tuple[float, ...] = ()
    command_source: str = "inverse_dynamics"
    corrections_file: str = ""  # corrections.yaml from rnea_analyze --identify; empty: none

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
            shapes.append((half, tuple(normal) if any(normal) else None))
        return shapes

    def with_values(self, **values) -> Settings:
        """A copy with some values changed; ValueError (with the reason) when one is not valid."""
        return replace(self, **values)


def names(values) -> tuple[str, ...]:
    """A string-array parameter as a tuple without empty entries (``[""]`` stands for an empty list)."""
    return tuple(str(v) for v in values if v)
