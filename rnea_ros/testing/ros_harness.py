"""Start rnea_node through its own entry point and talk to it over loopback DDS.

Every node runs in its own namespace, so the tests of a module can share one
rclpy context and one private ROS_DOMAIN_ID. Every wait is bounded.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import rclpy
import yaml
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.parameter_client import AsyncParameterClient
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros.testing.domain import reserve_domain_id

ROOT = Path(__file__).resolve().parents[2]  # the checkout
DOMAIN_ID = str(reserve_domain_id())  # one per test process, in the safe range, held until it exits
ROS_ENV = {"ROS_DOMAIN_ID": DOMAIN_ID, "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
DESCRIPTION_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)


def at_rate(rate: float, seconds: float) -> Iterator[float]:
    """Yields the time since the start [s] of each tick at ``rate`` [Hz] for ``seconds``; a tick
    that comes late is not skipped (a publisher that was held up catches up)."""
    period = 1.0 / rate
    start = next_time = time.monotonic()
    while time.monotonic() - start < seconds:
        yield next_time - start
        next_time += period
        delay = next_time - time.monotonic()
        if delay > 0:
            time.sleep(delay)


def spin_until(node: Node, predicate: Callable[[], bool], timeout: float) -> bool:
    """Spins ``node`` until ``predicate()`` holds (True) or ``timeout`` s have passed (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rclpy.spin_once(node, timeout_sec=0.02)
        if predicate():
            return True
    return False


def init_rclpy() -> None:
    os.environ.update(ROS_ENV)
    rclpy.init()


def rclpy_running() -> Iterator[None]:
    """rclpy initialised on this process's domain until the generator ends: a module fixture's body."""
    init_rclpy()
    yield
    rclpy.try_shutdown()


class NodeProcess:
    """``python -m rnea_ros.node`` in namespace ``namespace`` with the given parameters."""

    def __init__(self, tmp_path: Path, namespace: str, parameters: dict, params_file: Path | None = None) -> None:
        """``params_file``: a parameters file of the user's (as written, any keys) instead of ``parameters``."""
        self.namespace = namespace
        params = params_file or tmp_path / f"{namespace}.yaml"
        if params_file is None:
            params.write_text(yaml.safe_dump({f"/{namespace}/rnea_node": {"ros__parameters": parameters}}))
        self.log = (tmp_path / f"{namespace}.log").open("w+")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rnea_ros.node", "--ros-args", "-r", f"__ns:=/{namespace}", "--params-file", params],
            env={**os.environ, **ROS_ENV},
            cwd=ROOT,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def output(self) -> str:
        if not self.log.closed:  # closed once stopped
            self.log.flush()
        return Path(self.log.name).read_text()

    def stop(self, sig: int = signal.SIGINT, timeout: float = 10.0) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=timeout)
            raise AssertionError(f"rnea_node ignored signal {sig}") from None
        finally:
            self.log.close()


