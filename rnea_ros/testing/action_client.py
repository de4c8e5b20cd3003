"""A FollowJointTrajectory client that behaves like MoveIt's controller manager (send a goal with
its tolerances, wait for acceptance, then for the result; feedback recorded), and the goals the
tests send: the example arm moving between rest points. Every wait is bounded."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTolerance
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.action import ActionClient
from rclpy.node import Node
from sensor_msgs.msg import JointState

from rnea_ros.demo.closed_loop import trajectory_message
from rnea_ros.plumbing.actions import GoalClient
from rnea_ros.testing.ros_harness import spin_until

RESEND_AFTER = 5.0  # s without an answer to a goal before it is sent again (see TrajectoryClient.send)


def duration(seconds: float) -> Duration:
    sec, nanosec = divmod(round(seconds * 1e9), 1_000_000_000)
    return Duration(sec=int(sec), nanosec=int(nanosec))


def rest_to_rest(joints: list[str], start, end, seconds: float, spacing: float = 0.1):
    """A planner's trajectory from ``start`` to ``end`` at rest at both ends (a quintic in time)."""
    times = np.arange(round(seconds / spacing) + 1) * spacing
    s = times / seconds
    shape, rate = 10 * s**3 - 15 * s**4 + 6 * s**5, (30 * s**2 - 60 * s**3 + 30 * s**4) / seconds
    curvature = (60 * s - 180 * s**2 + 120 * s**3) / seconds**2
    delta = np.asarray(end, float) - np.asarray(start, float)
    q = np.asarray(start, float) + shape[:, None] * delta
    return trajectory_message(joints, 0.0, times, q, rate[:, None] * delta, curvature[:, None] * delta)


def goal(trajectory, path: float = 0.0, at_goal: float = 0.0, goal_time: float = 0.0) -> FollowJointTrajectory.Goal:
    """A goal with a position tolerance on every joint along the path and at the goal (0: the controller's)."""
    names = list(trajectory.joint_names)
    return FollowJointTrajectory.Goal(
        trajectory=trajectory,
        path_tolerance=[JointTolerance(name=name, position=path) for name in names] if path else [],
        goal_tolerance=[JointTolerance(name=name, position=at_goal) for name in names] if at_goal else [],
        goal_time_tolerance=duration(goal_time),
    )


@dataclass
class Sent:
    """One goal: accepted or not, its feedback, its result (None until it came)."""

    handle: object = None
    accepted: bool | None = None
    feedback: list = field(default_factory=list)
    status: int | None = None
    result: object = None


class TrajectoryClient:
    """An action client on ``action`` and a joint_states reader, in one test node."""

    def __init__(
        self, name: str, action: str, joint_states: str | None = None, node: Node | None = None, status: bool = True
    ) -> None:
        """``node``: another client's (one node to spin for both), else a new node ``name``. ``status``
        False: the relay's GoalClient, which takes no status arrays (``Sent.handle`` has no status)."""
        self.owns_node = node is None
        self.node = node or Node(name)
        if status:
            self.client = ActionClient(self.node, FollowJointTrajectory, action)
        else:
            self.client = GoalClient(self.node, FollowJointTrajectory, action)
        self.states: list[JointState] = []
        if joint_states:
            self.node.create_subscription(JointState, joint_states, self.states.append, 100)

    def close(self) -> None:
        self.client.destroy()
        if self.owns_node:
            self.node.destroy_node()

    def spin_until(self, predicate, timeout: float) -> bool:
        return spin_until(self.node, predicate, timeout)

    def send(self, goal_msg, timeout: float = 10.0) -> Sent:
        """Sends a goal and waits (at most ``timeout``) for its acceptance; the result comes later.

        Sent again, as a new goal, when no answer came within ``RESEND_AFTER``: the server's answer can
        be lost when its response writer has not yet discovered this client's reader (rmw_fastrtps
        issue 842, open on Jazzy: "failed to send response (timeout): client will not receive
        response"), which a loaded machine makes likely on a goal sent just after discovery. The lost
        goal still runs on the server: the new one preempts it, as a planner's retry would."""
        if isinstance(self.client, ActionClient):
            assert self.client.wait_for_server(timeout_sec=timeout), "no action server"
        else:
            assert self.spin_until(self.client.server_is_ready, timeout), "no action server"
        sent = Sent()
        deadline = time.monotonic() + timeout
        while True:
            future = self.client.send_goal_async(
                goal_msg, feedback_callback=lambda msg: sent.feedback.append(msg.feedback)
            )
            left = deadline - time.monotonic()
            if self.spin_until(future.done, min(RESEND_AFTER, left)):
                break
            assert left > RESEND_AFTER, "no answer to the goal"
            print(f"no answer to the goal within {RESEND_AFTER:.0f} s (a lost response, rmw_fastrtps#842): sent again")
        sent.handle = future.result()
        sent.accepted = sent.handle.accepted
        if sent.accepted:
            result = sent.handle.get_result_async()
            result.add_done_callback(lambda f: self._finished(sent, f.result()))
        return sent

    @staticmethod
    def _finished(sent: Sent, response) -> None:
        sent.status, sent.result = response.status, response.result

    def wait(self, sent: Sent, timeout: float) -> Sent:
        assert self.spin_until(lambda: sent.result is not None, timeout), "no result"
        return sent

    def cancel(self, sent: Sent, timeout: float = 5.0) -> None:
        future = sent.handle.cancel_goal_async()
        assert self.spin_until(future.done, timeout), "no answer to the cancel request"

    def relay_found_its_controller(self, timeout: float) -> bool:
        """Waits (at most ``timeout``) until rnea_node's /diagnostics say its relay found the JTC's action:
        the node discovers it in its time (seconds on a busy machine), and a goal sent before waits for
        it only ``controller_action_timeout``."""
        found: dict[str, str] = {}

        def heard(msg: DiagnosticArray) -> None:
            for status in msg.status:
                if status.name.startswith("rnea_node"):
                    found.update({value.key: value.value for value in status.values})

        diagnostics = self.node.create_subscription(DiagnosticArray, "/diagnostics", heard, 10)
        try:
            return self.spin_until(lambda: found.get("controller action", "").endswith("(found)"), timeout)
        finally:
            self.node.destroy_subscription(diagnostics)

    def positions(self, joints: list[str]) -> np.ndarray:
        """The newest joint_states' positions of ``joints``."""
        assert self.spin_until(lambda: bool(self.states), 10.0), "no joint_states"
        msg = self.states[-1]
        return np.array([msg.position[list(msg.name).index(name)] for name in joints])
