"""The node's torques drive the simulated robot (rnea_sim) through the interfaces of ros2_control,
over loopback DDS: gravity hold, payload through the force/torque sensor, trajectory tracking,
and the simulator's safety behaviour. Lockstep mode (each step waits for the command computed
from the state before it) unless said otherwise; every run bounded in time."""

from __future__ import annotations

import time

import numpy as np
import pytest
import rclpy
from std_msgs.msg import Float64MultiArray

from rnea_ros import RobotModel
from rnea_ros.demo.closed_loop import start, stop
from rnea_ros.motion.multisine import fast_multisine
from rnea_ros.testing.closed_loop_runner import run_closed_loop
from rnea_ros.testing.legged import SOLO_FEET, SOLO_URDF, solo_standing_pose
from rnea_ros.testing.reference import ARM_URDF
from rnea_ros.testing.ros_harness import ROS_ENV, init_rclpy

pytestmark = [pytest.mark.ros, pytest.mark.slow]
ARM = RobotModel.from_urdf(ARM_URDF)
START = [0.0, 1.0, 0.0, -1.5, 0.0, 1.5, 0.0, 0.02]
# Critically damped at ~20-25 rad/s on the arm's own inertias at START (ω² M_ii, 2 ω M_ii)
KP = [600.0, 900.0, 250.0, 150.0, 12.0, 15.0, 1.0, 40.0]
KD = [60.0, 90.0, 25.0, 15.0, 1.2, 1.5, 0.1, 4.0]
PAYLOAD = {"payload_link": "tcp", "payload_mass": 2.0, "payload_com": [0.0, 0.0, 0.05], "payload_inertia": [0.004] * 3}


@pytest.fixture(scope="module", autouse=True)
def ros():
    init_rclpy()
    yield
    rclpy.try_shutdown()


def sim_parameters(positions, duration: float, **extra) -> dict:
    return {
        "robot_description": ARM_URDF,
        "realtime": False,
        "initial_positions": [float(x) for x in positions],
        "duration": duration,
        **extra,
    }


def random_poses(count: int) -> list[np.ndarray]:
    rng = np.random.default_rng(2026)
    low = [-1.5, 0.4, -1.5, -2.5, -1.5, 0.3, -2.0, 0.02]
    high = [1.5, 1.3, 1.5, -0.5, 1.5, 2.5, 2.0, 0.02]
    return [rng.uniform(low, high) for _ in range(count)]


def largest_motion(run, names=ARM.joint_names) -> float:
    q = run.positions(names)
    return float(np.abs(q - q[0]).max())


def test_gravity_compensation_holds_three_random_poses(tmp_path):
    for k, pose in enumerate(random_poses(3)):
        run = run_closed_loop(
            tmp_path,
            f"hold{k}",
            sim_parameters(pose, 5.0),
            {"robot_description": ARM_URDF, "command_source": "gravity"},
            None,
            ARM.joint_names,
            ROS_ENV,
        )
        print(f"pose {k}: largest motion over 5 s {largest_motion(run) * 1e3:.4f} mrad")
        assert run.time[-1] - run.time[0] >= 4.99
        assert largest_motion(run) < 1e-3, run.sim_log[-500:]
        assert " 0 steps at zero effort" in run.sim_log


@pytest.mark.parametrize("command_timeout", [0.1, 0.0])
def test_when_the_node_stops_the_simulator_goes_limp_or_holds_the_last_command(tmp_path, command_timeout):
    """command_timeout 0.1 s (a driver's watchdog): zero effort, the arm falls, the simulator says so.
    0 (JointGroupEffortController, which has no timeout): the last command stays; the arm at rest
    keeps its gravity torques."""
    pose = random_poses(1)[0]
    run = run_closed_loop(
        tmp_path,
        f"stopped_{int(command_timeout * 10)}",
        sim_parameters(pose, 6.0, command_timeout=command_timeout),
        {"robot_description": ARM_URDF, "command_source": "gravity"},
        None,
        ARM.joint_names,
        ROS_ENV,
        stop_node_after=2.0,
    )
    print(f"command_timeout {command_timeout}: largest motion once the node stopped {largest_motion(run):.4f} rad")
    if command_timeout > 0.0:
        assert largest_motion(run) > 0.5
        assert "zero effort" in run.sim_log and "no command for" in run.sim_log
    else:
        assert " 0 steps at zero effort" in run.sim_log and "no command for" not in run.sim_log
        assert largest_motion(run) < 1e-2


