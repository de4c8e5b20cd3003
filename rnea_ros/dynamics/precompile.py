"""The dynamics kernels compiled into numba's cache before they are needed, and whether they are there.

numba specialises a kernel by its arguments' types (dtype, dimensions, layout, read-only flag), never
by their sizes: a small robot that has every kind of joint (revolute, prismatic, mimic, fixed), once
on a fixed and once on a floating base with contacts, reaches every specialisation that the library's
methods make, for any robot. ``python -m rnea_ros.compile`` runs this and the other rooms' kernels.
"""

from __future__ import annotations

import numpy as np

from rnea_ros.dynamics import rnea as kernel
from rnea_ros.dynamics import rnea_block
from rnea_ros.dynamics.contact_distribution import KINDS, contact_distribution
from rnea_ros.dynamics.contact_forces import Contact
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.dynamics.rotations import quaternion_matrix

# Every joint kind the kernels branch on; the foot (a fixed child) is the contact link.
SMALL_ROBOT = """<robot name="every_joint_kind">
  <link name="base"><inertial><mass value="2"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <link name="upper"><inertial><origin xyz="0 0 0.1"/><mass value="1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="slider"><inertial><mass value="0.5"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <link name="finger"><inertial><mass value="0.1"/><inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0"
    iyz="0"/></inertial></link>
  <link name="foot"/>
  <joint name="hip" type="revolute"><parent link="base"/><child link="upper"/><axis xyz="0 1 0"/>
    <limit effort="50" lower="-3" upper="3" velocity="10"/></joint>
  <joint name="knee" type="prismatic"><parent link="upper"/><child link="slider"/><origin xyz="0 0 -0.2"/>
    <axis xyz="0 0 1"/><limit effort="50" lower="-1" upper="1" velocity="1"/></joint>
  <joint name="finger_joint" type="revolute"><parent link="upper"/><child link="finger"/><axis xyz="1 0 0"/>
    <limit effort="5" lower="-1" upper="1" velocity="1"/><mimic joint="hip" multiplier="0.5"/></joint>
  <joint name="ankle" type="fixed"><parent link="slider"/><child link="foot"/><origin xyz="0 0 -0.1"/></joint>
</robot>"""
CONTACT_LINK = "foot"

# How long a cold start compiles on 2 free cores (issue 37: 34.9 s on Go2 with contacts; 67-125 s
# at load 8-10: benchmarks/start_up.py, docs/figures/start_up.md).
COLD_START_SECONDS = 40
# The kernels whose cache tells whether this installation has compiled yet (``kernels_in_cache``).
SENTINELS = (kernel.inverse_dynamics, kernel.gravity, rnea_block.rnea_batch, kernel.with_contact_terms)


def small_robot(floating_base: bool) -> RobotModel:
    """``SMALL_ROBOT``'s model: every method run on it compiles (or loads) its kernels."""
    return RobotModel.from_urdf(SMALL_ROBOT, floating_base=floating_base)


def compile_dynamics() -> None:
    """Every kernel of the library's methods, for the types they pass, into numba's cache."""
    for floating_base in (False, True):
        model = small_robot(floating_base)
        q = model.neutral_configuration()
        zero = np.zeros(model.nv)
        wrench = {CONTACT_LINK: np.ones(6)}
        model.inverse_dynamics(q, zero, zero)
        model.inverse_dynamics(q.tolist(), zero.tolist(), zero.tolist(), wrench)
        model.gravity_torques(q)
        model.nonlinear_effects(q, zero)
        Q, V = np.tile(q, (3, 1)), np.zeros((3, model.nv))
        model.inverse_dynamics(Q, V, V)
        model.inverse_dynamics(Q, V, V, {CONTACT_LINK: np.ones((3, 6))})
        model.gravity_torques(Q)
        model.nonlinear_effects(Q, V)
        model.wrench_jacobian_transpose(q, [CONTACT_LINK], (3,))
        model.with_contact_terms(q, zero, zero, None, [CONTACT_LINK], (3,))
        model.link_rotation_in_base(CONTACT_LINK, q, zero)  # axis_angle, called from Python
        if floating_base:
            _compile_contact_distributions(model, q, zero)
    quaternion_matrix((0.0, 0.0, 0.0, 1.0))  # quaternion_to_rotation, called from Python


def _compile_contact_distributions(model: RobotModel, q: np.ndarray, zero: np.ndarray) -> None:
    for kind in KINDS:
        distribute = contact_distribution(kind, model, [Contact(CONTACT_LINK)])
        distribute(q[:7], zero[:6], zero[:6], q[7:], zero[6:], zero[6:])


def kernels_in_cache() -> bool | None:
    """Whether numba's cache holds the core kernels for this source (False: the next start compiles,
    ~30 s; None: numba's cache cannot be read, which a newer numba may cause). Reads numba's cache
    index without compiling or loading anything."""
    try:
        return all(bool(dispatcher._cache._cache_file._load_index()) for dispatcher in SENTINELS)
    except Exception:  # numba's private cache API: unknown rather than a failed start
        return None


def compile_notice() -> str | None:
    """The line a node logs before its first model when it is about to compile (None: the cache holds
    the kernels, or cannot be read)."""
    if kernels_in_cache() is not False:
        return None
    return (
        f"compiling kernels (first start, ~{COLD_START_SECONDS} s, more on a busy machine; "
        "`python -m rnea_ros.compile` does it ahead of time, as scripts/setup does)"
    )
