"""The closed loop the demo runs: rnea_sim with its joint_trajectory_controller stand-in and
rnea_node computing a planned trajectory's efforts once, ahead (``run_trajectory_loop``), over
loopback DDS; and the pieces every closed-loop runner shares: nodes started as processes with their
parameters (``start``, ``stop``), their logs, the run scored on the simulator's record (``Run``),
trajectories as messages (``planned_trajectory``, ``trajectory_chunk`` for rnea_play).

The tests' and benchmarks' runner on effort commands (``rnea_ros.testing.closed_loop_runner``) is
built from the same pieces.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import rclpy
import yaml
from builtin_interfaces.msg import Duration
from rclpy.node import Node
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros.motion.multisine import MultiSine

CHUNK = 60  # points per desired_accelerations message of a live source (rnea_play): 60 ms ahead at 1 kHz ...
SEND_PERIOD = 0.01  # ... sent every 10 ms of wall time: a stall of up to 50 ms loses nothing


def params_file(path: Path, parameters: dict) -> Path:
    """A parameters file for any node name and namespace."""
    path.write_text(yaml.safe_dump({"/**": {"ros__parameters": parameters}}))
    return path


# rnea_sim applies the URDF's <dynamics damping friction> (MuJoCo's damping and frictionloss): beside it,
# rnea_node adds them too, so that model and simulator agree (off by default on a real robot).
NODE_BESIDE_THE_SIMULATOR = {"urdf_joint_dynamics": True}


def start(module: str, namespace: str, parameters: dict, folder: Path, env: dict) -> subprocess.Popen:
    """``python -m module`` in ``namespace`` with its parameters and its log in ``folder``; rnea_node
    with NODE_BESIDE_THE_SIMULATOR unless ``parameters`` say otherwise."""
    name = module.rsplit(".", 1)[-1]
    if module == "rnea_ros.node":
        parameters = {**NODE_BESIDE_THE_SIMULATOR, **parameters}
    params = params_file(folder / f"{namespace}_{name}.yaml", parameters)
    log = (folder / f"{namespace}_{name}.log").open("w")
    command = [sys.executable, "-m", module, "--ros-args", "-r", f"__ns:=/{namespace}", "--params-file", str(params)]
    return subprocess.Popen(command, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT, text=True)


def stop_all(sim: subprocess.Popen, controller: subprocess.Popen | None) -> None:
    stop(sim)
    if controller is not None:
        stop(controller)


def logs(folder: Path, namespace: str, controller, deadline: float, what: str) -> tuple[str, str]:
    """The simulator's and the node's logs; TimeoutError (with the simulator's) when past ``deadline``."""
    sim_log = (folder / f"{namespace}_simulation.log").read_text()
    node_log = (folder / f"{namespace}_node.log").read_text() if controller is not None else ""
    if time.monotonic() >= deadline:
        raise TimeoutError(f"{what} did not finish in time:\n{sim_log[-2000:]}")
    return sim_log, node_log


def stop(process: subprocess.Popen, timeout: float = 10.0) -> int:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait(timeout=timeout)


@dataclass
class Run:
    """What the robot did (the simulator's record, every step) and what it was asked to do."""

    joint_names: list[str]
    time: np.ndarray  # trajectory time of each state [s] (negative: before the trajectory)
    q: np.ndarray  # (N, joints), the simulator's joint order
    qd: np.ndarray
    effort: np.ndarray  # applied efforts
    q_ref: np.ndarray | None  # (N, trajectory joints), the trajectory at the same times
    reference_names: list[str]  # the trajectory's joints
    sim_log: str
    node_log: str
    bag_messages: int = 0  # joint_states written to the bag, when one was recorded
    t0: float = 0.0  # the header stamp of trajectory time 0 [s]
    # floating base: the simulator's contact links, their origins in the world (N, links, 3) and the
    # ground's wrench on each, in the link frame about its origin (N, links, 6)
    contact_links: list[str] = field(default_factory=list)
    contact_position: np.ndarray | None = None
    contact_wrench: np.ndarray | None = None
    # rnea_node's last /diagnostics values (compute time p50 [us], ...), when it ran
    node_diagnostics: dict[str, str] = field(default_factory=dict)

    def positions(self, names: list[str]) -> np.ndarray:
        return self.q[:, [self.joint_names.index(name) for name in names]]

    def tracking_error(self, names: list[str], after: float = 0.0) -> np.ndarray:
        """q_ref − q of the named trajectory joints, from trajectory time ``after`` on."""
        started = self.time >= after
        reference = self.q_ref[:, [self.reference_names.index(name) for name in names]]
        return (reference - self.positions(names))[started]


def trajectory_message(joints: list[str], stamp: float, times: np.ndarray, q, qd, qdd) -> JointTrajectory:
    """A JointTrajectory stamped ``stamp`` [s] (0: none) with a point per time of ``times`` (time_from_start)."""
    msg = JointTrajectory(joint_names=joints)
    if stamp:
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(round(stamp * 1e9), 1_000_000_000)
    for k, nanoseconds in enumerate(np.round(np.asarray(times) * 1e9).astype(np.int64)):
        point = JointTrajectoryPoint(positions=q[k].tolist(), velocities=qd[k].tolist(), accelerations=qdd[k].tolist())
        point.time_from_start = Duration(
            sec=int(nanoseconds // 1_000_000_000), nanosec=int(nanoseconds % 1_000_000_000)
        )
        msg.points.append(point)
    return msg


def trajectory_chunk(joints: list[str], trajectory: MultiSine, stamp, t0: float, period: float) -> JointTrajectory:
    """The next CHUNK points of ``trajectory`` after the header stamp ``stamp`` (trajectory time
    0 at the stamp ``t0`` [s]), ``period`` apart, as one stamped desired_accelerations message."""
    offsets = np.arange(1, CHUNK + 1) * period
    start = stamp.sec + stamp.nanosec * 1e-9
    return trajectory_message(joints, start, offsets, *trajectory.at_times(start - t0 + offsets))


def planned_trajectory(joints: list[str], trajectory: MultiSine, seconds: float, spacing: float) -> JointTrajectory:
    """A planner's trajectory: points ``spacing`` apart with positions, velocities and accelerations,
    stamped zero (a JTC starts it when it arrives)."""
    offsets = np.arange(round(seconds / spacing) + 1) * spacing
    return trajectory_message(joints, 0.0, offsets, *trajectory.at_times(offsets))


def run_trajectory_loop(
    folder: Path,
    namespace: str,
    sim_parameters: dict,
    node_parameters: dict | None,
    planned: JointTrajectory,
    env: dict,
    timeout: float = 120.0,
    pause_node: tuple[float, float] | None = None,
    reference: MultiSine | None = None,
    progress: Callable[[object], None] | None = None,
) -> Run:
    """ros2_control's way: rnea_sim with its joint_trajectory_controller stand-in (the feedback in its
    own step loop) and, when ``node_parameters`` are given, rnea_node computing the trajectory's
    efforts once, ahead (``joint_trajectory`` → ``feedforward_trajectory`` → the stand-in); without
    it the planned trajectory goes to the stand-in as it is (PID alone). The simulator runs until its
    ``duration`` after the trajectory started. ``pause_node`` = (after, for) [s of wall time after
    the trajectory was sent]: rnea_node is stopped by SIGSTOP meanwhile (latency immunity).
    ``reference``: the trajectory to score against (``Run.tracking_error``); ``progress`` is called
    about twice a second with an object whose ``latest`` is (trajectory time, applied efforts)."""
    folder.mkdir(parents=True, exist_ok=True)
    record = folder / f"{namespace}_record.npz"
    record.unlink(missing_ok=True)
    target = "feedforward_trajectory" if node_parameters is not None else "planned_trajectory"
    sim_parameters = {
        "record_file": str(record),
        "controller": "joint_trajectory",
        "trajectory_topic": target,
        **sim_parameters,
    }
    node = Node("planner", namespace=namespace)
    topic = "joint_trajectory" if node_parameters is not None else target
    sender = node.create_publisher(JointTrajectory, topic, 10)
    watch = _Watch()
    if progress is not None:
        node.create_subscription(JointState, "joint_states", watch.on_state, 10)
    node_outputs: list[JointState] = []  # the node answers joint_states: its model is loaded, its inputs matched
    if node_parameters is not None:
        node.create_subscription(
            JointState, "gravity_torques", lambda msg: node_outputs[:1] or node_outputs.append(msg), 10
        )
    sim = start("rnea_ros.simulation", namespace, sim_parameters, folder, env)
    controller = start("rnea_ros.node", namespace, node_parameters, folder, env) if node_parameters else None
    deadline = time.monotonic() + timeout
    sent_at = None
    paused = False
    next_progress = time.monotonic()
    try:
        while sim.poll() is None and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.05)
            if progress is not None and time.monotonic() >= next_progress:
                progress(watch)
                next_progress += 0.5
            ready = node.count_subscribers(target) > 0 and node.count_subscribers(topic) > 0
            if controller is not None:
                ready = ready and node.count_publishers(target) > 0 and bool(node_outputs)
            if sent_at is None and ready:
                time.sleep(0.5)  # discovery: let every match settle before the one message
                sender.publish(planned)
                sent_at = time.monotonic()
                watch.sent = True
            if pause_node and controller is not None and sent_at is not None:
                after, length = pause_node
                if not paused and time.monotonic() - sent_at >= after:
                    controller.send_signal(signal.SIGSTOP)
                    time.sleep(length)
                    controller.send_signal(signal.SIGCONT)
                    paused = True
    finally:
        node.destroy_node()
        stop_all(sim, controller)
    sim_log, node_log = logs(folder, namespace, controller, deadline, "the trajectory loop")
    started = re.search(r"trajectory 1 started at simulated time ([\d.]+) s", sim_log)
    if started is None:
        raise RuntimeError(f"the simulator never started a trajectory:\n{sim_log[-2000:]}\n{node_log[-2000:]}")
    data = np.load(record)
    t = data["stamp"] - data["stamp"][0] - float(started.group(1))
    last = planned.points[-1].time_from_start
    kept = t <= last.sec + last.nanosec * 1e-9 + 1e-9  # after its last point the controller holds it
    t = t[kept]
    names = [str(name) for name in data["joint_names"]]
    joints = list(planned.joint_names)
    q_ref = reference.at_times(t)[0] if reference is not None else None
    q, qd, effort = data["position"][kept], data["velocity"][kept], data["effort"][kept]
    return Run(names, t, q, qd, effort, q_ref, joints, sim_log, node_log)


class _Watch:
    """The newest joint_states' applied efforts, for a progress display (once the trajectory is out)."""

    def __init__(self) -> None:
        self.sent = False
        self.latest: tuple[float, np.ndarray] | None = None
        self._first: float | None = None

    def on_state(self, msg: JointState) -> None:
        if not self.sent:
            return
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        self._first = stamp if self._first is None else self._first
        self.latest = (stamp - self._first, np.array(msg.effort))
