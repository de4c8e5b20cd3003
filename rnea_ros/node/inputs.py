"""The node's inputs, declared once: one row per topic (its message type, reader, setter, freshness
rule and thread), from which ``RneaNode`` subscribes, /diagnostics names its rates and
docs/node.md lists them (``test/node/test_inputs.py`` checks the docs against ``INPUTS``).

A reader turns a message into a reading (checked alone: lengths, finiteness, unit quaternions;
``InvalidMessageError`` otherwise); the setter, a ``LiveModel`` method taking ``(reading, now)``,
checks it against the model (names, frames) and merges it; ``LiveModel.inputs_now`` decides what
is fresh. Rows with a ``handler`` do more than set (compute, answer, load): the node's method of that
name takes ``(reading, message)``. No ROS here: the message types and readers are named, and the node
(``node.py``, ``messages.py``) imports them, so that the node's logic is tested without ROS. Adding an input topic: see
docs/development.md, "Adding an input topic".
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from rnea_ros.motion.trajectory import Trajectory
from rnea_ros.node.state import WrenchReading

JOINT_STATES_THREAD = "joint_states"  # the dedicated thread that also computes (plumbing.subscription)
EXECUTOR = "executor"  # rclpy.spin's thread


@dataclass(frozen=True)
class Input:
    topic: str  # its name (remappable); with ``topics_parameter``, the diagnostics' name of all its topics
    type_name: str  # ``package/Message``, as ROS writes it; the class is imported by the node alone
    read: str  # the function of ``node.messages`` that turns a message (its CDR bytes when ``raw``) into a reading
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
    def msg_type(self) -> type:
        """The message class (imported here, on the node's side: the table itself needs no ROS)."""
        package, name = self.type_name.split("/")
        return getattr(importlib.import_module(f"{package}.msg"), name)


class JointStateReading(NamedTuple):
    names: list[str]
    position: np.ndarray
    velocity: np.ndarray
    velocity_given: bool
    stamp: float


class PlannedTrajectory(NamedTuple):
    content: object  # plumbing.trajectory_cdr.TrajectoryMessage: the message as read from its bytes
    trajectory: Trajectory
    arrived: float  # time.perf_counter() as its reading began: the answer time counts from here


def negated_wrench(reading: WrenchReading) -> WrenchReading:
    """A sensor's reading of what the robot applies, as what is applied on the robot (flip_wrench_topics)."""
    return reading._replace(wrench=-reading.wrench)


BASE_FRESH = "`base_timeout` (arrival, or stamp near the newest joint_states stamp)"

INPUTS: tuple[Input, ...] = (
    Input(
        "robot_description",
        "std_msgs/String",
        "description_text",
        "the loader (one build at a time)",
        "until a newer valid one",
        handler="_on_description",
        depth=1,
        latched=True,
        unless_parameter="robot_description",
    ),
    Input(
        "joint_states",
        "sensor_msgs/JointState",
        "read_joint_states",
        "`merge_joint_states`, then the computation",
        "each joint within `state_timeout` of the newest stamp",
        thread=JOINT_STATES_THREAD,
        handler="_on_joint_states",
        depth=50,  # 25 ms at 2 kHz: a hiccup or a model rebuild delays messages instead of dropping them
    ),
    Input(
        "desired_accelerations",
        "trajectory_msgs/JointTrajectory",
        "desired_points",
        "set_desired",
        "`acceleration_timeout` (after arrival; stamped: after the last point's time)",
        raw=True,  # read from the bytes with numpy: 15x faster than rclpy's object per point
    ),
    Input(
        "joint_trajectory",
        "trajectory_msgs/JointTrajectory",
        "read_planned_trajectory",
        "the trajectory feed-forward, answered on feedforward_trajectory",
        "answered once, on arrival",
        handler="_on_trajectory",
        raw=True,
    ),
    Input(
        "wrenches",
        "geometry_msgs/WrenchStamped",
        "read_wrench",
        "set_wrench",
        "`wrench_timeout` (arrival, or stamp near the newest joint_states stamp), per link",
        thread=JOINT_STATES_THREAD,  # every message: one topic may carry the wrenches of several links
        topics_parameter="wrench_topics",
    ),
    Input(
        "base_odometry",
        "nav_msgs/Odometry",
        "read_odometry",
        "set_odometry",
        BASE_FRESH,
        thread=JOINT_STATES_THREAD,
        newest_only=True,
        floating_only=True,
    ),
    Input(
        "imu",
        "sensor_msgs/Imu",
        "read_imu",
        "set_imu",
        BASE_FRESH + ", when no fresh base_odometry",
        thread=JOINT_STATES_THREAD,
        newest_only=True,
        floating_only=True,
    ),
    Input(
        "desired_base_acceleration",
        "geometry_msgs/AccelStamped",
        "read_base_acceleration",
        "set_base_acceleration",
        "`acceleration_timeout` after arrival",
        floating_only=True,
    ),
    Input(
        "contact_schedule",
        "trajectory_msgs/JointTrajectory",
        "read_contact_schedule",
        "set_contact_schedule",
        "until a newer valid one (no points: back to the gait parameters)",
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
