"""Bursts of FollowJointTrajectory goals through rnea_node's relay: 40 goals at 50/s, and 1,000 goals as
fast as a client can send them (each sent without waiting for the previous one's acceptance), quiet
and beside two busy processes. A JTC that follows as the Jazzy JTC does (``testing.misbehaving_jtc``,
well-behaved: feedback at 20 Hz, a new goal preempts the active one) runs in this process; the
node gets joint_states at 100 Hz throughout from a monitor process of its own, which also times the
node's answers (the client's own load cannot hide them).

Every goal must be answered (accepted, then a result); what the table shows per burst: goals
answered, how they ended, the time from a goal's sending to its result (p50, p99, max; the newest
goal's runs its trajectory and is left out), the longest gap between the node's gravity_torques
(its answers to joint_states) and between its /diagnostics, and the slowest answer to a parameter
request (list_parameters) during the burst.

    python benchmarks/goal_burst.py     # writes docs/figures/goal_burst.md
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import rclpy
from action_msgs.msg import GoalStatus
from control_msgs.action import FollowJointTrajectory
from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.srv import ListParameters
from rclpy.action import ActionClient
from sensor_msgs.msg import JointState

from rnea_ros.demo.closed_loop import start, stop
from rnea_ros.demo.demo import START
from rnea_ros.demo.figures import write_table
from rnea_ros.plumbing.actions import deep_queue
from rnea_ros.testing.action_client import goal, rest_to_rest
from rnea_ros.testing.domain import reserve_domain_id
from rnea_ros.testing.misbehaving_jtc import MisbehavingJtc
from rnea_ros.testing.reference import ARM_URDF

JOINTS = [*(f"joint{i}" for i in range(1, 8)), "finger_left_joint"]
NS = "burst"
BUSY = 2
TIMEOUT = 2.0  # controller_action_timeout, the node's default
ANSWER_WAIT = 60.0  # s at most after a burst for its answers


def pulse(namespace: str, until: float, out: str) -> None:
    """The monitor's process: joint_states at 100 Hz to the node, and the monotonic times of its
    gravity_torques and /diagnostics written to ``out`` (one line each: kind, time), until ``until``
    or until the file ``out``.stop exists."""
    rclpy.init()
    node = rclpy.create_node("burst_pulse")
    states = node.create_publisher(JointState, f"/{namespace}/joint_states", 10)
    times: list[tuple[str, float]] = []
    ready = Path(out + ".ready")

    def on_answer(_msg) -> None:
        times.append(("g", time.monotonic()))
        if len(times) == 1:
            ready.touch()  # the node answers this monitor: the burst may start

    node.create_subscription(JointState, f"/{namespace}/gravity_torques", on_answer, 100)

    def on_diagnostics(msg: DiagnosticArray) -> None:
        if any(status.hardware_id == f"/{namespace}/rnea_node" for status in msg.status):
            times.append(("d", time.monotonic()))

    node.create_subscription(DiagnosticArray, "/diagnostics", on_diagnostics, 10)
    next_state = time.monotonic()
    stop_file = Path(out + ".stop")
    while time.monotonic() < until and not stop_file.exists():
        if time.monotonic() >= next_state:
            msg = JointState(name=JOINTS, position=list(START), velocity=[0.0] * len(JOINTS))
            msg.header.stamp = node.get_clock().now().to_msg()
            states.publish(msg)
            next_state += 0.01
        rclpy.spin_once(node, timeout_sec=max(0.0, next_state - time.monotonic()))
    Path(out).write_text("".join(f"{kind} {t}\n" for kind, t in times))
    node.destroy_node()
    rclpy.try_shutdown()


class Burst:
    """One node, one JTC, one client; ``run`` sends a burst and measures it."""

    def __init__(self, folder: Path, env: dict) -> None:
        self.jtc = MisbehavingJtc(f"/{NS}/jtc/follow_joint_trajectory")
        params = {"robot_description": ARM_URDF, "controller_action": f"/{NS}/jtc/follow_joint_trajectory"}
        self.process = start("rnea_ros.node", NS, params, folder, env)
        self.node = rclpy.create_node("burst_client")
        deep = deep_queue(2000)  # the client keeps its own requests too: a burst is not cut at 10
        self.client = ActionClient(
            self.node,
            FollowJointTrajectory,
            f"/{NS}/follow_joint_trajectory",
            goal_service_qos_profile=deep,
            result_service_qos_profile=deep,
            cancel_service_qos_profile=deep,
        )
        self.env = env
        self.parameters = self.node.create_client(ListParameters, f"/{NS}/rnea_node/list_parameters")
        assert self.client.wait_for_server(timeout_sec=60.0), "no relay"
        assert self.parameters.wait_for_service(timeout_sec=10.0), "no parameter service"

    def close(self) -> None:
        self.client.destroy()
        self.node.destroy_node()
        stop(self.process)
        self.jtc.close()

    def spin(self, seconds: float = 0.0) -> None:
        """Spins for ``seconds`` at least once."""
        end = time.monotonic() + seconds
        while True:
            rclpy.spin_once(self.node, timeout_sec=max(0.0, end - time.monotonic()))
            if time.monotonic() >= end:
                return

    def run(self, count: int, rate: float | None) -> tuple:
        """``count`` goals at ``rate`` per second (None: as fast as the client can); the table's figures."""
        out = tempfile.mktemp(prefix="goal_burst_pulse_")
        until = time.monotonic() + ANSWER_WAIT + 30.0
        monitor = subprocess.Popen(
            [sys.executable, __file__, "--pulse", NS, str(until), out], env={**os.environ, **self.env}
        )
        waited = time.monotonic() + 60.0
        while not Path(out + ".ready").exists() and time.monotonic() < waited:  # the node answers the monitor
            self.spin(0.05)
        self.spin(0.5)
        started = time.monotonic()
        sent_at, results, parameter_waits = [], {}, []
        parameter = None
        for k in range(count):
            sent_at.append(time.monotonic())
            future = self.client.send_goal_async(goal(rest_to_rest(JOINTS, START, START, 1.0 + 1e-3 * k)))
            future.add_done_callback(lambda f, k=k: self._accepted(f, k, results))
            if parameter is None or parameter[1].done():
                if parameter is not None:
                    parameter_waits.append(time.monotonic() - parameter[0])
                parameter = (time.monotonic(), self.parameters.call_async(ListParameters.Request()))
            self.spin(1.0 / rate if rate else 0.0)
        deadline = time.monotonic() + ANSWER_WAIT
        while len([r for r in results.values() if r[0] is not None]) < count and time.monotonic() < deadline:
            self.spin(0.01)
        ended = time.monotonic()
        Path(out + ".stop").touch()
        monitor.wait(timeout=ANSWER_WAIT + 60.0)
        pulses = [line.split() for line in Path(out).read_text().splitlines()]
        answers = [float(t) for kind, t in pulses if kind == "g" and started <= float(t) <= ended]
        diagnostics = [float(t) for kind, t in pulses if kind == "d" and started <= float(t) <= ended]
        done = {k: r for k, r in results.items() if r[0] is not None}
        statuses = [r[0] for r in done.values()]
        waits = [done[k][1] - sent_at[k] for k in done if k != count - 1]
        gaps = np.diff([started, *answers, ended])
        diagnostic_gaps = np.diff([started, *diagnostics, ended])
        ms = np.array(waits) * 1e3
        return (
            f"{len(done)} of {count}",
            f"{statuses.count(GoalStatus.STATUS_SUCCEEDED)} succeeded, "
            f"{statuses.count(GoalStatus.STATUS_ABORTED)} aborted, "
            f"{sum(s not in (GoalStatus.STATUS_SUCCEEDED, GoalStatus.STATUS_ABORTED) for s in statuses)} other",
            *(f"{x:.0f}" for x in (np.percentile(ms, 50), np.percentile(ms, 99), ms.max())),
            f"{gaps.max() * 1e3:.0f}",
            f"{diagnostic_gaps.max() * 1e3:.0f}",
            f"{max(parameter_waits) * 1e3:.0f}" if parameter_waits else "-",
        )

    def _accepted(self, future, k: int, results: dict) -> None:
        handle = future.result()
        if not handle.accepted:
            results[k] = ("rejected", time.monotonic())
            return
        results[k] = (None, None)
        handle.get_result_async().add_done_callback(
            lambda f: results.__setitem__(k, (f.result().status, time.monotonic()))
        )


