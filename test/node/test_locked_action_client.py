"""rclpy's ActionClient race (issue 1123), made certain: the client's handle waits 0.2 s after sending
each request, before rclpy files its sequence number, while an executor's thread takes the answers
(as the relay sends from one thread of rnea_node's executor while another takes the JTC's answers).
The stock client drops the answer as "unexpected" and its future never completes; LockedActionClient
gets every answer."""

from __future__ import annotations

import threading
import time

import pytest
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionClient, ActionServer
from rclpy.node import Node

from rnea_ros.plumbing.actions import LockedActionClient
from rnea_ros.plumbing.executor import PooledExecutor
from rnea_ros.testing.ros_harness import rclpy_running

pytestmark = pytest.mark.ros

ros = pytest.fixture(scope="module", autouse=True)(rclpy_running)
GOALS = 3


class SlowToFile:
    """An action client's rcl handle that waits after sending a request, as a thread may be preempted there."""

    def __init__(self, handle) -> None:
        self._handle = handle

    def __getattr__(self, name: str):
        attribute = getattr(self._handle, name)
        if not name.startswith("send_"):
            return attribute

        def sent_then_late(*args):
            number = attribute(*args)
            time.sleep(0.2)
            return number

        return sent_then_late


def goals_answered(client_class, name: str) -> tuple[int, int]:
    """GOALS goals sent from this thread while the executor spins on another: (accepted, results)."""
    node = Node(f"race_{name}")
    executor = PooledExecutor(num_threads=2)
    server = ActionServer(node, FollowJointTrajectory, f"race_{name}", lambda handle: _succeed(handle))
    client = client_class(node, FollowJointTrajectory, f"race_{name}")
    client._client_handle = SlowToFile(client._client_handle)
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    accepted = results = 0
    try:
        assert client.wait_for_server(timeout_sec=20.0)
        for _ in range(GOALS):
            sent = client.send_goal_async(FollowJointTrajectory.Goal())
            if not _done_within(sent, 3.0):
                continue
            accepted += 1
            result = sent.result().get_result_async()
            results += _done_within(result, 3.0)
    finally:
        executor.shutdown()
        spinner.join(5.0)
        client.destroy()
        server.destroy()
        node.destroy_node()
    return accepted, results


def _succeed(handle) -> FollowJointTrajectory.Result:
    handle.succeed()
    return FollowJointTrajectory.Result()


def _done_within(future, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not future.done() and time.monotonic() < deadline:
        time.sleep(0.005)
    return future.done()


def test_rclpys_client_loses_the_answers_it_was_slow_to_file():
    accepted, _ = goals_answered(ActionClient, "stock")
    assert accepted < GOALS  # each lost unless the server took over 0.2 s to answer


def test_the_locked_client_gets_every_answer():
    assert goals_answered(LockedActionClient, "locked") == (GOALS, GOALS)
