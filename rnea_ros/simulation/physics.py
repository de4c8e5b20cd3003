"""The simulated robot: MuJoCo built from the same URDF text the node reads. No ROS.

MuJoCo loads the URDF itself (its own parser: the physics is not rnea_ros's). Links on fixed
joints are kept as bodies (``fusestatic`` off) so that a payload and a force/torque sensor can
sit on any link. URDF ``<mimic>`` becomes an equality constraint, ``<dynamics damping
friction>`` joint damping and friction loss (kept or removed by option), ``<limit>`` the joint
range. Efforts go in as generalised forces on the commanded joints, clipped to ``<limit
effort>``: what an effort interface gives the motors.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import mujoco
import numpy as np
from lxml import etree

from rnea_ros.simulation.scene import Payload as Payload  # the options' types, for the simulator's users
from rnea_ros.simulation.scene import SimOptions, add_free_base_and_ground, add_payload

NO_PASSIVE_NO_CONSTRAINT = (
    mujoco.mjtDisableBit.mjDSBL_CONSTRAINT | mujoco.mjtDisableBit.mjDSBL_SPRING | mujoco.mjtDisableBit.mjDSBL_DAMPER
)
HINGE_OR_SLIDE = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
# MuJoCo's warnings of a state it had to reset (non-finite or huge positions, velocities, accelerations)
DIVERGED = (mujoco.mjtWarning.mjWARN_BADQPOS, mujoco.mjtWarning.mjWARN_BADQVEL, mujoco.mjtWarning.mjWARN_BADQACC)
NO_MOVABLE_JOINT = (
    "the robot has no movable joint (every joint is fixed): there is nothing to simulate; "
    "give a description with revolute, continuous or prismatic joints"
)


DEFAULT_OPTIONS = SimOptions()


class SimulationDivergedError(RuntimeError):
    """MuJoCo met non-finite or huge accelerations (a robot thrown by its efforts) and reset the state."""


@dataclass(frozen=True)
class UrdfJoint:
    name: str
    effort_limit: float  # inf: none given
    mimics: str | None  # the joint it follows, for a <mimic> joint
    multiplier: float = 1.0  # q = multiplier · q_master + offset
    offset: float = 0.0
    limit_text: str | None = None  # <limit effort> as written, when it is no positive number


def _parse(urdf: str) -> etree._Element:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, remove_comments=True)
    return etree.fromstring(urdf.encode(), parser)


def without_meshes(urdf: str) -> str:
    """The URDF without <visual> and without <collision> shapes that are meshes: MuJoCo would try to
    load ``package://`` files it cannot find, and a fixed-base arm needs no collisions. Without the
    ``<limit effort>`` values that limit nothing (``effort_limit``): MuJoCo refuses some of them."""
    root = _parse(urdf)
    for element in list(root.iter("visual", "collision")):
        if element.tag == "visual" or element.find("geometry/mesh") is not None:
            element.getparent().remove(element)
    for limit in root.iter("limit"):
        if limit.get("effort") is not None and math.isinf(effort_limit(limit.get("effort"))):
            del limit.attrib["effort"]
    broken = broken_mimics(root)
    for joint in root.iterchildren("joint"):
        if joint.get("name") in broken:
            joint.remove(joint.find("mimic"))
    return etree.tostring(root, encoding="unicode")


def effort_limit(text: str | None) -> float:
    """A ``<limit effort>`` as the node reads it (``rnea_ros/dynamics/urdf.py``): a positive finite
    number limits the joint; anything else (missing, 0, negative, NaN, inf, not a number) does not."""
    try:
        effort = float(text) if text is not None else math.inf
    except ValueError:
        return math.inf
    return effort if math.isfinite(effort) and effort > 0.0 else math.inf


def tree_order(root: etree._Element) -> list[etree._Element]:
    """The URDF's joints in the node's model order (``rnea_ros/dynamics/tree.py``): depth first from
    the root link, each link's children in file order, a floating root joint first. A URDF may list
    its joints in any order (SO-101's tip first, Baxter's arms before the torso's children); joints
    no walk from a single root reaches keep their file order, after the others."""
    joints = list(root.iterchildren("joint"))

    def link(joint: etree._Element, role: str) -> str | None:
        element = joint.find(role)
        return element.get("link") if element is not None else None

    children: dict[str | None, list[etree._Element]] = {}
    for joint in joints:
        children.setdefault(link(joint, "parent"), []).append(joint)
    child_links = {link(joint, "child") for joint in joints}
    roots = [element.get("name") for element in root.iterchildren("link") if element.get("name") not in child_links]
    ordered: list[etree._Element] = []
    if len(roots) == 1:
        first = sorted(children.get(roots[0], []), key=lambda j: j.get("type") != "floating")
        stack, seen = list(reversed(first)), set()
        while stack:  # iterative: a long chain must not hit the recursion limit
            joint = stack.pop()
            if id(joint) in seen:  # a cycle: the node refuses such a URDF
                continue
            seen.add(id(joint))
            ordered.append(joint)
            stack.extend(reversed(children.get(link(joint, "child"), [])))
    reached = {id(joint) for joint in ordered}
    return ordered + [joint for joint in joints if id(joint) not in reached]


def urdf_joints(urdf: str) -> list[UrdfJoint]:
    """The movable joints of a URDF in the node's model order (``tree_order``), with their effort
    limit and mimic master. As the node's model reads them: a mimic of a joint the robot lacks leaves
    its joint independent (see ``broken_mimics``); a multiplier or offset that is not a finite number
    is refused (ValueError)."""
    root = _parse(urdf)
    broken = broken_mimics(root)
    joints = []
    for joint in (j for j in tree_order(root) if j.get("type") not in ("fixed", "floating", "planar")):
        limit, mimic, name = joint.find("limit"), joint.find("mimic"), joint.get("name")
        text = limit.get("effort") if limit is not None else None
        effort = effort_limit(text)
        ignored = text if text is not None and math.isinf(effort) else None
        if mimic is None or name in broken:
            joints.append(UrdfJoint(name, effort, None, limit_text=ignored))
            continue
        try:
            multiplier, offset = float(mimic.get("multiplier", "1")), float(mimic.get("offset", "0"))
        except ValueError as error:
            raise ValueError(f"joint '{name}': <mimic> multiplier or offset is not a number") from error
        if not (math.isfinite(multiplier) and math.isfinite(offset)):
            raise ValueError(f"joint '{name}': <mimic> multiplier and offset must be finite")
        joints.append(UrdfJoint(name, effort, mimic.get("joint"), multiplier, offset, ignored))
    return joints


def _movable(root: etree._Element) -> list[etree._Element]:
    return [j for j in root.iterchildren("joint") if j.get("type") not in ("fixed", "floating", "planar")]


def broken_mimics(root: etree._Element) -> set[str]:
    """The joints whose <mimic> names no movable joint of the robot: independent joints for the node
    (``RobotModel``, with a warning), and so for the simulator."""
    movable = {j.get("name") for j in _movable(root)}
    return {
        j.get("name")
        for j in _movable(root)
        if j.find("mimic") is not None and j.find("mimic").get("joint") not in movable
    }


class SimRobot:
    """MuJoCo model and data of one robot; ``step`` applies efforts and advances one timestep."""

    def __init__(self, urdf: str, options: SimOptions = DEFAULT_OPTIONS, command_joints: Sequence[str] = ()) -> None:
        self.options = options
        self.urdf = urdf
        self.base_link: str | None = None  # the link a floating base's free joint carries
        joints = urdf_joints(urdf)
        if not joints:
            raise ValueError(NO_MOVABLE_JOINT)
        self.spec = spec = mujoco.MjSpec.from_string(without_meshes(urdf))
        spec.compiler.fusestatic = False
        spec.option.timestep = options.timestep
        spec.option.gravity = list(options.gravity)
        if options.payload is not None:
            add_payload(spec, options.payload, options.sensor_link)
        if options.floating_base:
            self.base_link = add_free_base_and_ground(spec, options)
        self.model = spec.compile()
        self.data = mujoco.MjData(self.model)
        self.joint_names = [j.name for j in joints]  # every movable joint, mimics included
        independent = [j.name for j in joints if j.mimics is None]
        unknown = [name for name in command_joints if name not in independent]
        if unknown:
            raise ValueError(f"joints {unknown} are not independent movable joints of the URDF ({independent})")
        self.command_joints = list(command_joints or independent)
        limits = {j.name: j.effort_limit for j in joints}
        self.warnings = [
            f"joint '{j.name}': <limit effort='{j.limit_text[:40]}'> is not a positive number: no effort limit"
            for j in joints
            if j.limit_text is not None
        ]
        self.warnings += [
            f"joint '{name}': mimics a joint the robot does not have; the joint is independent"
            for name in sorted(broken_mimics(_parse(urdf)))
        ]
        self.effort_limits = np.array([limits[name] for name in self.command_joints])
        self.qpos_index = np.array([self._joint(name)[0] for name in self.joint_names])
        self.dof_index = np.array([self._joint(name)[1] for name in self.joint_names])
        self.command_dofs = np.array([self._joint(name)[1] for name in self.command_joints])
        self.applied = np.zeros(len(self.joint_names))  # efforts applied during the last step, per joint
        # A mimic is a gear, not a spring: MuJoCo's default soft equality lets the follower lag
        # (a gravity hold drifted 0.3 rad in 5 s); the stiffest stable setting holds it exactly.
        self.model.eq_solref[:] = [2 * options.timestep, 1.0]
        self.model.eq_solimp[:] = [0.9999, 0.9999, 0.001, 0.5, 2.0]
        # Friction loss the same way: dry friction that reaches its bound once sliding, not a soft
        # damper below it (with MuJoCo's defaults 1 N·m of friction loss acted as ~0.83 N·m)
        # (``soft_friction`` keeps MuJoCo's default: a real joint's friction also takes time to settle)
        if not options.soft_friction:
            self.model.dof_solref[:] = [2 * options.timestep, 1.0]
            self.model.dof_solimp[:] = [0.9999, 0.9999, 0.001, 0.5, 2.0]
        if not options.keep_urdf_damping:
            self.model.dof_damping[:] = 0.0
            self.model.dof_frictionloss[:] = 0.0
        for name, armature in options.armature.items():
            self.model.dof_armature[self._joint(name)[1]] += armature
        self._sensor = self._sensor_rows() if options.sensor_link else None
        # floating base: each contact link's body and contact geom (read at every published state)
        links = options.contact_links if options.floating_base else ()
        self._contact_bodies = np.array([self.model.body(link).id for link in links], dtype=int)
        self._contact_geoms = {self.model.geom(f"rnea_sim_contact_{link}").id: k for k, link in enumerate(links)}
        self._contact_of_geom = np.full(self.model.ngeom, -1)  # each geom's contact link, −1 for none
        self._contact_of_geom[list(self._contact_geoms)] = list(self._contact_geoms.values())
        mujoco.mj_forward(self.model, self.data)

    def _joint(self, name: str) -> tuple[int, int]:
        """(qpos address, dof address) of a hinge or slide joint."""
        joint = self.model.joint(name)
        if int(joint.type[0]) not in HINGE_OR_SLIDE:
            raise ValueError(f"joint '{name}' is not a hinge or slide in MuJoCo")
        return int(joint.qposadr[0]), int(joint.dofadr[0])

    def _sensor_rows(self) -> np.ndarray:
        force, torque = self.model.sensor("rnea_sim_force"), self.model.sensor("rnea_sim_torque")
        return np.r_[force.adr[0] : force.adr[0] + 3, torque.adr[0] : torque.adr[0] + 3]

    # --- state -----------------------------------------------------------------------------------
    @property
    def time(self) -> float:
        return float(self.data.time)

    def positions(self) -> np.ndarray:
        return self.data.qpos[self.qpos_index].copy()

    def velocities(self) -> np.ndarray:
        return self.data.qvel[self.dof_index].copy()

    def base_state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Floating base: (position in the world, quaternion [x, y, z, w] world ← base, linear
        velocity of the base origin in the base frame, angular velocity in the base frame)."""
        qpos, qvel = self.data.qpos, self.data.qvel
        w, x, y, z = qpos[3:7]
        R = self.data.xmat[self.model.body(self.base_link).id].reshape(3, 3)
        return qpos[0:3].copy(), np.array([x, y, z, w]), R.T @ qvel[0:3], qvel[3:6].copy()

    def set_positions(self, positions: Mapping[str, float]) -> None:
        """Puts joints at rest at the given positions (a mimic follows its master), held there as
        by brakes: the sensors read the static load, as on a robot waiting for its controller. A
        floating base is put upright with its lowest contact sphere touching the ground."""
        model, data = self.model, self.data
        for name, value in positions.items():
            data.qpos[self._joint(name)[0]] = value
        if self.options.floating_base:
            self._put_on_the_ground()
        for j in range(model.neq):  # mimic couplings: follower = multiplier · master + offset
            if model.eq_type[j] == mujoco.mjtEq.mjEQ_JOINT:
                master, follower = model.eq_obj2id[j], model.eq_obj1id[j]
                poly = model.eq_data[j]
                master_q = data.qpos[model.jnt_qposadr[master]]
                data.qpos[model.jnt_qposadr[follower]] = poly[0] + poly[1] * master_q
        data.qvel[:] = 0.0
        data.qacc[:] = 0.0
        mujoco.mj_inverse(model, data)
        data.qfrc_applied[:] = data.qfrc_inverse
        mujoco.mj_forward(model, data)
        data.qfrc_applied[:] = 0.0

    def _put_on_the_ground(self) -> None:
        """The floating base aligned with the ground, its lowest contact touching it."""
        model, data, options = self.model, self.data, self.options
        half_slope, half_yaw = options.ground_slope / 2, options.initial_yaw / 2
        slope = np.array([math.cos(half_slope), 0.0, -math.sin(half_slope), 0.0])  # [w, x, y, z]: z → the normal
        turn = np.array([math.cos(half_yaw), 0.0, 0.0, math.sin(half_yaw)])  # then about the base's own z
        orientation = np.empty(4)
        mujoco.mju_mulQuat(orientation, slope, turn)
        data.qpos[0:7] = [0, 0, 0, *orientation]
        mujoco.mj_kinematics(model, data)
        normal = options.ground_normal
        clearance = 0.0 if options.soles else options.contact_radius  # the link origin's height above the ground
        height = float(np.min(data.xpos[self._contact_bodies] @ normal)) - clearance
        data.qpos[0:3] = -height * normal

    # --- contacts (floating base) ----------------------------------------------------------------
    def contact_positions(self) -> np.ndarray:
        """(contacts, 3): each contact link's origin in the world frame."""
        return self.data.xpos[self._contact_bodies].copy()

    def contact_wrenches(self) -> np.ndarray:
        """(contacts, 6): the wrench [f, m] the ground applies on each contact link, in the link frame,
        about its origin (rnea_node's estimated_contact_wrenches convention). The contacts' fields read
        as arrays (one ``mj_contactForce`` each): the per-contact Python of before cost ~200 µs of each
        1 ms step with Solo12's four feet down (rnea_sim records this at every state), this ~80 µs."""
        model, data = self.model, self.data
        wrenches = np.zeros((len(self.options.contact_links), 6))
        ncon = data.ncon
        if not ncon or not len(self._contact_bodies):
            return wrenches
        contacts = data.contact
        first, second = self._contact_of_geom[contacts.geom1[:ncon]], self._contact_of_geom[contacts.geom2[:ncon]]
        link = np.where(second >= 0, second, first)  # geom2's contact link, else geom1's
        mine = np.flatnonzero(link >= 0)
        if not len(mine):
            return wrenches
        local, force = np.zeros(6), np.empty((len(mine), 3))
        for row, i in enumerate(mine):
            mujoco.mj_contactForce(model, data, int(i), local)  # in the contact frame: normal first, geom1 → geom2
            force[row] = local[:3]
        force = (force[:, None, :] @ contacts.frame[mine].reshape(-1, 3, 3))[:, 0]  # the frame's rows: its axes
        force[first[mine] >= 0] *= -1.0  # the force on geom2; the contact link is geom1
        link = link[mine]
        bodies = self._contact_bodies[link]
        (ax, ay, az), (fx, fy, fz) = (contacts.pos[mine] - data.xpos[bodies]).T, force.T
        moment = np.stack([ay * fz - az * fy, az * fx - ax * fz, ax * fy - ay * fx], axis=1)  # arm × force
        R = data.xmat[bodies].reshape(-1, 1, 3, 3)
        in_link = (np.stack([force, moment], axis=1)[:, :, None, :] @ R).reshape(-1, 6)  # Rᵀ f, Rᵀ m
        for row, k in enumerate(link):  # in the contacts' order, as MuJoCo lists them
            wrenches[k] += in_link[row]
        return wrenches

    def sensor_wrench(self) -> np.ndarray:
        """[f, τ] the payload applies on ``sensor_link``, in its frame, about its origin: the wrench
        the environment applies on the robot, rnea_node's convention. MuJoCo's force/torque
        sensors report the opposite (what the parent applies on the child)."""
        if self._sensor is None:
            raise ValueError("no force/torque sensor (sensor_link)")
        return -self.data.sensordata[self._sensor]

    # --- physics ---------------------------------------------------------------------------------
    def clip(self, efforts: np.ndarray) -> tuple[np.ndarray, int]:
        clipped = np.clip(efforts, -self.effort_limits, self.effort_limits)
        return clipped, int(np.count_nonzero(clipped != efforts))

    def step(self, efforts: np.ndarray) -> int:
        """Applies ``efforts`` (command_joints order, clipped to the effort limits) for one
        timestep; returns how many were clipped."""
        clipped, count = self.clip(np.asarray(efforts, dtype=float))
        self.data.qfrc_applied[:] = 0.0
        self.data.qfrc_applied[self.command_dofs] = clipped
        time_before = self.data.time
        mujoco.mj_step(self.model, self.data)
        if any(self.data.warning[int(w)].number for w in DIVERGED):
            # MuJoCo has reset the robot to its initial state (its clock too): the run cannot go on
            # from there, and its summary says the time it reached
            self.data.time = time_before
            raise SimulationDivergedError(
                f"the simulation diverged at t = {time_before:.3f} s (a non-finite or huge state)"
            )
        self.applied = self.data.qfrc_applied[self.dof_index].copy()
        return count

    def inverse_dynamics(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """MuJoCo's rigid-body inverse dynamics (passive forces and constraints off) at a state of
        every joint (``joint_names`` order): the same physics as the simulation steps."""
        return self._inverse(q, qd, qdd).qfrc_inverse[self.dof_index].copy()

    def sensor_wrench_at(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """What ``sensor_wrench`` reads when the robot moves with (q, q̇, q̈) (every joint)."""
        if self._sensor is None:
            raise ValueError("no force/torque sensor (sensor_link)")
        return -self._inverse(q, qd, qdd).sensordata[self._sensor]

    def _inverse(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> mujoco.MjData:
        model, data = self.model, mujoco.MjData(self.model)
        saved = model.opt.disableflags
        model.opt.disableflags = saved | NO_PASSIVE_NO_CONSTRAINT
        try:
            data.qpos[self.qpos_index], data.qvel[self.dof_index], data.qacc[self.dof_index] = q, qd, qdd
            mujoco.mj_inverse(model, data)
        finally:
            model.opt.disableflags = saved
        return data
