"""The simulated robot rnea_sim's settings describe (no ROS). Imports MuJoCo: rnea_sim imports this
module only once rclpy has loaded its middleware (see ``sim_node``)."""

from __future__ import annotations

from rnea_ros.simulation.parameters import SimSettings, per_joint
from rnea_ros.simulation.physics import Payload, SimOptions, SimRobot

# what a real joint has and its URDF does not say: the calibration loop's hidden truth
HIDDEN_JOINT_TERMS = (("armature", "dof_armature"), ("damping", "dof_damping"), ("friction_loss", "dof_frictionloss"))


def build_robot(description: str, p: SimSettings) -> SimRobot:
    """The robot of ``description`` with the settings' payload, ground, hidden joint terms and
    initial positions (ValueError, or MuJoCo's error, when it cannot be simulated)."""
    payload = None
    if p.payload_link and p.payload_mass > 0.0:
        payload = Payload(p.payload_link, p.payload_mass, tuple(p.payload_com), tuple(p.payload_inertia))
    options = SimOptions(
        timestep=1.0 / p.rate,
        gravity=tuple(p.gravity),
        keep_urdf_damping=p.keep_urdf_damping,
        payload=payload,
        sensor_link=p.payload_link if payload is not None and p.sensor_topic else "",
        floating_base=p.floating_base,
        contact_links=p.contact_links,
        contact_radius=p.contact_radius,
        sole_size=tuple(per_joint(p.sole_size, 2, "sole_size")),
        friction=p.friction,
        ground_slope=p.ground_slope,
        initial_yaw=p.initial_yaw,
        soft_friction=p.soft_friction,
    )
    robot = SimRobot(description, options, list(p.joints))
    n = len(robot.command_joints)
    for parameter, field in HIDDEN_JOINT_TERMS:
        values = per_joint(getattr(p, parameter), n, parameter)
        for name, value in zip(robot.command_joints, values, strict=True):
            getattr(robot.model, field)[robot._joint(name)[1]] += value
    initial = per_joint(p.initial_positions, n, "initial_positions")
    robot.set_positions(dict(zip(robot.command_joints, initial, strict=True)))
    return robot
