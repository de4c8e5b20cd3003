"""What rnea_sim adds to the robot MuJoCo built from its URDF (no ROS): a payload with its
force/torque sensor, and for a floating base a free joint, a ground and contact shapes; and the
options that say so (``SimOptions``, ``Payload``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import mujoco
import numpy as np


@dataclass(frozen=True)
class Payload:
    """A rigid load fixed to ``link``: mass [kg], centre of mass [m] and principal inertia
    [kg·m²] about it, both in the link frame."""

    link: str
    mass: float
    com: tuple[float, float, float] = (0.0, 0.0, 0.0)
    inertia: tuple[float, float, float] = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class SimOptions:
    timestep: float = 1e-3
    gravity: tuple[float, float, float] = (0.0, 0.0, -9.81)
    keep_urdf_damping: bool = True  # URDF <dynamics damping friction>: kept as a real joint has them
    soft_friction: bool = False  # friction loss as MuJoCo's default: it settles within ~10 ms
    armature: Mapping[str, float] = field(default_factory=dict)  # extra reflected inertia per joint
    payload: Payload | None = None
    sensor_link: str = ""  # a force/torque sensor between this link and the payload
    # Legged robots: a free joint on the root link, a ground plane through the world origin, and a
    # contact shape at each of contact_links (URDF meshes are not loaded): a sphere centred on the link's
    # origin, or with sole_size a box whose bottom face is the sole [length, width] centred on the link's
    # origin in its x-y plane. The ground rises by ground_slope [rad] along world x (0: flat); the robot
    # starts aligned with it, turned by initial_yaw [rad] about its normal, its lowest contact touching it.
    floating_base: bool = False
    contact_links: tuple[str, ...] = ()
    contact_radius: float = 0.02
    sole_size: tuple[float, float] = (0.0, 0.0)
    friction: float = 1.0
    ground_slope: float = 0.0
    initial_yaw: float = 0.0

    @property
    def ground_normal(self) -> np.ndarray:
        """The ground's unit normal in the world frame."""
        return np.array([-math.sin(self.ground_slope), 0.0, math.cos(self.ground_slope)])

    @property
    def soles(self) -> bool:
        return all(x > 0.0 for x in self.sole_size)


def add_free_base_and_ground(spec: mujoco.MjSpec, options: SimOptions) -> str:
    """A free joint on the root link, a ground plane and a contact shape on each contact link;
    returns the root link's name (the link the free joint carries)."""
    root = spec.worldbody.first_body()
    root.add_freejoint(name="rnea_sim_base")
    half_slope = options.ground_slope / 2
    spec.worldbody.add_geom(
        name="ground",
        type=mujoco.mjtGeom.mjGEOM_PLANE,
        size=[0, 0, 1],
        quat=[math.cos(half_slope), 0.0, -math.sin(half_slope), 0.0],  # about world y: z → ground_normal
        friction=[options.friction, 0.005, 0.0001],
    )
    for link in options.contact_links:
        body = spec.body(link)
        if body is None:
            raise ValueError(f"contact link '{link}' is not a link of the URDF")
        body.add_geom(name=f"rnea_sim_contact_{link}", friction=[options.friction, 0.005, 0.0001], **_shape(options))
    # Hard contacts, as MuJoCo Menagerie's legged robots have them (elliptic cones, impratio 100),
    # and stiff (the stiffest stable solref): with MuJoCo's soft defaults a rigid body at rest on a
    # 15° slope with μ = 0.5 crept 25 mm in 10 s; with these, < 0.01 mm.
    spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    spec.option.impratio = 100.0
    for geom in ("ground", *(f"rnea_sim_contact_{link}" for link in options.contact_links)):
        spec.geom(geom).solref = [2 * options.timestep, 1.0]
        spec.geom(geom).solimp = [0.99, 0.9999, 0.001, 0.5, 2.0]
    return root.name


def _shape(options: SimOptions) -> dict:
    """A sole (a box whose bottom face is in the link's x-y plane) or a sphere on the link's origin."""
    if options.soles:
        thickness = 0.01
        return {
            "type": mujoco.mjtGeom.mjGEOM_BOX,
            "size": [options.sole_size[0] / 2, options.sole_size[1] / 2, thickness / 2],
            "pos": [0.0, 0.0, thickness / 2],  # the bottom face in the link's x-y plane
        }
    return {"type": mujoco.mjtGeom.mjGEOM_SPHERE, "size": [options.contact_radius, 0, 0]}


def add_payload(spec: mujoco.MjSpec, payload: Payload, sensor_link: str) -> None:
    """The payload as a body on its link; with ``sensor_link`` (the same link) a force/torque sensor
    between them."""
    link = spec.body(payload.link)
    if link is None:
        raise ValueError(f"payload link '{payload.link}' is not a link of the URDF")
    body = link.add_body(name="rnea_sim_payload")
    body.mass = payload.mass
    body.ipos = list(payload.com)
    body.inertia = [max(i, 1e-9) for i in payload.inertia]
    body.explicitinertial = True
    if sensor_link:
        if sensor_link != payload.link:
            raise ValueError(f"the force/torque sensor must be on the payload's link '{payload.link}'")
        body.add_site(name="rnea_sim_ft")
        for kind, name in ((mujoco.mjtSensor.mjSENS_FORCE, "force"), (mujoco.mjtSensor.mjSENS_TORQUE, "torque")):
            spec.add_sensor(name=f"rnea_sim_{name}", type=kind, objtype=mujoco.mjtObj.mjOBJ_SITE, objname="rnea_sim_ft")
