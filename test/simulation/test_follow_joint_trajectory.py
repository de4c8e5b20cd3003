"""rnea_sim's joint_trajectory_controller stand-in behind control_msgs/action/FollowJointTrajectory,
as the JTC (jazzy) serves it, over loopback DDS: goals accepted or rejected by its rules, a goal's
path and goal tolerances and goal time, its result codes and strings, feedback, cancel (the arm
holds), preemption by a new goal; and ~/controller_state. The example arm, PID alone (the stand-in
without rnea_node: it sags a little under gravity, so the tolerances here are loose where it must succeed)."""

from __future__ import annotations

import numpy as np
import pytest
import rclpy
from action_msgs.msg import GoalStatus
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTrajectoryControllerState

from rnea_ros.demo.closed_loop import start, stop
from rnea_ros.demo.demo import KD, KP, START
from rnea_ros.testing.action_client import TrajectoryClient, goal, rest_to_rest
from rnea_ros.testing.reference import ARM_URDF
from rnea_ros.testing.ros_harness import ROS_ENV, init_rclpy

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NAMESPACE = "fjt_sim"
JOINTS = [*(f"joint{i}" for i in range(1, 8)), "finger_left_joint"]  # the commanded joints (no mimic)
Result = FollowJointTrajectory.Result


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    init_rclpy()
    folder = tmp_path_factory.mktemp("fjt_sim")
    parameters = {
        "robot_description": ARM_URDF,
        "controller": "joint_trajectory",
        "initial_positions": START,
        "pid_p": KP,
        "pid_d": KD,
        "duration": 0.0,
    }
    sim = start("rnea_ros.simulation", NAMESPACE, parameters, folder, ROS_ENV)
    trajectory_client = TrajectoryClient(
        "fjt_client", f"/{NAMESPACE}/joint_trajectory_controller/follow_joint_trajectory", f"/{NAMESPACE}/joint_states"
    )
    yield trajectory_client
    trajectory_client.close()
    stop(sim)
    rclpy.try_shutdown()
    print((folder / f"{NAMESPACE}_simulation.log").read_text()[-3000:])


def move(client, offset: float, seconds: float = 1.0, **tolerances):
    here = client.positions(JOINTS)
    target = here + np.array([offset] * 7 + [0.0])
    return client.send(goal(rest_to_rest(JOINTS, here, target, seconds), **tolerances)), target


def test_a_goal_is_followed_with_feedback_and_succeeds_within_its_goal_tolerance(client):
    sent, target = move(client, 0.1, at_goal=0.1, goal_time=3.0)
    assert sent.accepted
    client.wait(sent, 10.0)
    assert sent.status == GoalStatus.STATUS_SUCCEEDED, sent.result
    assert (sent.result.error_code, sent.result.error_string) == (Result.SUCCESSFUL, "Goal successfully reached!")
    assert len(sent.feedback) >= 10  # 20 Hz for a second
    last = sent.feedback[-1]
    assert list(last.joint_names) == JOINTS
    np.testing.assert_allclose(last.error.positions, np.subtract(last.desired.positions, last.actual.positions))
    assert np.max(np.abs(client.positions(JOINTS) - target)) < 0.1


def test_the_controller_state_has_reference_feedback_error_and_the_effort_commanded(client):
    states: list[JointTrajectoryControllerState] = []
    topic = f"/{NAMESPACE}/joint_trajectory_controller/controller_state"
    client.node.create_subscription(JointTrajectoryControllerState, topic, states.append, 100)
    assert client.spin_until(lambda: len(states) >= 20, 10.0)
    msg = states[-1]
    assert list(msg.joint_names) == JOINTS
    for point in (msg.reference, msg.feedback, msg.error):
        assert len(point.positions) == len(JOINTS)
    np.testing.assert_allclose(msg.error.positions, np.subtract(msg.reference.positions, msg.feedback.positions))
    assert len(msg.output.effort) == len(JOINTS) and abs(msg.output.effort[1]) > 1.0  # holding joint 2 up
    assert msg.speed_scaling_factor == 1.0


def nanoseconds(time) -> int:
    """A builtin_interfaces Time or Duration in integer nanoseconds."""
    return time.sec * 1_000_000_000 + time.nanosec


