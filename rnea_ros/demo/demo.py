"""Main job: rnea_node on the bundled example arm, driven by a demo publisher.

    rnea_demo [--seconds 6] [--rate 200] [--output rnea_demo.png]

Starts ``rnea_node`` (through its own entry point) in the namespace ``/rnea_demo`` so
that it cannot meet a real robot's topics, then publishes joint states of a smooth
trajectory, its accelerations on ``desired_accelerations`` and, during the middle
third, a 20 N push on the tool (``tcp``). Shows a live table of what the node
publishes, writes a PNG of feed-forward vs gravity torque per joint, checks the
node's gravity torques against the library, and stops by itself.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import rclpy
import yaml
from geometry_msgs.msg import WrenchStamped
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros.demo.example_robot import example_arm_urdf, smooth_trajectory
from rnea_ros.dynamics.model import RobotModel

NAMESPACE = "rnea_demo"
TOOL_PUSH = (0.0, 0.0, -20.0, 0.0, 0.0, 0.0)  # the environment pushes the tool back along its z axis, N


def _fixed(x: float, width: int) -> str:
    """x with 3 decimals, right-aligned; never "-0.000"."""
    text = f"{x:.3f}"
    return f"{'0.000' if text == '-0.000' else text:>{width}}"


class DemoPublisher(Node):
    """Publishes the demo inputs at ``rate`` and records the node's outputs."""

    def __init__(self, model: RobotModel, seconds: float, rate: float) -> None:
        super().__init__("demo_publisher", namespace=NAMESPACE)
        self.names, self.seconds = model.joint_names, seconds
        self.pub_states = self.create_publisher(JointState, "joint_states", 10)
        self.pub_desired = self.create_publisher(JointTrajectory, "desired_accelerations", 10)
        self.pub_wrench = self.create_publisher(WrenchStamped, "external_wrenches", 10)
        self.create_subscription(JointState, "feedforward_efforts", self._on_efforts, 100)
        self.create_subscription(JointState, "gravity_torques", self._on_gravity, 100)
        self.sent: dict[int, np.ndarray] = {}  # stamp (ns) -> q
        self.efforts: dict[int, np.ndarray] = {}
        self.gravity: dict[int, np.ndarray] = {}
        self.start: float | None = None
        self.timer = self.create_timer(1.0 / rate, self._publish)

    def elapsed(self) -> float:
        return 0.0 if self.start is None else time.monotonic() - self.start

    def pushing(self, t: float) -> bool:
        return self.seconds / 3 <= t < 2 * self.seconds / 3

    def _publish(self) -> None:
        if self.start is None:
            if self.pub_states.get_subscription_count() == 0:
                return  # wait until the node is there
            self.start = time.monotonic()
        t = self.elapsed()
        q, qd, qdd = (x[0] for x in smooth_trajectory(len(self.names), np.array([t])))
        stamp = self.get_clock().now()
        desired = JointTrajectory(joint_names=self.names, points=[JointTrajectoryPoint(accelerations=qdd.tolist())])
        desired.header.stamp = stamp.to_msg()
        self.pub_desired.publish(desired)
        if self.pushing(t):
            wrench = WrenchStamped()
            wrench.header.stamp, wrench.header.frame_id = stamp.to_msg(), "tcp"
            force, torque = wrench.wrench.force, wrench.wrench.torque
            force.x, force.y, force.z, torque.x, torque.y, torque.z = TOOL_PUSH
            self.pub_wrench.publish(wrench)
        state = JointState(name=self.names, position=q.tolist(), velocity=qd.tolist())
        state.header.stamp = stamp.to_msg()
        self.pub_states.publish(state)
        self.sent[stamp.nanoseconds] = q

    def _on_efforts(self, msg: JointState) -> None:
        self.efforts[_nanoseconds(msg.header.stamp)] = np.array(msg.effort)

    def _on_gravity(self, msg: JointState) -> None:
        self.gravity[_nanoseconds(msg.header.stamp)] = np.array(msg.effort)


def _nanoseconds(stamp) -> int:
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def start_node(workdir: Path) -> subprocess.Popen:
    params = workdir / "rnea_demo.yaml"
    # A short wrench timeout so that the push ends when the demo stops sending it.
    parameters = {"robot_description": example_arm_urdf(), "wrench_timeout": 0.05, "acceleration_timeout": 0.05}
    params.write_text(yaml.safe_dump({f"/{NAMESPACE}/rnea_node": {"ros__parameters": parameters}}))
    command = [sys.executable, "-m", "rnea_ros.node", "--ros-args", "-r", f"__ns:=/{NAMESPACE}"]
    log = (workdir / "rnea_node.log").open("w")
    return subprocess.Popen([*command, "--params-file", str(params)], stdout=log, stderr=subprocess.STDOUT)


