"""Benchmark of rnea_node against a trivial echo node, over loopback DDS, in one run.

    python benchmarks/node.py [--seconds 6] [--rounds 3]

For each robot (the bundled arm, the Talos humanoid) and rate (1 kHz, 2 kHz), a
publisher process sends stamped joint_states (stamp = wall clock just before
publish); this process listens to feedforward_efforts and records, per message,
arrival time minus stamp. The same run is made against an echo node that
republishes each joint_states as a JointState of the same size (same QoS), so the
difference is what rnea_node adds. Reported: delivered %, p50/p99 latency, the
target node's CPU (utime + stime over wall time).

    python benchmarks/node.py --against PATH --rounds 40 --batch 500    # as the figure was measured

only times, in process, the node's answer to one joint_states (read, computed, effort_commands filled)
in this tree and in another (``against.py``: interleaved, the ratio current / before); writes
docs/figures/joint_states_answer_against.md. Over DDS the answer's own time is a few percent of
the latency and drowned in its spread.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import against  # benchmarks/against.py (this script's folder is on the path)
import numpy as np
import rclpy
import rclpy.executors
import rclpy.task
import yaml
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from sensor_msgs.msg import JointState

from rnea_ros import RobotModel
from rnea_ros.plumbing.subscription import DedicatedSubscription
from rnea_ros.testing.reference import EXAMPLE_ARM, robot_urdf
from rnea_ros.testing.ros_harness import ROS_ENV, at_rate

ROOT = Path(__file__).resolve().parents[1]

ROBOTS = {
    "example arm": (EXAMPLE_ARM.read_text(), [1000, 2000]),
    "Talos humanoid": (robot_urdf("talos_data/robots/talos_full_v2.urdf", strip_mimic=True), [1000, 2000]),
}
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


# --- the two processes this benchmark starts -----------------------------------------------------
def run_echo() -> None:
    """The baseline: republish every joint_states as a JointState with effort filled, nothing else."""
    rclpy.init()
    node = Node("echo_node")
    publisher = node.create_publisher(JointState, "feedforward_efforts", 10)

    def echo(msg: JointState) -> None:
        publisher.publish(
            JointState(
                header=msg.header, name=msg.name, position=msg.position, velocity=msg.velocity, effort=msg.position
            )
        )

    node.create_subscription(JointState, "joint_states", echo, 10)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        rclpy.try_shutdown()


def run_publisher(rate: float, seconds: float, names: list[str]) -> None:
    """Stamped joint_states of a smooth motion at ``rate``; prints how many were sent."""
    rclpy.init()
    node = Node("bench_publisher")
    publisher = node.create_publisher(JointState, "joint_states", 10)
    n = len(names)
    amplitude, omega = np.linspace(0.5, 0.2, n), np.linspace(1.0, 3.0, n)
    msg = JointState(name=names)
    deadline = time.monotonic() + 10.0
    while publisher.get_subscription_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.01)  # messages sent before the target has matched would be lost to discovery
    time.sleep(0.5)
    sent = 0
    for t in at_rate(rate, seconds):
        msg.position = (amplitude * np.sin(omega * t)).tolist()
        msg.velocity = (amplitude * omega * np.cos(omega * t)).tolist()
        now_ns = time.time_ns()
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(now_ns, 1_000_000_000)
        publisher.publish(msg)
        sent += 1
    print(sent, flush=True)
    node.destroy_node()
    rclpy.try_shutdown()


# --- the orchestration ---------------------------------------------------------------------------------
def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def start_target(kind: str, urdf: str, workdir: Path) -> subprocess.Popen:
    env = {**os.environ, **ROS_ENV}
    if kind == "echo":
        return subprocess.Popen([sys.executable, __file__, "--echo"], env=env, stdout=subprocess.DEVNULL)
    params = workdir / "params.yaml"
    params.write_text(yaml.safe_dump({"rnea_node": {"ros__parameters": {"robot_description": urdf}}}))
    command = [sys.executable, "-m", "rnea_ros.node", "--ros-args", "--params-file", str(params)]
    return subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Listener:
    def __init__(self) -> None:
        self.node = Node("bench_listener")
        self.executor = rclpy.executors.SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.latency: dict[int, float] = {}
        # Served by its own thread like rnea_node's joint_states, so that the listener's own
        # executor overhead does not weigh on the figures of either node.
        self.efforts = DedicatedSubscription(self.node, JointState, "feedforward_efforts", self._on_efforts, 100)
        self.efforts.start()

    def _on_efforts(self, msg: JointState) -> None:
        arrival = time.time_ns()
        stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        self.latency[stamp] = (arrival - stamp) * 1e-9

    def spin_for(self, seconds: float) -> None:
        done = rclpy.task.Future()
        timer = self.node.create_timer(seconds, lambda: done.set_result(True))
        self.executor.spin_until_future_complete(done, timeout_sec=seconds + 5.0)
        self.node.destroy_timer(timer)

    def spin_while(self, process: subprocess.Popen, timeout: float) -> None:
        """Spin until ``process`` has exited, then 0.5 s more for the messages in flight."""
        done = rclpy.task.Future()
        timer = self.node.create_timer(0.1, lambda: process.poll() is not None and done.set_result(True))
        self.executor.spin_until_future_complete(done, timeout_sec=timeout)
        self.node.destroy_timer(timer)
        self.spin_for(0.5)


def wait_until_answering(listener: Listener, names: list[str], timeout: float = 60.0) -> None:
    """Publish single messages until the target answers (discovery and model loading done)."""
    publisher = listener.node.create_publisher(JointState, "joint_states", 10)
    msg = JointState(name=names, position=[0.0] * len(names), velocity=[0.0] * len(names))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(time.time_ns(), 1_000_000_000)
        publisher.publish(msg)
        listener.spin_for(0.2)
        if listener.latency:
            listener.node.destroy_publisher(publisher)
            listener.latency.clear()
            return
    raise RuntimeError("the target node did not answer within 60 s")


def measure(kind: str, urdf: str, names: list[str], rate: int, seconds: float, workdir: Path) -> dict:
    target = start_target(kind, urdf, workdir)
    listener = Listener()
    try:
        wait_until_answering(listener, names)
        listener.spin_for(1.0)  # let the target's first-answer burst settle
        listener.latency.clear()
        cpu_start, wall_start = cpu_seconds(target.pid), time.monotonic()
        publisher = subprocess.Popen(
            [sys.executable, __file__, "--publish", str(rate), str(seconds), *names],
            env={**os.environ, **ROS_ENV},
            stdout=subprocess.PIPE,
            text=True,
        )
        listener.spin_while(publisher, timeout=seconds + 30.0)
        cpu = (cpu_seconds(target.pid) - cpu_start) / (time.monotonic() - wall_start)
        sent = int(publisher.stdout.read().strip())
    finally:
        listener.efforts.destroy()
        listener.executor.shutdown()
        listener.node.destroy_node()
        target.send_signal(signal.SIGINT)
        try:
            target.wait(timeout=10)
        except subprocess.TimeoutExpired:
            target.kill()
    latency = np.array(list(listener.latency.values())) * 1e6
    return {
        "delivered": 100.0 * len(latency) / sent,
        "p50": float(np.percentile(latency, 50)) if len(latency) else float("nan"),
        "p99": float(np.percentile(latency, 99)) if len(latency) else float("nan"),
        "cpu": 100.0 * cpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=6.0, help="measured seconds per run")
    parser.add_argument("--rounds", type=int, default=3, help="runs per node and case, interleaved")
    parser.add_argument("--echo", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--publish", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--against", type=Path, help="another tree: time the in-process answer against its")
    parser.add_argument("--batch", type=int, default=1000, help="--against: answers per batch")
    args = parser.parse_args()
    if args.against:
        what = "a JointState read, the outputs computed, effort_commands filled (publishing not included)"
        label = "joint_states (example arm, PD + inverse dynamics, a stamped desired trajectory)"
        return against.measure_and_write("joint_states", label, what, args.against, args.rounds, args.batch)
    if args.echo:
        return run_echo()
    if args.publish:
        rate, seconds, *names = args.publish
        return run_publisher(float(rate), float(seconds), names)

    os.environ.update(ROS_ENV)
    rclpy.init()
    workdir = Path(os.environ.get("TMPDIR", "/tmp")) / f"rnea_node_bench_{os.getpid()}"
    workdir.mkdir(exist_ok=True)
    print(
        f"rnea_node vs echo node: {args.rounds} interleaved rounds of {args.seconds:.0f} s per node and case; "
        f"loopback DDS, {os.cpu_count()} CPUs. Per node: worst delivered %, median p50/p99/CPU over rounds."
    )
    print(f"{'robot':<22}{'rate':>7}  {'node':<10}{'delivered':>10}{'p50 µs':>9}{'p99 µs':>9}{'CPU %':>7}")
    for robot, (urdf, rates) in ROBOTS.items():
        names = RobotModel.from_urdf(urdf).joint_names
        for rate in rates:
            runs: dict[str, list[dict]] = {"echo": [], "rnea_node": []}
            for round_ in range(args.rounds):  # alternate who goes first: drifts weigh on both alike
                for kind in ("echo", "rnea_node") if round_ % 2 == 0 else ("rnea_node", "echo"):
                    runs[kind].append(measure(kind, urdf, names, rate, args.seconds, workdir))
            summary = {kind: summarize(r) for kind, r in runs.items()}
            for kind, r in summary.items():
                print(
                    f"{robot + f' ({len(names)})':<22}{rate:>6}Hz  {kind:<10}{r['delivered']:>9.1f}%"
                    f"{r['p50']:>9.0f}{r['p99']:>9.0f}{r['cpu']:>7.0f}"
                )
            added = [n["p50"] - e["p50"] for n, e in zip(runs["rnea_node"], runs["echo"], strict=True)]
            print(
                f"{'':<31}added p50 latency over echo: median {statistics.median(added):.0f} µs "
                f"(rounds: {', '.join(f'{a:.0f}' for a in added)})"
            )
    rclpy.try_shutdown()


def summarize(runs: list[dict]) -> dict:
    median = {key: statistics.median(r[key] for r in runs) for key in ("p50", "p99", "cpu")}
    return {"delivered": min(r["delivered"] for r in runs), **median}


if __name__ == "__main__":
    main()
