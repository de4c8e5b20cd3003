"""The contact QP's options, their defaults and their bounds: defined once, here.

``ContactForceQP`` and ``contact_distribution`` take a ``ContactQPOptions``; the node's parameters
read their defaults and ranges from ``ContactQPOptions()`` and ``CONTACT_QP_BOUNDS``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

MAX_RADIUS = 1.0  # m: a foot's radius beyond this is a wheel, not a foot
CONTACT_RADIUS_BOUNDS = (0.0, MAX_RADIUS)  # a point contact's spherical foot [m]

# Closed ranges [low, high] of each option.
CONTACT_QP_BOUNDS: dict[str, tuple[float, float]] = {
    "friction_coefficient": (0.01, 10.0),
    "min_normal_force": (0.0, 1e5),  # N
    "friction_margin": (0.05, 1.0),
    "sole_margin": (0.05, 1.0),
    "tangential_weight": (1e-3, 1e3),  # beyond these the objective's conditioning suffers
    "moment_length": (1e-3, 10.0),  # m
}


@dataclass(frozen=True)
class ContactQPOptions:
    """What the contact QP (``contact_forces``' module docstring) is asked for; ValueError beyond
    ``CONTACT_QP_BOUNDS``. The defaults are the node's: a margin on friction and on the soles, and
    forces drawn toward the contact normals and the soles' centres."""

    friction_coefficient: float = 0.7  # μ of every contact
    min_normal_force: float = 0.0  # the least normal force of every contact [N]
    friction_margin: float = 0.9  # the fraction of μ the forces may use
    sole_margin: float = 0.8  # the fraction of each sole's half sizes the centre of pressure may use
    tangential_weight: float = 10.0  # a tangential newton weighs this much against a normal one
    moment_length: float = 0.05  # a sole's moment weighs as a force at this length [m]

    def __post_init__(self) -> None:
        for option in fields(self):
            value = getattr(self, option.name)
            low, high = CONTACT_QP_BOUNDS[option.name]
            if not (isinstance(value, (int, float)) and math.isfinite(value) and low <= value <= high):
                raise ValueError(f"{option.name} must be in [{low:g}, {high:g}], got {value!r}")

    @classmethod
    def smallest_forces(cls, friction_coefficient: float = 0.7, min_normal_force: float = 0.0) -> ContactQPOptions:
        """No margins, W = I: the smallest admissible forces that use all of μ and of the soles."""
        return cls(friction_coefficient, min_normal_force, 1.0, 1.0, 1.0, 1.0)
