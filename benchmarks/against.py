"""``--against PATH``: the same in-process answer timed in this tree and in another (a checkout or a
``git archive`` of an older commit, its numba cache compiled: ``PYTHONPATH=PATH python -m
rnea_ros.compile``), in one run: each tree answers in a process of its own
(``answer_worker.py``), the two taking turns batch by batch, the first to go alternating; per round
the median of each tree's batch, and the ratio this tree / the other's.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from rclpy.serialization import serialize_message

from rnea_ros.analysis.gains import critically_damped_gains
from rnea_ros.demo.closed_loop import planned_trajectory
from rnea_ros.demo.demo import START
from rnea_ros.demo.figures import write_table
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.motion.multisine import fast_multisine
from rnea_ros.testing.closed_loop_runner import whole_trajectory
from rnea_ros.testing.reference import ARM_URDF

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
T0 = 1000.0  # s: the stamp of the first joint_states
STATES = 30_000  # joint_states each tree can answer, 1 ms apart (stamps only go forward)
BANDWIDTH = 20.0  # rad/s: the gains of the joint_states answer (PD + inverse dynamics)


def setup_file(folder: Path) -> Path:
    """The answers' inputs, the same bytes for both trees: the example arm, PD + inverse dynamics at
    20 rad/s with the URDF's joint terms; a planner's 1,000-point trajectory (10 ms apart); a
    stamped desired trajectory and joint_states along it, 1 ms apart, 0.1° off."""
    arm = RobotModel.from_urdf(ARM_URDF)
    names = list(arm.joint_names)
    motion = fast_multisine(np.array(START), moving=7)
    _, kp, kd = critically_damped_gains(arm, np.array(START), BANDWIDTH)
    (folder / "trajectory.cdr").write_bytes(serialize_message(planned_trajectory(names, motion, 9.99, spacing=0.01)))
    (folder / "desired.cdr").write_bytes(whole_trajectory(names, motion, T0, 0.001, STATES / 1000 + 1.0))
    times = np.arange(STATES) * 0.001
    q, qd, _ = motion.at_times(times)
    setup = {
        "description": ARM_URDF,
        "settings": {"kp": kp.tolist(), "kd": kd.tolist(), "urdf_joint_dynamics": True},
        "trajectory": str(folder / "trajectory.cdr"),
        "desired": str(folder / "desired.cdr"),
        "states": {
            "names": names,
            "positions": (q + np.radians(0.1)).tolist(),
            "velocities": qd.tolist(),
            "stamps": (T0 + times).tolist(),
        },
        "command_names": names,
    }
    path = folder / "setup.json"
    path.write_text(json.dumps(setup))
    return path


class Worker:
    """``answer_worker.py`` on one tree's package."""

    def __init__(self, tree: Path, setup: Path, folder: Path) -> None:
        link = folder / f"path_{abs(hash(str(tree)))}"  # the package alone on the path (scripts/env's rule)
        link.mkdir(exist_ok=True)
        if not (link / "rnea_ros").exists():
            (link / "rnea_ros").symlink_to(tree / "rnea_ros")
        env = {**os.environ, "PYTHONPATH": str(link)}
        command = [sys.executable, str(HERE / "answer_worker.py"), str(setup)]
        self.process = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if self.process.stdout.readline().strip() != "ready":
            raise RuntimeError(f"answer_worker on {tree} did not start")

    def timed(self, answer: str, count: int) -> list[float]:
        self.process.stdin.write(f"{answer} {count}\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


def compare(other: Path, answer: str, rounds: int, batch: int) -> dict:
    """``answer`` timed in this tree and in ``other``, ``rounds`` × ``batch`` each, interleaved: p50
    and p99 [ms] of every answer of each tree, and the median over rounds of the ratio (this tree's
    batch median / the other's) with its range; the same of the batches' 10th percentiles (``fast
    ratio``: the answers no other process interrupted)."""
    folder = Path(tempfile.mkdtemp(prefix="rnea_against_"))
    setup = setup_file(folder)
    workers = {"current": Worker(ROOT, setup, folder), "before": Worker(other.resolve(), setup, folder)}
    try:
        for worker in workers.values():  # warm-up: first calls, caches
            worker.timed(answer, max(1, batch // 10))
        times: dict[str, list[float]] = {name: [] for name in workers}
        ratios, fast_ratios = [], []
        for k in range(rounds):
            medians, fastest = {}, {}
            for name in list(workers)[:: 1 if k % 2 == 0 else -1]:
                seconds = workers[name].timed(answer, batch)
                times[name] += seconds
                medians[name], fastest[name] = statistics.median(seconds), np.percentile(seconds, 10)
            ratios.append(medians["current"] / medians["before"])
            fast_ratios.append(fastest["current"] / fastest["before"])
    finally:
        for worker in workers.values():
            worker.close()
    result = {name: (np.percentile(ms := np.array(s) * 1e3, 50), np.percentile(ms, 99)) for name, s in times.items()}
    result["ratio"] = (statistics.median(ratios), min(ratios), max(ratios))
    result["fast ratio"] = (statistics.median(fast_ratios), min(fast_ratios), max(fast_ratios))
    result["answers"] = rounds * batch
    return result


FIGURES = {"trajectory": "trajectory_answer", "joint_states": "joint_states_answer"}  # docs/figures/<name>_against.md
SCRIPTS = {"trajectory": "benchmarks/trajectory_answer.py", "joint_states": "benchmarks/node.py"}


def measure_and_write(answer: str, label: str, what: str, other: Path, rounds: int, batch: int) -> Path:
    """``compare``, printed and written to docs/figures/<FIGURES[answer]>_against.md with the load average."""
    before = load_note()
    table = rows(label, compare(other, answer, rounds, max(1, batch)))
    for row in table:
        print(row)
    note = (
        f"This tree against {other} (before), each in a process of its own taking turns, {rounds} rounds of "
        f"{max(1, batch)} answers, the first to go alternating; {what}; {before} at the start, {load_note()} at "
        "the end (other processes of the machine: not this benchmark's)."
    )
    path = write_table(f"{FIGURES[answer]}_against", SCRIPTS[answer], HEADER, table, note)
    print(f"wrote {path}")
    return path


def rows(label: str, result: dict) -> list[tuple]:
    """Figure rows: each tree's p50, p99 [ms], and the ratios current / before (batch medians; batch
    10th percentiles), each the median over rounds and its range."""
    (p50, p99), (b50, b99) = result["current"], result["before"]
    ratios = [f"{r:.3f} ({low:.3f}-{high:.3f})" for r, low, high in (result["ratio"], result["fast ratio"])]
    return [(label, result["answers"], f"{p50:.3f}", f"{p99:.3f}", f"{b50:.3f}", f"{b99:.3f}", *ratios)]


HEADER = (
    "answer (in process)",
    "answers per tree",
    "current p50 [ms]",
    "current p99 [ms]",
    "before p50 [ms]",
    "before p99 [ms]",
    "current / before: batch medians (range over rounds)",
    "current / before: batch 10th percentiles (range)",
)


def load_note() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} (1, 5, 15 min) on {os.cpu_count()} cores"
