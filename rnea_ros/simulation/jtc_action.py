"""The stand-in's ROS side as the JTC (jazzy) has it: the ``control_msgs/action/FollowJointTrajectory``
server and ``control_msgs/msg/JointTrajectoryControllerState``.

Goals are accepted or rejected by the JTC's rules (``goal_tolerances.goal_refusal``, and every value
finite); an accepted goal preempts the active one (aborted: INVALID_GOAL, "Current goal preempted by
new incoming action."), its trajectory starts at its ``header.stamp`` (zero: at once) with its own
tolerances over the defaults; the physics thread checks them at every step (``JtcStandIn``), and a
timer at ``action_monitor_rate`` sends the feedback (desired, actual, error) and the result, as the
JTC's goal timer does. A cancel of the active goal ends it (CANCELED) and the robot holds where it
is. A topic trajectory replaces the motion but, as in the JTC, not the goal: its tolerances are then
checked against the topic's trajectory. The feedback and the controller state are stamped with the
time of the control cycle they describe (the stamp of the joint_states that cycle read), not the time
they are sent; controller_state's stamps strictly increase. Everything here runs on the executor's thread.
"""

from __future__ import annotations

import threading

import numpy as np
import rclpy
from builtin_interfaces.msg import Time
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTrajectoryControllerState
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.task import Future
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros.motion.trajectory import FIELDS, TrajectoryError, checked_trajectory, floats
from rnea_ros.plumbing.actions import RESULT_TIMEOUT
from rnea_ros.plumbing.threads import quiet_after_shutdown
from rnea_ros.simulation.goal_tolerances import (
    INVALID_GOAL,
    SUCCESSFUL,
    GoalMonitor,
    JointTolerance,
    Outcome,
    goal_refusal,
    goal_tolerances,
)
from rnea_ros.simulation.jtc_stand_in import JtcStandIn
from rnea_ros.simulation.parameters import SimSettings

CANCELED = Outcome(SUCCESSFUL, "")  # the JTC's result of a canceled goal: an empty one
PREEMPTED = Outcome(INVALID_GOAL, "Current goal preempted by new incoming action.")
EXECUTE_WAIT = 0.1  # s between the execute thread's looks at shutdown while its goal runs


def seconds(duration) -> float:
    return duration.sec + duration.nanosec * 1e-9


def trajectory_of(msg: JointTrajectory):
    """The message's trajectory (TrajectoryError when it cannot be used whole) and each field's lengths."""
    points = msg.points
    fields = {field: [floats(getattr(point, field)) for point in points] for field in FIELDS}
    lengths = {field: [len(values) for values in fields[field]] for field in FIELDS}
    times = np.array([seconds(point.time_from_start) for point in points])
    return checked_trajectory(list(msg.joint_names), times, fields), lengths


def tolerances_of(tolerances) -> list[JointTolerance]:
    return [JointTolerance(t.name, t.position, t.velocity, t.acceleration) for t in tolerances]


def trajectory_point(time_from_start: float, *arrays: np.ndarray) -> JointTrajectoryPoint:
    """A point with ``arrays`` as positions, velocities, accelerations (as many as given)."""
    point = JointTrajectoryPoint()
    for field, values in zip(("positions", "velocities", "accelerations"), arrays, strict=False):
        setattr(point, field, values.tolist())
    point.time_from_start.sec, nanosec = divmod(round(time_from_start * 1e9), 1_000_000_000)
    point.time_from_start.nanosec = int(nanosec)
    return point


class _ActiveGoal:
    def __init__(self, handle, monitor: GoalMonitor) -> None:
        self.handle = handle
        self.monitor = monitor
        self.done: Future = Future()
        self.ended = threading.Event()  # what the execute callback waits on (an await polls: see _execute)
        self._lock = threading.Lock()  # the cancel callback and the monitor's timer may end it at once

    def end(self, outcome: Outcome) -> None:
        with self._lock:
            if not self.done.done():
                self.done.set_result(outcome)
                self.ended.set()


