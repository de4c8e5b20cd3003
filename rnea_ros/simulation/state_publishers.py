"""What rnea_sim publishes of each state: joint_states (and its tap, a second writer for a recorder),
the force/torque sensor, a floating base's odometry, and with ``publish_clock`` the state's stamp on
``/clock``. joint_states and base_odometry go out as CDR bytes refilled for each state
(``plumbing/fixed_cdr.py``): rclpy's conversion of the messages was most of a 1 ms step's publishing."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState

from rnea_ros.plumbing.fixed_cdr import CdrTemplate
from rnea_ros.simulation.parameters import SimSettings

TAP_DEPTH = 10_000


class PublishedState(NamedTuple):
    """What one state's joint_states said: its stamp (sec, nanosec) and the joints' values."""

    stamp: tuple[int, int]
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray


def joint_state_template(names: list[str]) -> CdrTemplate:
    """sensor_msgs/JointState with these names, no frame: stamp, position, velocity, effort to fill."""
    n = len(names)
    template = CdrTemplate().stamp().string("").strings(names)
    return template.doubles("position", n).doubles("velocity", n).doubles("effort", n).done()


def odometry_template(frame: str, child_frame: str) -> CdrTemplate:
    """nav_msgs/Odometry, covariances zero: stamp, pose (x, y, z, qx, qy, qz, qw), twist (v, ω) to fill."""
    template = CdrTemplate().stamp().string(frame).string(child_frame)
    template.doubles("pose", 7, sequence=False).doubles("pose_covariance", 36, sequence=False)
    return template.doubles("twist", 6, sequence=False).doubles("twist_covariance", 36, sequence=False).done()


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
        self._states: CdrTemplate | None = None  # made for the robot's joints at the first state
        self._odometry: CdrTemplate | None = None

    def publish(self, robot, start_wall: float) -> PublishedState:
        """The state now, stamped the start's wall-clock time plus the simulated time."""
        sec, nanosec = divmod(round((start_wall + robot.time) * 1e9), 1_000_000_000)
        state = PublishedState((sec, nanosec), robot.positions(), robot.velocities(), robot.applied)
        if self._states is None:
            self._states = joint_state_template(list(robot.joint_names))
        template = self._states
        template.set_stamp(sec, nanosec)
        template.set("position", state.position)
        template.set("velocity", state.velocity)
        template.set("effort", state.effort)
        stamp = Time(sec=sec, nanosec=nanosec)
        if self.clock is not None:  # first: a use_sim_time reader's clock reaches the stamp before the state
            self.clock.publish(Clock(clock=stamp))
        msg = template.message()
        self.states.publish(msg)
        self._resendable = [(self.states, msg)]
        if self.tap is not None:
            self.tap.publish(msg)
        if self.odometry is not None:
            self._publish_odometry(robot, state.stamp)
        if self.sensor is not None:
            self._publish_sensor(robot, stamp)
        return state

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

    def _publish_odometry(self, robot, stamp: tuple[int, int]) -> None:
        position, quaternion, linear, angular = robot.base_state()
        if self._odometry is None:
            self._odometry = odometry_template("world", robot.base_link)
        template = self._odometry
        template.set_stamp(*stamp)
        template.set("pose", np.concatenate([position, quaternion]))
        template.set("twist", np.concatenate([linear, angular]))
        msg = template.message()
        self._resendable.append((self.odometry, msg))
        self.odometry.publish(msg)
