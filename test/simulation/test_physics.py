"""The simulated robot is the same physics as the model: MuJoCo's own URDF import and inverse
dynamics against RobotModel (mimic joints folded), the force/torque sensor's convention, the
effort limits and the brakes at start. No ROS. MuJoCo is imported inside the tests: this file
runs after the DDS tests of this session (see rnea_ros/simulation/sim_node.py on load order)."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.testing.reference import ARM_URDF, robot_urdf

ROBOTS = {
    "example arm (mimic gripper)": lambda: ARM_URDF,
    "UR5": lambda: robot_urdf("ur_description/urdf/ur5_robot.urdf"),
    "Panda (mimic fingers)": lambda: robot_urdf("panda_description/urdf/panda.urdf"),
}


def folded(sim, tau_all: np.ndarray, model: RobotModel) -> np.ndarray:
    """MuJoCo's per-joint torques with each mimic's folded into its master (τ_m += multiplier·τ_mimic)."""
    from rnea_ros.simulation.physics import urdf_joints

    by_name = dict(zip(sim.joint_names, tau_all, strict=True))
    out = np.array([by_name[name] for name in model.joint_names])
    for joint in urdf_joints(sim.urdf):
        if joint.mimics is not None:
            out[model.joint_names.index(joint.mimics)] += joint.multiplier * by_name[joint.name]
    return out


def all_joints(sim, model: RobotModel, values: np.ndarray, mimic_offset: bool) -> np.ndarray:
    """A vector of the model's joints spread to every simulated joint (mimics follow their master)."""
    from rnea_ros.simulation.physics import urdf_joints

    by_name = dict(zip(model.joint_names, values, strict=True))
    return np.array(
        [
            by_name[j.name]
            if j.mimics is None
            else j.multiplier * by_name[j.mimics] + (j.offset if mimic_offset else 0.0)
            for j in urdf_joints(sim.urdf)
        ]
    )


@pytest.mark.parametrize("robot", ROBOTS)
def test_mujoco_inverse_dynamics_equals_the_model(robot):
    from rnea_ros.simulation.physics import SimRobot

    urdf = ROBOTS[robot]()
    model = RobotModel.from_urdf(urdf)
    sim = SimRobot(urdf)
    rng = np.random.default_rng(7)
    for _ in range(5):
        q, qd, qdd = (rng.uniform(-1, 1, model.nv) for _ in range(3))
        tau_mj = sim.inverse_dynamics(
            all_joints(sim, model, q, True), all_joints(sim, model, qd, False), all_joints(sim, model, qdd, False)
        )
        np.testing.assert_allclose(folded(sim, tau_mj, model), model.inverse_dynamics(q, qd, qdd), rtol=1e-9, atol=1e-9)


def test_the_sensor_reports_the_payload_wrench_in_the_node_convention():
    """ID of the bare arm with the sensor's wrench on the tool = MuJoCo's ID of the arm carrying the payload."""
    from rnea_ros.simulation.physics import Payload, SimOptions, SimRobot

    sim = SimRobot(
        ARM_URDF, SimOptions(payload=Payload("tcp", 2.0, (0.03, 0.0, 0.05), (0.01, 0.02, 0.015)), sensor_link="tcp")
    )
    model = RobotModel.from_urdf(ARM_URDF)
    rng = np.random.default_rng(3)
    q, qd, qdd = (rng.uniform(-1, 1, model.nv) for _ in range(3))
    state = all_joints(sim, model, q, True), all_joints(sim, model, qd, False), all_joints(sim, model, qdd, False)
    tau_mj = sim.inverse_dynamics(*state)
    wrench = sim.sensor_wrench_at(*state)
    np.testing.assert_allclose(
        model.inverse_dynamics(q, qd, qdd, {"tcp": wrench}), folded(sim, tau_mj, model), rtol=1e-9, atol=1e-9
    )
    # at rest: the payload's weight, pointing down in the world, seen in the tool frame
    sim.set_positions({"joint2": 0.5})
    R_world_tcp = sim.data.xmat[sim.model.body("tcp").id].reshape(3, 3)
    np.testing.assert_allclose(R_world_tcp @ sim.sensor_wrench()[:3], [0.0, 0.0, -2.0 * 9.81], atol=1e-6)


def test_efforts_are_clipped_to_the_urdf_limits_and_the_robot_starts_held():
    from rnea_ros.simulation.physics import SimRobot

    sim = SimRobot(ARM_URDF)
    np.testing.assert_array_equal(sim.effort_limits, [87, 87, 87, 87, 12, 12, 12, 20])
    sim.set_positions({"joint2": 0.7, "joint4": -1.2, "finger_left_joint": 0.02})
    assert np.abs(sim.data.qacc).max() < 1e-9  # held: nothing moves before the first step
    q = sim.positions()
    assert q[sim.joint_names.index("finger_right_joint")] == pytest.approx(0.02)  # the mimic follows
    assert sim.step(np.full(8, 1000.0)) == 8
    np.testing.assert_allclose(sim.applied[:8], sim.effort_limits)


