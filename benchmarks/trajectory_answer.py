"""rnea_node's answer to a planner's trajectory, in process: CDR bytes in (a raw subscription's) →
arrays → efforts on the JTC's spline → CDR bytes out, for a 1,000-point 7-DoF trajectory (the
example arm, 10 ms apart, no resampling needed), with the batch kernel on one thread (the node's
choice, ``trajectory_feedforward.ANSWER_THREADS``) and on every core, interleaved, quiet and beside
two busy processes in the same run; rclpy's way beside them (quiet): the message deserialized into
point objects, the answer built as point objects. Then over DDS, quiet and beside two busy
processes: rnea_node in its own process answers the same trajectory ``--count`` times, one after the
other, and its own measurement (arrival in its callback → answer published) is read from /diagnostics.

    python benchmarks/trajectory_answer.py [--count 1000]    # writes docs/figures/trajectory_answer.md

With ``--against PATH --rounds 20`` (another tree, e.g. ``git archive 95913ff``, its numba cache compiled): only the
in-process answer on one thread, in this tree and in PATH's, interleaved (``against.py``), and the
ratio current / before; writes docs/figures/trajectory_answer_against.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import against  # benchmarks/against.py (this script's folder is on the path)
import numba
import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.node import Node
from rclpy.serialization import deserialize_message, serialize_message
from std_msgs.msg import Header
from trajectory_msgs.msg import JointTrajectory

from rnea_ros.controller.core import RneaCore, build_live_model
from rnea_ros.controller.settings import Settings
from rnea_ros.controller.trajectory_feedforward import ANSWER_THREADS
from rnea_ros.demo.closed_loop import planned_trajectory, start, stop
from rnea_ros.demo.demo import START
from rnea_ros.demo.figures import write_table
from rnea_ros.motion.multisine import fast_multisine
from rnea_ros.motion.trajectory import MAX_TRAJECTORY_POINTS
from rnea_ros.node import messages
from rnea_ros.testing.domain import reserve_domain_id
from rnea_ros.testing.reference import ARM_URDF

BUSY = 2  # processes spinning beside the busy runs, on this 2-core machine
PRIORITY = 40  # the node's thread_priority in its second run (SCHED_FIFO; below ros2_control's 50)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=1000, help="trajectories answered per row")
    parser.add_argument("--against", type=Path, help="another tree: compare the in-process answer with its")
    parser.add_argument("--rounds", type=int, default=20, help="--against: rounds (a batch per tree each)")
    args = parser.parse_args()
    if args.against:
        label, what = "trajectory, 1,000 points, 1 thread (bytes in, bytes out)", "the example arm (8 joints)"
        against.measure_and_write("trajectory", label, what, args.against, args.rounds, args.count // args.rounds)
        return
    settings = Settings()
    core = RneaCore(settings)
    core.load(build_live_model(ARM_URDF, settings))
    names = list(core.live.bound.model.joint_names)
    planned = planned_trajectory(names, fast_multisine(np.array(START), moving=7), 9.99, spacing=0.01)
    received = serialize_message(planned)  # what a raw subscription gets
    rows = []
    for busy in (0, BUSY):
        with busy_processes(busy):
            rows += answered_in_process(core, received, args.count, busy)
            for priority in (0, PRIORITY):
                rows.append(answered_by_the_node(received, args.count, busy, priority))
                print(rows[-1])
    note = (
        f"{len(planned.points)} points, {len(names)} joints; trajectory_resampling {settings.trajectory_resampling} s; "
        f"busy: {BUSY} processes spinning beside the run, on {os.cpu_count()} cores. rnea_node answers on "
        f"{ANSWER_THREADS} thread(s)."
    )
    header_row = ("answer", "machine", "trajectories", "p50 [ms]", "p99 [ms]", "max [ms]")
    print(f"wrote {write_table('trajectory_answer', 'benchmarks/trajectory_answer.py', header_row, rows, note)}")


@contextmanager
def busy_processes(count: int) -> Iterator[None]:
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for process in busy:
            process.kill()
            process.wait()


def answered_in_process(core: RneaCore, received: bytes, count: int, busy: int) -> list[tuple]:
    """The node's answer on one thread and on every core (interleaved), and rclpy's way (quiet only)."""
    header, cores = Header(), numba.config.NUMBA_NUM_THREADS
    labels = {ANSWER_THREADS: f"in process, {ANSWER_THREADS} thread (bytes in, bytes out)"}
    labels[cores] = f"in process, {cores} threads (bytes in, bytes out)"
    times: dict[str, list[float]] = {label: [] for label in labels.values()}
    slow = "in process, rclpy's way (point objects in and out)"
    for k in range(count):
        for threads, label in labels.items():
            numba.set_num_threads(threads)
            start = time.perf_counter()
            content = messages.read_trajectory(received, MAX_TRAJECTORY_POINTS, "joint_trajectory")
            messages.trajectory_cdr(header, core.trajectory(messages.trajectory_arrays(content)))
            times[label].append(time.perf_counter() - start)
        if not busy and k % 10 == 0:  # the slow reference: every tenth round
            start = time.perf_counter()
            result = core.trajectory(messages.trajectory_arrays(deserialize_message(received, JointTrajectory)))
            messages.trajectory_message(header, result)
            times.setdefault(slow, []).append(time.perf_counter() - start)
    numba.set_num_threads(ANSWER_THREADS)
    rows = []
    for label, seconds in times.items():
        ms = np.array(seconds) * 1e3
        p50, p99 = np.percentile(ms, 50), np.percentile(ms, 99)
        rows.append((label, machine_state(busy), len(ms), f"{p50:.2f}", f"{p99:.2f}", f"{ms.max():.2f}"))
        print(rows[-1])
    return rows


def machine_state(busy: int) -> str:
    return f"beside {busy} busy processes" if busy else "quiet"


def answered_by_the_node(data: bytes, count: int, busy: int, priority: int) -> tuple:
    """rnea_node (its own process, a private domain, ``thread_priority``: ``priority``) answers ``data``
    ``count`` times; its own p50/p99/max from /diagnostics."""
    env = {"ROS_DOMAIN_ID": str(reserve_domain_id()), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    os.environ.update(env)
    rclpy.init()
    folder = Path(tempfile.mkdtemp(prefix="trajectory_answer_"))
    node_process = start(
        "rnea_ros.node", "bench", {"robot_description": ARM_URDF, "thread_priority": priority}, folder, env
    )
    planner = Node("planner", namespace="bench")
    answers, latest = [0], {}
    publisher = planner.create_publisher(JointTrajectory, "joint_trajectory", 10)
    planner.create_subscription(
        JointTrajectory, "feedforward_trajectory", lambda _: answers.__setitem__(0, answers[0] + 1), 10, raw=True
    )
    planner.create_subscription(
        DiagnosticArray, "/diagnostics", lambda msg: latest.update({v.key: v.value for v in msg.status[0].values}), 10
    )
    try:
        deadline = time.monotonic() + 60.0
        while (publisher.get_subscription_count() == 0 or not planner.count_publishers("feedforward_trajectory")) and (
            time.monotonic() < deadline
        ):
            rclpy.spin_once(planner, timeout_sec=0.1)
        for k in range(count):
            publisher.publish(data)
            wait_until = time.monotonic() + 5.0
            while answers[0] <= k and time.monotonic() < wait_until:
                rclpy.spin_once(planner, timeout_sec=0.1)
        wait_until = time.monotonic() + 10.0
        while latest.get("trajectories answered") != str(count) and time.monotonic() < wait_until:
            rclpy.spin_once(planner, timeout_sec=0.1)
    finally:
        planner.destroy_node()
        stop(node_process)
        rclpy.try_shutdown()
    if latest.get("trajectories answered") != str(count):
        raise RuntimeError(f"rnea_node answered {latest.get('trajectories answered')} of {count}: see {folder}")
    print({k: v for k, v in latest.items() if k.startswith("collector")})
    ms = [float(latest[f"trajectory answer {p} [us]"]) / 1e3 for p in ("p50", "p99", "max")]
    label = f"rnea_node over DDS (its /diagnostics), thread_priority {priority}"
    return (label, machine_state(busy), count, *(f"{x:.2f}" for x in ms))


if __name__ == "__main__":
    main()
