"""The node's inputs, declared once: one row per topic (its message type, setter, freshness rule and
thread), from which ``RneaNode`` subscribes, /diagnostics names its rates and docs/node.md lists them
(``test/node/test_inputs.py`` checks the docs against ``INPUTS``).

The node's reader of a topic (``node.messages.READERS``) turns a message into a reading (checked
alone: lengths, finiteness, unit quaternions; ``InvalidMessageError`` otherwise); the row's
``setter``, a ``LiveModel`` method taking ``(reading, now)``, checks it against the model (names,
frames) and merges it; ``LiveModel.inputs_now`` decides what is fresh. Rows without a setter do more
(compute, answer, load): the node's handler of that topic (``node.node.HANDLERS``) takes
``(reading, message)``. No ROS here: the message types are named for the docs, the node holds the
classes, so that the node's logic is tested without ROS. Adding an input topic: see
docs/development.md, "Adding an input topic".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from rnea_ros.controller.state import LiveModel, WrenchReading
from rnea_ros.motion.trajectory import Trajectory

JOINT_STATES_THREAD = "joint_states"  # the dedicated thread that also computes (plumbing.subscription)
EXECUTOR = "executor"  # rclpy.spin's thread


Setter = Callable[[LiveModel, Any, float], None]  # a LiveModel method: (the model, reading, now)


@dataclass(frozen=True)
class Input:
    topic: str  # its name (remappable); with ``topics_parameter``, the diagnostics' name of all its topics
    type_name: str  # ``package/Message``, as ROS writes it; the node holds the class
    fresh: str  # the freshness rule, as the docs say it
    setter: Setter | None = None  # what takes the reading in; None: the node's handler of this topic
    handled: str = ""  # without a setter: what the node's handler does with it, as the docs say it
    thread: str = EXECUTOR
    depth: int = 10
    latched: bool = False  # reliable, transient local (a description published once)
    raw: bool = False  # the reader takes the message's CDR bytes
    newest_only: bool = False  # on the joint_states thread: only the newest waiting message counts
    floating_only: bool = False  # ignored unless the model has a floating base
    topics_parameter: str | None = None  # the topics are this parameter's values
    unless_parameter: str | None = None  # not subscribed when this parameter is given

    @property
    def taken_in_by(self) -> str:
        return f"`LiveModel.{self.setter.__name__}`" if self.setter is not None else self.handled


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
        "until a newer valid one",
        handled="the loader (one build at a time)",
        depth=1,
        latched=True,
        unless_parameter="robot_description",
    ),
    Input(
        "joint_states",
        "sensor_msgs/JointState",
        "each joint within `state_timeout` of the newest stamp",
        handled="`merge_joint_states`, then the computation",
        thread=JOINT_STATES_THREAD,
        depth=50,  # 25 ms at 2 kHz: a hiccup or a model rebuild delays messages instead of dropping them
    ),
    Input(
        "desired_accelerations",
        "trajectory_msgs/JointTrajectory",
        "`acceleration_timeout` (after arrival; stamped: after the last point's time)",
        LiveModel.set_desired,
        raw=True,  # read from the bytes with numpy: 15x faster than rclpy's object per point
    ),
    Input(
        "joint_trajectory",
        "trajectory_msgs/JointTrajectory",
        "answered once, on arrival",
        handled="the trajectory feed-forward, answered on feedforward_trajectory",
        raw=True,
    ),
    Input(
        "wrenches",
        "geometry_msgs/WrenchStamped",
        "`wrench_timeout` (arrival, or stamp near the newest joint_states stamp), per link",
        LiveModel.set_wrench,
        thread=JOINT_STATES_THREAD,  # every message: one topic may carry the wrenches of several links
        topics_parameter="wrench_topics",
    ),
    Input(
        "base_odometry",
        "nav_msgs/Odometry",
        BASE_FRESH,
        LiveModel.set_odometry,
        thread=JOINT_STATES_THREAD,
        raw=True,  # its 13 numbers read from the bytes: rclpy's Odometry object cost ~100 µs a message
        newest_only=True,
        floating_only=True,
    ),
    Input(
        "imu",
        "sensor_msgs/Imu",
        BASE_FRESH + ", when no fresh base_odometry",
        LiveModel.set_imu,
        thread=JOINT_STATES_THREAD,
        newest_only=True,
        floating_only=True,
    ),
    Input(
        "desired_base_acceleration",
        "geometry_msgs/AccelStamped",
        "`acceleration_timeout` after arrival",
        LiveModel.set_base_acceleration,
        # at the state's rate from a planner: on the executor its wake-ups cost the node more than its
        # answers (py-spy, the real-time trot: 450 samples of executor against 8 in the callback)
        thread=JOINT_STATES_THREAD,
        newest_only=True,
        floating_only=True,
    ),
    Input(
        "contact_schedule",
        "trajectory_msgs/JointTrajectory",
        "until a newer valid one (no points: back to the gait parameters)",
        LiveModel.set_contact_schedule,
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
        floating = " (floating base)" if row.floating_only else ""
        cells = (
            topic_label(row) + floating,
            f"`{row.type_name}`",
            row.thread,
            row.taken_in_by,
            row.fresh,
            f"`{row.topic}`",
        )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(docs_table(), end="")
