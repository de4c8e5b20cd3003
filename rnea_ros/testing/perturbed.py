"""A URDF as CAD gets it wrong: every link's mass and inertia off by a factor, its centre of mass
moved (the identification tests' starting point; the true robot stays in the simulator)."""

from __future__ import annotations

import numpy as np
from lxml import etree


def perturbed_urdf(
    urdf: str,
    seed: int,
    scale: tuple[float, float] = (0.2, 0.3),
    shift: tuple[float, float] = (0.01, 0.03),
) -> str:
    """Each link with a mass: mass × (1 ± u), inertia × (1 ± u') with u, u' in ``scale`` (signs and
    sizes drawn apart; a scaled inertia stays a rigid body's), the centre of mass moved by a
    distance in ``shift`` [m] in a random direction."""
    rng = np.random.default_rng(seed)
    root = etree.fromstring(urdf.encode())
    for inertial in root.iter("inertial"):
        mass = inertial.find("mass")
        if mass is None or float(mass.get("value", "0")) <= 0.0:
            continue
        mass.set("value", repr(float(mass.get("value")) * _factor(rng, scale)))
        inertia = inertial.find("inertia")
        if inertia is not None:
            factor = _factor(rng, scale)
            for key, value in inertia.attrib.items():
                inertia.set(key, repr(float(value) * factor))
        origin = inertial.find("origin")
        if origin is None:
            origin = etree.SubElement(inertial, "origin")
        xyz = np.array([float(x) for x in origin.get("xyz", "0 0 0").split()])
        direction = rng.normal(size=3)
        xyz += rng.uniform(*shift) * direction / np.linalg.norm(direction)
        origin.set("xyz", " ".join(repr(float(x)) for x in xyz))
    return etree.tostring(root, encoding="unicode")


def _factor(rng: np.random.Generator, scale: tuple[float, float]) -> float:
    return float(1.0 + rng.choice([-1.0, 1.0]) * rng.uniform(*scale))
