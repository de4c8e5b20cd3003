"""Soak test of rnea_node: joint_states at 2 kHz with robot_description hot swaps, over loopback DDS.

    python benchmarks/soak.py [--seconds 600] [--rate 2000] [--swap-period 3]   (this module's main)

The node gets its model from the robot_description topic. Every ``swap-period``
seconds a new description is published, cycling through: the example arm, the arm
with a heavier link, and a broken description (which must be refused while the
previous model keeps working). Every output is checked against both models: the
gravity torques must equal g(q) of one of them and the feed-forward efforts
ID(q, q̇, 0) of the same one (a "torn" output matches neither). Reported: messages
in and out, drops, rejected counts (from /diagnostics), the node's RSS at start and
end, p50/p99 latency. ``run_soak`` is also used by the quick test suite (20 s).

``flood=N``: at a third of the run, N valid descriptions of ~1.3 MB (the arm with 9,000
massless links on fixed joints: the same dynamics, ~2 s to build each) are sent back to
back; the worst latency and the node's peak RSS (sampled every 0.1 s) during the run
show what such a flood costs the joint_states stream.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from rnea_ros import RobotModel
from rnea_ros.demo.example_robot import example_arm_urdf, smooth_trajectory
from rnea_ros.plumbing.subscription import DedicatedSubscription
from rnea_ros.testing.domain import reserve_domain_id

DESCRIPTION_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
BROKEN_URDF = "<robot name='broken'><link name='a'/><joint name='j' type='revolute'><parent link='a'/></joint>"


FLOOD_QOS = QoSProfile(depth=64, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)


def padded_description(urdf: str, links: int = 9000) -> str:
    """``urdf`` with ``links`` massless links on fixed joints below its first link: same dynamics."""
    first = urdf.split('<link name="', 1)[1].split('"', 1)[0]
    extra = "".join(
        f'<link name="pad{k}"/><joint name="pad_joint{k}" type="fixed"><parent link="{first}"/>'
        f'<child link="pad{k}"/><origin xyz="0 0 {k * 1e-4:.4f}"/></joint>'
        for k in range(links)
    )
    return urdf.replace("</robot>", extra + "</robot>")


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


class SoakClient:
    """Publishes joint_states and descriptions; checks every output against the two models."""

    def __init__(self, models: dict[str, RobotModel], context: rclpy.Context) -> None:
        self.node = Node("soak_client", context=context)
        self.models = list(models.values())
        self.names = self.models[0].joint_names
        self.pub_states = self.node.create_publisher(JointState, "joint_states", 10)
        self.pub_description = self.node.create_publisher(String, "robot_description", DESCRIPTION_QOS)
        self.pub_flood = self.node.create_publisher(String, "robot_description", FLOOD_QOS)
        self.efforts = DedicatedSubscription(self.node, JointState, "feedforward_efforts", self._on_efforts, 100)
        self.gravity = DedicatedSubscription(self.node, JointState, "gravity_torques", self._on_gravity, 100)
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 10)
        self.lock = threading.Lock()
        self.sent = 0
        self.latency: list[float] = []
        self.efforts_received = 0
        self.gravity_received = 0
        self.torn: list[str] = []
        self.non_finite = 0
        self.diagnostics: dict[str, str] = {}

    def _matching_model(self, msg: JointState, values) -> int | None:
        q = np.array(msg.position)
        for k, model in enumerate(self.models):
            if np.allclose(values(model, q, np.array(msg.velocity)), msg.effort, rtol=1e-12, atol=1e-12):
                return k
        return None

    def _on_efforts(self, msg: JointState) -> None:
        arrival = time.time_ns()
        stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        ok = np.all(np.isfinite(msg.effort))
        match = self._matching_model(msg, _node_torques) if ok else None
        with self.lock:
            self.efforts_received += 1
            self.latency.append((arrival - stamp) * 1e-9)
            self.non_finite += not ok
            if match is None and ok:
                self.torn.append(f"efforts at stamp {stamp} match no model")

    def _on_gravity(self, msg: JointState) -> None:
        ok = np.all(np.isfinite(msg.effort))
        match = self._matching_model(msg, lambda m, q, qd: m.gravity_torques(q)) if ok else None
        with self.lock:
            self.gravity_received += 1
            self.non_finite += not ok
            if match is None and ok:
                self.torn.append("gravity matches no model")

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            if status.name.startswith("rnea_node"):
                self.diagnostics = {kv.key: kv.value for kv in status.values} | {"message": status.message}

    def publish_state(self, t: float) -> None:
        q, qd, _ = (x[0] for x in smooth_trajectory(len(self.names), np.array([t])))
        msg = JointState(name=self.names, position=q.tolist(), velocity=qd.tolist())
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(time.time_ns(), 1_000_000_000)
        self.pub_states.publish(msg)
        self.sent += 1


def _node_counts(diagnostics: dict[str, str]) -> tuple[int, int]:
    """(joint_states received, outputs published) so far, from the node's last diagnostics."""
    return int(diagnostics.get("joint_states total", 0)), int(diagnostics.get("published", 0))


