"""A cancel holds the weight: the example arm with a 2 kg payload on soft gains (rnea_gains at a 5 Hz
bandwidth), in rnea_sim's JTC stand-in (which, as the Jazzy JTC, holds a cancelled goal's position
with effort 0 plus its PID), a goal cancelled mid-motion through rnea_node's relay. With
``cancel_hold`` (the default) the relay sends the JTC a one-point goal at the measured position with
the efforts that hold it: from 1 s to 3 s after the cancel no joint moves more than 1 mrad peak to
peak, and the arm is where it was held. Without it the arm sags under its weight. Time is the
stand-in's (controller_state stamps: simulated time), so a loaded machine changes nothing."""

from __future__ import annotations

import time

import numpy as np
import pytest
from action_msgs.msg import GoalStatus
from control_msgs.msg import JointTrajectoryControllerState

from rnea_ros.analysis.gains import critically_damped_gains
from rnea_ros.demo.closed_loop import start, stop
from rnea_ros.demo.demo import PAYLOAD, START, payload_corrections
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.testing.action_client import TrajectoryClient, goal, rest_to_rest
from rnea_ros.testing.reference import ARM_URDF
from rnea_ros.testing.ros_harness import ROS_ENV, rclpy_running

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NS = "cancel_hold"
JOINTS = [*(f"joint{i}" for i in range(1, 8)), "finger_left_joint"]
BANDWIDTH = 2 * np.pi * 5.0  # rad/s


@pytest.fixture(scope="module")
def ros():
    yield from rclpy_running()


def stamp(msg) -> float:
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def soft_gains() -> tuple[list[float], list[float]]:
    _, kp, kd = critically_damped_gains(RobotModel.from_urdf(ARM_URDF), np.array(START), BANDWIDTH, JOINTS)
    return kp.tolist(), kd.tolist()


def after_a_cancel(folder, cancel_hold: bool) -> tuple[np.ndarray, np.ndarray]:
    """(peak to peak [rad], largest |position − the JTC's reference| [rad]) per joint, from 1 s to 3 s
    after a goal was cancelled mid-motion."""
    kp, kd = soft_gains()
    sim = {
        "robot_description": ARM_URDF,
        "controller": "joint_trajectory",
        "trajectory_topic": "feedforward_trajectory",
        "action_name": "jtc/follow_joint_trajectory",
        "state_topic": "jtc/controller_state",
        "initial_positions": START,
        "pid_p": kp,
        "pid_d": kd,
        "duration": 0.0,
        **PAYLOAD,
    }
    node = {
        "robot_description": ARM_URDF,
        "corrections_file": str(payload_corrections(folder)),
        "controller_action": f"/{NS}/jtc/follow_joint_trajectory",
        "cancel_hold": cancel_hold,
        # the relay's rule for a silent JTC is test_relay_truthful's: here the simulator, beside two busy
        # processes, can be starved of CPU for seconds in the middle of a goal
        "controller_action_timeout": 10.0,
    }
    processes = [start("rnea_ros.simulation", NS, sim, folder, ROS_ENV)]
    processes.append(start("rnea_ros.node", NS, node, folder, ROS_ENV))
    client = TrajectoryClient("moveit", f"/{NS}/follow_joint_trajectory")
    states: list[JointTrajectoryControllerState] = []
    client.node.create_subscription(JointTrajectoryControllerState, f"/{NS}/jtc/controller_state", states.append, 1000)
    try:
        assert client.client.wait_for_server(timeout_sec=30.0)
        assert client.relay_found_its_controller(30.0)
        settle = client.send(goal(rest_to_rest(JOINTS, START, START, 1.0)), timeout=30.0)  # the brakes let go
        client.wait(settle, 15.0)
        assert settle.status == GoalStatus.STATUS_SUCCEEDED, settle.result
        # the goal's answer says nothing of this subscription: it matches the simulator's publisher when
        # discovery gets there (later than the goal's end beside two busy processes), then gets each cycle's
        assert client.spin_until(lambda: bool(states), 30.0), "no controller_state"
        here = np.array(states[-1].feedback.positions)
        sent = client.send(goal(rest_to_rest(JOINTS, here, here + np.array([0.3] * 7 + [0.0]), 2.0)))
        assert client.spin_until(lambda: len(sent.feedback) >= 16, 10.0)  # moving, 0.8 s in
        cancelled_at = stamp(states[-1])
        client.cancel(sent)
        client.wait(sent, 5.0)
        assert sent.status == GoalStatus.STATUS_CANCELED
        deadline = time.monotonic() + 30.0
        assert client.spin_until(lambda: stamp(states[-1]) > cancelled_at + 3.0, deadline - time.monotonic())
        window = [msg for msg in states if cancelled_at + 1.0 <= stamp(msg) <= cancelled_at + 3.0]
        assert len(window) > 50, len(window)  # 100 Hz of controller_state, fewer when the machine lags
        q = np.array([msg.feedback.positions for msg in window])
        error = np.array([msg.error.positions for msg in window])
        return np.ptp(q, axis=0), np.abs(error).max(axis=0)
    finally:
        client.close()
        for process in reversed(processes):
            stop(process)


@pytest.mark.parametrize("cancel_hold", [True, False], ids=["cancel_hold", "without"])
def test_a_cancel_on_soft_gains_holds_the_weight_only_with_cancel_hold(ros, tmp_path, cancel_hold):
    peak_to_peak, offset = after_a_cancel(tmp_path, cancel_hold)
    print(f"cancel_hold {cancel_hold}: 1-3 s after the cancel, peak to peak [mrad] {np.round(peak_to_peak * 1e3, 3)}")
    print(f"cancel_hold {cancel_hold}: |position - reference| [mrad] {np.round(offset * 1e3, 3)}")
    if cancel_hold:
        assert np.all(peak_to_peak < 1e-3)
        assert np.all(offset < 1e-3)
    else:
        assert np.max(offset) > 5e-3  # sagged under its weight
