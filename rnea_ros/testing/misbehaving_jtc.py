"""A FollowJointTrajectory server that behaves as a joint_trajectory_controller can misbehave, in the
test's process, for the relay's tests: it answers a goal only after ``answer_after`` seconds (late),
or accepts and then sends nothing (``silent``); otherwise it follows as the JTC does (feedback at
20 Hz, success once the last point's time has passed, a new goal preempts the active one, a cancel
ends it). Every goal, acceptance, cancel and end is written in ``events`` with its monotonic time
(one clock for every process of the machine), and each accepted goal's trajectory is kept."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node

FEEDBACK_PERIOD = 0.05  # s, the JTC's action_monitor_rate of 20 Hz
LONGEST = 30.0  # s a goal runs at most here, whatever it asks
Result = FollowJointTrajectory.Result


@dataclass
class Event:
    time: float  # monotonic
    what: str  # goal, accepted, cancel, succeeded, aborted, canceled
    number: int  # the goal's, in order of arrival


@dataclass
class _Running:
    number: int
    ended: threading.Event = field(default_factory=threading.Event)
    why: str = ""


class MisbehavingJtc:
    """The server at ``action``, spun by its own executor thread until ``close``."""

    def __init__(self, action: str, *, answer_after: float = 0.0, silent: bool = False) -> None:
        self.answer_after, self.silent = answer_after, silent
        self.node = Node("misbehaving_jtc")
        self.events: list[Event] = []
        self.trajectories: list = []  # each accepted goal's, in order
        self.active: _Running | None = None
        self._count = 0
        self._lock = threading.Lock()
        self.server = ActionServer(
            self.node,
            FollowJointTrajectory,
            action,
            execute_callback=self._execute,
            goal_callback=self._on_goal,
            handle_accepted_callback=self._on_accepted,
            cancel_callback=self._on_cancel,
            callback_group=ReentrantCallbackGroup(),
        )
        self.executor = MultiThreadedExecutor(num_threads=8)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def close(self) -> None:
        if self.active is not None:
            self.active.ended.set()
        self.executor.shutdown(timeout_sec=2.0)
        self.server.destroy()
        self.node.destroy_node()
        self.thread.join(timeout=2.0)

    def _note(self, what: str, number: int) -> None:
        with self._lock:
            self.events.append(Event(time.monotonic(), what, number))

    def times(self, what: str) -> list[float]:
        with self._lock:
            return [event.time for event in self.events if event.what == what]

    def _on_goal(self, _goal) -> GoalResponse:
        with self._lock:
            self._count += 1
            number = self._count
        self._note("goal", number)
        time.sleep(self.answer_after)  # late: the response leaves only now
        return GoalResponse.ACCEPT

    def _on_accepted(self, handle) -> None:
        with self._lock:
            number = self._count
        self._note("accepted", number)
        self.trajectories.append(handle.request.trajectory)
        if self.active is not None:
            self.active.why = "preempted"
            self.active.ended.set()
        self.active = _Running(number)
        handle.running = self.active
        handle.execute()

    def _on_cancel(self, handle) -> CancelResponse:
        running = getattr(handle, "running", None)
        self._note("cancel", running.number if running else 0)
        if running is not None:
            running.why = "canceled"
            running.ended.set()
        return CancelResponse.ACCEPT

    def _execute(self, handle) -> Result:
        running: _Running = handle.running
        points = handle.request.trajectory.points
        last = points[-1].time_from_start
        end = time.monotonic() + min(LONGEST, last.sec + last.nanosec * 1e-9)
        while not running.ended.wait(FEEDBACK_PERIOD):
            if self.silent:
                if time.monotonic() > end + LONGEST:
                    break
                continue
            if time.monotonic() >= end:
                break
            handle.publish_feedback(FollowJointTrajectory.Feedback(joint_names=handle.request.trajectory.joint_names))
        return self._end(handle, running)

    def _end(self, handle, running: _Running) -> Result:
        if running.why == "canceled" and handle.is_cancel_requested:
            handle.canceled()
            self._note("canceled", running.number)
            return Result()
        if running.why == "preempted":
            handle.abort()
            self._note("aborted", running.number)
            return Result(error_code=Result.INVALID_GOAL, error_string="Current goal preempted by new incoming action.")
        handle.succeed()
        self._note("succeeded", running.number)
        return Result(error_code=Result.SUCCESSFUL, error_string="Goal successfully reached!")
