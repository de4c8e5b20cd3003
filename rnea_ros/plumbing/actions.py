"""What the action servers and clients of the node and the simulator share."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from action_msgs.msg import GoalInfo, GoalStatus
from rclpy.impl.implementation_singleton import rclpy_implementation
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from unique_identifier_msgs.msg import UUID

GoalEvent = rclpy_implementation.GoalEvent

# s an action server keeps a finished goal's handle for a client to fetch its result. rclpy's default
# (900 s, as rclcpp's) keeps the goal's request with it, every point a few Python objects that each
# collection of the oldest generation walks: see docs/figures/action_forwarding.md. Clients such as
# MoveIt's controller manager ask for the result as soon as the goal is accepted.
RESULT_TIMEOUT = 10.0
CANCELING_WAIT = 0.5  # s an end as CANCELED waits at most for rclpy to mark the goal CANCELING


class GoalClient:
    """An action client for a relay: goals sent, accepted or not, their feedback, results and cancels,
    without the status topic.

    rclpy's ActionClient takes every status array the server publishes and makes Python objects of
    each goal in it. A server keeps a finished goal in that array for its result timeout (rclcpp's
    default: 15 min), so each state change of any of its goals costs every client GIL time that
    grows with the goals kept, which a relay needs for its own goals.
    A relay follows its goals by their results and feedback; the status array tells it nothing more.

    The action's services and feedback topic are used as rcl_action names them (the action's resolved
    name + ``/_action/...``). rclpy's service clients send and file a request under one lock, which its
    ActionClient in the Jazzy wheels does not (rclpy issue 1123): no answer is lost to a thread that
    takes it in between. Thread-safe."""

    def __init__(self, node, action_type, name: str, callback_group=None) -> None:
        impl, base = action_type.Impl, f"{node.resolve_topic_name(name)}/_action"
        self._impl = impl
        self._send = node.create_client(impl.SendGoalService, f"{base}/send_goal", callback_group=callback_group)
        self._result = node.create_client(impl.GetResultService, f"{base}/get_result", callback_group=callback_group)
        self._cancel = node.create_client(impl.CancelGoalService, f"{base}/cancel_goal", callback_group=callback_group)
        self._feedback = node.create_subscription(
            impl.FeedbackMessage, f"{base}/feedback", self._on_feedback, 10, callback_group=callback_group
        )
        self._node = node
        self._listeners: dict[bytes, Callable] = {}  # goal id → its feedback callback, until its end
        self._lock = threading.Lock()

    def server_is_ready(self) -> bool:
        return self._send.service_is_ready() and self._result.service_is_ready() and self._cancel.service_is_ready()

    def send_goal_async(self, goal, feedback_callback: Callable | None = None) -> Future:
        """A future of the goal's ``SentGoal`` (``accepted`` or not)."""
        goal_id = UUID(uuid=list(uuid.uuid4().bytes))
        key = bytes(goal_id.uuid)
        if feedback_callback is not None:
            with self._lock:
                self._listeners[key] = feedback_callback
        answered = Future()

        def on_answer(response: Future) -> None:
            accepted = response.result().accepted
            if not accepted:
                self._forget(key)
            answered.set_result(SentGoal(self, goal_id, accepted))

        self._send.call_async(self._impl.SendGoalService.Request(goal_id=goal_id, goal=goal)).add_done_callback(
            on_answer
        )
        return answered

    def destroy(self) -> None:
        for client in (self._send, self._result, self._cancel):
            self._node.destroy_client(client)
        self._node.destroy_subscription(self._feedback)

    def _on_feedback(self, msg) -> None:
        with self._lock:
            listener = self._listeners.get(bytes(msg.goal_id.uuid))
        if listener is not None:
            listener(msg)

    def _forget(self, key: bytes) -> None:
        with self._lock:
            self._listeners.pop(key, None)


@dataclass
class SentGoal:
    """A goal sent by a ``GoalClient``: ``accepted`` or not; its result and its cancel as futures of the
    services' responses (the result's has ``status`` and ``result``, as rclpy's)."""

    client: GoalClient
    goal_id: UUID
    accepted: bool

    def get_result_async(self) -> Future:
        client = self.client
        future = client._result.call_async(client._impl.GetResultService.Request(goal_id=self.goal_id))
        future.add_done_callback(lambda _future: client._forget(bytes(self.goal_id.uuid)))
        return future

    def cancel_goal_async(self) -> Future:
        """Its feedback is no longer relayed once the cancel is answered."""
        client = self.client
        future = client._cancel.call_async(
            client._impl.CancelGoalService.Request(goal_info=GoalInfo(goal_id=self.goal_id))
        )
        future.add_done_callback(lambda _future: client._forget(bytes(self.goal_id.uuid)))
        return future


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
