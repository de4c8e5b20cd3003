"""rnea_node as the FollowJointTrajectory action a planner (MoveIt's controller manager) talks to.

A goal's trajectory gets every point's ``effort`` exactly as a ``joint_trajectory`` message does
(``RneaCore.trajectory``: resampling on the JTC's spline, corrections, a floating base) and goes, with
its tolerances unchanged, as a goal to the JTC's action (``controller_action``). The JTC's answer
comes back unchanged: its feedback, its result (error code and string), a cancel in either
direction. A new goal preempts the active one the way the JTC does: the JTC aborts the old goal
(INVALID_GOAL, "Current goal preempted by new incoming action.") and that result is relayed; a goal
still waiting to be forwarded when a newer one comes is aborted here with the same words.

Every goal ends, and its end is true (``docs/moveit.md`` has the table):
- refused here, with the JTC's error codes and a reason in ``error_string`` (a rejected goal carries
  no reason, so these are accepted and aborted at once): joints the model does not know
  (INVALID_JOINTS), values that are not finite, times that do not increase, fields of the wrong
  length, no model yet (INVALID_GOAL);
- the JTC's action absent, not answering a goal, silent during a goal (neither feedback nor result)
  or gone, each for ``controller_action_timeout``: INVALID_GOAL with the reason; the JTC's goal, if
  any, is cancelled first. A JTC that accepts after the client was told: its goal is cancelled at once;
- a cancel is forwarded; with ``cancel_hold`` the JTC is then sent a short goal that stops the arm
  from its measured state and holds it with the efforts that hold it there (gravity, payload,
  corrections; ``stop_goal``): the JTC's own cancel holds with effort 0 and an arm on soft gains sags.

The relay has a node of its own (hidden: ``_<node>_action_relay``, no parameters, no rosout; the
node's names, resolved by the node) spun by a single-threaded executor on its own thread, as tf2_ros's
listener has: goals, the JTC's answers and the deadlines are handled there one at a time, in the order
they come, so the relay's state needs no lock, a goal's work is done in the callback that receives it
(no hand-off between threads), and neither the node's executor nor its inputs wait on a goal. A goal
stays ACCEPTED until the JTC accepts it, then EXECUTING; its end is stated by an execute callback
scheduled once the end is known (``plumbing.actions.finish``).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from itertools import count

import numpy as np
from action_msgs.msg import GoalStatus
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from std_msgs.msg import Header

from rnea_ros.controller.state import InvalidMessageError
from rnea_ros.controller.trajectory_feedforward import answer_threads
from rnea_ros.motion.trajectory import FIELDS, Trajectory
from rnea_ros.node import messages
from rnea_ros.plumbing.actions import GoalClient, deep_queue, finish, mark_executing
from rnea_ros.plumbing.trajectory_cdr import TrajectoryMessage

INVALID_GOAL = FollowJointTrajectory.Result.INVALID_GOAL
INVALID_JOINTS = FollowJointTrajectory.Result.INVALID_JOINTS
PREEMPTED = "Current goal preempted by new incoming action."  # the JTC's words
TICK = 0.02  # s between the relay's looks at its deadlines
SPIN_WAIT = 0.5  # s the relay's thread waits at most for work before it looks whether to stop
FORWARD_TIME_WINDOW = 1000  # goals in the forwarding time's p50/p99
REQUEST_DEPTH = 1000  # goal, cancel and result requests the action's services keep (rclpy's default: 10)
HOLD_AFTER = 0.2  # s: its last, at rest where a constant deceleration stops the arm
# s a relayed goal's result is kept after its end for the client to ask for it (plumbing.actions'
# RESULT_TIMEOUT for the others): a client flooded by a burst of 1,000 goals asked for results more than
# 10 s after their end and was told UNKNOWN. Only the result is kept: an ended goal's points are dropped.
RELAY_RESULT_TIMEOUT = 60.0
WARNING_EVERY = 1.0  # s: at most one warning of a kind a second (a burst preempts hundreds of goals)
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
    for name in FIELDS:
        if not _all_finite(content.fields[name]):
            return INVALID_GOAL, f"the trajectory's {name} are not all finite"
    return None


def _all_finite(values: np.ndarray | list[np.ndarray]) -> bool:
    if isinstance(values, np.ndarray):
        return bool(np.isfinite(values).all())
    return all(np.isfinite(point).all() for point in values)


def _drop_points(*goals) -> None:
    """Sent (rclpy converted the goal in ``send_goal_async``): its points are not kept while the goal
    runs nor, with its handle, for RESULT_TIMEOUT after; a thousand points are a few thousand objects
    that every full collection of the node would walk."""
    for goal in goals:
        goal.trajectory.points = []


def aborted(code: int, reason: str) -> Result:
    return Result(error_code=code, error_string=reason)


class Figures:
    """What the relay did, for /diagnostics: goals forwarded and the recent ones' time from arrival to
    sending, and what it did for a JTC that misbehaved."""

    def __init__(self) -> None:
        self.forward_times: list[float] = []  # s from a goal's arrival to its sending (newest last)
        self.sent = 0  # goals sent to the JTC
        self.counts = {"late acceptances cancelled": 0, "silent goals cancelled": 0, "holds sent": 0}

    def forwarded(self, seconds: float) -> None:
        self.sent += 1
        self.forward_times.append(seconds)
        del self.forward_times[:-FORWARD_TIME_WINDOW]

    def values(self) -> dict[str, str]:
        values = {key: str(value) for key, value in self.counts.items()}
        if self.forward_times:
            ms = np.array(self.forward_times) * 1e3
            values["goals forwarded"] = str(self.sent)
            for label, value in (("p50", np.percentile(ms, 50)), ("p99", np.percentile(ms, 99)), ("max", ms.max())):
                values[f"goal forwarding {label} [ms]"] = f"{value:.2f}"
        return values


@dataclass
class _Goal:
    """A client's goal and, once sent, its goal on the JTC. Changed on the relay's thread only."""

    handle: object
    arrived: float  # perf_counter
    number: int  # arrival order
    joint_names: list[str] = field(default_factory=list)
    sent: float | None = None  # monotonic, when sent to the JTC
    sent_number: int = 0  # order of sending (the JTC answers its goals in that order)
    downstream: object = None  # the JTC's goal handle once it accepted
    heard: float = 0.0  # monotonic: the JTC's last sign of life for this goal (acceptance, feedback)
    actual: tuple[list[str], list[float]] | None = None  # the newest feedback's measured positions
    points: object = None  # its points as read and checked, until it is sent
    cancel_requested: bool = False
    ended: bool = False  # the client was told how it ended


class ActionRelay:
    """The action server ``name`` on ``node``, forwarding to ``controller_action``; ``core`` computes the efforts."""

    def __init__(self, node, core, name: str, controller_action: str, timeout: float, cancel_hold: bool = True) -> None:
        self.node, self.core, self.timeout, self.cancel_hold = node, core, timeout, cancel_hold
        self.controller_action = controller_action
        self.where = f"the controller's action '{controller_action}'"
        self.logger = node.get_logger()
        self.relay_node = Node(
            f"_{node.get_name()}_action_relay",
            namespace=node.get_namespace(),
            context=node.context,
            use_global_arguments=False,  # its names come resolved (remapped) by the node
            start_parameter_services=False,
            enable_rosout=False,  # it logs through the node's logger
        )
        self.client = GoalClient(self.relay_node, FollowJointTrajectory, node.resolve_topic_name(controller_action))
        services = deep_queue(REQUEST_DEPTH)
        self.server = ActionServer(
            self.relay_node,
            FollowJointTrajectory,
            node.resolve_topic_name(name),
            execute_callback=lambda handle: handle.abort() or Result(),  # never called: see finish()
            goal_callback=lambda _goal: GoalResponse.ACCEPT,
            handle_accepted_callback=lambda handle: self._arrive(handle, time.perf_counter()),
            cancel_callback=self._on_cancel,
            goal_service_qos_profile=services,
            result_service_qos_profile=services,
            cancel_service_qos_profile=services,
            result_timeout=RELAY_RESULT_TIMEOUT,
        )
        self.goals: dict[bytes, _Goal] = {}  # the goals not yet ended
        self.pending: _Goal | None = None  # the newest goal checked, not yet sent
        self.in_flight: _Goal | None = None  # the goal sent whose answer is awaited (within the timeout)
        self._numbers, self._sends = count(1), count(1)
        self.last_sent = 0  # sent_number of the newest goal sent to the JTC (holds included)
        self.figures = Figures()
        self._warned: dict[str, float] = {}  # kind of warning → when it was last logged (monotonic)
        self._deadlines = self.relay_node.create_timer(TICK, self._check_deadlines)
        self._deadlines.cancel()  # running only while a goal is not ended
        self.executor = SingleThreadedExecutor(context=node.context)
        self.executor.add_node(self.relay_node)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, name="action relay", daemon=True)
        self._thread.start()

    def destroy(self) -> None:
        self._stop.set()
        self.executor.wake()
        self._thread.join(timeout=2.0)
        self.executor.shutdown(timeout_sec=1.0)
        self.server.destroy()
        self.client.destroy()
        self.relay_node.destroy_node()

    # --- the relay's thread ----------------------------------------------------------------------
    def _spin(self) -> None:
        while not self._stop.is_set() and self.node.context.ok():
            try:
                self.executor.spin_once(timeout_sec=SPIN_WAIT)
            except Exception as error:  # one goal's fault never stops the relay
                if self._stop.is_set() or not self.node.context.ok():
                    return  # shutting down: rclpy refuses everything now, and that is no fault
                self.logger.error(f"follow_joint_trajectory relay: {type(error).__name__}: {error}")

    def _later(self, function, *args) -> None:
        """``function(*args)`` on the relay's thread once the callback running now has returned."""
        self.executor.create_task(function, *args)

    def _busy(self) -> None:
        """A goal is not ended: its deadlines are looked at every TICK."""
        if self._deadlines.is_canceled():
            self._deadlines.reset()

    # --- a goal's way ----------------------------------------------------------------------------
    def _arrive(self, handle, arrived: float) -> None:
        """A goal refused by its checks ends here and preempts nothing (as the JTC rejects it); one
        that passes replaces the goal waiting to be sent (preempted, as the JTC would)."""
        goal = _Goal(handle, arrived, next(self._numbers))
        self.goals[bytes(handle.goal_id.uuid)] = goal
        self._busy()
        checked = checked_points(self.core, handle.request)
        if isinstance(checked, Result):
            self._end(goal, "abort", checked)
            return
        goal.points = checked
        if self.pending is not None:
            self._end(self.pending, "abort", aborted(INVALID_GOAL, PREEMPTED))
        self.pending = goal
        self._forward_next()

    def _forward_next(self) -> None:
        """Sends the goal waiting, with its efforts, unless the JTC's action is not found or a goal
        sent before has not been answered yet (one at a time: in a burst only the newest is sent)."""
        goal = self.pending
        if goal is None or self.in_flight is not None or not self.client.server_is_ready():
            return
        self.pending = None
        forwarded = with_efforts(self.core, goal.handle.request, goal.points)
        goal.points = None
        if isinstance(forwarded, Result):
            self._end(goal, "abort", forwarded)
            return
        goal.joint_names = list(forwarded.trajectory.joint_names)
        sent = self.client.send_goal_async(forwarded, feedback_callback=lambda msg: self._on_feedback(goal, msg))
        goal.sent, goal.sent_number = time.monotonic(), next(self._sends)
        self.last_sent, self.in_flight = goal.sent_number, goal
        self.figures.forwarded(time.perf_counter() - goal.arrived)
        _drop_points(forwarded, goal.handle.request)
        sent.add_done_callback(lambda future: self._on_acceptance(goal, future))

    # --- the JTC's answers (posted by the executor's callbacks) ----------------------------------
    def _on_feedback(self, goal: _Goal, msg) -> None:
        """Relayed at once (not after the client was told the goal ended)."""
        if goal.ended:
            return
        goal.heard = time.monotonic()
        actual = msg.feedback.actual.positions
        if len(actual) == len(msg.feedback.joint_names):
            goal.actual = (list(msg.feedback.joint_names), list(actual))
        goal.handle.publish_feedback(msg.feedback)

    def _on_acceptance(self, goal: _Goal, future) -> None:
        if self.in_flight is goal:
            self.in_flight = None
            self._later(self._forward_next)  # after this answer is handled
        downstream = future.result()
        if not downstream.accepted:
            if not goal.ended:
                self._end(goal, "abort", aborted(INVALID_GOAL, f"rejected by {self.where} (its log says why)"))
            return
        goal.downstream, goal.heard = downstream, time.monotonic()
        downstream.get_result_async().add_done_callback(lambda result: self._on_result(goal, result))
        if goal.ended:  # the client was told it ended: the JTC must not run it
            self.figures.counts["late acceptances cancelled"] += 1
            late = time.monotonic() - goal.sent
            self._warn(
                "late",
                f"{self.where} accepted a goal {late:.2f} s after it was sent, after the client was told it "
                "aborted: cancelled there at once",
            )
            self._cancel_downstream(goal)
            return
        mark_executing(goal.handle)
        if goal.cancel_requested:
            self._cancel_downstream(goal)

    def _on_result(self, goal: _Goal, future) -> None:
        self.goals.pop(bytes(goal.handle.goal_id.uuid), None)
        if goal.ended:
            return
        status, result = future.result().status, future.result().result
        if status == GoalStatus.STATUS_SUCCEEDED:
            self._end(goal, "succeed", result)
        elif goal.cancel_requested:  # the JTC's CANCELED, or our hold goal preempted it
            self._end(goal, "canceled", result)
        else:
            self._end(goal, "abort", result)

    # --- cancels ---------------------------------------------------------------------------------
    def _on_cancel(self, handle) -> CancelResponse:
        self._later(self._cancel, bytes(handle.goal_id.uuid))  # once rclpy has marked it CANCELING
        return CancelResponse.ACCEPT

    def _cancel(self, key: bytes) -> None:
        goal = self.goals.get(key)
        if goal is None or goal.ended or goal.cancel_requested:
            return
        goal.cancel_requested = True
        if goal.sent is None:
            if self.pending is goal:
                self.pending = None
            self._end(goal, "canceled", Result())
        elif goal.downstream is not None:
            self._cancel_downstream(goal)
        # sent, not yet accepted: cancelled when the acceptance comes

    def _cancel_downstream(self, goal: _Goal) -> None:
        """Cancels the goal on the JTC and, with cancel_hold, holds the arm where it is with the
        efforts that hold it there, unless a newer goal of ours was sent to the JTC after it."""
        goal.downstream.cancel_goal_async()
        if self.cancel_hold and goal.sent_number == self.last_sent:
            self._hold(goal)

    def _hold(self, goal: _Goal) -> None:
        stop = stop_goal(self.core, goal.joint_names, goal.actual)
        if isinstance(stop, str):
            self._warn("hold", f"cancel_hold: {stop}: the JTC holds with effort 0")
            return
        self.client.send_goal_async(stop)
        self.last_sent = next(self._sends)
        self.figures.counts["holds sent"] += 1

    # --- deadlines -------------------------------------------------------------------------------
    def _check_deadlines(self) -> None:
        now, ready = time.monotonic(), self.client.server_is_ready()
        pending = self.pending
        if pending is not None and not ready and time.perf_counter() - pending.arrived > self.timeout:
            self.pending = None
            self._end(
                pending, "abort", aborted(INVALID_GOAL, f"{self.where} is not available (waited {self.timeout:.1f} s)")
            )
        for goal in list(self.goals.values()):
            if goal.sent is not None and goal.downstream is None and now - goal.sent > self.timeout:
                reason = f"{self.where} did not answer the goal within {self.timeout:.1f} s"
                self._end(goal, "abort", aborted(INVALID_GOAL, reason))  # a late acceptance is cancelled
                if self.in_flight is goal:
                    self.in_flight = None
            elif goal.downstream is not None and now - goal.heard > self.timeout:
                self._silent(goal, ready, now - goal.heard)
        self._forward_next()
        if not self.goals and self.pending is None:
            self._deadlines.cancel()

    def _silent(self, goal: _Goal, ready: bool, silence: float) -> None:
        """The JTC sent neither feedback nor a result for the timeout: its goal is cancelled, ours aborted."""
        self.figures.counts["silent goals cancelled"] += 1
        if ready:
            what = f"{self.where} sent neither feedback nor a result for {silence:.1f} s: its goal was cancelled"
        else:
            what = f"{self.where} went away during the goal"
        self._cancel_downstream(goal)
        self._end(goal, "abort", aborted(INVALID_GOAL, what))

    def _end(self, goal: _Goal, outcome: str, result: Result) -> None:
        goal.ended = True
        goal.points = None
        _drop_points(goal.handle.request)  # only its result is kept, for RELAY_RESULT_TIMEOUT
        if outcome == "abort":
            self._warn("abort", f"follow_joint_trajectory goal aborted: {result.error_string}")
        if goal.cancel_requested and outcome == "abort":
            outcome = "canceled"  # CANCELING ends CANCELED: what the client asked for happened
        finish(self.server, goal.handle, outcome, result)
        self.goals.pop(bytes(goal.handle.goal_id.uuid), None)  # a late answer of the JTC finds it by closure

    def _warn(self, kind: str, text: str) -> None:
        """A warning, at most one of ``kind`` every WARNING_EVERY s. Not rclpy's throttle: it looks up its
        caller's source file on every call, throttled or not (a burst: ~1 ms a goal on the relay's thread)."""
        now = time.monotonic()
        if now - self._warned.get(kind, -np.inf) >= WARNING_EVERY:
            self._warned[kind] = now
            self.logger.warning(text)

    def values(self) -> dict[str, str]:
        """For /diagnostics: whether the JTC's action is found (a wrong ``controller_action`` shows here
        before any goal), then ``Figures.values``."""
        found = "found" if self.client.server_is_ready() else "not found"
        return {"controller action": f"{self.controller_action} ({found})", **self.figures.values()}