class JtcAction:
    """The action server and the controller state of ``stand_in`` on ``node``."""

    def __init__(self, node, stand_in: JtcStandIn, p: SimSettings, now) -> None:
        """``now()``: the stand-in's time on the stamps' clock [s] (the start's wall clock + simulated time)."""
        self.node, self.stand_in, self.p, self.now = node, stand_in, p, now
        self.logger = node.get_logger()
        self.active: _ActiveGoal | None = None
        self._checked: tuple[object, object] | None = None  # (goal message, its trajectory) accepted last
        self.server = None
        if p.action_name:
            self.server = ActionServer(
                node,
                FollowJointTrajectory,
                p.action_name,
                execute_callback=self._execute,
                callback_group=ReentrantCallbackGroup(),
                goal_callback=self._on_goal,
                handle_accepted_callback=self._on_accepted,
                cancel_callback=self._on_cancel,
                result_timeout=RESULT_TIMEOUT,
            )
            node.create_timer(1.0 / p.action_monitor_rate, quiet_after_shutdown(node.context, self._monitor))
        self.state = None
        if p.state_topic:
            self.state = node.create_publisher(JointTrajectoryControllerState, p.state_topic, 10)
            node.create_timer(1.0 / p.state_publish_rate, quiet_after_shutdown(node.context, self._publish_state))
        self._state_sample = None  # the cycle published last on controller_state
        self._state_stamp = (-1, 0)  # and its stamp (sec, nanosec)

    # --- the action ----------------------------------------------------------------------------
    def _on_goal(self, goal) -> GoalResponse:
        self.logger.info("Received new action goal")
        refusal = self._refusal(goal.trajectory)
        if refusal is not None:
            self.logger.error(f"goal rejected: {refusal}")
            return GoalResponse.REJECT
        self.logger.info("Accepted new action goal")
        return GoalResponse.ACCEPT

    def _refusal(self, msg: JointTrajectory) -> str | None:
        """Why the JTC would reject this trajectory, or why the stand-in cannot follow it; None: accepted."""
        try:
            trajectory, lengths = trajectory_of(msg)
        except TrajectoryError as error:
            trajectory, lengths = None, None
            if error.reason != "wrong_length":  # the JTC's own message for that one, below
                return str(error)
        times = np.array([seconds(point.time_from_start) for point in msg.points])
        stamp = seconds(msg.header.stamp)
        ends_in_the_past = stamp != 0.0 and len(times) > 0 and stamp + times[-1] < self.now()
        last_velocities = list(msg.points[-1].velocities) if msg.points else []
        refusal = goal_refusal(
            list(msg.joint_names),
            times,
            lengths or {field: [len(getattr(point, field)) for point in msg.points] for field in FIELDS},
            last_velocities,
            self.stand_in.joints,
            self.p.allow_nonzero_velocity_at_trajectory_end,
            ends_in_the_past,
        )
        if refusal is None and trajectory is None:
            return "the trajectory's points do not all have the same fields"
        self._checked = (msg, trajectory)
        return refusal

    def _on_accepted(self, handle) -> None:
        goal = handle.request
        checked, self._checked = self._checked, None
        if checked is None or checked[0] is not goal.trajectory:  # never: accepted right after its check
            self.logger.error("an accepted goal was not checked: aborted")
            handle.execute()
            return
        if self.active is not None:
            self.active.end(PREEMPTED)
        tolerances, problem = goal_tolerances(
            self.stand_in.default_tolerances,
            tolerances_of(goal.path_tolerance),
            tolerances_of(goal.goal_tolerance),
            seconds(goal.goal_time_tolerance),
            self.stand_in.joints,
        )
        if problem:
            self.logger.error(problem)
        monitor = GoalMonitor(tolerances)
        self.active = _ActiveGoal(handle, monitor)
        stamp = seconds(goal.trajectory.header.stamp)
        start = stamp - self.stand_in.start_wall if stamp > 0.0 else None
        self.stand_in.follow_goal(checked[1], start, monitor)
        handle.execute()

    def _on_cancel(self, handle) -> CancelResponse:
        self.logger.info("Got request to cancel goal")
        active = self.active
        if active is not None and active.handle is handle and not active.done.done():
            self.logger.info("Canceling active action goal because cancel callback received.")
            self.stand_in.cancel_goal()
            active.end(CANCELED)
        return CancelResponse.ACCEPT

    def _execute(self, handle):
        """Blocks a thread of the simulator's two-thread executor until the goal ends. Not a coroutine:
        rclpy's executor resumes a task awaiting a future on every spin, a busy loop that took the GIL
        from the physics thread (4 steps a second instead of 1,000)."""
        active = self.active
        if active is None or active.handle is not handle:
            handle.abort()
            return FollowJointTrajectory.Result(error_code=INVALID_GOAL, error_string="not checked")
        while not active.ended.wait(EXECUTE_WAIT):
            if not rclpy.ok():
                active.end(Outcome(INVALID_GOAL, "the simulator shut down"))
        outcome = active.done.result()
        if outcome is CANCELED and handle.is_cancel_requested:
            handle.canceled()
        elif outcome.error_code == SUCCESSFUL and outcome is not CANCELED:
            handle.succeed()
        else:
            handle.abort()
        if self.active is active:
            self.active = None
        return FollowJointTrajectory.Result(error_code=outcome.error_code, error_string=outcome.error_string)

    def _monitor(self) -> None:
        """The JTC's goal timer: the result once the goal ended, its feedback while it runs."""
        active, sample = self.active, self.stand_in.controller.last
        if active is None or active.done.done():
            return
        if active.monitor.outcome is not None:
            active.end(active.monitor.outcome)
            return
        if sample is None:
            return
        feedback = FollowJointTrajectory.Feedback(joint_names=self.stand_in.joints)
        feedback.header.stamp = self._stamp_of(sample)
        feedback.desired, feedback.actual, feedback.error = self._points(sample)
        active.handle.publish_feedback(feedback)

    # --- the controller state ------------------------------------------------------------------
    def _publish_state(self) -> None:
        """The newest cycle, if it came after the one published last (a tick without a new cycle, or
        a cycle at the same time, as a wall-clock controller may run on one physics state, sends nothing)."""
        sample = self.stand_in.controller.last
        if sample is None or sample is self._state_sample:
            return
        self._state_sample = sample
        stamp = self._stamp_of(sample)
        if (stamp.sec, stamp.nanosec) <= self._state_stamp:
            return
        self._state_stamp = (stamp.sec, stamp.nanosec)
        msg = JointTrajectoryControllerState(joint_names=self.stand_in.joints, speed_scaling_factor=1.0)
        msg.header.stamp = stamp
        msg.reference, msg.feedback, msg.error = self._points(sample)
        msg.output.effort = sample.command.tolist()
        self.state.publish(msg)

    def _points(self, sample) -> tuple[JointTrajectoryPoint, ...]:
        """(desired, actual, error) of a sample, as the JTC fills them."""
        (q_d, qd_d, qdd_d), (q, qd) = sample.desired, sample.actual
        return (
            trajectory_point(sample.time, q_d, qd_d, qdd_d),
            trajectory_point(sample.time, q, qd),
            trajectory_point(sample.time, q_d - q, qd_d - qd),
        )

    def _stamp_of(self, sample) -> Time:
        """The time of the cycle ``sample`` describes, on the stamps' clock: the start's wall clock plus
        the simulated time, rounded as joint_states' stamps are (state_publishers)."""
        sec, nanosec = divmod(round((self.stand_in.start_wall + sample.now) * 1e9), 1_000_000_000)
        return Time(sec=int(sec), nanosec=int(nanosec))
