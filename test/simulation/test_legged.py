"""Legged robots stand on rnea_node's contact-consistent feed-forward, over loopback DDS, in the
simulator (lockstep): joint PD plus the inverse dynamics whose base residual is spread onto the
feet, by the QP (forces the ground can provide) or as minimum-norm wrenches. The simulator's
record is the ground truth: where each foot is, and the wrench the ground applies on it."""

from __future__ import annotations

import math

import numpy as np
import pytest
import rclpy

from rnea_ros import RobotModel
from rnea_ros.demo.closed_loop import Run, planned_trajectory, run_trajectory_loop
from rnea_ros.motion.multisine import fast_multisine
from rnea_ros.testing.closed_loop_runner import run_closed_loop
from rnea_ros.testing.legged import (
    SOLO_FEET,
    SOLO_FOOT_RADIUS,
    SOLO_URDF,
    TALOS_SOLE_SIZE,
    TALOS_SOLES,
    TALOS_URDF,
    joint_gains,
    solo_crouch,
    solo_on_its_trajectory_controller,
    solo_standing_pose,
    talos_half_sitting,
)
from rnea_ros.testing.ros_harness import ROS_ENV, init_rclpy

pytestmark = [pytest.mark.ros, pytest.mark.slow]
SLOPE = math.radians(15.0)
GROUND_NORMAL = [-math.sin(SLOPE), 0.0, math.cos(SLOPE)]  # the simulator's ground rises along world x
GROUND_FRICTION = 0.35  # tan 15° = 0.268: standing on this slope needs μ ≥ 0.27


@pytest.fixture(scope="module", autouse=True)
def ros():
    init_rclpy()
    yield
    rclpy.try_shutdown()


def stand(
    tmp_path, name: str, urdf: str, pose: np.ndarray, sim: dict, node: dict | None, seconds: float, may_diverge=False
) -> Run:
    """Holds ``pose`` for ``seconds`` of trajectory time; the node commands every joint, in model order.
    ``may_diverge``: a run that throws the robot may end early, when the simulation diverges."""
    model = RobotModel.from_urdf(urdf, floating_base=True)
    sim = {
        "robot_description": urdf,
        "realtime": False,
        "joints": model.joint_names,
        "initial_positions": [float(x) for x in pose],
        "duration": seconds,
        "floating_base": True,
        **sim,
    }
    if node is not None:
        node = {"robot_description": urdf, "floating_base": True, "command_joints": model.joint_names, **node}
    hold = fast_multisine(pose, moving=0)
    run = run_closed_loop(tmp_path, name, sim, node, hold, model.joint_names, ROS_ENV, timeout=240.0)
    if may_diverge and "the simulation diverged" in run.sim_log:
        return run
    assert run.time[-1] >= seconds - 0.01 and len(run.time) > 900 * seconds, run.sim_log[-800:]
    return run


def foot_slip(run: Run, start: float) -> np.ndarray:
    """Per contact link: the largest distance [m] from where it was at trajectory time ``start``."""
    after = run.time >= start
    positions = run.contact_position[after]
    return np.linalg.norm(positions - positions[0], axis=2).max(axis=0)


def centres_of_pressure(run: Run, start: float) -> np.ndarray:
    """(N, soles, 2): the centre of pressure of the ground's wrench on each sole, in its link
    frame (x forward, y left) [m], from trajectory time ``start`` on."""
    w = run.contact_wrench[run.time >= start]
    return np.stack([-w[:, :, 4] / w[:, :, 2], w[:, :, 3] / w[:, :, 2]], axis=2)


@pytest.mark.parametrize("yaw", [0.0, 60.0], ids=["facing up the slope", "turned 60°"])
def test_a_quadruped_stands_on_a_15_degree_slope_without_slipping_with_the_qp(tmp_path, yaw):
    """Solo12 on a 15° slope with μ = 0.35, the node's μ the ground's, joint PD plus the node's
    feed-forward: the QP keeps every foot's force inside its friction cone about the slope's normal,
    with the default friction_margin (0.9 of μ); the minimum-norm wrenches ask the point feet for
    torques, which the legs turn into forces along the slope. Joint PD alone beside them. Facing up
    the slope, and turned 60° about its normal (the slope then pulls the feet sideways too)."""
    model = RobotModel.from_urdf(SOLO_URDF, floating_base=True)
    pose = solo_standing_pose(model.joint_names)
    sim = {
        "contact_links": SOLO_FEET,
        "contact_radius": SOLO_FOOT_RADIUS,
        "friction": GROUND_FRICTION,
        "ground_slope": SLOPE,
        "initial_yaw": math.radians(yaw),
    }
    common = {"contact_links": SOLO_FEET, "kp": [5.0], "kd": [0.1]}
    nodes = {
        "qp": {
            **common,
            "contact_distribution": "qp",
            "friction_coefficient": GROUND_FRICTION,
            "contact_normals": GROUND_NORMAL,
            "contact_radius": [SOLO_FOOT_RADIUS],  # the feet as built: the ground pushes at the sphere's bottom
        },
        "minimum_norm": {**common, "contact_distribution": "minimum_norm"},
        "pd_alone": {**common, "command_source": "none"},
    }
    slip, sag = {}, {}
    for name, node in nodes.items():
        label = f"solo_slope_{yaw:.0f}_{name}"
        run = stand(tmp_path, label, SOLO_URDF, pose, sim, node, 11.0, may_diverge=name != "qp")
        if run.time[-1] < 11.0 - 0.01:  # the efforts threw the robot until the simulation diverged
            print(f"Solo12 on 15° turned {yaw:.0f}°, {name}: the simulation diverged at t = {run.time[-1]:.3f} s")
            slip[name], sag[name] = np.full(len(SOLO_FEET), np.inf), np.inf
            continue
        slip[name] = foot_slip(run, start=1.0)  # 10 s, after the release from the brakes
        from_release = foot_slip(run, start=0.0)
        error = np.abs(run.positions(model.joint_names) - pose)[run.time >= 1.0]
        sag[name] = float(np.degrees(error.max()))
        print(
            f"Solo12 on 15° turned {yaw:.0f}°, {name}: foot slip over 10 s {np.round(slip[name] * 1e3, 3).tolist()} mm "
            f"(from the release {np.round(from_release * 1e3, 3).tolist()} mm), largest joint error {sag[name]:.2f}°; "
            f"the node's compute time p50 {run.node_diagnostics.get('compute time p50 [us]')} µs"
        )
    assert slip["qp"].max() < 1e-3
    assert slip["qp"].max() < slip["minimum_norm"].max()
    assert sag["qp"] < sag["pd_alone"]


