"""rnea_node: live feed-forward efforts and gravity torques from /joint_states.

Wiring only: parameters are specified in ``parameters`` and declared by ``ros_parameters``, messages become arrays in
``messages``, ``RneaCore`` (plain Python) merges them and computes, ``ModelLoader``
builds descriptions one at a time off the hot path, and this class subscribes,
publishes, logs and answers parameter changes. Threads: joint_states and the computation
run on a dedicated thread (``subscription``), the other inputs and the diagnostics on the
executor, model builds on the loader's thread. See the README for the interface.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import rclpy
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import AccelStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import SetParametersResult
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray, Header, String
from trajectory_msgs.msg import JointTrajectory

from rnea_ros.dynamics.corrections import Corrections, CorrectionsError, load_corrections
from rnea_ros.node import diagnostics, messages, ros_parameters
from rnea_ros.node.core import RneaCore, build_live_model
from rnea_ros.node.loader import ModelLoader
from rnea_ros.node.parameters import NODE_PARAMETERS
from rnea_ros.node.settings import Settings, settings_from
from rnea_ros.node.state import ConfigurationError, InvalidMessageError, LiveModel
from rnea_ros.node.subscription import DedicatedSubscription
from rnea_ros.node.torques import Outputs
from rnea_ros.trajectory import MAX_TRAJECTORY_POINTS

DESCRIPTION_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
# 25 ms at 2 kHz: a scheduling hiccup or a model rebuild delays messages instead of dropping them
# (a late feed-forward is harmless: controllers keep the newest command).
JOINT_STATES_DEPTH = 50
MAX_WARNED_FRAMES = 100
STARTUP_GRACE = 3.0  # s without a model before the console says why
# /diagnostics status name: what effort_commands carry besides the feedback (command_source)
STATUS_NAMES = {"inverse_dynamics": "inverse dynamics", "gravity": "gravity compensation", "none": "feedback only"}


class OutputMessages:
    """The output messages of one model, built once and refilled for each state."""

    def __init__(self, live: LiveModel) -> None:
        self.live = live
        names = list(live.model.joint_names)
        self.efforts, self.gravity = JointState(name=names), JointState(name=names)
        self.commands = messages.labelled_commands([names[j] for j in live.command_order])
        self.residual = WrenchStamped()
        self.residual.header.frame_id = live.model.base_link or ""
        links = live.contacts.links if live.contacts is not None else []
        self.contacts = [WrenchStamped(header=Header(frame_id=link)) for link in links]  # estimated_contact_wrenches


class RneaNode(Node):
    def __init__(self) -> None:
        super().__init__("rnea_node")
        self.fatal_error: str | None = None
        try:
            settings = Settings(**ros_parameters.declare(self, NODE_PARAMETERS))
        except ValueError as error:
            settings = Settings()
            self._fatal(f"invalid parameter: {error}")
        self.core = RneaCore(settings)
        self._messages: OutputMessages | None = None  # touched by the joint_states thread only
        self._warned_frames: set[str] = set()
        self.loader = ModelLoader(self._build, self._loaded, self._refused)
        self._started = time.monotonic()

        # No QoS event handlers on the publishers (incompatible subscribers are warned on their side):
        # the executor polls every handler on each wake-up, which costs ~5 µs per message each.
        quiet = PublisherEventCallbacks(use_default_callbacks=False)
        self.pub_efforts = self.create_publisher(JointState, "feedforward_efforts", 10, event_callbacks=quiet)
        self.pub_gravity = self.create_publisher(JointState, "gravity_torques", 10, event_callbacks=quiet)
        self.pub_commands = self.create_publisher(Float64MultiArray, "effort_commands", 10, event_callbacks=quiet)
        self.pub_diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", 10, event_callbacks=quiet)
        self.pub_trajectory = self.create_publisher(
            JointTrajectory, "feedforward_trajectory", 10, event_callbacks=quiet
        )
        self.pub_residual = self.create_publisher(WrenchStamped, "base_wrench_residual", 10, event_callbacks=quiet)
        self.pub_contacts = self.create_publisher(
            WrenchStamped, "estimated_contact_wrenches", 10, event_callbacks=quiet
        )
        self.joint_states: DedicatedSubscription | None = None
        if self.fatal_error:
            return
        if settings.robot_description:
            self._load_at_startup(settings.robot_description)
            if self.fatal_error:
                return
        else:
            self.create_subscription(String, "robot_description", self._on_description, DESCRIPTION_QOS)
        if settings.corrections_file:
            try:
                self.core.set_corrections(settings.corrections_file)
            except CorrectionsError as error:
                self._fatal(str(error))
                return
            self.get_logger().info(f"corrections loaded from {settings.corrections_file}")
        self.joint_states = DedicatedSubscription(
            self, JointState, "joint_states", self._on_joint_states, JOINT_STATES_DEPTH
        )
        # the base state and the F/T sensors come at joint_states' rate: served by its thread (the base
        # state's newest message before each joint_states; see subscription.py)
        self.joint_states.also_serve(Odometry, "base_odometry", self._on_odometry, 10, newest_only=True)
        self.joint_states.also_serve(Imu, "imu", self._on_imu, 10, newest_only=True)
        flipped = set(settings.flip_wrench_topics)
        for topic in settings.wrench_topics:
            sign = -1.0 if topic in flipped else 1.0
            # every message: one topic may carry the wrenches of several links (by frame_id)
            self.joint_states.also_serve(WrenchStamped, topic, lambda msg, s=sign: self._on_wrench(msg, s), 10)
        # raw: trajectories are read from their bytes with numpy (trajectory_cdr.py), 15x faster than
        # rclpy's object per point, whose garbage the collector then stops the node to sweep
        self.create_subscription(JointTrajectory, "desired_accelerations", self._on_desired, 10, raw=True)
        self.create_subscription(JointTrajectory, "joint_trajectory", self._on_trajectory, 10, raw=True)
        self.create_subscription(AccelStamped, "desired_base_acceleration", self._on_base_acceleration, 10)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.create_timer(1.0, self._publish_diagnostics)
        self.joint_states.start()

    def destroy_node(self) -> None:
        if self.joint_states is not None:
            self.joint_states.destroy()
        super().destroy_node()

    def _fatal(self, message: str) -> None:
        self.fatal_error = message
        self.get_logger().fatal(f"{message}; fix the parameters. Shutting down.")

    # --- robot model -------------------------------------------------------------------------
    def _load_at_startup(self, description: str) -> None:
        """The description given by parameter: built before anything is served."""
        try:
            self._loaded(self._build(description))
        except ConfigurationError as error:  # the node cannot do what it was configured for
            self._fatal(str(error))
        except Exception as error:  # a node that can never have a model must not pretend to run
            self.core.rejections.count("bad_robot_description")
            self._fatal(f"the robot_description parameter is refused: {str(error)[:500]}")

    def _build(self, description: str) -> LiveModel:
        return build_live_model(description, self.core.settings)

    def _on_description(self, msg: String) -> None:
        self.core.inputs.received("robot_description")
        self.loader.submit(msg.data)

    def _loaded(self, live: LiveModel | None) -> None:
        if live is None:  # a gravity change before any model: nothing to rebuild
            return
        ignored = self.core.load(live)
        if ignored:
            self.get_logger().warning(f"corrections for joints this model lacks are ignored: {ignored}")
        self._warned_frames = set()
        base = f" on a floating base '{live.model.base_link}'" if live.floating else ""
        self.get_logger().info(f"robot model loaded: {live.n} joints{base} {live.model.joint_names}")
        for warning in live.model.warnings[:20]:  # once per model; all of them in /diagnostics
            self.get_logger().warning(f"robot_description: {warning} (strict_inertia: true refuses it)")
        if self.core.settings.contact_links and not live.floating:
            self.get_logger().warning("contact_links is ignored: the robot has a fixed base")

    def _refused(self, error: Exception) -> None:
        self.core.rejections.count("bad_robot_description")
        reason = str(error)[:500]  # a hostile description must not flood the log
        keeping = "keeping the previous model" if self.core.live is not None else "no model yet"
        self.get_logger().error(f"robot_description refused ({keeping}): {reason}")
        self.core.refused(reason)

    # --- parameters ----------------------------------------------------------------------------
    def _on_set_parameters(self, changed: list) -> SetParametersResult:
        """A live change is applied whole or refused with the reason; never accepted and ignored."""
        values = ros_parameters.changes(changed)
        try:
            settings = settings_from(values, self.core.settings)
        except ValueError as error:
            return SetParametersResult(successful=False, reason=str(error))
        if "robot_description" in values and not settings.robot_description:
            return SetParametersResult(successful=False, reason="robot_description cannot be emptied at run time")
        # everything checked before anything is applied: a set is applied whole or not at all
        new_corrections = None
        if "corrections_file" in values:
            try:
                new_corrections = (load_corrections(settings.corrections_file) if settings.corrections_file else None,)
            except CorrectionsError as error:
                return SetParametersResult(successful=False, reason=f"{error} (previous corrections kept)")
        if "robot_description" in values or "gravity" in values:
            return self._rebuild(settings, supersede="robot_description" in values, corrections=new_corrections)
        live = self.core.live
        if live is not None:
            try:
                settings.check_gains(len(live.command_order))
            except ValueError as error:
                return SetParametersResult(successful=False, reason=str(error))
        if new_corrections is not None:
            try:
                self.core.apply_corrections(new_corrections[0])
            except CorrectionsError as error:
                return SetParametersResult(successful=False, reason=f"{error} (previous corrections kept)")
        return self._apply_settings(settings)

    def _rebuild(
        self, settings: Settings, supersede: bool, corrections: tuple[Corrections | None] | None = None
    ) -> SetParametersResult:
        """A new description or gravity, built in turn with the loader (one build at a time) and
        loaded before the answer, with ``(new corrections,)`` when the same set changes them. A new
        gravity rebuilds the newest model loaded; descriptions still waiting are then built with it."""

        def build() -> LiveModel | None:
            live = self.core.live
            description = settings.robot_description if supersede else (live.description if live else "")
            built = build_live_model(description, settings) if description else None
            self.core.settings = settings  # before the loader's next build, which reads it
            if corrections is not None:
                self.core.corrections = corrections[0]  # applied as the built model is loaded
            return built

        try:
            self.loader.load_now(build, supersede)
        except Exception as error:
            return SetParametersResult(successful=False, reason=f"the model cannot be built: {str(error)[:300]}")
        return SetParametersResult(successful=True)

    def _apply_settings(self, settings: Settings) -> SetParametersResult:
        self.core.settings = settings
        return SetParametersResult(successful=True)

    # --- inputs --------------------------------------------------------------------------------
    def _reject(self, rejection: InvalidMessageError, topic: str) -> None:
        self.core.rejections.count(rejection.reason)
        self.get_logger().warning(f"{topic}: {rejection} (message ignored)", throttle_duration_sec=1.0)

    def _on_joint_states(self, msg: JointState) -> None:
        core = self.core
        core.inputs.received("joint_states")
        try:
            position, velocity, velocity_given = messages.joint_state_arrays(msg)
            stamp = messages.stamp_seconds(msg.header.stamp)
            outputs = core.joint_states(msg.name, position, velocity, velocity_given, stamp, self._clock_seconds)
        except InvalidMessageError as rejection:
            return self._reject(rejection, "joint_states")
        if outputs is not None:
            self._publish(outputs, msg.header)

    def _clock_seconds(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _on_desired(self, data: bytes) -> None:
        self.core.inputs.received("desired_accelerations")
        try:
            self.core.desired(*messages.desired_points(data))
        except InvalidMessageError as rejection:
            self._reject(rejection, "desired_accelerations")

    def _on_trajectory(self, data: bytes) -> None:
        """A planner's trajectory, answered on feedforward_trajectory with every point's effort."""
        arrived = time.perf_counter()
        self.core.inputs.received("joint_trajectory")
        try:
            content = messages.read_trajectory(data, MAX_TRAJECTORY_POINTS, "joint_trajectory")
            result = self.core.trajectory(messages.trajectory_arrays(content))
        except InvalidMessageError as rejection:
            return self._reject(rejection, "joint_trajectory")
        if result is None:
            self.get_logger().warning(
                "joint_trajectory before any robot model: not answered", throttle_duration_sec=1.0
            )
            return None
        header = Header(stamp=Time(sec=content.stamp[0], nanosec=content.stamp[1]), frame_id=content.frame_id)
        self.pub_trajectory.publish(messages.trajectory_cdr(header, result))  # bytes: 3x faster
        self.core.trajectory_times.add(time.perf_counter() - arrived)
        self.core.trajectories += 1
        return None

    def _on_wrench(self, msg: WrenchStamped, sign: float) -> None:
        self.core.inputs.received("wrenches")
        frame = msg.header.frame_id
        try:
            self.core.wrench(frame, sign * messages.wrench_array(msg), messages.stamp_seconds(msg.header.stamp))
        except InvalidMessageError as rejection:
            if rejection.reason != "unknown_wrench_frame":
                return self._reject(rejection, f"wrench on '{frame}'")
            self.core.rejections.count(rejection.reason)
            if frame not in self._warned_frames and len(self._warned_frames) < MAX_WARNED_FRAMES:
                self._warned_frames.add(frame)
                self.get_logger().warning(f"{rejection}: ignored")

    def _on_odometry(self, msg: Odometry) -> None:
        self.core.inputs.received("base_odometry")
        try:
            self.core.odometry(
                *messages.odometry_base_state(msg), msg.child_frame_id, messages.stamp_seconds(msg.header.stamp)
            )
        except InvalidMessageError as rejection:
            self._reject(rejection, "base_odometry")

    def _on_imu(self, msg: Imu) -> None:
        self.core.inputs.received("imu")
        try:
            self.core.imu(msg.header.frame_id, *messages.imu_reading(msg), messages.stamp_seconds(msg.header.stamp))
        except InvalidMessageError as rejection:
            self._reject(rejection, "imu")

    def _on_base_acceleration(self, msg: AccelStamped) -> None:
        self.core.inputs.received("desired_base_acceleration")
        try:
            self.core.base_acceleration(msg.header.frame_id, messages.base_acceleration_array(msg))
        except InvalidMessageError as rejection:
            self._reject(rejection, "desired_base_acceleration")

    # --- output --------------------------------------------------------------------------------
    def _publish(self, outputs: Outputs, header) -> None:
        """effort_commands first (it is what a controller waits for), then the other outputs."""
        out = self._messages
        if out is None or out.live is not outputs.live:
            out = self._messages = OutputMessages(outputs.live)
        out.commands.data = messages.as_float64_array(outputs.commands)
        self.pub_commands.publish(out.commands)
        position = messages.as_float64_array(outputs.q)
        efforts = out.efforts
        efforts.header, efforts.position = header, position
        efforts.velocity, efforts.effort = messages.as_float64_array(outputs.qd), messages.as_float64_array(outputs.tau)
        self.pub_efforts.publish(efforts)
        gravity = out.gravity
        gravity.header, gravity.position, gravity.effort = header, position, messages.as_float64_array(outputs.gravity)
        self.pub_gravity.publish(gravity)
        if outputs.base_residual is not None:
            self._publish_wrench(self.pub_residual, out.residual, header, outputs.base_residual)
        if outputs.wrenches is not None:
            for msg, wrench in zip(out.contacts, outputs.wrenches.reshape(-1, 6), strict=True):
                self._publish_wrench(self.pub_contacts, msg, header, wrench)

    @staticmethod
    def _publish_wrench(publisher, msg: WrenchStamped, header, wrench: np.ndarray) -> None:
        msg.header.stamp = header.stamp
        f, t = msg.wrench.force, msg.wrench.torque
        f.x, f.y, f.z, t.x, t.y, t.z = (float(x) for x in wrench)
        publisher.publish(msg)

    # --- diagnostics ---------------------------------------------------------------------------
    def _publish_diagnostics(self) -> None:
        self._explain_silence()
        if self.core.unreported_held:  # before the report, which counts them reported
            self.get_logger().warning(self.core.held_note())
        report = self.core.report(self._joint_states_publisher_note())
        status = DiagnosticStatus(
            level=bytes([report.level]),
            name=f"rnea_node: {STATUS_NAMES[self.core.settings.command_source]}",
            hardware_id=self.get_fully_qualified_name(),
            message=report.message,
            values=[KeyValue(key=k, value=v) for k, v in report.values.items()],
        )
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.get_clock().now().to_msg()
        self.pub_diagnostics.publish(array)

    def _explain_silence(self) -> None:
        """Says on the console, every few seconds, why nothing is published when it is not."""
        core, logger = self.core, self.get_logger()
        if core.live is None and time.monotonic() - self._started > STARTUP_GRACE:
            topic = self.resolve_topic_name("robot_description")
            publishers = len(self.get_publishers_info_by_topic(topic))
            who = f"{publishers} publisher(s), none has sent a valid one" if publishers else "nothing publishes it"
            logger.warning(
                f"no robot model yet: no valid robot_description on '{topic}' ({who})", throttle_duration_sec=5.0
            )
        problem = core.coverage_problem()
        if problem:
            logger.warning(f"{problem}; topic '{self.joint_states.topic_name}'", throttle_duration_sec=5.0)

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
    diagnostics.freeze_the_heap()
    node.core.collector_pauses.start()
    try:
        if node.fatal_error is None:
            rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.core.collector_pauses.stop()
        fatal = node.fatal_error
        node.destroy_node()
        rclpy.try_shutdown()
    if fatal:
        sys.exit(1)


if __name__ == "__main__":
    main()
