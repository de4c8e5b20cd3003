"""The relay's GoalClient against rclpy's own ActionServer: goals accepted and rejected, feedback,
results, cancels, a server that is absent; no status array taken. And rclpy's ActionClient race
(issue 1123), made certain: the client's handle waits 0.2 s after sending each request, before the
request is filed, while an executor's thread takes the answers (as the relay sends from its thread
while the executor takes the JTC's answers). The stock client drops the answer as "unexpected" and
its future never completes; GoalClient gets every answer."""

from __future__ import annotations

import threading
import time

import pytest
from action_msgs.msg import GoalStatus
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionClient, ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from rnea_ros.plumbing.actions import GoalClient
from rnea_ros.plumbing.executor import PooledExecutor
from rnea_ros.testing.ros_harness import rclpy_running

pytestmark = pytest.mark.ros

ros = pytest.fixture(scope="module", autouse=True)(rclpy_running)
GOALS = 3


class SlowToFile:
    """A client's rcl handle that waits after sending a request, as a thread may be preempted there."""

    def __init__(self, handle) -> None:
        self._handle = handle

    def __enter__(self):
        return self._handle.__enter__()

    def __exit__(self, *exc):
        return self._handle.__exit__(*exc)

    def __getattr__(self, name: str):
        attribute = getattr(self._handle, name)
        if not name.startswith("send_"):
            return attribute

        def sent_then_late(*args):
            number = attribute(*args)
            time.sleep(0.2)
            return number

        return sent_then_late


class Spinning:
    """A node with an action server on ``name`` (``execute`` its callback) spun by a two-thread
    PooledExecutor on another thread."""

    def __init__(self, name: str, execute, goal_callback=None) -> None:
        self.node = Node(f"goal_client_{name}")
        self.executor = PooledExecutor(num_threads=2)
        self.server = ActionServer(
            self.node,
            FollowJointTrajectory,
            name,
            execute,
            goal_callback=goal_callback or (lambda _goal: GoalResponse.ACCEPT),
            cancel_callback=lambda _handle: CancelResponse.ACCEPT,
            callback_group=ReentrantCallbackGroup(),
        )
        self.executor.add_node(self.node)
        self.spinner = threading.Thread(target=self.executor.spin, daemon=True)
        self.spinner.start()

    def close(self, client) -> None:
        self.executor.shutdown()
        self.spinner.join(5.0)
        client.destroy()
        self.server.destroy()
        self.node.destroy_node()


def goals_answered(make_client, name: str) -> tuple[int, int]:
    """GOALS goals sent from this thread while the executor spins on another: (accepted, results)."""
    spinning = Spinning(f"race_{name}", _succeed)
    client = make_client(spinning.node, f"race_{name}")
    accepted = results = 0
    try:
        assert _done_within(client.server_is_ready, 20.0)
        for _ in range(GOALS):
            sent = client.send_goal_async(FollowJointTrajectory.Goal())
            if not _future_done_within(sent, 3.0):
                continue
            accepted += 1
            result = sent.result().get_result_async()
            results += _future_done_within(result, 3.0)
    finally:
        spinning.close(client)
    return accepted, results


def _stock(node, name):
    client = ActionClient(node, FollowJointTrajectory, name)
    client._client_handle = SlowToFile(client._client_handle)
    return client


def _goal_client(node, name):
    client = GoalClient(node, FollowJointTrajectory, name)
    for service in (client._send, client._result, client._cancel):
        service._Client__client = SlowToFile(service._Client__client)
    return client


def _succeed(handle) -> FollowJointTrajectory.Result:
    handle.succeed()
    return FollowJointTrajectory.Result(error_string="done")


def _done_within(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.005)
    return condition()


def _future_done_within(future, seconds: float) -> bool:
    return _done_within(future.done, seconds)


def test_rclpys_client_loses_the_answers_it_was_slow_to_file():
    accepted, _ = goals_answered(_stock, "stock")
    assert accepted < GOALS  # each lost unless the server took over 0.2 s to answer


def test_the_goal_client_gets_every_answer():
    assert goals_answered(_goal_client, "filed") == (GOALS, GOALS)


def test_feedback_result_rejection_and_cancel_reach_the_client():
    released = threading.Event()

    def execute(handle):
        feedback = FollowJointTrajectory.Feedback(joint_names=["a"])
        for _ in range(200):  # feedback until cancelled or released, at most 2 s
            if handle.is_cancel_requested:
                handle.canceled()
                return FollowJointTrajectory.Result(error_string="stopped")
            if released.is_set():
                break
            handle.publish_feedback(feedback)
            time.sleep(0.01)
        handle.succeed()
        return FollowJointTrajectory.Result(error_string="done")

    def refuse_empty(goal):
        return GoalResponse.ACCEPT if goal.trajectory.joint_names else GoalResponse.REJECT

    spinning = Spinning("full", execute, refuse_empty)
    client = GoalClient(spinning.node, FollowJointTrajectory, "full")
    try:
        assert _done_within(client.server_is_ready, 20.0)
        rejected = client.send_goal_async(FollowJointTrajectory.Goal())
        assert _future_done_within(rejected, 5.0) and not rejected.result().accepted

        heard = []
        goal = FollowJointTrajectory.Goal()
        goal.trajectory.joint_names = ["a"]
        sent = client.send_goal_async(goal, feedback_callback=heard.append)
        assert _future_done_within(sent, 5.0) and sent.result().accepted
        assert _done_within(lambda: len(heard) >= 3, 5.0)
        assert list(heard[0].feedback.joint_names) == ["a"]
        result = sent.result().get_result_async()
        released.set()
        assert _future_done_within(result, 5.0)
        assert result.result().status == GoalStatus.STATUS_SUCCEEDED
        assert result.result().result.error_string == "done"
        assert _done_within(lambda: client._listeners == {}, 5.0)  # nothing kept once a goal ended

        released.clear()
        cancelled = client.send_goal_async(goal, feedback_callback=heard.append)
        assert _future_done_within(cancelled, 5.0)
        result = cancelled.result().get_result_async()
        answer = cancelled.result().cancel_goal_async()
        assert _future_done_within(answer, 5.0) and len(answer.result().goals_canceling) == 1
        assert _future_done_within(result, 5.0)
        assert result.result().status == GoalStatus.STATUS_CANCELED
        assert result.result().result.error_string == "stopped"
        assert spinning.node.count_subscribers("full/_action/status") == 0  # no one takes the status arrays
    finally:
        spinning.close(client)


def test_no_server_is_not_ready():
    node = Node("goal_client_alone")
    client = GoalClient(node, FollowJointTrajectory, "/nobody/follow_joint_trajectory")
    try:
        time.sleep(0.5)
        assert not client.server_is_ready()
        assert client._send.srv_name == "/nobody/follow_joint_trajectory/_action/send_goal"
    finally:
        client.destroy()
        node.destroy_node()
