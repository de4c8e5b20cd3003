"""RobotModel: the kinematic tree of a URDF and the public inverse-dynamics API.

Model building (numpy, once) is kept apart from the kernels (numba, per call):
``build_tree`` turns validated links and joints into the flat arrays that
``rnea.rnea`` reads, and ``RobotModel`` checks sizes at the boundary.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, NamedTuple

import numba
import numpy as np

from rnea_ros.dynamics import payload as payloads
from rnea_ros.dynamics import rnea as kernel
from rnea_ros.dynamics.compiled import entry_point
from rnea_ros.dynamics.spatial import axis_angle
from rnea_ros.dynamics.urdf import Joint, ModelError, URDFTree, parse_urdf

if TYPE_CHECKING:
    from rnea_ros.dynamics.corrections import CorrectedModel, Corrections

_STATUS_MESSAGES = {
    kernel.NON_FINITE_INPUT: "q, qd and qdd must be finite (NaN or Inf found)",
    kernel.BAD_QUATERNION: "the floating-base quaternion q[3:7] must have unit norm",
    kernel.NON_FINITE_OUTPUT: "the torques overflowed (non-finite result); inputs out of range?",
}


# numba's `workqueue` threading layer (its fallback where OpenMP and TBB are missing) aborts
# the process when two threads enter a parallel kernel at once; `omp` and `tbb` are thread-safe.
# Batch calls are serialised until a call has shown which layer numba picked.
THREAD_SAFE_LAYERS = ("omp", "tbb")
_batch_lock = threading.Lock()
_batch_layer_thread_safe = False


def _rnea_batch(*args) -> tuple[int, int]:
    """``kernel.rnea_batch``, serialised across threads unless numba's threading layer is thread-safe."""
    global _batch_layer_thread_safe
    if _batch_layer_thread_safe:
        return kernel.rnea_batch(*args)
    with _batch_lock:
        result = kernel.rnea_batch(*args)
        _batch_layer_thread_safe = numba.threading_layer() in THREAD_SAFE_LAYERS
    return result


@dataclass
class LinkFrame:
    """Where a URDF link sits: in body ``body`` (-1: the world) at pose (R, p)."""

    body: int
    R: np.ndarray
    p: np.ndarray


@dataclass
class KinematicTree:
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
            joints=np.array(self.joint_rows, dtype=np.int64).reshape(-1, kernel.JOINT_COLUMNS),
            bodies=np.array(self.body_rows, dtype=np.float64).reshape(-1, kernel.BODY_COLUMNS),
            joint_names=joint_names,
            link_names=[link.name for link in urdf.links],
            link_frames=self.frames,
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


def _as_float_array(x, name: str = "input") -> np.ndarray:
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name}: expected an array of numbers") from error


def _c_float_array(x) -> np.ndarray:
    """C-contiguous float64: the one layout the single-state kernels are called with."""
    return np.ascontiguousarray(x, dtype=np.float64)


def _rotate_rows(R: np.ndarray, x: np.ndarray) -> np.ndarray:
    """R x for each row x, elementwise so that a batch and its single rows round alike."""
    return x[:, 0:1] * R[:, 0] + x[:, 1:2] * R[:, 1] + x[:, 2:3] * R[:, 2]


class ContactKernelArrays(NamedTuple):
    """A model's arrays that ``kernel.with_contact_terms`` reads, for a kernel that calls it."""

    joints: np.ndarray
    bodies: np.ndarray
    work: np.ndarray
    F_unit: np.ndarray  # the kernel f_ext of each unit contact wrench


