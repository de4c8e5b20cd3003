"""rnea_node: live feed-forward efforts and gravity torques from /joint_states.

Wiring only: the callbacks turn ROS messages into arrays and back; the dynamics
come from ``RobotModel``. See the README for the interface.
"""

from __future__ import annotations

import math
import threading
import time
from collections import Counter

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

from rnea_ros.model import RobotModel

DESCRIPTION_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)


class LiveModel:
    """A RobotModel with the per-joint state the node merges messages into; swapped whole on reload."""

    def __init__(self, model: RobotModel, command_joints: list[str]) -> None:
        self.model = model
        self.index = {name: k for k, name in enumerate(model.joint_names)}
        missing = [name for name in command_joints if name not in self.index]
        if missing:
            raise ValueError(f"command_joints names joints the model lacks: {missing}")
        self.command_order = [self.index[name] for name in command_joints or model.joint_names]
        n = model.nv
        self.q, self.qd = np.zeros(n), np.zeros(n)
        self.stamp = np.full(n, -math.inf)  # joint_states header stamp of each joint's value
        self.qdd_desired, self.qdd_stamp = np.zeros(n), -math.inf
        self.q_desired, self.qd_desired, self.has_desired_state = np.zeros(n), np.zeros(n), False
        # Warm both kernel entry points (loaded from numba's cache) before any message arrives.
        self.model.inverse_dynamics(np.zeros(model.nq), np.zeros(n), np.zeros(n))
        self.model.gravity_torques(np.zeros(model.nq))


