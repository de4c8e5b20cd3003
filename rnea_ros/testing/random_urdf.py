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


# --- the same trees as a hypothesis strategy (shrinks towards fewer links and simpler numbers) ------
def urdf_trees(max_links: int = 10):
    """Hypothesis strategy: (urdf_text, floating_base) for random valid trees.

    Random parents, joint kinds (fixed chains included), skew non-unit axes, origins,
    inertial frames, massless links and mimic couplings Pinocchio can check.
    """
    from hypothesis import strategies as st

    small = st.floats(-0.5, 0.5, allow_nan=False, allow_infinity=False)
    angle = st.floats(-3.2, 3.2, allow_nan=False, allow_infinity=False)
    vec3 = st.tuples(small, small, small)
    rpy = st.tuples(angle, angle, angle)

    @st.composite
    def inertial(draw) -> str:
        a = draw(st.floats(0.001, 0.1))
        b = draw(st.floats(0.001, 0.1))
        c = draw(st.floats(abs(a - b), a + b))
        R = _rpy_matrix(draw(rpy))
        inertia = R @ np.diag([a, b, c]) @ R.T
        return (
            f'<inertial><origin xyz="{_vec(draw(vec3))}" rpy="{_vec(draw(rpy))}"/>'
            f'<mass value="{draw(st.floats(0.01, 10.0)):.17g}"/>'
            f'<inertia ixx="{inertia[0, 0]:.17g}" ixy="{inertia[0, 1]:.17g}" ixz="{inertia[0, 2]:.17g}" '
            f'iyy="{inertia[1, 1]:.17g}" iyz="{inertia[1, 2]:.17g}" izz="{inertia[2, 2]:.17g}"/></inertial>'
        )

    @st.composite
    def axis(draw) -> tuple[float, float, float]:
        v = draw(st.tuples(*[st.floats(-3, 3, allow_nan=False)] * 3))
        return v if np.linalg.norm(v) > 0.1 else (0.0, 0.0, 1.0)

    @st.composite
    def trees(draw):
        n_links = draw(st.integers(1, max_links))
        lines = ['<?xml version="1.0"?>', '<robot name="hypothesis">']
        continuous: set[str] = set()
        ancestors: dict[int, list[str]] = {0: []}
        for i in range(n_links):
            body = draw(st.none() | inertial())
            lines.append(f'<link name="l{i}">{body or ""}</link>')
            if i == 0:
                continue
            parent = draw(st.integers(0, i - 1))
            kind = draw(st.sampled_from(["revolute", "continuous", "prismatic", "fixed"]))
            name = f"j{i}"
            ancestors[i] = list(ancestors[parent])
            joint = [
                f'<joint name="{name}" type="{kind}"><parent link="l{parent}"/><child link="l{i}"/>',
                f'<origin xyz="{_vec(draw(vec3))}" rpy="{_vec(draw(rpy))}"/>',
            ]
            if kind != "fixed":
                joint += [
                    f'<axis xyz="{_vec(draw(axis()))}"/>',
                    '<limit lower="-3" upper="3" effort="1" velocity="1"/>',
                ]
                masters = [j for j in ancestors[parent] if j not in continuous]
                if kind != "continuous" and masters and draw(st.integers(0, 4)) == 0:
                    master = draw(st.sampled_from(masters))
                    multiplier, offset = draw(st.floats(-2, 2)), draw(st.floats(-0.5, 0.5))
                    joint.append(f'<mimic joint="{master}" multiplier="{multiplier:.17g}" offset="{offset:.17g}"/>')
                else:
                    ancestors[i].append(name)
                    if kind == "continuous":
                        continuous.add(name)
            lines += [*joint, "</joint>"]
        lines.append("</robot>")
        return "\n".join(lines), draw(st.booleans())

    return trees()


def _rpy_matrix(rpy) -> np.ndarray:
    r, p, y = rpy
    Rx = np.array([[1, 0, 0], [0, np.cos(r), -np.sin(r)], [0, np.sin(r), np.cos(r)]])
    Ry = np.array([[np.cos(p), 0, np.sin(p)], [0, 1, 0], [-np.sin(p), 0, np.cos(p)]])
    Rz = np.array([[np.cos(y), -np.sin(y), 0], [np.sin(y), np.cos(y), 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def robot_xml(body: str) -> str:
    """A <robot> around ``body``, with an XML declaration."""
    return f'<?xml version="1.0"?><robot name="bad">{body}</robot>'


LINK = (
    '<link name="{}"><inertial><mass value="1"/>'
    '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
)


def joint_xml(name: str, parent: str, child: str, kind: str = "revolute", extra: str = "") -> str:
    return f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>{extra}</joint>'
