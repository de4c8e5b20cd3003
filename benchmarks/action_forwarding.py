"""What rnea_node's FollowJointTrajectory relay adds to a goal of 1,000 points (the example arm: 7 arm
joints moving, its finger joint held), quiet and beside two busy processes in the same run.

In process: the relay's work on one goal as it arrives (deserialized afresh each time: the relay
fills the goal's own points), with numba's threads as the node's main sets them: checks, every
point's effort on the JTC's spline, the forwarded goal built and serialized (rclpy converts it so in
``send_goal_async``); then the same goal step by step, and a goal of 0.1 s points, which resampling
makes ten times as many (built anew: the goal's points are reused only when none is added).

Over DDS, for goals of 100 and 1,000 points: a client sends ``--count`` goals one after the other to
a JTC stand-in in this process (it accepts every goal and succeeds at once), straight, through
rnea_node and through a plain rclpy relay (the baseline: ``testing/plain_relay.py``), interleaved;
"adds" is a goal's arrival at the stand-in through a relay minus its arrival when sent straight (one
clock); the node's own figure (arrival → forwarded) is read from its /diagnostics.

    python benchmarks/action_forwarding.py [--count 300]   # writes docs/figures/action_forwarding.md
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import rclpy
from control_msgs.action import FollowJointTrajectory
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.action import ActionServer, GoalResponse
from rclpy.node import Node
from rclpy.serialization import deserialize_message, serialize_message

from rnea_ros.controller.core import RneaCore, build_live_model
from rnea_ros.controller.diagnostics import freeze_the_heap
from rnea_ros.controller.settings import Settings
from rnea_ros.controller.trajectory_feedforward import answer_threads
from rnea_ros.demo.closed_loop import planned_trajectory, start, stop
from rnea_ros.demo.demo import START
from rnea_ros.demo.figures import write_table
from rnea_ros.motion.multisine import fast_multisine
from rnea_ros.node import messages
from rnea_ros.node.action_relay import goal_problem, with_efforts
from rnea_ros.plumbing.actions import RESULT_TIMEOUT
from rnea_ros.testing.action_client import TrajectoryClient, goal
from rnea_ros.testing.domain import reserve_domain_id
from rnea_ros.testing.reference import ARM_URDF
from rnea_ros.testing.ros_harness import spin_until

JOINTS = [*(f"joint{i}" for i in range(1, 8)), "finger_left_joint"]
BUSY = 2  # processes spinning beside the busy rows
NS = "forwarding"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=300, help="goals per row")
    args = parser.parse_args()
    planned = planned_trajectory(JOINTS, fast_multisine(np.array(START), moving=7), 9.99, spacing=0.01)
    moveit_goal = goal(planned)
    short_goal = goal(planned_trajectory(JOINTS, fast_multisine(np.array(START), moving=7), 0.99, spacing=0.01))
    sparse_goal = goal(planned_trajectory(JOINTS, fast_multisine(np.array(START), moving=7), 9.9, spacing=0.1))
    env = {"ROS_DOMAIN_ID": str(reserve_domain_id()), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    os.environ.update(env)
    rows, loads = [], []
    for busy in (0, BUSY):
        loads.append(os.getloadavg()[0])  # the machine's other work, before the rows
        spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
        try:
            machine = f"beside {busy} busy processes" if busy else "quiet"
            rows += [(label, machine, *figures) for label, figures in in_process(moveit_goal, sparse_goal, args.count)]
            print(*rows[-len(STEPS) - 2 :], sep="\n")
            for size in (short_goal, moveit_goal):
                rows += [(label, machine, *figures) for label, figures in over_dds(size, args.count, env)]
                print(*rows[-4:], sep="\n")
        finally:
            for process in spinning:
                process.kill()
                process.wait()
    note = (
        f"{len(planned.points)} points × {len(JOINTS)} joints per goal (7 moving) in process; over DDS 100 and "
        f"{len(planned.points)} points, each goal sent straight to the JTC, through rnea_node and through a plain "
        f"rclpy relay (testing/plain_relay.py: an ActionServer whose execute callback forwards the goal unchanged "
        f"with an ActionClient, rclpy's MultiThreadedExecutor), interleaved. Busy: {BUSY} processes "
        f"spinning beside the run, on {os.cpu_count()} cores. The machine's 1-minute load average before the "
        f"quiet rows: {loads[0]:.1f}, before the busy ones: {loads[1]:.1f} (its other work included)."
    )
    header = ("forwarding", "machine", "goals", "p50 [ms]", "p99 [ms]", "max [ms]")
    print(f"wrote {write_table('action_forwarding', 'benchmarks/action_forwarding.py', header, rows, note)}")


def statistics(seconds) -> tuple:
    ms = np.asarray(seconds) * 1e3
    return len(ms), f"{np.percentile(ms, 50):.2f}", f"{np.percentile(ms, 99):.2f}", f"{ms.max():.2f}"


STEPS = (
    "its points read (numpy over the point objects)",
    "checks (names, times, finite values)",
    "as arrays (lengths)",
    "efforts on the JTC's spline (RneaCore.trajectory)",
    "the forwarded points (the goal's own, efforts set)",
    "the forwarded goal serialized (rclpy's conversion)",
)


def in_process(moveit_goal, sparse_goal, count: int) -> list[tuple[str, tuple]]:
    """The relay's own work on ``moveit_goal``: ``with_efforts`` and the forwarded goal serialized;
    each of its steps; the same for ``sparse_goal`` (resampled)."""
    answer_threads()  # as the node's main: the executor's thread computes batches on one thread
    settings = Settings()
    core = RneaCore(settings)
    core.load(build_live_model(ARM_URDF, settings))
    received, sparse = serialize_message(moveit_goal), serialize_message(sparse_goal)
    freeze_the_heap()  # as the node does once started: collections walk what is made after
    whole, resampled, steps = [], [], {step: [] for step in STEPS}
    for _ in range(count):
        whole.append(forwarding_time(core, deserialize_message(received, FollowJointTrajectory.Goal)))
        timed_steps(core, deserialize_message(received, FollowJointTrajectory.Goal), steps)
        resampled.append(forwarding_time(core, deserialize_message(sparse, FollowJointTrajectory.Goal)))
    points = len(moveit_goal.trajectory.points)
    rows = [("in process: the relay's work on one goal", statistics(whole))]
    rows += [(f"in process, step: {step}", statistics(times)) for step, times in steps.items()]
    label = f"in process: a goal of {len(sparse_goal.trajectory.points)} points 0.1 s apart, resampled to {points}"
    return [*rows, (label, statistics(resampled))]


def forwarding_time(core: RneaCore, received) -> float:
    started = time.perf_counter()
    forwarded = with_efforts(core, received)
    serialize_message(forwarded)
    elapsed = time.perf_counter() - started
    assert isinstance(forwarded, FollowJointTrajectory.Goal), forwarded
    return elapsed


def timed_steps(core: RneaCore, received, steps: dict[str, list[float]]) -> None:
    """``with_efforts`` and the serialization, step by step (``STEPS``), into ``steps``."""
    live, trajectory = core.live, received.trajectory
    known = [*live.bound.model.joint_names, *live.bound.matcher.renamed]
    laps = [time.perf_counter()]
    points = messages.read_goal_points(trajectory)
    laps.append(time.perf_counter())
    assert goal_problem(points.content, known) is None
    laps.append(time.perf_counter())
    arrays = messages.goal_trajectory_arrays(points)
    laps.append(time.perf_counter())
    result = core.trajectory(arrays)
    laps.append(time.perf_counter())
    forwarded = FollowJointTrajectory.Goal(trajectory=messages.trajectory_with_efforts(trajectory, points, result))
    laps.append(time.perf_counter())
    serialize_message(forwarded)
    laps.append(time.perf_counter())
    for step, (before, after) in zip(STEPS, itertools.pairwise(laps), strict=True):
        steps[step].append(after - before)


class StandIn:
    """A JTC's action that accepts every goal and succeeds at once; each goal's arrival time by its frame_id."""

    def __init__(self, node: Node) -> None:
        self.arrived: dict[str, float] = {}
        self.server = ActionServer(
            node,
            FollowJointTrajectory,
            f"/{NS}/jtc/follow_joint_trajectory",
            execute_callback=self._execute,
            goal_callback=self._on_goal,
            result_timeout=RESULT_TIMEOUT,  # as the stand-ins': the goals' points are not kept for 15 min
        )

    def _on_goal(self, request):
        self.arrived[request.trajectory.header.frame_id] = time.perf_counter()
        return GoalResponse.ACCEPT

    @staticmethod
    def _execute(handle):
        handle.succeed()
        return FollowJointTrajectory.Result()


def over_dds(moveit_goal, count: int, env: dict) -> list[tuple[str, tuple]]:
    """Goals straight to the stand-in, through rnea_node and through a plain rclpy relay
    (``testing.plain_relay``), interleaved; what each relay adds, their ratio, and the node's figure."""
    rclpy.init()
    folder = Path(tempfile.mkdtemp(prefix="action_forwarding_"))
    node = {"robot_description": ARM_URDF, "controller_action": f"/{NS}/jtc/follow_joint_trajectory"}
    process = start("rnea_ros.node", NS, node, folder, env)
    plain = subprocess.Popen(
        [sys.executable, "-m", "rnea_ros.testing.plain_relay", f"/{NS}/plain", f"/{NS}/jtc/follow_joint_trajectory"],
        env={**os.environ, **env},
    )
    # the measuring clients take no status arrays: their size (each server's goals kept for their results)
    # would load this process, where arrivals are timed, by a different amount for each server
    through = TrajectoryClient("moveit", f"/{NS}/follow_joint_trajectory", status=False)
    direct = TrajectoryClient("", f"/{NS}/jtc/follow_joint_trajectory", node=through.node, status=False)
    relayed = TrajectoryClient("", f"/{NS}/plain", node=through.node, status=False)
    stand_in, latest = StandIn(through.node), {}
    through.node.create_subscription(DiagnosticArray, "/diagnostics", lambda msg: _keep(msg, latest), 10)
    added = {"node": [], "plain": []}
    try:
        ready = through.spin_until(through.client.server_is_ready, 60.0)
        assert ready, (folder / f"{NS}_node.log").read_text()[-2000:]
        assert through.spin_until(relayed.client.server_is_ready, 60.0), "no plain relay"
        for k in range(count):
            delays = {}
            for client, tag in ((direct, "direct"), (through, "node"), (relayed, "plain")):
                moveit_goal.trajectory.header.frame_id = f"{tag} {k}"
                sent_at = time.perf_counter()
                sent = client.send(moveit_goal, timeout=30.0)
                client.wait(sent, 30.0)
                delays[tag] = stand_in.arrived[f"{tag} {k}"] - sent_at
            for tag in added:
                added[tag].append(delays[tag] - delays["direct"])
        spin_until(through.node, lambda: latest.get("goals forwarded") == str(count), 10.0)
    finally:
        through.close()
        direct.close()
        relayed.close()
        stop(process)
        stop(plain)
        rclpy.try_shutdown()
    figures = [float(latest[f"goal forwarding {p} [ms]"]) for p in ("p50", "p99", "max")]
    node_row = (int(latest["goals forwarded"]), *(f"{x:.2f}" for x in figures))
    ratio = tuple(f"{np.percentile(added['node'], q) / np.percentile(added['plain'], q):.2f}×" for q in (50, 99))
    points = len(moveit_goal.trajectory.points)
    return [
        (f"over DDS, {points} points: rnea_node adds to a goal's arrival at the JTC", statistics(added["node"])),
        (f"over DDS, {points} points: a plain rclpy relay adds", statistics(added["plain"])),
        (f"over DDS, {points} points: rnea_node / plain relay (p50, p99)", (count, *ratio, "")),
        (f"over DDS, {points} points: rnea_node's own (arrival → forwarded, /diagnostics)", node_row),
    ]


def _keep(msg: DiagnosticArray, latest: dict) -> None:
    for status in msg.status:
        if status.hardware_id == f"/{NS}/rnea_node":
            latest.update({value.key: value.value for value in status.values})


if __name__ == "__main__":
    main()