def test_the_controller_state_is_stamped_with_the_cycle_it_describes(client):
    """Each message's stamp is the time of the control cycle it describes, not the time it was sent:
    stamps strictly increase; while one trajectory runs, they step exactly as the reference's
    time_from_start does (1 µs); and a stamp is that of the joint_states the cycle read, whose
    positions are the message's feedback. The feedback of the goal carries the cycles' stamps too."""
    states: list[JointTrajectoryControllerState] = []
    topic = f"/{NAMESPACE}/joint_trajectory_controller/controller_state"
    subscription = client.node.create_subscription(JointTrajectoryControllerState, topic, states.append, 1000)
    try:
        sent, _ = move(client, 0.1, seconds=1.0, at_goal=0.1, goal_time=3.0)
        assert sent.accepted
        client.wait(sent, 10.0)
    finally:
        client.node.destroy_subscription(subscription)
    assert len(states) >= 80, len(states)  # 100 Hz over the 1 s goal at least
    stamps = np.array([nanoseconds(msg.header.stamp) for msg in states])
    assert np.all(np.diff(stamps) > 0), np.diff(stamps).min()
    reference = np.array([nanoseconds(msg.reference.time_from_start) for msg in states])
    same_step = np.abs(np.diff(stamps) - np.diff(reference)) <= 1_000
    restarts = np.diff(reference) < 0  # a new trajectory (this goal's, or the hold it followed) starts at 0
    assert np.all(same_step | restarts), np.diff(stamps)[~(same_step | restarts)][:10]
    assert np.count_nonzero(same_step) >= 80 and np.count_nonzero(restarts) <= 2

    read = {nanoseconds(msg.header.stamp): msg for msg in client.states}  # joint_states, by stamp
    found = [(msg, read[stamp]) for msg, stamp in zip(states, stamps, strict=True) if stamp in read]
    assert len(found) >= 10, f"{len(found)} of {len(states)} stamps among {len(read)} joint_states"
    for msg, joint_states in found:
        positions = [joint_states.position[list(joint_states.name).index(name)] for name in JOINTS]
        np.testing.assert_array_equal(msg.feedback.positions, positions)

    feedback_stamps = np.array([nanoseconds(feedback.header.stamp) for feedback in sent.feedback])
    feedback_reference = np.array([nanoseconds(feedback.desired.time_from_start) for feedback in sent.feedback])
    assert len(feedback_stamps) >= 10 and np.all(np.diff(feedback_stamps) >= 0)
    steps = np.diff(feedback_stamps) - np.diff(feedback_reference)
    assert np.all(np.abs(steps[np.diff(feedback_reference) >= 0]) <= 1_000), steps


def test_a_path_tolerance_violated_aborts_the_goal_and_the_arm_holds(client):
    sent, _ = move(client, 0.3, path=1e-4)  # PID alone lags more than 0.1 mrad
    assert sent.accepted
    client.wait(sent, 10.0)
    assert sent.status == GoalStatus.STATUS_ABORTED
    assert sent.result.error_code == Result.PATH_TOLERANCE_VIOLATED
    assert sent.result.error_string == "Aborted due to path tolerance violation"


def test_the_goal_time_tolerance_exceeded_aborts_with_goal_tolerance_violated(client):
    sent, _ = move(client, -0.1, at_goal=1e-6, goal_time=0.05)
    client.wait(sent, 10.0)
    assert sent.status == GoalStatus.STATUS_ABORTED
    assert sent.result.error_code == Result.GOAL_TOLERANCE_VIOLATED
    assert sent.result.error_string.startswith("Aborted due to goal_time_tolerance exceeding by")


def test_a_canceled_goal_ends_canceled_and_the_arm_holds_where_it_was(client):
    sent, _ = move(client, 0.3, seconds=2.0)
    assert client.spin_until(lambda: len(sent.feedback) >= 16, 5.0)  # 0.8 s: mid-way, moving
    client.cancel(sent)
    client.wait(sent, 5.0)
    assert sent.status == GoalStatus.STATUS_CANCELED
    client.spin_until(lambda: False, 0.5)  # let the hold settle
    held = client.positions(JOINTS)
    client.spin_until(lambda: False, 1.0)
    # a hold: under 1 mrad in a quiet run, 1.001 mrad once in CI beside other work, 9.9 mrad with two CI
    # runs side by side on 2 cores; an arm that drops after the cancel moves 12-165 mrad in that second
    # (issue 44; test/node/test_cancel_hold.py holds soft gains and a payload)
    assert np.max(np.abs(client.positions(JOINTS) - held)) < 11e-3


def test_a_new_goal_preempts_the_active_one(client):
    first, _ = move(client, 0.2, seconds=2.0)
    client.spin_until(lambda: len(first.feedback) >= 4, 5.0)
    second, _ = move(client, -0.2, seconds=1.0, at_goal=0.1, goal_time=3.0)
    client.wait(first, 5.0)
    assert first.status == GoalStatus.STATUS_ABORTED
    assert (first.result.error_code, first.result.error_string) == (
        Result.INVALID_GOAL,
        "Current goal preempted by new incoming action.",
    )
    client.wait(second, 10.0)
    assert second.status == GoalStatus.STATUS_SUCCEEDED


@pytest.mark.parametrize("fault", ["unknown joint", "times not increasing", "moving at the end", "not finite"])
def test_goals_the_jtc_refuses_are_rejected(client, fault):
    here = client.positions(JOINTS)
    trajectory = rest_to_rest(JOINTS, here, here + 0.05, 0.5)
    if fault == "unknown joint":
        trajectory.joint_names = ["elbow", *JOINTS[1:]]
    elif fault == "times not increasing":
        trajectory.points[2].time_from_start = trajectory.points[1].time_from_start
    elif fault == "moving at the end":
        trajectory.points[-1].velocities = [0.1] * len(JOINTS)
    else:
        trajectory.points[1].positions[0] = float("nan")
    sent = client.send(goal(trajectory))
    assert sent.accepted is False