def stamp_seconds(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


class RneaNode(Node):
    def __init__(self) -> None:
        super().__init__("rnea_node")
        self.declare_parameter("robot_description", "")
        self.declare_parameter("gravity", [0.0, 0.0, -9.81])
        self.declare_parameter("state_timeout", 0.1)
        self.declare_parameter("acceleration_timeout", 0.1)
        self.declare_parameter("wrench_timeout", 0.1)
        self.declare_parameter("use_desired_state", False)
        self.declare_parameter("wrench_topics", ["external_wrenches"])
        self.declare_parameter("flip_wrench_topics", [""])
        self.declare_parameter("command_joints", [""])
        p = self.get_parameter
        self.gravity = list(p("gravity").value)
        self.state_timeout = float(p("state_timeout").value)
        self.acceleration_timeout = float(p("acceleration_timeout").value)
        self.wrench_timeout = float(p("wrench_timeout").value)
        self.use_desired_state = bool(p("use_desired_state").value)
        self.command_joints = [name for name in p("command_joints").value if name]
        flipped = {name for name in p("flip_wrench_topics").value if name}

        self.live: LiveModel | None = None
        self.model_status = "waiting for robot_description"
        self.rejected: Counter[str] = Counter()
        self.counts: Counter[str] = Counter()
        self.compute_times: list[float] = []
        self.wrenches: dict[str, tuple[np.ndarray, float]] = {}
        self.warned_frames: set[str] = set()
        self.empty_velocity_seen = False

        self.pub_efforts = self.create_publisher(JointState, "feedforward_efforts", 10)
        self.pub_gravity = self.create_publisher(JointState, "gravity_torques", 10)
        self.pub_commands = self.create_publisher(Float64MultiArray, "effort_commands", 10)
        self.pub_diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", 10)

        description = p("robot_description").value
        if description:
            self._load_description(description)
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
        threading.Thread(target=self._load_description, args=(msg.data,), daemon=True).start()

    def _load_description(self, urdf: str) -> None:
        """Build off the hot path, then swap in whole; a bad description keeps the previous model."""
        try:
            live = LiveModel(RobotModel.from_urdf(urdf, gravity=self.gravity), self.command_joints)
        except ValueError as error:
            self.rejected["robot_description"] += 1
            self.get_logger().error(f"robot_description refused, keeping the previous model: {error}")
            if self.live is None:
                self.model_status = f"no model: {error}"
            return
        self.live = live
        self.model_status = f"model with {live.model.nv} joints"
        self.get_logger().info(f"robot model loaded: {live.model.nv} joints {live.model.joint_names}")

    # --- inputs --------------------------------------------------------------------------------
    def _reject(self, reason: str, detail: str) -> None:
        self.rejected[reason] += 1
        self.get_logger().warning(f"{detail} (message rejected)", throttle_duration_sec=1.0)

    def _on_joint_states(self, msg: JointState) -> None:
        live = self.live
        if live is None:
            return
        self.counts["joint_states"] += 1
        n = len(msg.name)
        if len(msg.position) != n or (msg.velocity and len(msg.velocity) != n):
            return self._reject("wrong_length", "joint_states arrays do not match its names")
        if len(set(msg.name)) != n:
            return self._reject("duplicate_names", "joint_states has duplicate joint names")
        position = np.asarray(msg.position, dtype=float)
        velocity = np.asarray(msg.velocity, dtype=float) if msg.velocity else np.zeros(n)
        if not (np.all(np.isfinite(position)) and np.all(np.isfinite(velocity))):
            return self._reject("non_finite", "joint_states contains NaN or Inf")
        if not msg.velocity:
            self.empty_velocity_seen = True
        stamp = stamp_seconds(msg.header.stamp)
        rows = [(k, live.index[name]) for k, name in enumerate(msg.name) if name in live.index]
        if not rows:
            return
        if any(stamp < live.stamp[j] for _, j in rows):
            return self._reject("out_of_order", "joint_states older than the last one used")
        for k, j in rows:
            live.q[j], live.qd[j], live.stamp[j] = position[k], velocity[k], stamp
        if np.all(stamp - live.stamp <= self.state_timeout):
            self._compute_and_publish(live, msg.header)

    def _on_desired(self, msg: JointTrajectory) -> None:
        live = self.live
        if live is None or not msg.points:
            return
        point = msg.points[0]
        n = len(msg.joint_names)
        if len(point.accelerations) != n or len(set(msg.joint_names)) != n:
            return self._reject("desired_wrong_length", "desired_accelerations: accelerations do not match names")
        values = np.asarray(point.accelerations, dtype=float)
        if not np.all(np.isfinite(values)):
            return self._reject("non_finite", "desired_accelerations contains NaN or Inf")
        qdd = np.zeros(live.model.nv)
        q, qd = live.q_desired.copy(), live.qd_desired.copy()
        has_state = len(point.positions) == n and len(point.velocities) == n
        for k, name in enumerate(msg.joint_names):
            j = live.index.get(name)
            if j is not None:
                qdd[j] = values[k]
                if has_state:
                    q[j], qd[j] = point.positions[k], point.velocities[k]
        live.qdd_desired, live.qdd_stamp = qdd, time.monotonic()
        live.q_desired, live.qd_desired, live.has_desired_state = q, qd, has_state

    def _on_wrench(self, msg: WrenchStamped, sign: float) -> None:
        live = self.live
        frame = msg.header.frame_id
        if live is None:
            return
        if frame not in live.model.link_names:
            if frame not in self.warned_frames:
                self.warned_frames.add(frame)
                self.get_logger().warning(f"wrench in frame '{frame}', which is no link of the robot: ignored")
            self.rejected["unknown_wrench_frame"] += 1
            return
        f, t = msg.wrench.force, msg.wrench.torque
        wrench = sign * np.array([f.x, f.y, f.z, t.x, t.y, t.z])
        if not np.all(np.isfinite(wrench)):
            return self._reject("non_finite", "wrench contains NaN or Inf")
        self.wrenches[frame] = (wrench, time.monotonic())

    # --- output --------------------------------------------------------------------------------
    def _compute_and_publish(self, live: LiveModel, header) -> None:
        now = time.monotonic()
        fresh_desired = now - live.qdd_stamp <= self.acceleration_timeout
        qdd = live.qdd_desired if fresh_desired else np.zeros(live.model.nv)
        q, qd = live.q, live.qd
        if fresh_desired and self.use_desired_state and live.has_desired_state:
            q, qd = live.q_desired, live.qd_desired
        wrenches = {link: w for link, (w, t) in self.wrenches.items() if now - t <= self.wrench_timeout}
        start = time.perf_counter()
        try:
            tau = live.model.inverse_dynamics(q, qd, qdd, wrenches or None)
            gravity = live.model.gravity_torques(q)
        except ValueError as error:
            return self._reject("compute_error", f"inverse dynamics refused the inputs: {error}")
        self.compute_times.append(time.perf_counter() - start)
        names, position = live.model.joint_names, q.tolist()
        self.pub_efforts.publish(
            JointState(header=header, name=names, position=position, velocity=qd.tolist(), effort=tau.tolist())
        )
        self.pub_gravity.publish(JointState(header=header, name=names, position=position, effort=gravity.tolist()))
        self.pub_commands.publish(Float64MultiArray(data=tau[live.command_order].tolist()))
        self.counts["published"] += 1

    def _publish_diagnostics(self) -> None:
        level = DiagnosticStatus.OK if self.live is not None else DiagnosticStatus.ERROR
        message = self.model_status
        if self.empty_velocity_seen:
            level, message = max(level, DiagnosticStatus.WARN), message + "; joint_states without velocity"
        times = sorted(self.compute_times)
        self.compute_times.clear()
        values = {
            "model joints": str(self.live.model.nv if self.live else 0),
            "joint_states received": str(self.counts["joint_states"]),
            "published": str(self.counts["published"]),
            "compute time p50 [us]": f"{times[len(times) // 2] * 1e6:.1f}" if times else "n/a",
        }
        values.update({f"rejected: {reason}": str(n) for reason, n in sorted(self.rejected.items())})
        status = DiagnosticStatus(
            level=level,
            name="rnea_node: inverse dynamics",
            hardware_id=self.get_name(),
            message=message,
            values=[KeyValue(key=k, value=v) for k, v in values.items()],
        )
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.get_clock().now().to_msg()
        self.pub_diagnostics.publish(array)


def main(args=None) -> None:
    rclpy.init(args=args)
    node = RneaNode()
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
