"""rnea_node: live feed-forward efforts and gravity torques from /joint_states.

Wiring only: ``messages`` turns ROS messages into arrays (or rejects them), the
dynamics come from ``RobotModel``, and this module keeps the latest inputs,
decides when to compute, and publishes. See the README for the interface.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections import Counter, deque

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import WrenchStamped
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory

from rnea_ros.messages import (
    InvalidMessageError,
    NameMatcher,
    as_float64_array,
    desired_point,
    joint_state_arrays,
    stamp_seconds,
    wrench_array,
)
from rnea_ros.model import RobotModel

DESCRIPTION_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
COMPUTE_TIME_WINDOW = 10_000


class CommandJointsError(ValueError):
    """``command_joints`` names a joint the robot model lacks."""


class LiveModel:
    """One robot model with everything that must change together with it: the latest inputs
    merged per joint, the name lookup and the reusable output messages. Swapped whole on reload,
    so an output is never computed from a mix of two models."""

    def __init__(self, model: RobotModel, command_joints: list[str]) -> None:
        self.model = model
        index = {name: k for k, name in enumerate(model.joint_names)}
        missing = [name for name in command_joints if name not in index]
        if missing:
            raise CommandJointsError(f"command_joints names joints the robot model lacks: {missing}")
        self.matcher = NameMatcher(index)
        self.links = frozenset(model.link_names)
        self.command_order = np.array([index[name] for name in command_joints or model.joint_names], dtype=np.intp)
        n = model.nv
        self.q, self.qd = np.zeros(n), np.zeros(n)
        self.stamp = np.full(n, -math.inf)  # joint_states header stamp of each joint's value
        self.qdd_desired, self.desired_received = np.zeros(n), -math.inf
        self.q_desired: np.ndarray | None = None
        self.qd_desired: np.ndarray | None = None
        self.wrenches: dict[str, tuple[np.ndarray, float]] = {}  # link -> (wrench, receive time)
        self.efforts_msg = JointState(name=list(model.joint_names))
        self.gravity_msg = JointState(name=list(model.joint_names))
        self.commands_msg = Float64MultiArray()
        # Warm both kernel entry points (loaded from numba's cache) before any message arrives.
        self.model.inverse_dynamics(np.zeros(model.nq), np.zeros(n), np.zeros(n))
        self.model.gravity_torques(np.zeros(model.nq))

    def stale_joints(self, newest: float, timeout: float) -> list[str]:
        return [self.model.joint_names[j] for j in np.flatnonzero(newest - self.stamp > timeout)]


class InputStats:
    """Receive counts and times per input, for the rates and ages in the diagnostics."""

    def __init__(self) -> None:
        self.count: Counter[str] = Counter()
        self.last: dict[str, float] = {}
        self._count_at_report: Counter[str] = Counter()
        self._report_time = time.monotonic()

    def received(self, name: str) -> None:
        self.count[name] += 1
        self.last[name] = time.monotonic()

    def report(self) -> dict[str, str]:
        now = time.monotonic()
        period = max(now - self._report_time, 1e-9)
        values = {}
        for name in sorted(self.count):
            rate = (self.count[name] - self._count_at_report[name]) / period
            values[f"{name} rate [Hz]"] = f"{rate:.1f}"
            values[f"{name} age [s]"] = f"{now - self.last[name]:.3f}"
            values[f"{name} total"] = str(self.count[name])
        self._count_at_report = self.count.copy()
        self._report_time = now
        return values


class RneaNode(Node):
    def __init__(self) -> None:
        super().__init__("rnea_node")
        self.declare_parameter("robot_description", "")
        self.declare_parameter("gravity", [0.0, 0.0, -9.81])
        self.declare_parameter("state_timeout", 0.1)
        self.declare_parameter("acceleration_timeout", 0.1)
        self.declare_parameter("wrench_timeout", 0.1)
        self.declare_parameter("future_stamp_tolerance", 1.0)
        self.declare_parameter("use_desired_state", False)
        self.declare_parameter("wrench_topics", ["external_wrenches"])
        self.declare_parameter("flip_wrench_topics", [""])
        self.declare_parameter("command_joints", [""])
        p = self.get_parameter
        self.gravity = list(p("gravity").value)
        self.state_timeout = float(p("state_timeout").value)
        self.acceleration_timeout = float(p("acceleration_timeout").value)
        self.wrench_timeout = float(p("wrench_timeout").value)
        self.future_stamp_tolerance = float(p("future_stamp_tolerance").value)
        self.use_desired_state = bool(p("use_desired_state").value)
        self.command_joints = [name for name in p("command_joints").value if name]
        flipped = {name for name in p("flip_wrench_topics").value if name}

        self.live: LiveModel | None = None
        self.fatal_error: str | None = None
        self.model_status = "waiting for robot_description"
        self._description_lock = threading.Lock()
        self._description_sequence = 0
        self.inputs = InputStats()
        self.rejected: Counter[str] = Counter()
        self._rejected_at_report: Counter[str] = Counter()
        self.published = 0
        self.compute_times: deque[float] = deque(maxlen=COMPUTE_TIME_WINDOW)
        self.warned_frames: set[str] = set()
        self.empty_velocity_seen = False
        self.waiting_for: list[str] = []

        self.pub_efforts = self.create_publisher(JointState, "feedforward_efforts", 10)
        self.pub_gravity = self.create_publisher(JointState, "gravity_torques", 10)
        self.pub_commands = self.create_publisher(Float64MultiArray, "effort_commands", 10)
        self.pub_diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", 10)

        description = p("robot_description").value
        if description:
            self._load_description(description, sequence=0)
            if self.fatal_error:
                return
        else:
            self.create_subscription(String, "robot_description", self._on_description, DESCRIPTION_QOS)
        self.create_subscription(JointState, "joint_states", self._on_joint_states, 10)
        self.create_subscription(JointTrajectory, "desired_accelerations", self._on_desired, 10)
        for topic in p("wrench_topics").value:
            if topic:
                sign = -1.0 if topic in flipped else 1.0
                self.create_subscription(WrenchStamped, topic, lambda msg, s=sign: self._on_wrench(msg, s), 10)
        self.create_timer(1.0, self._publish_diagnostics)

    # --- robot model -------------------------------------------------------------------------
    def _on_description(self, msg: String) -> None:
        self.inputs.received("robot_description")
        with self._description_lock:
            self._description_sequence += 1
            sequence = self._description_sequence
        threading.Thread(target=self._load_description, args=(msg.data, sequence), daemon=True).start()

    def _load_description(self, urdf: str, sequence: int) -> None:
        """Build off the hot path, then swap in whole; a bad description keeps the previous model."""
        try:
            live = LiveModel(RobotModel.from_urdf(urdf, gravity=self.gravity), self.command_joints)
        except CommandJointsError as error:
            if self.live is None:  # a startup error: the node cannot do what it was configured for
                self.fatal_error = str(error)
                self.get_logger().fatal(f"{error}; fix the parameter command_joints. Shutting down.")
                rclpy.try_shutdown()
                return
            self._refuse_description(error)
            return
        except Exception as error:  # any failure to build must keep the node alive
            self._refuse_description(error)
            return
        with self._description_lock:
            if sequence < self._description_sequence:
                return  # a newer description arrived while this one was being built
            self.live = live
        self.warned_frames.clear()
        self.model_status = f"model with {live.model.nv} joints"
        self.get_logger().info(f"robot model loaded: {live.model.nv} joints {live.model.joint_names}")

    def _refuse_description(self, error: Exception) -> None:
        self.rejected["bad_robot_description"] += 1
        self.get_logger().error(f"robot_description refused, keeping the previous model: {error}")
        if self.live is None:
            self.model_status = f"no model: robot_description refused: {error}"

    # --- inputs --------------------------------------------------------------------------------
    def _reject(self, rejection: InvalidMessageError, topic: str) -> None:
        self.rejected[rejection.reason] += 1
        self.get_logger().warning(f"{topic}: {rejection} (message ignored)", throttle_duration_sec=1.0)

    def _on_joint_states(self, msg: JointState) -> None:
        self.inputs.received("joint_states")
        live = self.live
        if live is None:
            return
        try:
            self._merge_joint_states(live, msg)
        except InvalidMessageError as rejection:
            return self._reject(rejection, "joint_states")
        newest = live.stamp.max()
        if newest - live.stamp.min() <= self.state_timeout:
            self.waiting_for = []
            self._compute_and_publish(live, msg.header)
        else:
            self.waiting_for = live.stale_joints(newest, self.state_timeout)

    def _merge_joint_states(self, live: LiveModel, msg: JointState) -> None:
        position, velocity, velocity_given = joint_state_arrays(msg)
        message_rows, model_rows = live.matcher.rows(msg.name)
        if len(model_rows) == 0:
            return
        stamp = stamp_seconds(msg.header.stamp)
        if stamp > self.get_clock().now().nanoseconds * 1e-9 + self.future_stamp_tolerance:
            raise InvalidMessageError("future_stamp", "header stamp is in the future (clock not synchronised?)")
        if np.any(stamp < live.stamp[model_rows]):
            raise InvalidMessageError("out_of_order", "header stamp older than the last joint_states used")
        if not velocity_given:
            self.empty_velocity_seen = True
        live.q[model_rows] = position[message_rows]
        live.qd[model_rows] = velocity[message_rows]
        live.stamp[model_rows] = stamp

    def _on_desired(self, msg: JointTrajectory) -> None:
        self.inputs.received("desired_accelerations")
        live = self.live
        if live is None:
            return
        try:
            qdd, q, qd = desired_point(msg, live.matcher, live.model.nv)
        except InvalidMessageError as rejection:
            return self._reject(rejection, "desired_accelerations")
        live.qdd_desired, live.q_desired, live.qd_desired = qdd, q, qd
        live.desired_received = time.monotonic()

    def _on_wrench(self, msg: WrenchStamped, sign: float) -> None:
        self.inputs.received("wrenches")
        live = self.live
        if live is None:
            return
        frame = msg.header.frame_id
        if frame not in live.links:
            if frame not in self.warned_frames and len(self.warned_frames) < 100:
                self.warned_frames.add(frame)
                self.get_logger().warning(f"wrench in frame '{frame}', which is no link of the robot: ignored")
            self.rejected["unknown_wrench_frame"] += 1
            return
        try:
            live.wrenches[frame] = (sign * wrench_array(msg), time.monotonic())
        except InvalidMessageError as rejection:
            self._reject(rejection, f"wrench on '{frame}'")

    # --- output --------------------------------------------------------------------------------
    def _inputs_now(self, live: LiveModel) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict | None]:
        """(q, qd, qdd, wrenches) to compute with: measured or desired state, fresh inputs only."""
        now = time.monotonic()
        q, qd = live.q, live.qd
        if now - live.desired_received > self.acceleration_timeout:
            return q, qd, np.zeros(live.model.nv), self._fresh_wrenches(live, now)
        if self.use_desired_state and live.q_desired is not None:
            q = np.where(np.isnan(live.q_desired), q, live.q_desired)
            qd = np.where(np.isnan(live.qd_desired), qd, live.qd_desired)
        return q, qd, live.qdd_desired, self._fresh_wrenches(live, now)

    def _fresh_wrenches(self, live: LiveModel, now: float) -> dict | None:
        if not live.wrenches:
            return None
        fresh = {link: w for link, (w, received) in live.wrenches.items() if now - received <= self.wrench_timeout}
        return fresh or None

    def _compute_and_publish(self, live: LiveModel, header) -> None:
        q, qd, qdd, wrenches = self._inputs_now(live)
        start = time.perf_counter()
        try:
            tau = live.model.inverse_dynamics(q, qd, qdd, wrenches)
            gravity = live.model.gravity_torques(q)
        except ValueError as error:
            return self._reject(
                InvalidMessageError("compute_error", f"inverse dynamics refused the inputs: {error}"), "output"
            )
        self.compute_times.append(time.perf_counter() - start)
        position = as_float64_array(q)
        efforts, gravity_msg, commands = live.efforts_msg, live.gravity_msg, live.commands_msg
        efforts.header, efforts.position = header, position
        efforts.velocity, efforts.effort = as_float64_array(qd), as_float64_array(tau)
        gravity_msg.header, gravity_msg.position, gravity_msg.effort = header, position, as_float64_array(gravity)
        commands.data = as_float64_array(tau[live.command_order])
        self.pub_efforts.publish(efforts)
        self.pub_gravity.publish(gravity_msg)
        self.pub_commands.publish(commands)
        self.published += 1

    # --- diagnostics ---------------------------------------------------------------------------
    def _publish_diagnostics(self) -> None:
        live = self.live
        level, notes = DiagnosticStatus.OK, [self.model_status]
        if live is None:
            level = DiagnosticStatus.ERROR
        values = {"model joints": str(live.model.nv if live else 0), "published": str(self.published)}
        values.update(self.inputs.report())
        values.update(self._compute_time_values())
        if live is not None:
            level = max(level, self._input_notes(live, notes, values))
        new_rejections = self.rejected - self._rejected_at_report
        if new_rejections:
            level = max(level, DiagnosticStatus.WARN)
            notes.append("rejected: " + ", ".join(f"{n} {reason}" for reason, n in sorted(new_rejections.items())))
        self._rejected_at_report = self.rejected.copy()
        values.update({f"rejected: {reason}": str(n) for reason, n in sorted(self.rejected.items())})
        status = DiagnosticStatus(
            level=level,
            name="rnea_node: inverse dynamics",
            hardware_id=self.get_fully_qualified_name(),
            message="; ".join(notes),
            values=[KeyValue(key=k, value=v) for k, v in values.items()],
        )
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.get_clock().now().to_msg()
        self.pub_diagnostics.publish(array)

    def _compute_time_values(self) -> dict[str, str]:
        if not self.compute_times:
            return {}
        times = np.array(self.compute_times) * 1e6
        return {
            "compute time p50 [us]": f"{np.percentile(times, 50):.1f}",
            "compute time p99 [us]": f"{np.percentile(times, 99):.1f}",
            "compute time max [us]": f"{times.max():.1f}",
        }

    def _input_notes(self, live: LiveModel, notes: list[str], values: dict[str, str]) -> int:
        level = DiagnosticStatus.OK
        now = time.monotonic()
        if self.empty_velocity_seen:
            level = DiagnosticStatus.WARN
            notes.append("joint_states without velocity: zero velocity used")
        if self.waiting_for:
            level = DiagnosticStatus.WARN
            notes.append(f"no torques: stale or missing joint_states for {self.waiting_for[:10]}")
        if live.desired_received > -math.inf and now - live.desired_received > self.acceleration_timeout:
            notes.append("desired_accelerations stale: zero accelerations used")
        for link, (_, received) in sorted(live.wrenches.items()):
            age = now - received
            values[f"wrench '{link}' age [s]"] = f"{age:.3f}"
            if age > self.wrench_timeout:
                notes.append(f"wrench on '{link}' expired")
        return level


def main(args=None) -> None:
    rclpy.init(args=args)
    node = RneaNode()
    try:
        if node.fatal_error is None:
            rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        fatal = node.fatal_error
        node.destroy_node()
        rclpy.try_shutdown()
    if fatal:
        sys.exit(1)


if __name__ == "__main__":
    main()
