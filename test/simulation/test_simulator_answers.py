"""rnea_sim's part of the newcomer's answers (issue 36): a robot without a movable joint stops it with
the reason and exit code 1; with ``publish_clock`` a use_sim_time node beside it answers; steps at
zero effort after a command gap are on its /diagnostics and rnea_play's summary says so."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from rnea_ros.demo.closed_loop import start, stop
from rnea_ros.testing.reference import ARM_URDF
from rnea_ros.testing.ros_harness import ROOT, ROS_ENV, NodeProcess, init_rclpy, spin_until

pytestmark = [pytest.mark.ros]
PLAYER = [sys.executable, "-m", "rnea_ros.demo.player"]

ONLY_A_FIXED_JOINT = """<robot name="stick">
  <link name="base"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <link name="tool"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <joint name="weld" type="fixed"><parent link="base"/><child link="tool"/></joint>
</robot>"""


@pytest.fixture(scope="module", autouse=True)
def ros():
    init_rclpy()
    yield
    rclpy.try_shutdown()


class Listener:
    """A test node that keeps what the simulator and the node publish in ``namespace``."""

    def __init__(self, namespace: str) -> None:
        self.node = rclpy.create_node(f"listener_{namespace}")
        self.clock: list[float] = []
        self.states: list[float] = []
        self.answers = 0
        self.statuses: dict[str, dict[str, str]] = {}  # the newest values of each status name
        self.levels: dict[str, bytes] = {}
        node = self.node
        node.create_subscription(Clock, "/clock", lambda m: self.clock.append(seconds(m.clock)), 100)
        node.create_subscription(JointState, f"/{namespace}/joint_states", self._on_state, 100)
        node.create_subscription(JointState, f"/{namespace}/gravity_torques", self._on_answer, 100)
        node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 100)
        self.commands = node.create_publisher(Float64MultiArray, f"/{namespace}/effort_controller/commands", 10)

    def _on_state(self, msg: JointState) -> None:
        self.states.append(seconds(msg.header.stamp))

    def _on_answer(self, msg: JointState) -> None:
        self.answers += 1

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            self.statuses[status.name] = {kv.key: kv.value for kv in status.values}
            self.levels[status.name] = status.level

    def spin_until(self, predicate, timeout: float) -> bool:
        return spin_until(self.node, predicate, timeout)


def seconds(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


def simulator(tmp_path, namespace: str, **parameters) -> tuple[subprocess.Popen, object]:
    process = start("rnea_ros.simulation", namespace, parameters, tmp_path, ROS_ENV)
    return process, tmp_path / f"{namespace}_simulation.log"


@pytest.mark.parametrize("realtime", [True, False], ids=["real_time", "lockstep"])
def test_a_robot_without_a_movable_joint_stops_the_simulator_with_its_reason(tmp_path, realtime):
    process, log = simulator(
        tmp_path, f"fixed_{int(realtime)}", robot_description=ONLY_A_FIXED_JOINT, realtime=realtime
    )
    try:
        code = process.wait(timeout=60)
    finally:
        stop(process)
    text = log.read_text()
    assert code == 1, text[-1500:]
    assert "no movable joint" in text and "FATAL" in text and "Traceback" not in text, text[-1500:]


# the simulator at 1 kHz, the node and this process: 9-10.4 s of CPU on the wall clock (over the unmarked limit)
@pytest.mark.slow
@pytest.mark.parametrize("realtime", [True, False], ids=["real_time", "lockstep"])
def test_a_use_sim_time_node_answers_beside_the_simulator_publishing_clock(tmp_path, realtime):
    namespace = f"sim_time_{int(realtime)}"
    listener = Listener(namespace)
    # lockstep without a controller on its commands: a short wait per step
    sim, log = simulator(
        tmp_path, namespace, robot_description=ARM_URDF, realtime=realtime, publish_clock=True, lockstep_timeout=0.001
    )
    node = None
    try:
        assert listener.spin_until(lambda: len(listener.states) > 10, 60.0), log.read_text()[-1500:]
        node = NodeProcess(tmp_path, namespace, {"robot_description": ARM_URDF, "use_sim_time": True})
        answered = listener.spin_until(lambda: listener.answers >= 100, 90.0)
        assert answered, node.output()[-2000:]
        assert listener.spin_until(lambda: any(n.startswith("rnea_node") for n in listener.statuses), 10.0), (
            "the node's /diagnostics (a timer on its simulated clock) never came"
        )
        # /clock is the stamp of the states: the newest of each within a few steps of the other
        assert listener.clock and abs(listener.clock[-1] - listener.states[-1]) < 0.05
    finally:
        code = node.stop() if node is not None else 0
        stop(sim)
        listener.node.destroy_node()
    assert code == 0


@pytest.mark.slow
def test_zero_effort_after_a_command_gap_is_on_diagnostics_and_rnea_play_says_so(tmp_path):
    namespace = "zero_effort"
    listener = Listener(namespace)
    arm = [f"joint{k}" for k in range(1, 8)]
    parameters = {"robot_description": ARM_URDF, "realtime": True, "command_timeout": 0.1, "joints": arm}
    sim, log = simulator(tmp_path, namespace, **parameters)
    try:
        assert listener.spin_until(lambda: listener.node.count_subscribers(listener.commands.topic_name) > 0, 60.0)
        player = subprocess.Popen(
            [*PLAYER, "--seconds", "1", "--amplitude", "0.01", "--ros-args", "-r", f"__ns:=/{namespace}"],
            env={**os.environ, **ROS_ENV},
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        time.sleep(0.5)
        listener.commands.publish(Float64MultiArray(data=[0.0] * 7))  # one command, then none: zero effort
        listener.spin_until(lambda: int(listener.statuses.get("rnea_sim", {}).get("zero_effort_steps", 0)) > 0, 20.0)
        output, _ = player.communicate(timeout=60)
    finally:
        stop(sim)
        listener.node.destroy_node()
    values = listener.statuses.get("rnea_sim", {})
    assert int(values.get("zero_effort_steps", 0)) > 0, (values, log.read_text()[-1500:])
    assert listener.levels["rnea_sim"] == DiagnosticStatus.WARN
    assert "RMS tracking error" in output, output
    assert "hint: rnea_sim applied zero effort for" in output, output