def _node_torques(model: RobotModel, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """What rnea_node publishes with its defaults: the rigid bodies (urdf_joint_dynamics false)."""
    return model.inverse_dynamics(q, qd, np.zeros(model.nv))


def start_node(env: dict) -> subprocess.Popen:
    command = [sys.executable, "-m", "rnea_ros.node", "--ros-args", "-p", "state_timeout:=1.0"]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def run_soak(
    seconds: float, rate: float = 2000.0, swap_period: float = 3.0, domain_id: int | None = None, flood: int = 0
) -> dict:
    """Runs the soak; returns the figures (see the module docstring)."""
    domain = domain_id if domain_id is not None else reserve_domain_id()
    env = {**os.environ, "ROS_DOMAIN_ID": str(domain), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    saved = {k: os.environ.get(k) for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")}
    os.environ.update({k: env[k] for k in saved})  # read by rclpy.init below
    heavy = example_arm_urdf().replace('<mass value="3.5"/>', '<mass value="7.0"/>', 1)
    descriptions = [example_arm_urdf(), heavy, BROKEN_URDF]
    models = {text: RobotModel.from_urdf(text) for text in descriptions[:2]}
    node_process = start_node(env)
    context = rclpy.Context()  # its own: the caller may have rclpy initialised already
    rclpy.init(context=context)
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    client = SoakClient(models, context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(client.node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    client.efforts.start()
    client.gravity.start()
    try:
        client.pub_description.publish(String(data=descriptions[0]))
        deadline = time.monotonic() + 60
        while client.efforts_received == 0 and time.monotonic() < deadline and node_process.poll() is None:
            client.publish_state(0.0)
            time.sleep(0.05)
        if client.efforts_received == 0:
            raise RuntimeError("rnea_node never answered")
        time.sleep(2.5)  # until a diagnostics message has counted the warm-up
        with client.lock:
            client.sent = client.efforts_received = client.gravity_received = 0
            client.latency.clear()
        node_counts_start = _node_counts(client.diagnostics)
        rss_start = rss_bytes(node_process.pid)
        start = next_time = time.monotonic()
        next_swap, swaps = start + swap_period, 0
        flood_at, flood_description = start + seconds / 3, padded_description(descriptions[0]) if flood else ""
        next_rss, rss_peak = start, rss_start
        while (now := time.monotonic()) - start < seconds and node_process.poll() is None:
            if now >= next_rss:
                rss_peak, next_rss = max(rss_peak, rss_bytes(node_process.pid)), now + 0.1
            if flood and now >= flood_at:
                for _ in range(flood):
                    client.pub_flood.publish(String(data=flood_description))
                flood = 0
            if now >= next_swap:
                swaps += 1
                client.pub_description.publish(String(data=descriptions[swaps % len(descriptions)]))
                next_swap += swap_period
            client.publish_state(now - start)
            next_time += 1.0 / rate
            if (delay := next_time - time.monotonic()) > 0:
                time.sleep(delay)
        time.sleep(2.5)  # the last outputs and one more diagnostics message
        node_counts_end = _node_counts(client.diagnostics)
        alive = node_process.poll() is None
        rss_end = rss_bytes(node_process.pid) if alive else 0
    finally:
        client.efforts.destroy()
        client.gravity.destroy()
        executor.shutdown()
        client.node.destroy_node()
        rclpy.try_shutdown(context=context)
        node_process.send_signal(signal.SIGINT)
        try:
            output, _ = node_process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            node_process.kill()
            output, _ = node_process.communicate()
    latency = np.array(client.latency) * 1e6
    rejected = {k.split(": ", 1)[1]: int(v) for k, v in client.diagnostics.items() if k.startswith("rejected: ")}
    return {
        "seconds": seconds,
        "rate_hz": rate,
        "description_swaps": swaps,
        "joint_states_sent": client.sent,
        "efforts_received": client.efforts_received,
        "gravity_received": client.gravity_received,
        "dropped": client.sent - client.efforts_received,
        # where: before the node's callback (its queue), or between its output and this client
        "node_received": node_counts_end[0] - node_counts_start[0],
        "node_published": node_counts_end[1] - node_counts_start[1],
        "torn_outputs": len(client.torn),
        "non_finite_outputs": client.non_finite,
        "rejected": rejected,
        "node_alive_at_end": alive,
        "node_exit_code": node_process.returncode,
        "traceback_in_log": "Traceback" in output,
        "rss_start_mb": rss_start / 2**20,
        "rss_end_mb": rss_end / 2**20,
        "rss_growth_mb": (rss_end - rss_start) / 2**20,
        "rss_peak_growth_mb": (rss_peak - rss_start) / 2**20,
        "latency_p50_us": float(np.percentile(latency, 50)) if len(latency) else None,
        "latency_p99_us": float(np.percentile(latency, 99)) if len(latency) else None,
        "latency_max_us": float(latency.max()) if len(latency) else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--rate", type=float, default=2000.0)
    parser.add_argument("--swap-period", type=float, default=3.0)
    parser.add_argument("--flood", type=int, default=0, help="descriptions sent back to back at a third of the run")
    args = parser.parse_args()
    print(json.dumps(run_soak(args.seconds, args.rate, args.swap_period, flood=args.flood), indent=2))


if __name__ == "__main__":
    main()
