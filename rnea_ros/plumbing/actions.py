"""What the action servers and clients of the node and the simulator share."""

from __future__ import annotations

import threading
import time

from action_msgs.msg import GoalStatus
from rclpy.action import ActionClient
from rclpy.impl.implementation_singleton import rclpy_implementation
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

GoalEvent = rclpy_implementation.GoalEvent

# s an action server keeps a finished goal's handle for a client to fetch its result. rclpy's default
# (900 s, as rclcpp's) keeps the goal's request with it, every point a few Python objects that each
# collection of the oldest generation walks: see docs/figures/action_forwarding.md. Clients such as
# MoveIt's controller manager ask for the result as soon as the goal is accepted.
RESULT_TIMEOUT = 10.0
CANCELING_WAIT = 0.5  # s an end as CANCELED waits at most for rclpy to mark the goal CANCELING


class LockedActionClient(ActionClient):
    """rclpy's ActionClient, safe to send from one thread while an executor's other thread takes the
    answers (rclpy issue 1123, fixed after the Jazzy wheels here: rclpy PR 1308).

    rclpy sends a request, then files its sequence number; an answer taken by another thread in
    between is "unexpected" and dropped, and the request's future never completes (seen: the relay
    waited for a result the JTC had sent). Sending and filing hold one lock, and so does the matching
    of answers to requests."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._requests_lock = threading.RLock()

    def send_goal_async(self, *args, **kwargs):
        with self._requests_lock:
            return super().send_goal_async(*args, **kwargs)

    def _cancel_goal_async(self, goal_handle):
        with self._requests_lock:
            return super()._cancel_goal_async(goal_handle)

    def _get_result_async(self, goal_handle):
        with self._requests_lock:
            return super()._get_result_async(goal_handle)

    async def execute(self, taken_data):
        with self._requests_lock:
            return await super().execute(taken_data)


def mark_executing(handle) -> None:
    """A goal accepted by an action server moves to EXECUTING without rclpy scheduling its execute
    callback (``ServerGoalHandle.execute`` does both): a relay's goal executes once the controller it
    forwards to has accepted it, and its execute callback runs only when its end is known. Uses rclpy's
    own state update (a private method of Jazzy's ServerGoalHandle)."""
    if handle.status == GoalStatus.STATUS_ACCEPTED:
        handle._update_state(GoalEvent.EXECUTE)


def finish(server, handle, outcome: str, result) -> None:
    """Ends ``handle``, a goal of ``server`` that nothing executes, with ``outcome`` ("succeed", "abort"
    or "canceled") and ``result``: its execute callback, which only states the end and returns the
    result, is scheduled on the server's executor (safe from any thread). A goal still ACCEPTED
    becomes EXECUTING first, as rclpy allows an end only from there (or from CANCELING)."""

    def execute(goal_handle):
        if outcome == "canceled":  # rclpy moves it to CANCELING just after the cancel callback returned
            deadline = time.monotonic() + CANCELING_WAIT
            while goal_handle.status != GoalStatus.STATUS_CANCELING and time.monotonic() < deadline:
                time.sleep(0.001)
        mark_executing(goal_handle)
        getattr(goal_handle, outcome)()
        return result

    server.notify_execute(handle, execute)


def deep_queue(depth: int) -> QoSProfile:
    """The services' QoS of an action (reliable, volatile) keeping ``depth`` requests, not 10: a burst of
    goals or cancels is taken whole."""
    return QoSProfile(
        depth=depth,
        history=HistoryPolicy.KEEP_LAST,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )
