"""rnea_node: live feed-forward efforts and gravity torques from /joint_states.

Wiring only: ``messages`` turns ROS messages into arrays (or rejects them), the
dynamics come from ``RobotModel`` (and, for legged robots, ``floating_base``), and
this module keeps the latest inputs, decides when to compute, and publishes.
Threads: joint_states and the computation run on a dedicated thread
(``dedicated_subscription``), the other inputs and the diagnostics on the executor,
model rebuilds on their own thread; shared state is replaced whole, never mutated
in place. See the README for the interface.
"""

from __future__ import annotations

import array
import math
import sys
import threading
import time
from collections import Counter, deque

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import AccelStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory

from rnea_ros.dedicated_subscription import DedicatedSubscription
from rnea_ros.diagnostics import InputStats, compute_time_values
from rnea_ros.floating_base import (
    BASE_DOFS,
    BaseState,
    ImuReading,
    base_state_from_imu,
    link_in_base,
)
from rnea_ros.live_model import ConfigurationError, Desired, LiveModel
from rnea_ros.messages import (
    InvalidMessageError,
    as_float64_array,
    base_acceleration,
    base_acceleration_array,
    desired_point,
    imu_reading,
    joint_state_arrays,
    odometry_base_state,
    stamp_seconds,
    wrench_array,
)
from rnea_ros.model import RobotModel