class RobotModel:
    """Inverse dynamics of a URDF robot.

    ``q``, ``qd``, ``qdd`` and the torques follow ``joint_names`` (after the
    7/6 floating-base entries when ``floating_base``). 1-D inputs give ``(nv,)``;
    2-D inputs ``(N, nq)``, ``(N, nv)`` give ``(N, nv)``. A model owns its work
    buffers: use one model per thread.
    """

    def __init__(self, tree: KinematicTree, gravity=(0.0, 0.0, -9.81)) -> None:
        gravity = _as_float_array(gravity, "gravity")
        if gravity.shape != (3,) or not np.all(np.isfinite(gravity)):
            raise ModelError(f"gravity must be 3 finite numbers, got {gravity!r}")
        self.tree = tree
        self.joint_names: list[str] = list(tree.joint_names)
        self.link_names: list[str] = list(tree.link_names)
        self.nq, self.nv = tree.nq, tree.nv
        self.floating_base = tree.floating_base
        self.base_link = tree.base_link  # floating base: the link whose pose and twist q[:7], qd[:6] are
        self.gravity = gravity
        # Non-physical inertias kept as written: which link, what is violated, by how much.
        self.warnings: list[str] = list(tree.warnings)
        # |τ| a joint's actuator can give (URDF <limit effort>; inf where none), in joint_names order
        self.effort_limits = np.array([tree.effort_limits.get(name, np.inf) for name in self.joint_names])
        # URDF <dynamics damping friction> of the independent joints (mimics' are not folded in)
        self.joint_dynamics = {
            name: tree.joint_dynamics[name] for name in self.joint_names if name in tree.joint_dynamics
        }
        self._joints, self._bodies = tree.joints, tree.bodies
        nb = len(tree.joints)
        self._work = np.zeros((nb + 1, kernel.WORK_COLUMNS))
        self._work[kernel.WORLD, kernel.A + 3 : kernel.A + 6] = -gravity  # a_0 = -g
        self._no_f_ext = np.zeros((1, nb, 6))
        self._zero_v = np.zeros(self.nv)
        self._unit_wrench_cache: dict = {}  # link → its 6 unit f_ext; (links, components) → those stacked
        q0, tau0 = self.neutral_configuration(), np.empty(self.nv)
        self._rnea_1 = entry_point(
            kernel.inverse_dynamics, self._joints, self._bodies, q0, tau0, tau0, self._no_f_ext[0], self._work, tau0
        )
        self._gravity_1 = entry_point(kernel.gravity, self._joints, self._bodies, q0, self._work, tau0)
        self._with_contact_terms_1 = None  # compiled at the first call (few models have contacts)

    @classmethod
    def from_urdf(
        cls, urdf_xml: str | bytes, *, floating_base: bool = False, gravity=(0.0, 0.0, -9.81), strict: bool = False
    ) -> RobotModel:
        """The model of a URDF (text; xacro must be expanded first). Only what the dynamics read
        can make it fail. Non-physical inertias are kept and listed in ``warnings``; with
        ``strict=True`` they raise ``ModelError`` instead."""
        return cls(build_tree(parse_urdf(urdf_xml, strict=strict), floating_base), gravity)

    def neutral_configuration(self) -> np.ndarray:
        """q with every joint at zero and, on a floating base, the base at the origin, unrotated."""
        q = np.zeros(self.nq)
        if self.floating_base:
            q[6] = 1.0  # the unit quaternion's w
        return q

    @property
    def num_bodies(self) -> int:
        return len(self._joints)

    def inverse_dynamics(self, q, qd, qdd, wrenches: Mapping[str, object] | None = None) -> np.ndarray:
        """τ = M(q) q̈ + C(q, q̇) q̇ + g(q) − Σ Jᵀ w.

        ``wrenches`` maps link name → ``[fx, fy, fz, tx, ty, tz]``: the wrench the
        environment applies on the robot, in that link's frame, about its origin.
        """
        q, qd, qdd = _c_float_array(q), _c_float_array(qd), _c_float_array(qdd)
        f_ext = self._f_ext(wrenches, q) if wrenches else self._no_f_ext
        return self._run(q, qd, qdd, f_ext)

    def gravity_torques(self, q) -> np.ndarray:
        """g(q): the torques that hold the robot still against gravity."""
        q = _c_float_array(q)
        if q.ndim != 1:
            zero = self._zeros_like(q)
            return self._run(q, zero, zero, self._no_f_ext)
        tau = np.empty(self.nv)
        status = self._gravity_1(self._joints, self._bodies, q, self._work, tau)
        if status != kernel.OK:
            raise self._input_error(status, q, self._zero_v, self._zero_v)
        return tau

    def nonlinear_effects(self, q, qd) -> np.ndarray:
        """C(q, q̇) q̇ + g(q): Coriolis, centrifugal and gravity torques."""
        q, qd = _c_float_array(q), _c_float_array(qd)
        return self._run(q, qd, self._zeros_like(q), self._no_f_ext)

    def wrench_jacobian_transpose(self, q, links: list[str], components: tuple[int, ...] | None = None) -> np.ndarray:
        """Jᵀ of wrenches on ``links`` at the single state q: (nv, Σ components), 6 per link by default.

        Column 6k + i is what a unit wrench component i ([fx, fy, fz, tx, ty, tz], in the
        frame of links[k], about its origin) does to the generalized forces, so that
        ``inverse_dynamics(q, qd, qdd, {link: w})`` = ``inverse_dynamics(q, qd, qdd)`` − Jᵀ w.
        ``components`` (3 or 6 per link) keeps only the first ones of each link's six columns:
        3 for a link that takes forces only (a point contact), at half the cost.
        Computed with the kernel itself, in one call: Jᵀ e = −ID(q, 0, 0, e) without gravity.
        """
        q = _c_float_array(q)
        F_ext = self._unit_wrench_stack(links, components)
        responses = np.empty((len(F_ext), self.nv))
        status = kernel.unit_wrench_responses(self._joints, self._bodies, q, F_ext, self._work, responses)
        if status != kernel.OK:
            raise self._input_error(status, q, self._zero_v, self._zero_v)
        return -responses.T

    def with_contact_terms(
        self,
        q,
        qd,
        qdd,
        wrenches: Mapping[str, object] | None,
        links: list[str],
        components: tuple[int, ...] | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(``inverse_dynamics``, ``gravity_torques``, ``wrench_jacobian_transpose(q, links, components)``)
        at one state, in one kernel call: a floating-base robot on contact links, at every joint_states."""
        q, qd, qdd = _c_float_array(q), _c_float_array(qd), _c_float_array(qdd)
        if q.ndim != 1 or qd.ndim != 1 or qdd.ndim != 1:
            raise self._input_error(kernel.WRONG_SIZE, q, qd, qdd)
        F_unit = self._unit_wrench_stack(links, components)
        tau, g, JT = np.empty(self.nv), np.empty(self.nv), np.empty((self.nv, len(F_unit)))
        f_ext = self.kernel_external_forces(wrenches)
        args = (self._joints, self._bodies, q, qd, qdd, f_ext, F_unit, self._work, tau, g, JT)
        if self._with_contact_terms_1 is None:
            self._with_contact_terms_1 = entry_point(kernel.with_contact_terms, *args)
        status = self._with_contact_terms_1(*args)
        if status != kernel.OK:
            raise self._input_error(status, q, qd, qdd)
        return tau, g, JT

    def contact_kernel_arrays(self, links: list[str], components: tuple[int, ...] | None = None) -> ContactKernelArrays:
        """What ``kernel.with_contact_terms`` takes besides the state and the outputs, for a caller
        that calls it from its own kernel. ``work`` is this model's buffer: one thread at a time, as
        for every method."""
        return ContactKernelArrays(self._joints, self._bodies, self._work, self._unit_wrench_stack(links, components))

    def kernel_external_forces(self, wrenches: Mapping[str, object] | None) -> np.ndarray:
        """The kernel's f_ext (bodies, 6) of ``wrenches`` at one state (see ``inverse_dynamics``)."""
        return (self._f_ext(wrenches, self._zero_v) if wrenches else self._no_f_ext)[0]

    def status_error(self, status: int, q, qd, qdd) -> ValueError:
        """The error a kernel's ``status`` (not OK) means for the inputs (q, qd, qdd)."""
        return self._input_error(status, q, qd, qdd)

    def _unit_wrench_stack(self, links: list[str], components: tuple[int, ...] | None) -> np.ndarray:
        """The kernel f_ext of each column of ``wrench_jacobian_transpose`` (cached per links and components)."""
        components = tuple(components) if components is not None else (6,) * len(links)
        key = (tuple(links), components)
        F_ext = self._unit_wrench_cache.get(key)
        if F_ext is None:
            if len(components) != len(links) or not all(c in (3, 6) for c in components):
                raise ValueError(f"components must be 3 or 6 per link, got {list(components)} for {len(links)} links")
            F_ext = np.ascontiguousarray(
                np.concatenate(
                    [np.concatenate(self._unit_wrenches(link)[:c]) for link, c in zip(links, components, strict=True)]
                )
            )
            self._unit_wrench_cache[key] = F_ext
        return F_ext

    def with_corrections(self, corrections: Corrections | None, urdf_dynamics: bool = True) -> CorrectedModel:
        """This model with its URDF's ``<dynamics damping friction>`` (unless ``urdf_dynamics`` is
        False) and a corrections file's terms (``dynamics.corrections``): the payload merged in, the
        joint terms added; CorrectionsError when they do not fit this model."""
        from rnea_ros.dynamics.corrections import apply_corrections

        return apply_corrections(self, corrections, urdf_dynamics)

    def with_payload(self, link: str, inertial: payloads.Inertial) -> RobotModel:
        """This model with a rigid load fixed to ``link`` (merged into its body's inertia)."""
        frame = self._link_frame(link)
        if frame.body < 0:
            raise ValueError(f"link '{link}' is fixed to the world: a payload on it moves no joint")
        bodies = payloads.with_parameters(self._bodies, frame.body, frame.R, frame.p, inertial.parameters())
        return RobotModel(replace(self.tree, bodies=bodies), self.gravity)

    def payload_regressor(self, link: str, q, qd, qdd) -> np.ndarray:
        """Y (N, nv, 10): the torques a payload on ``link`` adds are Y π, for its 10 inertial
        parameters π (``dynamics.payload``), at the states (N, nq), (N, nv), (N, nv). Column k is
        the inverse dynamics of the robot with no inertia but π = e_k on the link (τ is linear
        in the inertias), gravity included."""
        frame = self._link_frame(link)
        q, qd, qdd = _c_float_array(q), _c_float_array(qd), _c_float_array(qdd)
        if q.ndim != 2 or qd.ndim != 2 or qdd.ndim != 2 or not len(q) == len(qd) == len(qdd):
            raise self._input_error(kernel.WRONG_SIZE, q, qd, qdd)
        Y = np.zeros((len(q), self.nv, 10))
        if frame.body < 0:
            return Y
        massless = self._bodies.copy()
        massless[:, kernel.MASS : kernel.ROT_INERTIA + 9] = 0.0
        tau = np.empty((len(q), self.nv))
        for k, unit in enumerate(np.eye(10)):
            bodies = payloads.with_parameters(massless, frame.body, frame.R, frame.p, unit)
            status, row = _rnea_batch(
                self._joints, bodies, q, qd, qdd, self._no_f_ext, self._work, tau, numba.get_num_threads()
            )
            if status != kernel.OK:
                raise self._input_error(status, q, qd, qdd, row)
            Y[:, :, k] = tau
        return Y

    def _link_frame(self, link: str) -> LinkFrame:
        frame = self.tree.link_frames.get(link)
        if frame is None:
            raise ValueError(f"unknown link '{link}' (links: {self.link_names})")
        return frame

    def link_rotation_in_base(self, link: str, q, qd) -> tuple[np.ndarray, np.ndarray]:
        """(R_base_link, ω_rel): the rotation of ``link`` in the frame of the body the tree starts
        from (the floating base, or the world for a fixed base) and its angular velocity relative
        to it, in that frame, at the state (q, qd) (free-flyer entries unused). Forward kinematics
        with the kernel's own rotation formulas."""
        frame = self._link_frame(link)
        joints, bodies = self._joints, self._bodies
        chain, i = [], frame.body
        while i >= 0 and joints[i, kernel.JTYPE] != kernel.FREE_FLYER:
            chain.append(i)
            i = joints[i, kernel.PARENT]
        R, omega = np.eye(3), np.zeros(3)
        for i in reversed(chain):
            R = R @ bodies[i, kernel.TREE_R : kernel.TREE_R + 9].reshape(3, 3)
            if joints[i, kernel.JTYPE] == kernel.REVOLUTE:
                axis = bodies[i, kernel.AXIS : kernel.AXIS + 3]
                mult, offset = bodies[i, kernel.MULT], bodies[i, kernel.OFFSET]
                angle = mult * q[joints[i, kernel.Q_INDEX]] + offset
                R = R @ np.array(axis_angle(axis, angle)).reshape(3, 3)
                omega = omega + R @ axis * (mult * qd[joints[i, kernel.V_INDEX]])
        return R @ frame.R, omega

    def carried_by_base(self, link: str) -> bool:
        """Whether ``link`` moves with the floating base (every link but those fixed to the world)."""
        frame = self.tree.link_frames.get(link)
        return frame is not None and frame.body >= 0

    def _unit_wrenches(self, link: str) -> list[np.ndarray]:
        """The six unit wrenches on ``link`` as kernel f_ext arrays (they do not depend on q)."""
        cached = self._unit_wrench_cache.get(link)
        if cached is None:
            cached = [self._f_ext({link: e}, self._zero_v) for e in np.eye(6)]
            self._unit_wrench_cache[link] = cached
        return cached

    def _zeros_like(self, q: np.ndarray) -> np.ndarray:
        return self._zero_v if q.ndim == 1 else np.zeros((len(q), self.nv))

    def _run(self, q, qd, qdd, f_ext) -> np.ndarray:
        j, b, work = self._joints, self._bodies, self._work
        if q.ndim == 1 and qd.ndim == 1 and qdd.ndim == 1:  # the hot path: sizes checked in the kernel
            tau = np.empty(self.nv)
            status = self._rnea_1(j, b, q, qd, qdd, f_ext[0], work, tau)
            if status != kernel.OK:
                raise self._input_error(status, q, qd, qdd)
            return tau
        if not (q.ndim == qd.ndim == qdd.ndim == 2) or not (len(q) == len(qd) == len(qdd)):
            raise self._input_error(kernel.WRONG_SIZE, q, qd, qdd)
        tau = np.empty((len(q), self.nv))
        status, row = _rnea_batch(j, b, q, qd, qdd, f_ext, work, tau, numba.get_num_threads())
        if status != kernel.OK:
            raise self._input_error(status, q, qd, qdd, row)
        return tau

    def _input_error(self, status: int, q, qd, qdd, row: int | None = None) -> ValueError:
        if status == kernel.WRONG_SIZE:
            return ValueError(
                f"wrong input shapes: q {q.shape}, qd {qd.shape}, qdd {qdd.shape}; expected "
                f"(nq,), (nv,), (nv,) or (N, nq), (N, nv), (N, nv) with nq={self.nq}, nv={self.nv} "
                f"(joints: {self.joint_names})"
            )
        where = f"state {row}: " if row is not None else ""
        return ValueError(where + _STATUS_MESSAGES[status])

    def _f_ext(self, wrenches: Mapping[str, object], q: np.ndarray) -> np.ndarray:
        """External forces per body, in the body frame, Featherstone order [n; f]."""
        if not isinstance(wrenches, Mapping):
            raise TypeError(
                f"wrenches must map link names to [fx, fy, fz, tx, ty, tz] (a dict), got {type(wrenches).__name__}"
            )
        batch = q.shape[0] if q.ndim == 2 else None
        f_ext = np.zeros((batch or 1, self.num_bodies, 6))
        for link, wrench in wrenches.items():
            frame = self.tree.link_frames.get(link)
            if frame is None:
                raise ValueError(f"wrench on unknown link '{link}' (links: {self.link_names})")
            w = _as_float_array(wrench, f"wrench on '{link}'")
            if w.shape not in ((6,), (batch, 6)) or not np.all(np.isfinite(w)):
                raise ValueError(
                    f"wrench on '{link}' must be finite with shape (6,)"
                    + (f" or ({batch}, 6)" if batch else "")
                    + f", got shape {w.shape}"
                )
            if frame.body < 0:
                continue  # carried by the world: no joint feels it
            w = np.atleast_2d(w)
            force = _rotate_rows(frame.R, w[:, :3])
            torque = _rotate_rows(frame.R, w[:, 3:]) + np.cross(frame.p, force)
            f_ext[:, frame.body, :3] += torque
            f_ext[:, frame.body, 3:] += force
        return f_ext
