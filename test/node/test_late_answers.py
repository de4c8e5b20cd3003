"""A trajectory answer that would leave after its start stamp, over DDS: rnea_node stopped by SIGSTOP
while the trajectory waits for it, resumed after its stamp has passed: the answer is re-stamped to
now (a JTC would otherwise jump to where the trajectory is by then), counted in /diagnostics'
``late_answers`` with a WARN, and said once on the console. On time and stamped zero: unchanged."""

from __future__ import annotations

import signal
import time

import numpy as np
import pytest
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.node import Node
from trajectory_msgs.msg import JointTrajectory

from rnea_ros.demo.closed_loop import planned_trajectory, start, stop
from rnea_ros.demo.demo import START
from rnea_ros.motion.multisine import fast_multisine
from rnea_ros.testing.reference import ARM_URDF
from rnea_ros.testing.ros_harness import ROS_ENV, init_rclpy, spin_until

pytestmark = pytest.mark.ros

NS = "late"
JOINTS = [*(f"joint{i}" for i in range(1, 8)), "finger_left_joint"]


def stamp_ns(msg) -> int:
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


class Planner:
    def __init__(self) -> None:
        self.node = Node("planner", namespace=NS)
        self.answers: list[JointTrajectory] = []
        self.diagnostics: list = []
        self.publisher = self.node.create_publisher(JointTrajectory, "joint_trajectory", 10)
        self.node.create_subscription(JointTrajectory, "feedforward_trajectory", self.answers.append, 10)
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 10)

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        self.diagnostics += [status for status in msg.status if status.hardware_id == f"/{NS}/rnea_node"]

    def now_ns(self) -> int:
        return self.node.get_clock().now().nanoseconds

    def send(self, stamp: int) -> JointTrajectory:
        """A trajectory stamped ``stamp`` [ns] (0: none); its answer."""
        planned = planned_trajectory(JOINTS, fast_multisine(np.array(START), moving=7), 1.0, spacing=0.1)
        planned.header.stamp.sec, planned.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
        answered = len(self.answers)
        self.publisher.publish(planned)
        assert spin_until(self.node, lambda: len(self.answers) > answered, 20.0)
        return self.answers[-1]

    def values(self) -> dict[str, str]:
        """The newest /diagnostics values, after waiting for one more report."""
        reports = len(self.diagnostics)
        assert spin_until(self.node, lambda: len(self.diagnostics) > reports, 5.0)
        return {value.key: value.value for value in self.diagnostics[-1].values}


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    init_rclpy()
    folder = tmp_path_factory.mktemp("late")
    process = start("rnea_ros.node", NS, {"robot_description": ARM_URDF}, folder, ROS_ENV)
    planner = Planner()
    answers = f"/{NS}/feedforward_trajectory"
    ready = lambda: planner.publisher.get_subscription_count() > 0 and planner.node.count_publishers(answers)  # noqa: E731
    assert spin_until(planner.node, ready, 30.0)
    yield planner, process, folder / f"{NS}_node.log"
    planner.node.destroy_node()
    assert stop(process) == 0
    rclpy.try_shutdown()


def test_an_answer_on_time_or_stamped_zero_keeps_its_stamp(rig):
    planner, _, _ = rig
    stamp = planner.now_ns() + 2_000_000_000
    assert stamp_ns(planner.send(stamp)) == stamp
    assert stamp_ns(planner.send(0)) == 0
    assert planner.values()["late_answers"] == "0"


def test_an_answer_after_its_start_stamp_is_restamped_counted_and_warned(rig):
    planner, process, log = rig
    process.send_signal(signal.SIGSTOP)  # the node cannot answer ...
    try:
        stamp = planner.now_ns() + 200_000_000
        planned_at = time.monotonic()
        answered = len(planner.answers)
        planned = planned_trajectory(JOINTS, fast_multisine(np.array(START), moving=7), 1.0, spacing=0.1)
        planned.header.stamp.sec, planned.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
        planner.publisher.publish(planned)
        spin_until(planner.node, lambda: False, 1.0)  # ... until 0.8 s after the trajectory's start
    finally:
        resumed = planner.now_ns()
        process.send_signal(signal.SIGCONT)
    assert len(planner.answers) == answered, "answered while stopped"
    assert spin_until(planner.node, lambda: len(planner.answers) > answered, 20.0)
    answer = stamp_ns(planner.answers[-1])
    assert resumed <= answer <= planner.now_ns(), (answer - stamp) * 1e-9  # now, when it left
    assert time.monotonic() - planned_at > 1.0
    assert planner.answers[-1].points[-1].time_from_start.sec == 1  # the trajectory itself unchanged
    values = planner.values()
    assert values["late_answers"] == "1"
    late = [status for status in planner.diagnostics if "after their start stamp" in status.message]
    assert late and late[0].level == b"\x01"  # WARN
    assert "re-stamped to now" in log.read_text()
