"""RobotModel: a robot's kinematic tree and inertias, never written once built, and its inverse dynamics.

As Pinocchio keeps an immutable ``Model`` apart from a ``Data``: the model holds the tree (``tree.py``),
the inertias, the limits and the compiled entry points, and is shared freely between threads; what a
computation writes is a ``ModelData`` (``create_data``) passed to the algorithms (``algorithms.py``).
The methods below call those algorithms, the one path to the kernels, with a data of the calling
thread (made at its first call), so that every method is safe from any thread; a caller that holds
its own data passes it as ``data=``, or calls the algorithms itself. The corrections of a
corrections file are applied by ``corrections.with_corrections(model, ...)``: the model knows
nothing of them.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from rnea_ros.dynamics import algorithms
from rnea_ros.dynamics import payload as payloads
from rnea_ros.dynamics import rnea as kernel
from rnea_ros.dynamics.algorithms import ContactKernelArrays
from rnea_ros.dynamics.compiled import LazyEntryPoint, entry_point
from rnea_ros.dynamics.data import ModelData, create_data, data_layout
from rnea_ros.dynamics.spatial import axis_angle
from rnea_ros.dynamics.tree import KinematicTree, LinkFrame, build_tree, read_only
from rnea_ros.dynamics.urdf import ModelError, parse_urdf

__all__ = ["ContactKernelArrays", "KinematicTree", "LinkFrame", "ModelData", "RobotModel", "build_tree"]


class EntryPoints(NamedTuple):
    """The single-state kernels, called without numba's per-call dispatch (``compiled.entry_point``)."""

    inverse_dynamics: object
    gravity: object
    with_contact_terms: LazyEntryPoint  # compiled at the first call: few models have contacts


class _PerThread(threading.local):
    """Each thread's own data for one model, made at the thread's first call."""

    def __init__(self, layout) -> None:
        self.data = create_data(layout)


