"""What the action servers and clients of the node and the simulator share."""

from __future__ import annotations

import threading

from rclpy.action import ActionClient

# s an action server keeps a finished goal's handle for a client to fetch its result. rclpy's default
# (900 s, as rclcpp's) keeps the goal's request with it, every point a few Python objects that each
# collection of the oldest generation walks: see docs/figures/action_forwarding.md. Clients such as
# MoveIt's controller manager ask for the result as soon as the goal is accepted.
RESULT_TIMEOUT = 10.0


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
