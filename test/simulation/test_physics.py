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
