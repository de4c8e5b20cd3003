"""Random but valid URDF trees, for checking the core against Pinocchio on shapes no real robot has."""

from __future__ import annotations

import numpy as np


def _vec(values) -> str:
    return " ".join(f"{float(x):.17g}" for x in values)


def random_inertia(rng: np.random.Generator) -> np.ndarray:
    """A physical inertia: principal moments obeying the triangle inequality, randomly rotated."""
    a, b = rng.uniform(0.001, 0.1, 2)
    c = rng.uniform(abs(a - b), a + b)
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    return Q @ np.diag([a, b, c]) @ Q.T


def random_urdf(rng: np.random.Generator, n_links: int, mimic_probability: float = 0.2) -> str:
    """A tree of n_links links: random parents, joint kinds, axes, origins, inertias and mimics."""
    lines = ['<?xml version="1.0"?>', '<robot name="random">']
    continuous: set[str] = set()
    ancestors: dict[int, list[str]] = {0: []}  # independent movable joints above each link
    for i in range(n_links):
        lines.append(f'<link name="l{i}">')
        if rng.random() > 0.15:  # some links are massless
            inertia = random_inertia(rng)
            lines += [
                "<inertial>",
                f'<origin xyz="{_vec(rng.uniform(-0.3, 0.3, 3))}" rpy="{_vec(rng.uniform(-3, 3, 3))}"/>',
                f'<mass value="{rng.uniform(0.05, 5.0):.17g}"/>',
                f'<inertia ixx="{inertia[0, 0]:.17g}" ixy="{inertia[0, 1]:.17g}" ixz="{inertia[0, 2]:.17g}" '
                f'iyy="{inertia[1, 1]:.17g}" iyz="{inertia[1, 2]:.17g}" izz="{inertia[2, 2]:.17g}"/>',
                "</inertial>",
            ]
        lines.append("</link>")
        if i == 0:
            continue
        kind = rng.choice(["revolute", "continuous", "prismatic", "fixed"], p=[0.4, 0.15, 0.2, 0.25])
        name = f"j{i}"
        parent = int(rng.integers(0, i))
        ancestors[i] = list(ancestors[parent])
        lines += [
            f'<joint name="{name}" type="{kind}">',
            f'<parent link="l{parent}"/>',
            f'<child link="l{i}"/>',
            f'<origin xyz="{_vec(rng.uniform(-0.5, 0.5, 3))}" rpy="{_vec(rng.uniform(-3, 3, 3))}"/>',
        ]
        if kind != "fixed":
            axis = rng.normal(size=3) * rng.uniform(0.2, 3.0)  # neither unit nor aligned
            lines += [f'<axis xyz="{_vec(axis)}"/>', '<limit lower="-3" upper="3" effort="1" velocity="1"/>']
            # Pinocchio builds a mimic only when its master is an ancestor with as many
            # coordinates (not a continuous joint): keep to what the oracle can check.
            masters = [j for j in ancestors[parent] if j not in continuous]
            if kind != "continuous" and masters and rng.random() < mimic_probability:
                master = masters[rng.integers(0, len(masters))]
                multiplier, offset = rng.uniform(-2, 2), rng.uniform(-0.5, 0.5)
                lines.append(f'<mimic joint="{master}" multiplier="{multiplier:.17g}" offset="{offset:.17g}"/>')
            else:
                ancestors[i].append(name)
                if kind == "continuous":
                    continuous.add(name)
        lines.append("</joint>")
    lines.append("</robot>")
    return "\n".join(lines)
