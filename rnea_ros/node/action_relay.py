"""rnea_node as the FollowJointTrajectory action a planner (MoveIt's controller manager) talks to.

A goal's trajectory gets every point's ``effort`` exactly as a ``joint_trajectory`` message does
(``RneaCore.trajectory``: resampling on the JTC's spline, corrections, a floating base) and goes, with
its tolerances unchanged, as a goal to the JTC's action (``controller_action``). The JTC's answer
comes back unchanged: its feedback, its result (error code and string), a cancel in either
direction. A new goal preempts the active one the way the JTC does: the JTC aborts the old goal
(INVALID_GOAL, "Current goal preempted by new incoming action.") and that result is relayed.

Refused here, with the JTC's error codes and a reason in ``error_string`` (a rejected goal carries
no reason, so these are accepted and aborted at once): joints the model does not know
(INVALID_JOINTS), values that are not finite, times that do not increase, fields of the wrong
length (INVALID_GOAL); no model yet, the JTC's action absent, or no answer from it within
``controller_action_timeout`` (INVALID_GOAL); the JTC's rejection (INVALID_GOAL, "rejected by …").
Everything here runs on the executor's thread, beside the other inputs; joint_states have their own.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np
from action_msgs.msg import GoalStatus
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup

from rnea_ros.motion.trajectory import FIELDS
from rnea_ros.node import messages
from rnea_ros.node.state import InvalidMessageError
from rnea_ros.node.trajectory_feedforward import answer_threads
from rnea_ros.plumbing.actions import RESULT_TIMEOUT, LockedActionClient
from rnea_ros.plumbing.trajectory_cdr import TrajectoryMessage

INVALID_GOAL = FollowJointTrajectory.Result.INVALID_GOAL
INVALID_JOINTS = FollowJointTrajectory.Result.INVALID_JOINTS
TICK = 0.02  # s between the relay's checks while it waits
FORWARD_TIME_WINDOW = 1000  # goals in the forwarding time's p50/p99
Result = FollowJointTrajectory.Result


def goal_problem(content: TrajectoryMessage, model_joints: list[str]) -> tuple[int, str] | None:
    """(error code, reason) of a goal's trajectory (its content, ``messages.read_goal_points``) the
    relay refuses before computing anything; None: fine."""
    names = list(content.joint_names)
    unknown = [name for name in names if name not in model_joints]
    if unknown or not names:
        return INVALID_JOINTS, f"joints unknown to the robot model: {unknown or 'none named'}"
    if len(set(names)) != len(names):
        return INVALID_JOINTS, f"joints named twice: {names}"
    times = content.time_from_start
    if len(times) == 0:
        return INVALID_GOAL, "the trajectory has no points"
    if np.any(times[1:] <= times[:-1]):
        return INVALID_GOAL, "time_from_start must increase strictly from point to point"
    for field in FIELDS:
        if not _all_finite(content.fields[field]):
            return INVALID_GOAL, f"the trajectory's {field} are not all finite"
    return None


def _all_finite(values: np.ndarray | list[np.ndarray]) -> bool:
    if isinstance(values, np.ndarray):
        return bool(np.isfinite(values).all())
    return all(np.isfinite(point).all() for point in values)


def wait_for(future, timeout: float) -> bool:
    """Whether ``future`` is done within ``timeout`` [s]; this thread sleeps meanwhile (the executor's
    other thread completes it), woken as soon as it is done."""
    done = threading.Event()
    future.add_done_callback(lambda _future: done.set())
    return done.wait(timeout) or future.done()


def _drop_points(*goals) -> None:
    """Sent (rclpy converted the goal in ``send_goal_async``): its points are not kept while the goal
    runs nor, with its handle, for RESULT_TIMEOUT after; a thousand points are a few thousand objects
    that every full collection of the node would walk."""
    for goal in goals:
        goal.trajectory.points = []


def aborted(code: int, reason: str) -> Result:
    return Result(error_code=code, error_string=reason)


@dataclass
class _Relayed:
    """One goal of ours and, once the JTC accepted it, its goal there."""

    handle: object
    downstream: object = None
    cancel_requested: bool = False


class ActionRelay:
    """The action server ``name`` on ``node``, forwarding to ``controller_action``; ``core`` computes the efforts."""

    def __init__(self, node, core, name: str, controller_action: str, timeout: float) -> None:
        self.node, self.core, self.timeout = node, core, timeout
        self.controller_action = controller_action
        self.logger = node.get_logger()
        # a goal's execute callback blocks a thread of the node's executor until the JTC's result
        # (a coroutine awaiting a future is resumed on every spin by rclpy's executor: a busy loop);
        # the client's answers come on another thread meanwhile
        self.client = LockedActionClient(
            node, FollowJointTrajectory, controller_action, callback_group=ReentrantCallbackGroup()
        )
        self.server = ActionServer(
            node,
            FollowJointTrajectory,
            name,
            execute_callback=self._execute,
            goal_callback=lambda _goal: GoalResponse.ACCEPT,
            cancel_callback=self._on_cancel,
            callback_group=ReentrantCallbackGroup(),
            result_timeout=RESULT_TIMEOUT,
        )
        self._relayed: dict[bytes, _Relayed] = {}
        self.forward_times: list[float] = []  # s from a goal's arrival to its sending (newest last)
        self.forwarded = 0  # goals sent to the JTC

    def destroy(self) -> None:
        self.server.destroy()
        self.client.destroy()

    @staticmethod
    def _within(future, timeout: float):
        """``future``'s result, or None when it did not come within ``timeout`` [s] (this thread waits)."""
        return future.result() if wait_for(future, timeout) else None

    # --- the goal's way --------------------------------------------------------------------------
    def _execute(self, handle) -> Result:
        arrived = time.perf_counter()
        relayed = _Relayed(handle)
        key = bytes(handle.goal_id.uuid)
        self._relayed[key] = relayed
        try:
            forwarded = self._with_efforts(handle.request)
            if isinstance(forwarded, Result):
                return self._abort(handle, forwarded)
            downstream = self._forward(forwarded, handle, arrived)
            _drop_points(forwarded, handle.request)
            if isinstance(downstream, Result):
                return self._abort(handle, downstream)
            relayed.downstream = downstream
            if relayed.cancel_requested:
                downstream.cancel_goal_async()
            return self._result(relayed)
        finally:
            del self._relayed[key]

    def _with_efforts(self, goal) -> FollowJointTrajectory.Goal | Result:
        """The goal with every point's effort, or the reason it is refused. The goal's own point
        objects are forwarded when resampling adds no point (``messages.trajectory_with_efforts``):
        ``goal`` is not to be used after."""
        live = self.core.live
        if live is None:
            return aborted(INVALID_GOAL, "no robot model yet")
        known = [*live.model.joint_names, *live.matcher.renamed]  # a driver's names too (joint_names map)
        points = messages.read_goal_points(goal.trajectory)
        problem = goal_problem(points.content, known)
        if problem is not None:
            return aborted(*problem)
        try:
            answer_threads()  # on this thread of the executor
            result = self.core.trajectory(messages.goal_trajectory_arrays(points))
        except InvalidMessageError as error:
            return aborted(INVALID_GOAL, f"{error.reason}: {error}")
        if result is None:
            return aborted(INVALID_GOAL, "no robot model yet")
        return FollowJointTrajectory.Goal(
            trajectory=messages.trajectory_with_efforts(goal.trajectory, points, result),
            multi_dof_trajectory=goal.multi_dof_trajectory,
            path_tolerance=goal.path_tolerance,
            component_path_tolerance=goal.component_path_tolerance,
            goal_tolerance=goal.goal_tolerance,
            component_goal_tolerance=goal.component_goal_tolerance,
            goal_time_tolerance=goal.goal_time_tolerance,
        )

    def _forward(self, goal, handle, arrived: float):
        """The JTC's goal handle once it accepted ours, or the Result of why not; the time from the
        goal's arrival (``arrived``, perf_counter) to its sending is kept in ``forward_times``."""
        where = f"the controller's action '{self.controller_action}'"
        deadline = time.monotonic() + self.timeout
        while not self.client.server_is_ready() and time.monotonic() < deadline:
            time.sleep(TICK)
        if not self.client.server_is_ready():
            return aborted(INVALID_GOAL, f"{where} is not available (waited {self.timeout:.1f} s)")
        sent = self.client.send_goal_async(goal, feedback_callback=lambda msg: handle.publish_feedback(msg.feedback))
        self._forwarded(time.perf_counter() - arrived)
        downstream = self._within(sent, self.timeout)
        if downstream is None:
            return aborted(INVALID_GOAL, f"{where} did not answer the goal within {self.timeout:.1f} s")
        if not downstream.accepted:
            return aborted(INVALID_GOAL, f"rejected by {where} (its log says why)")
        return downstream

    def _result(self, relayed: _Relayed) -> Result:
        """The JTC's result, relayed unchanged; aborted when its action server goes away meanwhile."""
        handle, future = relayed.handle, relayed.downstream.get_result_async()
        gone_since = None
        while not wait_for(future, TICK):
            if self.client.server_is_ready():
                gone_since = None
            elif gone_since is None:
                gone_since = time.monotonic()
            elif time.monotonic() - gone_since > self.timeout:
                reason = f"the controller's action '{self.controller_action}' went away during the goal"
                return self._abort(handle, aborted(INVALID_GOAL, reason))
        response = future.result()
        status, result = response.status, response.result
        if status == GoalStatus.STATUS_SUCCEEDED:
            handle.succeed()
        elif status == GoalStatus.STATUS_CANCELED and handle.is_cancel_requested:
            handle.canceled()
        else:
            handle.abort()
        return result

    def _abort(self, handle, result: Result) -> Result:
        self.logger.warning(f"follow_joint_trajectory goal aborted: {result.error_string}")
        if handle.is_cancel_requested:
            handle.canceled()
        else:
            handle.abort()
        return result

    def _on_cancel(self, handle) -> CancelResponse:
        relayed = self._relayed.get(bytes(handle.goal_id.uuid))
        if relayed is not None:
            relayed.cancel_requested = True
            if relayed.downstream is not None:
                relayed.downstream.cancel_goal_async()
        return CancelResponse.ACCEPT

    def _forwarded(self, seconds: float) -> None:
        self.forwarded += 1
        self.forward_times.append(seconds)
        del self.forward_times[:-FORWARD_TIME_WINDOW]

    def forward_time_p99(self) -> float | None:
        """p99 of the time from a goal's arrival to its forwarding [s] (None before any)."""
        return float(np.percentile(self.forward_times, 99)) if self.forward_times else None

    def values(self) -> dict[str, str]:
        """For /diagnostics: whether the JTC's action is found (a wrong ``controller_action`` shows here
        before any goal), goals forwarded, and p50/p99/max of the recent ones' time from arrival to sending."""
        found = "found" if self.client.server_is_ready() else "not found"
        values = {"controller action": f"{self.controller_action} ({found})"}
        if not self.forward_times:
            return values
        ms = np.array(self.forward_times) * 1e3
        values["goals forwarded"] = str(self.forwarded)
        for label, value in (("p50", np.percentile(ms, 50)), ("p99", np.percentile(ms, 99)), ("max", ms.max())):
            values[f"goal forwarding {label} [ms]"] = f"{value:.2f}"
        return values


def serve(node, core, settings) -> ActionRelay | None:
    """The relay as the settings ask for it (None: ``follow_joint_trajectory_action`` empty)."""
    if not settings.follow_joint_trajectory_action:
        return None
    return ActionRelay(
        node,
        core,
        settings.follow_joint_trajectory_action,
        settings.controller_action,
        settings.controller_action_timeout,
    )