def checked_points(core, request) -> messages.GoalPoints | Result:
    """A goal's points read, or why it is refused (before any effort is computed)."""
    live = core.live
    if live is None:
        return aborted(INVALID_GOAL, "no robot model yet")
    known = [*live.bound.model.joint_names, *live.bound.matcher.renamed]  # a driver's names too (joint_names map)
    points = messages.read_goal_points(request.trajectory)
    problem = goal_problem(points.content, known)
    return points if problem is None else aborted(*problem)


def with_efforts(core, request, points: messages.GoalPoints | None = None) -> FollowJointTrajectory.Goal | Result:
    """The goal with every point's effort, or the reason it is refused (``points``: its points as
    ``checked_points`` read them). The goal's own point objects are forwarded when resampling adds
    no point (``messages.trajectory_with_efforts``): ``request`` is not to be used after."""
    if points is None:
        points = checked_points(core, request)
        if isinstance(points, Result):
            return points
    try:
        answer_threads()  # on the relay's thread
        result = core.trajectory(messages.goal_trajectory_arrays(points))
    except InvalidMessageError as error:
        return aborted(INVALID_GOAL, f"{error.reason}: {error}")
    if result is None:
        return aborted(INVALID_GOAL, "no robot model yet")
    return FollowJointTrajectory.Goal(
        trajectory=messages.trajectory_with_efforts(request.trajectory, points, result),
        multi_dof_trajectory=request.multi_dof_trajectory,
        path_tolerance=request.path_tolerance,
        component_path_tolerance=request.component_path_tolerance,
        goal_tolerance=request.goal_tolerance,
        component_goal_tolerance=request.component_goal_tolerance,
        goal_time_tolerance=request.goal_time_tolerance,
    )


