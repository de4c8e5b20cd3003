"""The kinematic tree of a URDF as the flat arrays the kernels read (numpy, once per model).

``build_tree`` turns validated links and joints into ``joints`` and ``bodies`` (columns in
``rnea.py``): bodies in depth-first order, fixed joints merged, mimic joints coupled.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from rnea_ros.dynamics import rnea as kernel
from rnea_ros.dynamics.urdf import Joint, ModelError, URDFTree


def read_only(array: np.ndarray) -> np.ndarray:
    """``array`` itself when it is already read-only, else a read-only copy (its owner may still write the original)."""
    if not array.flags.writeable:
        return array
    frozen = np.array(array)
    frozen.flags.writeable = False
    return frozen


@dataclass(frozen=True)
class LinkFrame:
    """Where a URDF link sits: in body ``body`` (-1: the world) at pose (R, p)."""

    body: int
    R: np.ndarray
    p: np.ndarray


@dataclass(frozen=True)
class KinematicTree:
    """What a model is made of; its arrays are read-only (``read_only``): models built from it share them."""

    joints: np.ndarray  # (nb, JOINT_COLUMNS) int64, see rnea.py
    bodies: np.ndarray  # (nb, BODY_COLUMNS) float64, see rnea.py
    joint_names: list[str]
    link_names: list[str]
    link_frames: dict[str, LinkFrame]
    floating_base: bool
    nq: int
    nv: int
    base_link: str | None = None  # the link the free flyer carries (floating base only)
    warnings: tuple[str, ...] = ()  # what the URDF holds that is kept but not physical
    effort_limits: dict[str, float] = field(default_factory=dict)  # joint -> URDF <limit effort>
    joint_dynamics: dict[str, tuple[float, float]] = field(default_factory=dict)  # joint -> (damping, friction)


def build_tree(urdf: URDFTree, floating_base: bool) -> KinematicTree:
    """Bodies in depth-first order, fixed joints merged, mimic joints coupled."""
    links = {link.name: link for link in urdf.links}
    parent_joint = _parent_joints(urdf, links)
    root = _single_root(urdf, parent_joint)
    children: dict[str, list[Joint]] = {name: [] for name in links}
    for joint in urdf.joints:
        children[joint.parent].append(joint)

    base_link = root
    floating_joints = [j for j in urdf.joints if j.type == "floating"]
    for joint in floating_joints:
        if joint.parent != root or len(floating_joints) > 1:
            raise ModelError(
                f"joint '{joint.name}': a floating joint is only supported as the root joint "
                "(use floating_base=True for a free-flyer base)"
            )
        if not (np.allclose(joint.rotation, np.eye(3)) and np.allclose(joint.translation, 0)):
            raise ModelError(f"joint '{joint.name}': a floating root joint must have an identity <origin>")
        base_link, floating_base = joint.child, True
        children[root].sort(key=lambda j: j.type != "floating")  # the free flyer is body 0

    tree = _TreeBuilder(urdf.links)
    tree.place_root(root)
    if floating_base and base_link == root:
        tree.add_free_flyer(root)
    stack = list(reversed(children[root]))
    while stack:  # iterative depth-first: a 5,000-deep chain must not hit the recursion limit
        joint = stack.pop()
        tree.add_joint(joint)
        stack.extend(reversed(children[joint.child]))
    unreached = [name for name in links if name not in tree.frames]
    if unreached:
        raise ModelError(f"links not connected to the root '{root}' (a cycle?): {unreached[:10]}")
    return tree.finish(urdf, floating_base, base_link if floating_base else None)


def _parent_joints(urdf: URDFTree, links: Mapping[str, object]) -> dict[str, Joint]:
    parent_joint: dict[str, Joint] = {}
    for joint in urdf.joints:
        for role, link in (("parent", joint.parent), ("child", joint.child)):
            if link not in links:
                raise ModelError(f"joint '{joint.name}': unknown {role} link '{link}'")
        if joint.parent == joint.child:
            raise ModelError(f"joint '{joint.name}': link '{joint.child}' is its own parent")
        if joint.child in parent_joint:
            raise ModelError(
                f"link '{joint.child}' has two parent joints, '{parent_joint[joint.child].name}' "
                f"and '{joint.name}' (a kinematic loop is not a tree)"
            )
        parent_joint[joint.child] = joint
    return parent_joint


def _single_root(urdf: URDFTree, parent_joint: Mapping[str, Joint]) -> str:
    roots = [link.name for link in urdf.links if link.name not in parent_joint]
    if not roots:
        raise ModelError("no root link: the joints form a cycle")
    if len(roots) > 1:
        raise ModelError(f"several root links (a URDF must be one tree): {roots[:10]}")
    return roots[0]


class _TreeBuilder:
    """Accumulates bodies, their X_T and merged inertias while joints are visited in order."""

    def __init__(self, links) -> None:
        self.links = {link.name: link for link in links}
        self.frames: dict[str, LinkFrame] = {}
        self.joint_rows: list[list[int]] = []
        self.body_rows: list[np.ndarray] = []
        self.body_joints: list[Joint | None] = []  # None: the free-flyer base

    def place_root(self, root: str) -> None:
        self.frames[root] = LinkFrame(-1, np.eye(3), np.zeros(3))

    def add_free_flyer(self, link: str) -> None:
        self._add_body(link, None, parent=-1, jtype=kernel.FREE_FLYER, R=np.eye(3), p=np.zeros(3))

    def add_joint(self, joint: Joint) -> None:
        here = self.frames[joint.parent]
        R = here.R @ joint.rotation
        p = here.R @ joint.translation + here.p
        if joint.type == "fixed":
            self.frames[joint.child] = LinkFrame(here.body, R, p)
            self._merge_inertia(joint.child)
        elif joint.type == "floating":
            self.add_free_flyer(joint.child)
        else:
            jtype = kernel.PRISMATIC if joint.type == "prismatic" else kernel.REVOLUTE
            self._add_body(joint.child, joint, parent=here.body, jtype=jtype, R=R, p=p)

    def _add_body(self, link: str, joint: Joint | None, parent: int, jtype: int, R, p) -> None:
        row = np.zeros(kernel.BODY_COLUMNS)
        row[kernel.TREE_R : kernel.TREE_R + 9] = R.ravel()
        row[kernel.TREE_P : kernel.TREE_P + 3] = p
        if joint is not None:
            row[kernel.AXIS : kernel.AXIS + 3] = joint.axis
        row[kernel.MULT] = 1.0
        self.body_rows.append(row)
        self.joint_rows.append([parent, jtype, 0, 0])
        self.body_joints.append(joint)
        self.frames[link] = LinkFrame(len(self.body_rows) - 1, np.eye(3), np.zeros(3))
        self._merge_inertia(link)

    def _merge_inertia(self, link_name: str) -> None:
        """Add the link's inertia, about its body's origin, to that body (none for the world)."""
        frame, link = self.frames[link_name], self.links[link_name]
        if frame.body < 0 or (link.mass == 0.0 and not link.inertia.any()):
            return
        row = self.body_rows[frame.body]
        c = frame.R @ link.com + frame.p
        I_c = frame.R @ link.inertia @ frame.R.T
        I_o = I_c + link.mass * (c @ c * np.eye(3) - np.outer(c, c))
        row[kernel.MASS] += link.mass
        row[kernel.FIRST_MOMENT : kernel.FIRST_MOMENT + 3] += link.mass * c
        row[kernel.ROT_INERTIA : kernel.ROT_INERTIA + 9] += I_o.ravel()

    def finish(self, urdf: URDFTree, floating_base: bool, base_link: str | None) -> KinematicTree:
        joint_names, nq, nv, mimic_warnings = self._assign_coordinates(floating_base)
        return KinematicTree(
            joints=read_only(np.array(self.joint_rows, dtype=np.int64).reshape(-1, kernel.JOINT_COLUMNS)),
            bodies=read_only(np.array(self.body_rows, dtype=np.float64).reshape(-1, kernel.BODY_COLUMNS)),
            joint_names=joint_names,
            link_names=[link.name for link in urdf.links],
            link_frames={
                name: LinkFrame(frame.body, read_only(frame.R), read_only(frame.p))
                for name, frame in self.frames.items()
            },
            floating_base=floating_base,
            nq=nq,
            nv=nv,
            base_link=base_link,
            warnings=(*urdf.warnings, *mimic_warnings),
            effort_limits=urdf.effort_limits,
            joint_dynamics=urdf.joint_dynamics,
        )

    def _assign_coordinates(self, floating_base: bool) -> tuple[list[str], int, int, list[str]]:
        """Give each independent joint its q and v index; point mimic joints at their master's.

        A mimic of a joint the robot does not have (a broken URDF that other libraries load)
        leaves its joint independent, with a warning."""
        nq, nv = 7 * floating_base, 6 * floating_base  # the free flyer, if any, is body 0
        movable = {joint.name: joint for joint in self.body_joints if joint is not None}
        warnings = []
        for joint in movable.values():
            if joint.mimic is not None and joint.mimic.joint not in movable:
                warnings.append(
                    f"joint '{joint.name}': mimics '{joint.mimic.joint}', which is not a movable joint "
                    "of the robot; the joint is treated as independent"
                )
        independent = {
            name for name, joint in movable.items() if joint.mimic is None or joint.mimic.joint not in movable
        }
        coordinate: dict[str, tuple[int, int]] = {}
        joint_names: list[str] = []
        for i, joint in enumerate(self.body_joints):
            if joint is None:
                self.joint_rows[i][2:] = [0, 0]
            elif joint.name in independent:
                coordinate[joint.name] = (nq, nv)
                self.joint_rows[i][2:] = [nq, nv]
                joint_names.append(joint.name)
                nq, nv = nq + 1, nv + 1
        couplings = _resolve_mimics(movable, independent)
        for i, joint in enumerate(self.body_joints):
            if joint is not None and joint.name not in independent:
                master, multiplier, offset = couplings[joint.name]
                self.joint_rows[i][2:] = list(coordinate[master])
                self.body_rows[i][kernel.MULT] = multiplier
                self.body_rows[i][kernel.OFFSET] = offset
        return joint_names, nq, nv, warnings


MAX_MIMIC_COEFFICIENT = 1e9


def _resolve_mimics(movable: Mapping[str, Joint], independent: set[str]) -> dict[str, tuple[str, float, float]]:
    """Each mimic joint's independent master and q = multiplier * q_master + offset, in linear
    time: a chain is walked once, and each joint on it takes its coupling from the one it follows."""
    resolved: dict[str, tuple[str, float, float]] = {name: (name, 1.0, 0.0) for name in independent}
    for start in movable:
        chain, name = [], start
        while name not in resolved:
            if name in chain:
                loop = chain[chain.index(name) :]
                raise ModelError(f"mimic loop: {' -> '.join([*loop, name])}")
            chain.append(name)
            name = movable[name].mimic.joint
        for name in reversed(chain):  # q_name = m q_next + o, q_next = M q_master + O
            mimic = movable[name].mimic
            master, multiplier, offset = resolved[mimic.joint]
            multiplier, offset = mimic.multiplier * multiplier, mimic.multiplier * offset + mimic.offset
            if not (abs(multiplier) <= MAX_MIMIC_COEFFICIENT and abs(offset) <= MAX_MIMIC_COEFFICIENT):
                raise ModelError(
                    f"joint '{name}': its mimic chain to '{master}' gives q = {multiplier:.3g} q_master + "
                    f"{offset:.3g}, beyond {MAX_MIMIC_COEFFICIENT:.0e}: no model can compute with it"
                )
            resolved[name] = (master, multiplier, offset)
    return resolved