DESCRIPTION_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
COMPUTE_TIME_WINDOW = 10_000
# 25 ms at 2 kHz: a scheduling hiccup or a model rebuild delays messages instead of dropping them
# (a late feed-forward is harmless: controllers keep the newest command).
JOINT_STATES_DEPTH = 50


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
        self.declare_parameter("floating_base", False)
        self.declare_parameter("base_timeout", 0.1)
        self.declare_parameter("contact_links", [""])
        p = self.get_parameter
        self.gravity = list(p("gravity").value)
        self.state_timeout = float(p("state_timeout").value)
        self.acceleration_timeout = float(p("acceleration_timeout").value)
        self.wrench_timeout = float(p("wrench_timeout").value)
        self.future_stamp_tolerance = float(p("future_stamp_tolerance").value)
        self.use_desired_state = bool(p("use_desired_state").value)
        self.command_joints = [name for name in p("command_joints").value if name]
        self.floating_base = bool(p("floating_base").value)
        self.base_timeout = float(p("base_timeout").value)
        self.contact_links = [name for name in p("contact_links").value if name]
        flipped = {name for name in p("flip_wrench_topics").value if name}

        self.live: LiveModel | None = None
        self.joint_states: DedicatedSubscription | None = None
        self.fatal_error: str | None = None
        self.model_status = "waiting for robot_description"
        self._description_lock = threading.Lock()
        self._description_sequence = 0
        self.inputs = InputStats()
        self.rejected: Counter[str] = Counter()
        self._rejected_lock = threading.Lock()
        self._rejected_at_report: Counter[str] = Counter()
        self.published = 0
        self.compute_times: deque[float] = deque(maxlen=COMPUTE_TIME_WINDOW)
        self.warned_frames: set[str] = set()
        self.empty_velocity_seen = False
        self.waiting_for: list[str] = []
        self._future_limit = -math.inf

        # No QoS event handlers on the publishers (incompatible subscribers are warned on their side):
        # the executor polls every handler on each wake-up, which costs ~5 µs per message each.
        quiet = PublisherEventCallbacks(use_default_callbacks=False)
        self.pub_efforts = self.create_publisher(JointState, "feedforward_efforts", 10, event_callbacks=quiet)
        self.pub_gravity = self.create_publisher(JointState, "gravity_torques", 10, event_callbacks=quiet)
        self.pub_commands = self.create_publisher(Float64MultiArray, "effort_commands", 10, event_callbacks=quiet)
        self.pub_diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", 10, event_callbacks=quiet)
        self.pub_residual = self.create_publisher(WrenchStamped, "base_wrench_residual", 10, event_callbacks=quiet)
        self.pub_contacts = self.create_publisher(
            WrenchStamped, "estimated_contact_wrenches", 10, event_callbacks=quiet
        )
        self.residual_norm: float | None = None

        description = p("robot_description").value
        if description:
            self._load_description(description, sequence=0)
            if self.fatal_error:
                return
        else:
            self.create_subscription(String, "robot_description", self._on_description, DESCRIPTION_QOS)
        self.joint_states = DedicatedSubscription(
            self, JointState, "joint_states", self._on_joint_states, JOINT_STATES_DEPTH
        )
        self.create_subscription(JointTrajectory, "desired_accelerations", self._on_desired, 10)
        self.create_subscription(Odometry, "base_odometry", self._on_odometry, 10)
        self.create_subscription(Imu, "imu", self._on_imu, 10)
        self.create_subscription(AccelStamped, "desired_base_acceleration", self._on_base_acceleration, 10)
        for topic in p("wrench_topics").value:
            if topic:
                sign = -1.0 if topic in flipped else 1.0
                self.create_subscription(WrenchStamped, topic, lambda msg, s=sign: self._on_wrench(msg, s), 10)
        self.create_timer(1.0, self._publish_diagnostics)
        self.joint_states.start()

    def destroy_node(self) -> None:
        if self.joint_states is not None:
            self.joint_states.destroy()
        super().destroy_node()

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
            model = RobotModel.from_urdf(urdf, floating_base=self.floating_base, gravity=self.gravity)
            live = LiveModel(model, self.command_joints, self.contact_links)
        except ConfigurationError as error:
            if self.live is None:  # a startup error: the node cannot do what it was configured for
                self.fatal_error = str(error)
                self.get_logger().fatal(f"{error}; fix the parameters. Shutting down.")
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
        base = f" on a floating base '{live.model.base_link}'" if live.floating else ""
        self.model_status = f"model with {live.n} joints{base}"
        self.get_logger().info(f"robot model loaded: {live.n} joints{base} {live.model.joint_names}")
        if self.contact_links and not live.floating:
            self.get_logger().warning("contact_links is ignored: the robot has a fixed base")

    def _refuse_description(self, error: Exception) -> None:
        self._count_rejection("bad_robot_description")
        reason = str(error)[:500]  # a hostile description must not flood the log
        self.get_logger().error(f"robot_description refused, keeping the previous model: {reason}")
        if self.live is None:
            self.model_status = f"no model: robot_description refused: {reason}"

    # --- inputs --------------------------------------------------------------------------------
    def _count_rejection(self, reason: str) -> None:
        with self._rejected_lock:  # counted from the joint_states thread and the executor's
            self.rejected[reason] += 1

    def _reject(self, rejection: InvalidMessageError, topic: str) -> None:
        self._count_rejection(rejection.reason)
        self.get_logger().warning(f"{topic}: {rejection} (message ignored)", throttle_duration_sec=1.0)

    def _on_joint_states(self, msg: JointState) -> None:
        self.inputs.received("joint_states")
        live = self.live
        if live is None:
            return
        try:
            complete = self._merge_joint_states(live, msg)
        except InvalidMessageError as rejection:
            return self._reject(rejection, "joint_states")
        if complete:
            self.waiting_for = []
            self._compute_and_publish(live, msg.header)
        else:
            self.waiting_for = live.stale_joints(self.state_timeout)

    def _merge_joint_states(self, live: LiveModel, msg: JointState) -> bool:
        """Takes the message's values into ``live``; True when every joint is fresh enough to compute."""
        position, velocity, velocity_given = joint_state_arrays(msg)
        match = live.matcher.match(msg.name)
        if len(match.model_rows) == 0:
            return False
        stamp = stamp_seconds(msg.header.stamp)
        if stamp > self._future_limit:  # the clock is read only when a stamp passes the last limit
            self._future_limit = self.get_clock().now().nanoseconds * 1e-9 + self.future_stamp_tolerance
            if stamp > self._future_limit:
                raise InvalidMessageError("future_stamp", "header stamp is in the future (clocks not synchronised?)")
        if not velocity_given:
            self.empty_velocity_seen = True
        if match.full is not None:  # the usual case, one publisher for all joints: nothing to merge
            if stamp < live.newest_stamp:
                raise InvalidMessageError("out_of_order", "header stamp older than the last joint_states used")
            live.q, live.qd = position[match.full], velocity[match.full]
            live.stamp.fill(stamp)
            live.newest_stamp = stamp
            return True
        if np.any(stamp < live.stamp[match.model_rows]):
            raise InvalidMessageError("out_of_order", "header stamp older than the last joint_states used")
        live.q[match.model_rows] = position[match.message_rows]
        live.qd[match.model_rows] = velocity[match.message_rows]
        live.stamp[match.model_rows] = stamp
        live.newest_stamp = max(live.newest_stamp, stamp)
        return live.newest_stamp - live.stamp.min() <= self.state_timeout

    def _on_desired(self, msg: JointTrajectory) -> None:
        self.inputs.received("desired_accelerations")
        live = self.live
        if live is None:
            return
        try:
            qdd, q, qd = desired_point(msg, live.matcher, live.n)
        except InvalidMessageError as rejection:
            return self._reject(rejection, "desired_accelerations")
        live.desired = Desired(qdd, q, qd, time.monotonic())

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
            self._count_rejection("unknown_wrench_frame")
            return
        try:
            wrench = sign * wrench_array(msg)
        except InvalidMessageError as rejection:
            return self._reject(rejection, f"wrench on '{frame}'")
        live.wrenches = {**live.wrenches, frame: (wrench, time.monotonic())}

    def _floating_live(self, topic: str) -> LiveModel | None:
        """The live model when it has a floating base (base inputs are ignored otherwise)."""
        self.inputs.received(topic)
        live = self.live
        return live if live is not None and live.floating else None

    def _on_odometry(self, msg: Odometry) -> None:
        if (live := self._floating_live("base_odometry")) is None:
            return
        try:
            q, v = odometry_base_state(msg, live.model.base_link)
        except InvalidMessageError as rejection:
            return self._reject(rejection, "base_odometry")
        live.odometry = BaseState(q, v, "base_odometry", time.monotonic())

    def _on_imu(self, msg: Imu) -> None:
        if (live := self._floating_live("imu")) is None:
            return
        link = msg.header.frame_id
        if not live.on_the_base_tree(link):
            rejection = InvalidMessageError("imu_frame", f"frame '{link}' is not a link of the robot")
            return self._reject(rejection, "imu")
        try:
            R_world_imu, omega_imu = imu_reading(msg)
        except InvalidMessageError as rejection:
            return self._reject(rejection, "imu")
        live.imu = ImuReading(R_world_imu, omega_imu, link, time.monotonic())

    def _on_base_acceleration(self, msg: AccelStamped) -> None:
        if (live := self._floating_live("desired_base_acceleration")) is None:
            return
        try:
            classical = base_acceleration_array(msg, live.model.base_link)
        except InvalidMessageError as rejection:
            return self._reject(rejection, "desired_base_acceleration")
        live.base_acceleration = (classical, time.monotonic())

    def _base_source(self, live: LiveModel, now: float) -> str | None:
        """Odometry when fresh, else the IMU, else nothing to compute with."""
        for name, state in (("base_odometry", live.odometry), ("imu", live.imu)):
            if state is not None and now - state.received <= self.base_timeout:
                return name
        return None

    def _fresh_base(self, live: LiveModel, now: float, q_joints: np.ndarray, qd_joints: np.ndarray) -> BaseState | None:
        source = self._base_source(live, now)
        if source == "base_odometry":
            return live.odometry
        if source is None:
            return None
        # The IMU's link may sit behind joints: its rotation and rate relative to the base come
        # from the joint state this computation uses.
        reading = live.imu
        q, qd = np.zeros(live.model.nq), np.zeros(live.model.nv)
        q[7:], qd[BASE_DOFS:] = q_joints, qd_joints
        R_base_imu, omega_rel = link_in_base(live.model, reading.link, q, qd)
        q_base, v_base = base_state_from_imu(reading, R_base_imu, omega_rel)
        return BaseState(q_base, v_base, "imu", reading.received)

    # --- output --------------------------------------------------------------------------------
    def _inputs_now(self, live: LiveModel) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict | None]:
        """(q, qd, qdd, wrenches) to compute with: measured or desired state, fresh inputs only."""
        now, desired = time.monotonic(), live.desired
        q, qd = live.q, live.qd
        if desired is None or now - desired.received > self.acceleration_timeout:
            return q, qd, live.zeros, self._fresh_wrenches(live, now)
        if self.use_desired_state and desired.q is not None:
            q = np.where(np.isnan(desired.q), q, desired.q)
            qd = np.where(np.isnan(desired.qd), qd, desired.qd)
        return q, qd, desired.qdd, self._fresh_wrenches(live, now)

    def _fresh_wrenches(self, live: LiveModel, now: float) -> dict | None:
        wrenches = live.wrenches
        if not wrenches:
            return None
        fresh = {link: w for link, (w, received) in wrenches.items() if now - received <= self.wrench_timeout}
        return fresh or None

    def _compute_and_publish(self, live: LiveModel, header) -> None:
        if live.floating:
            return self._compute_and_publish_floating(live, header)
        q, qd, qdd, wrenches = self._inputs_now(live)
        start = time.perf_counter()
        try:
            tau = live.model.inverse_dynamics(q, qd, qdd, wrenches)
        except ValueError as error:
            return self._reject(
                InvalidMessageError("compute_error", f"inverse dynamics refused the inputs: {error}"), "output"
            )
        self.compute_times.append(time.perf_counter() - start)
        position = self._publish_efforts(live, header, q, qd, tau)
        self._publish_gravity(live, header, position, live.model.gravity_torques(q))  # after: off the efforts' path
        self.published += 1

    def _publish_efforts(self, live: LiveModel, header, q, qd, tau) -> array.array:
        """effort_commands (first: it is what a controller waits for), then feedforward_efforts; all
        arrays are the joints' part. Returns the positions, for gravity_torques."""
        commands, efforts = live.commands_msg, live.efforts_msg
        commands.data = as_float64_array(tau[live.command_order])
        self.pub_commands.publish(commands)
        position = as_float64_array(q)
        efforts.header, efforts.position = header, position
        efforts.velocity, efforts.effort = as_float64_array(qd), as_float64_array(tau)
        self.pub_efforts.publish(efforts)
        return position

    def _publish_gravity(self, live: LiveModel, header, position: array.array, gravity: np.ndarray) -> None:
        msg = live.gravity_msg
        msg.header, msg.position, msg.effort = header, position, as_float64_array(gravity)
        self.pub_gravity.publish(msg)

    def _compute_and_publish_floating(self, live: LiveModel, header) -> None:
        """Joint torques at the base state from odometry or IMU; the base rows of τ are the residual
        wrench, distributed onto contact_links when set."""
        now = time.monotonic()
        q_joints, qd_joints, qdd_joints, wrenches = self._inputs_now(live)
        base = self._fresh_base(live, now, q_joints, qd_joints)
        if base is None:
            return  # diagnostics say that no base state is fresh
        accel = live.base_acceleration
        fresh_accel = accel is not None and now - accel[1] <= self.acceleration_timeout
        base_qdd = base_acceleration(accel[0], base.v) if fresh_accel else np.zeros(BASE_DOFS)
        q = np.concatenate([base.q, q_joints])
        qd = np.concatenate([base.v, qd_joints])
        qdd = np.concatenate([base_qdd, qdd_joints])
        start = time.perf_counter()
        try:
            tau = live.model.inverse_dynamics(q, qd, qdd, wrenches)
            gravity = live.model.gravity_torques(q)
            contact_wrenches = None
            if live.contacts is not None:
                JT = live.contacts.jacobian_transpose(q)
                f = live.contacts.distribute(JT, tau[:BASE_DOFS])
                tau = tau - JT @ f
                gravity = gravity - JT @ live.contacts.distribute(JT, gravity[:BASE_DOFS])
                contact_wrenches = live.contacts.wrenches(f)
        except (ValueError, np.linalg.LinAlgError) as error:
            return self._reject(
                InvalidMessageError("compute_error", f"inverse dynamics refused the inputs: {error}"), "output"
            )
        self.compute_times.append(time.perf_counter() - start)
        joints = slice(BASE_DOFS, None)
        position = self._publish_efforts(live, header, q_joints, qd_joints, tau[joints])
        self._publish_gravity(live, header, position, gravity[joints])
        self._publish_wrench(self.pub_residual, live.residual_msg, header, tau[:BASE_DOFS])
        self.residual_norm = float(np.linalg.norm(tau[:BASE_DOFS]))
        for link, wrench in (contact_wrenches or {}).items():
            msg = WrenchStamped()
            msg.header.frame_id = link
            self._publish_wrench(self.pub_contacts, msg, header, wrench)
        self.published += 1

    @staticmethod
    def _publish_wrench(publisher, msg: WrenchStamped, header, wrench: np.ndarray) -> None:
        msg.header.stamp = header.stamp
        f, t = msg.wrench.force, msg.wrench.torque
        f.x, f.y, f.z, t.x, t.y, t.z = (float(x) for x in wrench)
        publisher.publish(msg)

    # --- diagnostics ---------------------------------------------------------------------------
    def _publish_diagnostics(self) -> None:
        live = self.live
        level, notes = DiagnosticStatus.OK, [self.model_status]
        if live is None:
            level = DiagnosticStatus.ERROR
        values = {"model joints": str(live.n if live else 0), "published": str(self.published)}
        values.update(self.inputs.report())
        values.update(compute_time_values(list(self.compute_times)))  # a snapshot: the deque grows on another thread
        if live is not None:
            level = max(level, self._input_notes(live, notes, values))
        with self._rejected_lock:
            rejected = self.rejected.copy()
        new_rejections = rejected - self._rejected_at_report
        if new_rejections:
            level = max(level, DiagnosticStatus.WARN)
            notes.append("rejected: " + ", ".join(f"{n} {reason}" for reason, n in sorted(new_rejections.items())))
        self._rejected_at_report = rejected
        values.update({f"rejected: {reason}": str(n) for reason, n in sorted(rejected.items())})
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

    def _input_notes(self, live: LiveModel, notes: list[str], values: dict[str, str]) -> int:
        level = DiagnosticStatus.OK
        now = time.monotonic()
        if self.empty_velocity_seen:
            level = DiagnosticStatus.WARN
            notes.append("joint_states without velocity: zero velocity used")
        publisher_note = self._joint_states_publisher_note()
        if publisher_note:
            level = DiagnosticStatus.WARN
            notes.append(publisher_note)
        if self.waiting_for:
            level = DiagnosticStatus.WARN
            notes.append(f"no torques: stale or missing joint_states for {self.waiting_for[:10]}")
        if live.desired is not None and now - live.desired.received > self.acceleration_timeout:
            notes.append("desired_accelerations stale: zero accelerations used")
        for link, (_, received) in sorted(live.wrenches.items()):
            age = now - received
            values[f"wrench '{link}' age [s]"] = f"{age:.3f}"
            if age > self.wrench_timeout:
                notes.append(f"wrench on '{link}' expired")
        if live.floating:
            level = max(level, self._base_notes(live, now, notes, values))
        return level

    def _base_notes(self, live: LiveModel, now: float, notes: list[str], values: dict[str, str]) -> int:
        level = DiagnosticStatus.OK
        source = self._base_source(live, now)
        values["base state source"] = source or "none"
        if source is None:
            level = DiagnosticStatus.WARN
            notes.append("no torques: no fresh base_odometry or imu (floating base)")
        elif source == "imu":
            notes.append("base from imu: base linear velocity taken as zero")
        accel = live.base_acceleration
        if accel is None or now - accel[1] > self.acceleration_timeout:
            values["base acceleration"] = "zero (no fresh desired_base_acceleration)"
        if self.residual_norm is not None:
            values["base wrench residual norm"] = f"{self.residual_norm:.3f}"
        if live.contacts is not None:
            values["contact links"] = ", ".join(live.contacts.links)
        return level

    def _joint_states_publisher_note(self) -> str | None:
        """Why joint_states may not arrive: no publisher, or one whose QoS cannot reach a reliable reader."""
        publishers = self.get_publishers_info_by_topic(self.joint_states.topic_name)
        if not publishers:
            return "no joint_states publisher"
        best_effort = [p.node_name for p in publishers if p.qos_profile.reliability == ReliabilityPolicy.BEST_EFFORT]
        if best_effort:
            return f"joint_states publishers {best_effort} are best effort: this node's reliable reader gets nothing"
        return None


# A model rebuild (Python, in a thread) holds the GIL; the interpreter hands it over every
# 5 ms by default, which at 2 kHz is 10 joint_states: the whole subscription queue.
GIL_SWITCH_INTERVAL = 0.0005


def main(args=None) -> None:
    sys.setswitchinterval(GIL_SWITCH_INTERVAL)
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