class RobotModel:
    """Inverse dynamics of a URDF robot (see the module docstring; ``algorithms`` for the maths).

    ``q``, ``qd``, ``qdd`` and the torques follow ``joint_names`` (after the 7/6 floating-base
    entries when ``floating_base``). 1-D inputs give ``(nv,)``; 2-D inputs ``(N, nq)``, ``(N, nv)``
    give ``(N, nv)``. Its arrays are read-only; every method may be called from any thread.
    """

    def __init__(self, tree: KinematicTree, gravity=(0.0, 0.0, -9.81)) -> None:
        gravity = algorithms.as_float_array(gravity, "gravity")
        if gravity.shape != (3,) or not np.all(np.isfinite(gravity)):
            raise ModelError(f"gravity must be 3 finite numbers, got {gravity!r}")
        self.tree = tree = replace(tree, joints=read_only(tree.joints), bodies=read_only(tree.bodies))
        self.joints, self.bodies = tree.joints, tree.bodies  # the kernels' model (rnea.py)
        self.joint_names: list[str] = list(tree.joint_names)
        self.link_names: list[str] = list(tree.link_names)
        self.nq, self.nv = tree.nq, tree.nv
        self.floating_base = tree.floating_base
        self.base_link = tree.base_link  # floating base: the link whose pose and twist q[:7], qd[:6] are
        self.gravity = read_only(gravity)
        # Non-physical inertias kept as written: which link, what is violated, by how much.
        self.warnings: list[str] = list(tree.warnings)
        # |τ| a joint's actuator can give (URDF <limit effort>; inf where none), in joint_names order
        self.effort_limits = read_only(np.array([tree.effort_limits.get(name, np.inf) for name in self.joint_names]))
        # URDF <dynamics damping friction> of the independent joints (mimics' are not folded in)
        self.joint_dynamics = {
            name: tree.joint_dynamics[name] for name in self.joint_names if name in tree.joint_dynamics
        }
        self.data_layout = data_layout(len(tree.joints), gravity)
        self.no_f_ext = read_only(np.zeros((1, len(tree.joints), 6)))
        self.zero_v = read_only(np.zeros(self.nv))
        self._per_thread = _PerThread(self.data_layout)
        self.entry_points = self._compile()
        # What the algorithms' hot paths pass besides the state and the data, each in one attribute lookup
        self.inverse_dynamics_call = (self.entry_points.inverse_dynamics, self.joints, self.bodies, self.no_f_ext[0])
        self.gravity_call = (self.entry_points.gravity, self.joints, self.bodies)

    def _compile(self) -> EntryPoints:
        q0, tau0, work = self.neutral_configuration(), np.empty(self.nv), self.thread_data().work
        j, b = self.joints, self.bodies
        return EntryPoints(
            entry_point(kernel.inverse_dynamics, j, b, q0, tau0, tau0, self.no_f_ext[0], work, tau0),
            entry_point(kernel.gravity, j, b, q0, work, tau0),
            LazyEntryPoint(kernel.with_contact_terms),
        )

    @classmethod
    def from_urdf(
        cls, urdf_xml: str | bytes, *, floating_base: bool = False, gravity=(0.0, 0.0, -9.81), strict: bool = False
    ) -> RobotModel:
        """The model of a URDF (text; xacro must be expanded first). Only what the dynamics read
        can make it fail. Non-physical inertias are kept and listed in ``warnings``; with
        ``strict=True`` they raise ``ModelError`` instead."""
        return cls(build_tree(parse_urdf(urdf_xml, strict=strict), floating_base), gravity)

    def create_data(self) -> ModelData:
        """A new data for this model (and any of the same bodies and gravity): one per thread."""
        return create_data(self.data_layout)

    def thread_data(self) -> ModelData:
        """The calling thread's own data for this model, which the methods use without ``data=``."""
        return self._per_thread.data

    def neutral_configuration(self) -> np.ndarray:
        """q with every joint at zero and, on a floating base, the base at the origin, unrotated."""
        q = np.zeros(self.nq)
        if self.floating_base:
            q[6] = 1.0  # the unit quaternion's w
        return q

    @property
    def num_bodies(self) -> int:
        return len(self.joints)

    def inverse_dynamics(
        self, q, qd, qdd, wrenches: Mapping[str, object] | None = None, data: ModelData | None = None
    ) -> np.ndarray:
        """τ = M(q) q̈ + C(q, q̇) q̇ + g(q) − Σ Jᵀ w (``algorithms.inverse_dynamics``).

        ``wrenches`` maps link name → ``[fx, fy, fz, tx, ty, tz]``: the wrench the
        environment applies on the robot, in that link's frame, about its origin.
        """
        return algorithms.inverse_dynamics(self, self._per_thread.data if data is None else data, q, qd, qdd, wrenches)

    def gravity_torques(self, q, data: ModelData | None = None) -> np.ndarray:
        """g(q): the torques that hold the robot still against gravity (``algorithms.gravity_torques``)."""
        return algorithms.gravity_torques(self, self._per_thread.data if data is None else data, q)

    def nonlinear_effects(self, q, qd, data: ModelData | None = None) -> np.ndarray:
        """C(q, q̇) q̇ + g(q): Coriolis, centrifugal and gravity torques (``algorithms.nonlinear_effects``)."""
        return algorithms.nonlinear_effects(self, self._per_thread.data if data is None else data, q, qd)

    def wrench_jacobian_transpose(
        self, q, links: list[str], components: tuple[int, ...] | None = None, data: ModelData | None = None
    ) -> np.ndarray:
        """Jᵀ of wrenches on ``links`` at the single state q: (nv, Σ components), 6 per link by
        default (``algorithms.wrench_jacobian_transpose``)."""
        data = self._per_thread.data if data is None else data
        return algorithms.wrench_jacobian_transpose(self, data, q, links, components)

    def with_contact_terms(
        self,
        q,
        qd,
        qdd,
        wrenches: Mapping[str, object] | None,
        links: list[str],
        components: tuple[int, ...] | None = None,
        data: ModelData | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(``inverse_dynamics``, ``gravity_torques``, ``wrench_jacobian_transpose(q, links, components)``)
        at one state, in one kernel call (``algorithms.with_contact_terms``)."""
        data = self._per_thread.data if data is None else data
        return algorithms.with_contact_terms(self, data, q, qd, qdd, wrenches, links, components)

    def with_payload(self, link: str, inertial: payloads.Inertial) -> RobotModel:
        """This model with a rigid load fixed to ``link`` (merged into its body's inertia)."""
        frame = self._link_frame(link)
        if frame.body < 0:
            raise ValueError(f"link '{link}' is fixed to the world: a payload on it moves no joint")
        bodies = payloads.with_parameters(self.bodies, frame.body, frame.R, frame.p, inertial.parameters())
        return RobotModel(replace(self.tree, bodies=bodies), self.gravity)

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
        joints, bodies = self.joints, self.bodies
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