def stop_goal(core, names: list[str], actual: tuple[list[str], list[float]] | None) -> FollowJointTrajectory.Goal | str:
    """The goal that stops the arm and holds it where it stops, or why there is none. From the measured
    state at once (joint_states; else ``actual``, the JTC's last feedback, at rest) to rest HOLD_AFTER
    later at the stopping point of a constant deceleration, every point's efforts computed as a
    goal's (resampled: the deceleration, gravity, payload, corrections). A quintic: the last point's
    effort, which the JTC holds after it, has no deceleration in it."""
    state = core.measured_state(names)
    if state is None and actual is not None and sorted(actual[0]) == sorted(names):
        order = [actual[0].index(name) for name in names]
        state = np.asarray(actual[1])[order], np.zeros(len(names))
    if state is None:
        return "no measured position of the goal's joints"
    q, qd = state
    times = np.array([0.0, HOLD_AFTER])  # from the first point on: the JTC's ramp from effort 0 is skipped
    positions, velocities = np.array([q, q + qd * HOLD_AFTER / 2]), np.array([qd, np.zeros_like(qd)])
    try:
        stop = core.trajectory(Trajectory(names, times, positions, velocities, np.zeros((2, len(names)))))
    except InvalidMessageError as error:
        return f"no efforts to hold it ({error})"
    if stop is None:
        return "no robot model"
    return FollowJointTrajectory.Goal(trajectory=messages.trajectory_message(Header(), stop))


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
        settings.cancel_hold,
    )