def main() -> None:
    env = {"ROS_DOMAIN_ID": str(reserve_domain_id()), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    os.environ.update(env)
    rows, loads = [], []
    for busy in (0, BUSY):
        loads.append(os.getloadavg()[0])  # the machine's other work, before the rows
        spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
        rclpy.init()
        burst = Burst(Path(tempfile.mkdtemp(prefix="goal_burst_")), env)
        try:
            machine = f"beside {busy} busy processes" if busy else "quiet"
            for count, rate, label in ((40, 50.0, "40 goals at 50/s"), (1000, None, "1,000 goals, as fast as sent")):
                rows.append((label, machine, *burst.run(count, rate)))
                print(rows[-1])
                burst.spin(3.0)
        finally:
            burst.close()
            rclpy.try_shutdown()
            for process in spinning:
                process.kill()
                process.wait()
    note = (
        "rnea_node (controller_action_timeout 2 s) relays to a JTC in the benchmark's process that follows as the "
        "Jazzy JTC does; joint_states at 100 Hz throughout; a list_parameters request kept in flight during the "
        f"burst. Waits: from a goal's sending to its result, the newest goal left out. Busy: {BUSY} processes "
        f"spinning beside the run, on {os.cpu_count()} cores. The machine's 1-minute load average before the "
        f"quiet rows: {loads[0]:.1f}, before the busy ones: {loads[1]:.1f} (its other work included)."
    )
    header = (
        "burst",
        "machine",
        "answered",
        "ended",
        "wait p50 [ms]",
        "wait p99 [ms]",
        "wait max [ms]",
        "gravity_torques gap max [ms]",
        "/diagnostics gap max [ms]",
        "parameter answer max [ms]",
    )
    print(f"wrote {write_table('goal_burst', 'benchmarks/goal_burst.py', header, rows, note)}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--pulse"]:
        pulse(sys.argv[2], float(sys.argv[3]), sys.argv[4])
    else:
        main()