class LiveTable:
    """The latest output per joint, redrawn in place on a terminal, printed once a second otherwise."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.tty = sys.stdout.isatty()
        self.lines_drawn = 0
        self.last_print = -1.0

    def show(self, demo: DemoPublisher) -> None:
        t = demo.elapsed()
        if not self.tty and t - self.last_print < 1.0:
            return
        self.last_print = t
        if not demo.efforts:
            return
        complete = [stamp for stamp in demo.efforts if stamp in demo.gravity and stamp in demo.sent]
        if not complete:
            return
        stamp = max(complete)  # the newest state whose outputs have all arrived: no blank column
        tau, gravity, q = demo.efforts[stamp], demo.gravity[stamp], demo.sent[stamp]
        push = "20 N push on tcp" if demo.pushing(t) else "no wrench"
        lines = [f"t = {t:4.1f} s   received {len(demo.efforts)} of {len(demo.sent)}   ({push})"]
        lines.append(f"{'joint':<20}{'q [rad|m]':>11}{'feed-forward τ [N·m|N]':>24}{'gravity g [N·m|N]':>19}")
        for j, name in enumerate(self.names):
            lines.append(f"{name:<20}{_fixed(q[j], 11)}{_fixed(tau[j], 24)}{_fixed(gravity[j], 19)}")
        if self.tty and self.lines_drawn:
            sys.stdout.write(f"\x1b[{self.lines_drawn}A")
        sys.stdout.write("\n".join(f"{line}\x1b[K" if self.tty else line for line in lines) + "\n")
        sys.stdout.flush()
        self.lines_drawn = len(lines)


def write_plot(demo: DemoPublisher, start_ns: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stamps = sorted(set(demo.efforts) & set(demo.gravity))
    t = (np.array(stamps) - start_ns) * 1e-9
    tau = np.array([demo.efforts[s] for s in stamps])
    gravity = np.array([demo.gravity[s] for s in stamps])
    n = len(demo.names)
    fig, axes = plt.subplots(n, 1, figsize=(9, 1.6 * n + 1), sharex=True)
    for j, ax in enumerate(np.atleast_1d(axes)):
        ax.plot(t, tau[:, j], label="feed-forward τ")
        ax.plot(t, gravity[:, j], "--", label="gravity g(q)")
        ax.axvspan(demo.seconds / 3, 2 * demo.seconds / 3, color="0.9", zorder=0)
        unit = "N" if j == n - 1 else "N·m"
        ax.set_ylabel(f"{demo.names[j]}\n[{unit}]", fontsize=8)
    axes[0].legend(loc="upper right", fontsize=8)
    axes[0].set_title("rnea_node on the example arm (shaded: 20 N push on the tool)")
    axes[-1].set_xlabel("time [s]")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def gravity_error(demo: DemoPublisher, model: RobotModel) -> tuple[int, float]:
    """How far the node's gravity torques are from the library's on the states sent."""
    stamps = [s for s in demo.gravity if s in demo.sent]
    if not stamps:
        return 0, float("nan")
    q = np.array([demo.sent[s] for s in stamps])
    node = np.array([demo.gravity[s] for s in stamps])
    return len(stamps), float(np.max(np.abs(node - model.gravity_torques(q))))


def run(seconds: float, rate: float, output: Path) -> int:
    model = RobotModel.from_urdf(example_arm_urdf())
    with tempfile.TemporaryDirectory(prefix="rnea_demo_") as tmp:
        node_process = start_node(Path(tmp))
        rclpy.init()
        demo = DemoPublisher(model, seconds, rate)
        table = LiveTable(model.joint_names)
        print(f"rnea_demo: rnea_node on the example arm in /{NAMESPACE}, {rate:.0f} Hz for {seconds:.0f} s")
        deadline = time.monotonic() + seconds + 60.0  # includes the node's start-up
        try:
            while demo.elapsed() < seconds and time.monotonic() < deadline and node_process.poll() is None:
                rclpy.spin_once(demo, timeout_sec=0.01)
                table.show(demo)
            end = time.monotonic() + 0.5
            while time.monotonic() < end:  # the last answers in flight
                rclpy.spin_once(demo, timeout_sec=0.01)
        except (KeyboardInterrupt, ExternalShutdownException):
            print("interrupted")
        finally:
            start_ns = min(demo.sent) if demo.sent else 0
            demo.destroy_node()
            rclpy.try_shutdown()
            node_process.send_signal(signal.SIGINT)
            try:
                node_process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                node_process.kill()
            node_log = (Path(tmp) / "rnea_node.log").read_text()
    if not demo.efforts:
        print("rnea_node published nothing. Its log:\n" + node_log)
        return 1
    write_plot(demo, start_ns, output)
    checked, error = gravity_error(demo, model)
    print(f"\nreceived {len(demo.efforts)} feed-forward messages for {len(demo.sent)} joint states sent")
    print(f"gravity torques of {checked} messages vs the library: max difference {error:.1e} N·m")
    print(f"plot written to {output}")
    return 0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=6.0, help="length of the demo trajectory")
    parser.add_argument("--rate", type=float, default=200.0, help="joint_states rate, Hz")
    parser.add_argument("--output", type=Path, default=Path("rnea_demo.png"), help="PNG plot to write")
    args = parser.parse_args(argv)
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    sys.exit(run(args.seconds, args.rate, args.output))


if __name__ == "__main__":
    main()