@pytest.mark.parametrize("slope_degrees", [0.0, 15.0])
def test_the_ground_carries_a_braced_quadruped_on_its_slope(slope_degrees):
    """Solo12 placed on the ground (flat or sloped), its joints held by a stiff PD: every foot
    touches, the ground's wrenches on the feet sum to the robot's weight, and once settled no foot
    moves in 2 s (hard contacts: no creep)."""
    import math

    from rnea_ros.simulation.physics import SimOptions, SimRobot
    from rnea_ros.testing.legged import SOLO_FEET, SOLO_URDF, solo_standing_pose

    slope = math.radians(slope_degrees)
    options = SimOptions(floating_base=True, contact_links=tuple(SOLO_FEET), friction=0.5, ground_slope=slope)
    sim = SimRobot(SOLO_URDF, options)
    pose = solo_standing_pose(sim.command_joints)
    sim.set_positions(dict(zip(sim.command_joints, pose, strict=True)))
    normal = options.ground_normal
    heights = sim.contact_positions() @ normal
    np.testing.assert_allclose(heights, options.contact_radius, atol=1e-9)  # all four touch
    start = sim.contact_positions()
    kp, kd = 20.0, 0.5
    for _ in range(2000):
        sim.step(kp * (pose - sim.positions()) - kd * sim.velocities())
    total = np.zeros(3)
    for k, link in enumerate(SOLO_FEET):
        R = sim.data.xmat[sim.model.body(link).id].reshape(3, 3)
        total += R @ sim.contact_wrenches()[k, :3]
    weight = sum(sim.model.body_mass) * 9.81
    np.testing.assert_allclose(total, [0.0, 0.0, weight], atol=1e-3 * weight)
    assert np.linalg.norm(sim.contact_positions() - start, axis=1).max() < 5e-3  # settling into the pose
    settled = sim.contact_positions()
    for _ in range(2000):
        sim.step(kp * (pose - sim.positions()) - kd * sim.velocities())
    assert np.linalg.norm(sim.contact_positions() - settled, axis=1).max() < 1e-4


def test_a_diverging_simulation_stops_instead_of_restarting_from_the_initial_state():
    """MuJoCo resets a state whose accelerations are non-finite or huge; the simulator stops and says when."""
    from rnea_ros.simulation.physics import SimRobot, SimulationDivergedError

    sim = SimRobot(ARM_URDF)
    sim.step(np.zeros(8))
    sim.data.qvel[:] = 1e20  # thrown: huge Coriolis accelerations
    with pytest.raises(SimulationDivergedError, match=r"diverged at t = 0\.00"):
        sim.step(np.zeros(8))


def test_one_effort_limit_rule_in_the_node_and_the_simulator():
    """A positive finite <limit effort> limits the joint; 0, negative, NaN, inf or no number does not,
    with a warning naming the joint, in the node's model and in the simulator alike."""
    from lxml import etree

    from rnea_ros.simulation.physics import SimRobot

    written = {"joint1": "-5", "joint2": "nan", "joint3": "0", "joint4": "inf", "joint5": "abc", "joint6": "7.5"}
    root = etree.fromstring(ARM_URDF.encode())
    for joint in root.iterchildren("joint"):
        if joint.get("name") in written:
            joint.find("limit").set("effort", written[joint.get("name")])
    urdf = etree.tostring(root, encoding="unicode")
    model = RobotModel.from_urdf(urdf)
    sim = SimRobot(urdf)
    node_limits = dict(zip(model.joint_names, model.effort_limits, strict=True))
    sim_limits = dict(zip(sim.command_joints, sim.effort_limits, strict=True))
    for name, text in written.items():
        expected = 7.5 if text == "7.5" else np.inf
        assert node_limits[name] == sim_limits[name] == expected, name
        warned_node = any(f"'{name}'" in w and "effort" in w for w in model.warnings)
        warned_sim = any(f"'{name}'" in w for w in sim.warnings)
        assert warned_node == warned_sim == (text != "7.5"), name
    clipped, count = sim.clip(np.full(len(sim.command_joints), 100.0))
    limited = np.isfinite(sim.effort_limits)  # joint6, and the joints this test left alone
    assert count == limited.sum() and clipped[sim.command_joints.index("joint6")] == 7.5
    assert np.all(clipped[~limited] == 100.0)


@pytest.mark.parametrize(
    "mimic", ['joint="no_such_joint"', 'joint="joint1" multiplier="nan"', 'joint="joint1" offset="x"']
)
def test_a_broken_mimic_is_the_same_robot_in_the_node_and_the_simulator(mimic):
    """A mimic of a joint the robot lacks: an independent joint in both, with a warning; a multiplier
    or offset that is no finite number: refused by both."""
    from lxml import etree

    from rnea_ros.dynamics.urdf import ModelError
    from rnea_ros.simulation.physics import SimRobot

    root = etree.fromstring(ARM_URDF.encode())
    joint6 = next(j for j in root.iterchildren("joint") if j.get("name") == "joint6")
    joint6.append(etree.fromstring(f"<mimic {mimic}/>"))
    urdf = etree.tostring(root, encoding="unicode")
    if "no_such_joint" in mimic:
        model, sim = RobotModel.from_urdf(urdf), SimRobot(urdf)
        assert sim.command_joints == list(model.joint_names) and "joint6" in sim.command_joints
        assert any("joint6" in w for w in model.warnings) and any("joint6" in w for w in sim.warnings)
        return
    with pytest.raises(ModelError):
        RobotModel.from_urdf(urdf)
    with pytest.raises(ValueError, match="mimic"):
        SimRobot(urdf)
