"""The node's inputs, declared once: one row per topic (its message type, reader, setter, freshness
rule and thread), from which ``RneaNode`` subscribes, /diagnostics names its rates and
docs/node.md lists them (``test/node/test_inputs.py`` checks the docs against ``INPUTS``).

A reader turns a message into a reading (checked alone: lengths, finiteness, unit quaternions;
``InvalidMessageError`` otherwise); the setter, a ``LiveModel`` method taking ``(reading, now)``,
checks it against the model (names, frames) and merges it; ``LiveModel.inputs_now`` decides what
is fresh. Rows with a ``handler`` do more than set (compute, answer, load): the node's method of that
name takes ``(reading, message)``. No rclpy here (message types only). Adding an input topic: see
docs/development.md, "Adding an input topic".
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from geometry_msgs.msg import AccelStamped, WrenchStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory

from rnea_ros.motion.trajectory import MAX_TRAJECTORY_POINTS, Trajectory
from rnea_ros.node import messages
from rnea_ros.node.state import BaseAccelerationReading, ImuMessage, OdometryReading, WrenchReading
from rnea_ros.plumbing.trajectory_cdr import TrajectoryMessage

JOINT_STATES_THREAD = "joint_states"  # the dedicated thread that also computes (plumbing.subscription)
EXECUTOR = "executor"  # rclpy.spin's thread


@dataclass(frozen=True)
class Input:
    topic: str  # its name (remappable); with ``topics_parameter``, the diagnostics' name of all its topics
    msg_type: type
    read: Callable  # message (its CDR bytes when ``raw``) -> reading
    setter: str  # what takes the reading in: a LiveModel method, or the node's ``handler``
    fresh: str  # the freshness rule, as the docs say it
    thread: str = EXECUTOR
    handler: str | None = None  # an RneaNode method (reading, message) instead of ``setter`` alone
    depth: int = 10
    latched: bool = False  # reliable, transient local (a description published once)
    raw: bool = False
    newest_only: bool = False  # on the joint_states thread: only the newest waiting message counts
    floating_only: bool = False  # ignored unless the model has a floating base
    topics_parameter: str | None = None  # the topics are this parameter's values
    unless_parameter: str | None = None  # not subscribed when this parameter is given

    @property
    def type_name(self) -> str:
        """``package/Message``, as ROS writes it."""
        return f"{self.msg_type.__module__.split('.')[0]}/{self.msg_type.__name__}"


class JointStateReading(NamedTuple):
    names: list[str]
    position: np.ndarray
    velocity: np.ndarray
    velocity_given: bool
    stamp: float


class PlannedTrajectory(NamedTuple):
    content: TrajectoryMessage
    trajectory: Trajectory
    arrived: float  # time.perf_counter() as its reading began: the answer time counts from here


def read_joint_states(msg: JointState) -> JointStateReading:
    position, velocity, velocity_given = messages.joint_state_arrays(msg)
    return JointStateReading(msg.name, position, velocity, velocity_given, messages.stamp_seconds(msg.header.stamp))


def read_planned_trajectory(data: bytes) -> PlannedTrajectory:
    arrived = time.perf_counter()
    content = messages.read_trajectory(data, MAX_TRAJECTORY_POINTS, "joint_trajectory")
    return PlannedTrajectory(content, messages.trajectory_arrays(content), arrived)


def read_wrench(msg: WrenchStamped) -> WrenchReading:
    return WrenchReading(msg.header.frame_id, messages.wrench_array(msg), messages.stamp_seconds(msg.header.stamp))


def read_odometry(msg: Odometry) -> OdometryReading:
    q_base, twist = messages.odometry_base_state(msg)
    return OdometryReading(q_base, twist, msg.child_frame_id, messages.stamp_seconds(msg.header.stamp))


def read_imu(msg: Imu) -> ImuMessage:
    rotation, rate = messages.imu_reading(msg)
    return ImuMessage(msg.header.frame_id, rotation, rate, messages.stamp_seconds(msg.header.stamp))


def read_base_acceleration(msg: AccelStamped) -> BaseAccelerationReading:
    return BaseAccelerationReading(msg.header.frame_id, messages.base_acceleration_array(msg))


def negated_wrench(reading: WrenchReading) -> WrenchReading:
    """A sensor's reading of what the robot applies, as what is applied on the robot (flip_wrench_topics)."""
    return reading._replace(wrench=-reading.wrench)


BASE_FRESH = "`base_timeout` (arrival, or stamp near the newest joint_states stamp)"

INPUTS: tuple[Input, ...] = (
    Input(
        "robot_description",
        String,
        lambda msg: msg.data,
        "the loader (one build at a time)",
        "until a newer valid one",
        handler="_on_description",
        depth=1,
        latched=True,
        unless_parameter="robot_description",
    ),
    Input(
        "joint_states",
        JointState,
        read_joint_states,
        "`merge_joint_states`, then the computation",
        "each joint within `state_timeout` of the newest stamp",
        thread=JOINT_STATES_THREAD,
        handler="_on_joint_states",
        depth=50,  # 25 ms at 2 kHz: a hiccup or a model rebuild delays messages instead of dropping them
    ),
    Input(
        "desired_accelerations",
        JointTrajectory,
        messages.desired_points,
        "set_desired",
        "`acceleration_timeout` (after arrival; stamped: after the last point's time)",
        raw=True,  # read from the bytes with numpy: 15x faster than rclpy's object per point
    ),
    Input(
        "joint_trajectory",
        JointTrajectory,
        read_planned_trajectory,
        "the trajectory feed-forward, answered on feedforward_trajectory",
        "answered once, on arrival",
        handler="_on_trajectory",
        raw=True,
    ),
    Input(
        "wrenches",
        WrenchStamped,
        read_wrench,
        "set_wrench",
        "`wrench_timeout` (arrival, or stamp near the newest joint_states stamp), per link",
        thread=JOINT_STATES_THREAD,  # every message: one topic may carry the wrenches of several links
        topics_parameter="wrench_topics",
    ),
    Input(
        "base_odometry",
        Odometry,
        read_odometry,
        "set_odometry",
        BASE_FRESH,
        thread=JOINT_STATES_THREAD,
        newest_only=True,
        floating_only=True,
    ),
    Input(
        "imu",
        Imu,
        read_imu,
        "set_imu",
        BASE_FRESH + ", when no fresh base_odometry",
        thread=JOINT_STATES_THREAD,
        newest_only=True,
        floating_only=True,
    ),
    Input(
        "desired_base_acceleration",
        AccelStamped,
        read_base_acceleration,
        "set_base_acceleration",
        "`acceleration_timeout` after arrival",
        floating_only=True,
    ),
)
BY_TOPIC = {row.topic: row for row in INPUTS}


def topic_label(row: Input) -> str:
    return f"each of `{row.topics_parameter}`" if row.topics_parameter else f"`{row.topic}`"


def docs_table() -> str:
    """The table of inputs in docs/node.md."""
    lines = [
        "| topic | type | thread | taken in by | fresh for | /diagnostics name |",
        "|---|---|---|---|---|---|",
    ]
    for row in INPUTS:
        setter = row.setter if " " in row.setter else f"`LiveModel.{row.setter}`"
        floating = " (floating base)" if row.floating_only else ""
        cells = (topic_label(row) + floating, f"`{row.type_name}`", row.thread, setter, row.fresh, f"`{row.topic}`")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(docs_table(), end="")