@pytest.mark.parametrize("sensor", ["on wrench_topics", "flipped", "off"])
def test_a_payload_is_held_through_the_force_torque_sensor(tmp_path, sensor):
    pose = random_poses(1)[0]
    # brakes released after 50 commands: the node has the sensor's wrench by then (zero gains keep
    # any velocity a first command without it would give)
    sim = sim_parameters(
        pose,
        4.0,
        **PAYLOAD,
        sensor_topic="tcp_wrench",
        sensor_reports_robot_side=sensor == "flipped",
        release_after_commands=50,
    )
    node = {"robot_description": ARM_URDF, "command_source": "gravity", "wrench_topics": ["tcp_wrench"]}
    if sensor == "flipped":
        node["flip_wrench_topics"] = ["tcp_wrench"]
    if sensor == "off":
        node["wrench_topics"] = ["unused_wrench"]
    run = run_closed_loop(tmp_path, f"payload_{sensor.split()[0]}", sim, node, None, ARM.joint_names, ROS_ENV)
    motion = largest_motion(run)
    print(f"2 kg payload, sensor {sensor}: largest motion over 4 s {motion * 1e3:.3f} mrad")
    if sensor == "off":
        assert motion > 0.05  # the weight the model does not know makes the arm sag
    else:
        assert motion < 1e-3


def test_pd_plus_feedforward_tracks_ten_times_better_than_pd_alone(tmp_path):
    trajectory = fast_multisine(np.array(START), moving=7)
    rms = {}
    for source in ("none", "inverse_dynamics"):
        run = run_closed_loop(
            tmp_path,
            f"track_{source}",
            sim_parameters(START, 4.0),  # the URDF's joint damping in both, the simulator and the node
            {"robot_description": ARM_URDF, "command_source": source, "kp": KP, "kd": KD},
            trajectory,
            ARM.joint_names,
            ROS_ENV,
        )
        error = run.tracking_error(ARM.joint_names)
        assert len(error) > 3500, run.sim_log[-500:]  # the trajectory ran for ~4 s
        rms[source] = np.degrees(np.sqrt((error**2).mean(axis=0)))[:7]
        print(source, "RMS tracking error per joint [deg]:", np.round(rms[source], 4))
    assert np.all(rms["inverse_dynamics"] < 0.1)
    assert np.all(rms["none"] >= 10 * rms["inverse_dynamics"])


def test_the_simulator_refuses_wrong_commands_and_goes_limp_without_them(tmp_path):
    node = rclpy.create_node("commander", namespace="limp")
    commands = node.create_publisher(Float64MultiArray, "effort_commands", 10)
    sim = start(
        "rnea_ros.simulation",
        "limp",
        sim_parameters(START, 0.0, realtime=True, commands_topic="effort_commands"),
        tmp_path,
        ROS_ENV,
    )
    try:
        deadline = time.monotonic() + 30
        while not node.count_subscribers("effort_commands") and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.1)
        commands.publish(Float64MultiArray(data=[1.0, 2.0]))  # 2 values for 8 joints
        time.sleep(1.1)  # refusals are logged at most once a second
        commands.publish(Float64MultiArray(data=[float("nan")] * 8))
        commands.publish(Float64MultiArray(data=[0.0] * 8))  # valid: then nothing more
        time.sleep(1.0)
    finally:
        node.destroy_node()
        assert stop(sim) == 0
    log = (tmp_path / "limp_simulation.log").read_text()
    assert "command refused: 2 values for 8 joints" in log
    assert "command refused: values that are not finite" in log
    assert "(> command_timeout): zero effort" in log


def test_a_quadruped_stands_better_with_the_contact_consistent_gravity_torques(tmp_path):
    """Solo12 on the ground: joint PD alone against PD plus rnea_node's gravity torques with the
    four feet as contact_links and the simulator's odometry as the base state."""
    urdf = SOLO_URDF
    model = RobotModel.from_urdf(urdf, floating_base=True)
    pose = solo_standing_pose(model.joint_names).tolist()
    feet = SOLO_FEET
    sim = {
        "robot_description": urdf,
        "realtime": False,
        "initial_positions": pose,
        "duration": 3.0,
        "floating_base": True,
        "contact_links": feet,
    }
    hold = fast_multisine(np.array(pose), moving=0)  # the standing pose, held
    rms = {}
    for source in ("none", "gravity"):
        node = {
            "robot_description": urdf,
            "floating_base": True,
            "contact_links": feet,
            "command_source": source,
            "kp": [5.0],
            "kd": [0.1],
        }
        run = run_closed_loop(tmp_path, f"solo_{source}", sim, node, hold, model.joint_names, ROS_ENV)
        error = run.tracking_error(model.joint_names)
        assert len(error) > 2500, run.sim_log[-500:]
        rms[source] = float(np.degrees(np.sqrt((error**2).mean())))
        print(f"Solo12 standing, {source}: RMS joint error {rms[source]:.3f}°")
    assert rms["gravity"] < rms["none"] / 5