def test_a_humanoid_stands_on_two_soles_with_the_centre_of_pressure_inside_both(tmp_path):
    """Talos (90 kg, 32 joints) half-sitting with its pelvis shifted sideways (hips rolled 0.08 rad)
    on flat ground, plane contacts of its sole size: the ground's centre of pressure under each sole
    stays inside its central 80 % (the node's default sole_margin) and the robot does not move."""
    model = RobotModel.from_urdf(TALOS_URDF, floating_base=True)
    pose = talos_half_sitting(model.joint_names, hip_roll=0.08)
    kp, kd = joint_gains(model, pose, omega=30.0)
    sim = {"contact_links": TALOS_SOLES, "sole_size": TALOS_SOLE_SIZE, "friction": 0.8}
    for name in ("qp", "minimum_norm"):
        node = {
            "contact_links": TALOS_SOLES,
            "contact_distribution": name,
            "sole_size": TALOS_SOLE_SIZE,
            "kp": kp.tolist(),
            "kd": kd.tolist(),
        }
        run = stand(tmp_path, f"talos_{name}", TALOS_URDF, pose, sim, node, 5.0)
        settled = run.time >= 0.5
        normal = run.contact_wrench[settled][:, :, 2]
        cop = centres_of_pressure(run, start=0.5)
        slip = foot_slip(run, start=0.5)
        print(
            f"Talos on two soles, {name}: normal forces {normal.min(axis=0).round(1).tolist()}–"
            f"{normal.max(axis=0).round(1).tolist()} N; centre of pressure x {cop[..., 0].min():.4f}…"
            f"{cop[..., 0].max():.4f} m, y {cop[..., 1].min():.4f}…{cop[..., 1].max():.4f} m "
            f"(sole ±{TALOS_SOLE_SIZE[0] / 2}, ±{TALOS_SOLE_SIZE[1] / 2}); "
            f"sole slip {np.round(slip * 1e3, 3).tolist()} mm"
        )
        if name == "qp":
            assert normal.min() > 100.0  # both soles carry weight throughout
            assert np.all(np.abs(cop[..., 0]) < 0.8 * TALOS_SOLE_SIZE[0] / 2)
            assert np.all(np.abs(cop[..., 1]) < 0.8 * TALOS_SOLE_SIZE[1] / 2)
            assert slip.max() < 1e-3


def test_a_quadruped_crouches_on_the_trajectorys_feedforward_in_real_time_and_in_lockstep(tmp_path):
    """ros2_control's way on a floating base: Solo12 crouches and rises (knees −1.6 → −1.92 rad, 2 s a
    cycle) under the JTC stand-in (its PID at 40 rad/s), the planner's points 0.1 s apart given their
    efforts by rnea_node ahead of time: the contact-consistent torques of the QP, the base moving as
    the feet held still make it. PID alone sags under the robot's weight."""
    model = RobotModel.from_urdf(SOLO_URDF, floating_base=True)
    names, seconds = list(model.joint_names), 4.0
    crouch = solo_crouch(model)
    planned = planned_trajectory(names, crouch, seconds, spacing=0.1)
    rms = {}
    for label, realtime, feedforward in (("pid", True, False), ("ff", True, True), ("ff lockstep", False, True)):
        sim, node = solo_on_its_trajectory_controller(model, realtime, seconds)
        run = run_trajectory_loop(
            tmp_path, f"solo_crouch_{len(rms)}", sim, node if feedforward else None, planned, ROS_ENV, timeout=240.0,
            reference=crouch,
        )  # fmt: skip
        rms[label] = np.degrees(np.sqrt((run.tracking_error(names) ** 2).mean(axis=0)))
        print(f"Solo12 crouching, {label}: RMS tracking error per joint {np.round(rms[label], 3).tolist()}°")
    assert rms["ff"].max() < 1.0 and rms["ff lockstep"].max() < 1.0
    assert rms["pid"].max() > 20 * rms["ff"].max()
    assert np.all(np.abs(rms["ff"] - rms["ff lockstep"]) <= 0.1 * rms["ff lockstep"] + 1e-3)
