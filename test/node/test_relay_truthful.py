"""The relay tells the planner the truth when the JTC misbehaves, over loopback DDS: rnea_node in its
own process, a MoveIt-like client and a misbehaving JTC (``testing.misbehaving_jtc``) in this one.

- A JTC that accepts and then goes silent: the client's goal aborted with the reason within
  controller_action_timeout + 1 s, and the JTC's goal cancelled.
- A JTC that accepts after the client was told the goal aborted: the JTC's goal cancelled at once.
- A burst of 40 goals at 50/s: every goal answered, none after the timeout, and joint_states still
  answered (gravity_torques) throughout.
- A result asked for again 12 s after its goal ended (a client flooded by a burst asks late): still
  the true one, not UNKNOWN (the action servers' 10 s, RESULT_TIMEOUT)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from action_msgs.msg import GoalStatus
from control_msgs.action import FollowJointTrajectory
from sensor_msgs.msg import JointState

from rnea_ros.demo.closed_loop import start, stop
from rnea_ros.demo.demo import START
from rnea_ros.testing.action_client import TrajectoryClient, goal, rest_to_rest
from rnea_ros.testing.misbehaving_jtc import MisbehavingJtc
from rnea_ros.testing.reference import ARM_URDF
from rnea_ros.testing.ros_harness import ROS_ENV, rclpy_running

pytestmark = [pytest.mark.ros, pytest.mark.slow]

JOINTS = [*(f"joint{i}" for i in range(1, 8)), "finger_left_joint"]
TIMEOUT = 1.0  # controller_action_timeout
Result = FollowJointTrajectory.Result


@pytest.fixture(scope="module", autouse=True)
def ros():
    yield from rclpy_running()


class Rig:
    """rnea_node (its relay at /<ns>/follow_joint_trajectory, forwarding to /<ns>/jtc/...), a
    misbehaving JTC and a client, the last two in this process."""

    def __init__(self, folder, ns: str, **misbehaviour) -> None:
        self.folder, self.ns = folder, ns
        self.jtc = MisbehavingJtc(f"/{ns}/jtc/follow_joint_trajectory", **misbehaviour)
        node = {
            "robot_description": ARM_URDF,
            "controller_action": f"/{ns}/jtc/follow_joint_trajectory",
            "controller_action_timeout": TIMEOUT,
        }
        self.node = start("rnea_ros.node", ns, node, folder, ROS_ENV)
        self.client = TrajectoryClient("moveit", f"/{ns}/follow_joint_trajectory")
        assert self.client.client.wait_for_server(timeout_sec=30.0), self.log()
        self.states = self.client.node.create_publisher(JointState, f"/{ns}/joint_states", 10)
        self.answers: list[float] = []  # monotonic times of the node's gravity_torques
        self.client.node.create_subscription(
            JointState, f"/{ns}/gravity_torques", lambda _msg: self.answers.append(time.monotonic()), 100
        )

    def log(self) -> str:
        return (self.folder / f"{self.ns}_node.log").read_text()[-3000:]

    def close(self) -> None:
        self.client.close()
        assert stop(self.node) == 0
        self.jtc.close()

    def publish_state(self) -> None:
        msg = JointState(name=JOINTS, position=list(START), velocity=[0.0] * len(JOINTS))
        msg.header.stamp = self.client.node.get_clock().now().to_msg()
        self.states.publish(msg)


def note_answers(sent: list, answered_at: dict) -> None:
    now = time.monotonic()
    for k, one in enumerate(sent):
        if one.result is not None and k not in answered_at:
            answered_at[k] = now


def short_goal(seconds: float = 0.5) -> FollowJointTrajectory.Goal:
    return goal(rest_to_rest(JOINTS, START, START, seconds))


def test_a_silent_jtc_gets_its_goal_cancelled_and_the_client_an_abort_with_the_reason(tmp_path):
    rig = Rig(tmp_path, "silent", silent=True)
    try:
        sent = rig.client.send(short_goal(), timeout=30.0)
        assert sent.accepted
        accepted = time.monotonic()
        rig.client.wait(sent, TIMEOUT + 5.0)
        waited = time.monotonic() - accepted
        print(f"silent JTC: the client's goal ended after {waited:.2f} s: {sent.result.error_string!r}")
        assert waited < TIMEOUT + 1.0
        assert sent.status == GoalStatus.STATUS_ABORTED
        assert sent.result.error_code == Result.INVALID_GOAL
        assert "sent neither feedback nor a result" in sent.result.error_string
        assert rig.client.spin_until(lambda: bool(rig.jtc.times("cancel")), 2.0), "the JTC's goal was not cancelled"
    finally:
        rig.close()


def test_a_late_acceptance_is_cancelled_at_once(tmp_path):
    rig = Rig(tmp_path, "late", answer_after=2.5 * TIMEOUT)
    try:
        sent = rig.client.send(short_goal(2.0), timeout=30.0)
        rig.client.wait(sent, TIMEOUT + 5.0)
        assert sent.status == GoalStatus.STATUS_ABORTED
        assert "did not answer the goal within" in sent.result.error_string
        assert rig.client.spin_until(lambda: bool(rig.jtc.times("cancel")), 5.0), "the late goal was not cancelled"
        ran = rig.jtc.times("cancel")[0] - rig.jtc.times("accepted")[0]
        print(f"late JTC: its goal accepted {2.5 * TIMEOUT:.1f} s after it came, cancelled {ran * 1e3:.1f} ms later")
        assert ran < 0.5
        assert not rig.jtc.times("succeeded")
        assert "cancelled there at once" in rig.log()
    finally:
        rig.close()


def test_a_burst_of_goals_is_answered_whole_while_joint_states_are(tmp_path):
    rig = Rig(tmp_path, "burst")
    try:
        for _ in range(100):  # the node answers joint_states before the burst
            rig.publish_state()
            rig.client.spin_until(lambda: False, 0.01)
        assert rig.answers, "no gravity_torques before the burst"
        sent, sent_at, answered_at = [], [], {}
        started = len(rig.answers)
        for k in range(40):  # 50 goals/s, a joint_states every 10 ms between them
            sent_at.append(time.monotonic())
            sent.append(rig.client.send(short_goal(1.0 + 0.01 * k), timeout=30.0))
            for _ in range(2):
                rig.publish_state()
                rig.client.spin_until(lambda: False, 0.01 / 2)
            note_answers(sent, answered_at)
        deadline = time.monotonic() + 4 * TIMEOUT + 10.0
        while time.monotonic() < deadline and any(one.result is None for one in sent):
            rig.publish_state()
            rig.client.spin_until(lambda: False, 0.01)
            note_answers(sent, answered_at)
        answered = [one for one in sent if one.result is not None]
        statuses = [goal.status for goal in answered]
        print(
            f"burst: {len(answered)} of 40 answered, {statuses.count(GoalStatus.STATUS_SUCCEEDED)} succeeded, "
            f"{statuses.count(GoalStatus.STATUS_ABORTED)} aborted; "
            f"{len(rig.answers) - started} gravity_torques during it"
        )
        unanswered = [k for k, one in enumerate(sent) if one.result is None]
        assert not unanswered, (unanswered, [sent[k].handle.status for k in unanswered], rig.log())
        assert statuses[-1] == GoalStatus.STATUS_SUCCEEDED  # the newest one runs to its end
        assert all(status == GoalStatus.STATUS_ABORTED for status in statuses[:-1])
        assert all("preempted" in one.result.error_string for one in answered[:-1])
        waits = [answered_at[k] - sent_at[k + 1] for k in range(39)]  # each preempted by the next one
        print(f"burst: a preempted goal answered at most {max(waits) * 1e3:.0f} ms after its successor was sent")
        assert max(waits) < TIMEOUT
        gaps = np.diff(rig.answers[started:])
        print(f"burst: longest gap between gravity_torques {gaps.max() * 1e3:.0f} ms")
        assert gaps.max() < 0.5
    finally:
        rig.close()


ASKED_LATE = 12.0  # s after the goal's end: past plumbing.actions.RESULT_TIMEOUT (10 s)


def test_a_result_asked_for_long_after_its_goal_ended_is_still_the_true_one(tmp_path):
    rig = Rig(tmp_path, "late_ask")
    try:
        sent = rig.client.send(short_goal(0.2), timeout=30.0)
        assert sent.accepted
        rig.client.wait(sent, 10.0)
        assert sent.status == GoalStatus.STATUS_SUCCEEDED, sent.result
        rig.client.spin_until(lambda: False, ASKED_LATE)
        late = sent.handle.get_result_async()
        assert rig.client.spin_until(late.done, 5.0), "no answer to the late result request"
        print(f"asked {ASKED_LATE:.0f} s after the end: status {late.result().status}")
        assert late.result().status == GoalStatus.STATUS_SUCCEEDED
        assert late.result().result.error_string == sent.result.error_string
    finally:
        rig.close()
