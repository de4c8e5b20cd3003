"""What rnea_sim publishes of each state: joint_states (and its tap, a second writer for a recorder),
the force/torque sensor, a floating base's odometry, and with ``publish_clock`` the state's stamp on
``/clock``."""

from __future__ import annotations

from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState

from rnea_ros.simulation.parameters import SimSettings

TAP_DEPTH = 10_000


class StatePublishers:
    def __init__(self, node: Node, p: SimSettings) -> None:
        self.p = p
        self.states = node.create_publisher(JointState, "joint_states", 100)
        # a second writer of the same states, for a recorder: a second reader of joint_states cost
        # rnea_node ~6 % of them (Fast DDS from the Jazzy wheels, measured 2026-11-23)
        # the last 10 s of states kept for it, also for a recorder that matches late (transient
        # local): a busy machine's recorder process once started 1.9 s into the trajectory
        tap_qos = QoSProfile(
            depth=TAP_DEPTH, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
        )
        self.tap = node.create_publisher(JointState, p.tap_topic, tap_qos) if p.tap_topic else None
        self.sensor = node.create_publisher(WrenchStamped, p.sensor_topic, 10) if p.sensor_topic else None
        self.odometry = node.create_publisher(Odometry, p.odometry_topic, 10) if p.floating_base else None
        # /clock whatever the namespace: a use_sim_time node's clock reads it there
        self.clock = node.create_publisher(Clock, "/clock", 10) if p.publish_clock else None
        self._resendable: list[tuple] = []  # (publisher, message) of the newest state
        # one Odometry refilled for each state (its constructor, nested messages and covariances, cost
        # ~26 µs of each 1 ms step): the publish converts it whole, and a resend sends the newest state's
        self._odometry = Odometry(child_frame_id="")
        self._odometry.header.frame_id = "world"

    def publish(self, robot, start_wall: float) -> JointState:
        """The state now, stamped the start's wall-clock time plus the simulated time."""
        sec, nanosec = divmod(round((start_wall + robot.time) * 1e9), 1_000_000_000)
        msg = JointState(
            name=robot.joint_names,
            position=robot.positions().tolist(),
            velocity=robot.velocities().tolist(),
            effort=robot.applied.tolist(),
        )
        msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
        if self.clock is not None:  # first: a use_sim_time reader's clock reaches the stamp before the state
            self.clock.publish(Clock(clock=msg.header.stamp))
        self.states.publish(msg)
        self._resendable = [(self.states, msg)]
        if self.tap is not None:
            self.tap.publish(msg)
        if self.odometry is not None:
            self._publish_odometry(robot, msg.header.stamp)
        if self.sensor is not None:
            self._publish_sensor(robot, msg.header.stamp)
        return msg

    def resend(self) -> None:
        """The newest state's messages once more (strict lockstep: a state or its answer lost)."""
        for publisher, message in self._resendable:
            publisher.publish(message)

    def _publish_sensor(self, robot, stamp) -> None:
        wrench = robot.sensor_wrench() * (-1.0 if self.p.sensor_reports_robot_side else 1.0)
        sensor = WrenchStamped()
        sensor.header.stamp = stamp
        sensor.header.frame_id = self.p.payload_link
        f, t = sensor.wrench.force, sensor.wrench.torque
        f.x, f.y, f.z, t.x, t.y, t.z = (float(x) for x in wrench)
        self.sensor.publish(sensor)
        self._resendable.append((self.sensor, sensor))

    def _publish_odometry(self, robot, stamp) -> None:
        position, quaternion, linear, angular = robot.base_state()
        odometry = self._odometry
        if odometry.child_frame_id != robot.base_link:
            odometry.child_frame_id = robot.base_link
        odometry.header.stamp = stamp
        self._resendable.append((self.odometry, odometry))
        pose, twist = odometry.pose.pose, odometry.twist.twist
        pose.position.x, pose.position.y, pose.position.z = (float(x) for x in position)
        o = pose.orientation
        o.x, o.y, o.z, o.w = (float(x) for x in quaternion)
        twist.linear.x, twist.linear.y, twist.linear.z = (float(x) for x in linear)
        twist.angular.x, twist.angular.y, twist.angular.z = (float(x) for x in angular)
        self.odometry.publish(odometry)