class Client:
    """A test node in the rnea_node's namespace: publishes its inputs and records its outputs."""

    def __init__(self, namespace: str, joint_names: list[str], wrench_topic: str = "external_wrenches") -> None:
        self.node = Node("rnea_test_client", namespace=namespace)
        self.fully_qualified = f"/{namespace}/rnea_node"
        self.joint_names = list(joint_names)
        self.efforts: list[JointState] = []
        self.gravity: list[JointState] = []
        self.commands: list[Float64MultiArray] = []
        self.diagnostics: list[DiagnosticArray] = []
        node = self.node
        node.create_subscription(JointState, "feedforward_efforts", self.efforts.append, 100)
        node.create_subscription(JointState, "gravity_torques", self.gravity.append, 100)
        node.create_subscription(Float64MultiArray, "effort_commands", self.commands.append, 100)
        node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 100)
        self.joint_states = node.create_publisher(JointState, "joint_states", 10)
        self.desired = node.create_publisher(JointTrajectory, "desired_accelerations", 10)
        self.wrench = node.create_publisher(WrenchStamped, wrench_topic, 10)
        self.description = node.create_publisher(String, "robot_description", DESCRIPTION_QOS)
        self.stamp_sec = 1

    def close(self) -> None:
        self.node.destroy_node()

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        if msg.status and msg.status[0].hardware_id == self.fully_qualified:
            self.diagnostics.append(msg)

    def spin_for(self, seconds: float) -> None:
        self.spin_until(lambda: False, seconds)

    def spin_until(self, predicate, timeout: float = 10.0) -> bool:
        return spin_until(self.node, predicate, timeout)

    def send_state(self, q, qd=None, names=None, new_stamp: bool = True) -> JointState:
        self.stamp_sec += new_stamp
        velocity = [] if qd is None else list(map(float, qd))
        msg = JointState(name=list(names or self.joint_names), position=list(map(float, q)), velocity=velocity)
        msg.header.stamp.sec = self.stamp_sec
        self.joint_states.publish(msg)
        return msg

    def send_desired(self, qdd, q=None, qd=None, names=None) -> None:
        point = JointTrajectoryPoint(accelerations=list(map(float, qdd)))
        if q is not None:
            point.positions, point.velocities = list(map(float, q)), list(map(float, qd))
        self.desired.publish(JointTrajectory(joint_names=list(names or self.joint_names), points=[point]))

    def send_wrench(self, frame: str, wrench) -> None:
        msg = WrenchStamped()
        msg.header.frame_id = frame
        f, t = msg.wrench.force, msg.wrench.torque
        f.x, f.y, f.z, t.x, t.y, t.z = map(float, wrench)
        self.wrench.publish(msg)

    def result_for(self, stamp_sec: int, timeout: float = 5.0) -> JointState | None:
        found = self.spin_until(lambda: any(m.header.stamp.sec == stamp_sec for m in self.efforts), timeout)
        return next(m for m in self.efforts if m.header.stamp.sec == stamp_sec) if found else None

    def gravity_for(self, stamp_sec: int, timeout: float = 5.0) -> JointState | None:
        found = self.spin_until(lambda: any(m.header.stamp.sec == stamp_sec for m in self.gravity), timeout)
        return next(m for m in self.gravity if m.header.stamp.sec == stamp_sec) if found else None

    def efforts_at(self, q, qd=None, timeout: float = 2.0, attempts: int = 1) -> np.ndarray | None:
        """The node's answer to one joint_states (sent again up to ``attempts`` times); None if none came."""
        for _ in range(attempts):
            msg = self.send_state(q, qd if qd is not None else [0.0] * len(q))
            result = self.result_for(msg.header.stamp.sec, timeout)
            if result is not None:
                return np.array(result.effort)
        return None

    def wait_until_serving(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        zeros = [0.0] * len(self.joint_names)
        while time.monotonic() < deadline:
            if self.efforts_at(zeros, timeout=0.5) is not None:
                return
        raise AssertionError("rnea_node did not answer joint_states")

    def set_parameter(self, name: str, value, target: str | None = None) -> SetParametersResult:
        """Sets parameter ``name`` of node ``target`` (default: the node under test) as ``ros2 param set`` does."""
        parameters = AsyncParameterClient(self.node, target or self.fully_qualified)
        assert parameters.wait_for_services(10.0)
        future = parameters.set_parameters([Parameter(name, value=value)])
        assert self.spin_until(future.done, 10.0)
        return future.result().results[0]

    def set_parameters_atomically(self, values: dict, target: str | None = None) -> SetParametersResult:
        """Sets ``values`` in one atomic request (``ros2 param load`` does), all or none."""
        parameters = AsyncParameterClient(self.node, target or self.fully_qualified)
        assert parameters.wait_for_services(10.0)
        future = parameters.set_parameters_atomically([Parameter(k, value=v) for k, v in values.items()])
        assert self.spin_until(future.done, 10.0)
        return future.result().result

    def latest_diagnostic_values(self, timeout: float = 3.0) -> dict[str, str]:
        """The values of the next diagnostics message taken (it may have been made before the last
        answer: to wait for what an input changed, use ``diagnostic_says``)."""
        count = len(self.diagnostics)
        assert self.spin_until(lambda: len(self.diagnostics) > count, timeout), "no diagnostics"
        return _diagnostic_values(self.diagnostics[-1])

    def diagnostic_says(self, text: str, timeout: float = 5.0) -> bool:
        """Whether a diagnostics message taken from now on, within ``timeout``, has ``text`` in its
        message or among its keys. A message made before an input was handled can still be queued here
        after its answer (two topics, no order between them): the next one taken need not say it."""

        def says(message) -> bool:
            values = _diagnostic_values(message)
            return text in values["message"] or text in values

        count = len(self.diagnostics)
        return self.spin_until(lambda: any(says(m) for m in self.diagnostics[count:]), timeout)


def _diagnostic_values(message) -> dict:
    status = message.status[0]
    return {kv.key: kv.value for kv in status.values} | {"message": status.message, "level": status.level}


@contextmanager
def running_node(
    tmp_path: Path, namespace: str, parameters: dict, make_client: Callable[[str], Client], sig: int = signal.SIGINT
) -> Iterator[tuple[NodeProcess, Client]]:
    """A node and its test client; on leaving, the client is closed and the node must stop cleanly on ``sig``."""
    process = NodeProcess(tmp_path, namespace, parameters)
    client = make_client(namespace)
    try:
        yield process, client
    finally:
        client.close()
        exit_code = process.stop(sig)
    assert exit_code == 0, process.output()
