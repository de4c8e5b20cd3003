"""The closed loop: rnea_sim (robot + ros2_control stand-in), rnea_node and a trajectory
publisher, over loopback DDS; what the demo and the closed-loop tests run.

Wiring, as with a real robot: the simulator publishes ``joint_states`` and takes
``effort_commands`` (its ``commands_topic``) like a JointGroupEffortController; rnea_node
subscribes to ``joint_states`` and ``desired_accelerations`` and publishes ``effort_commands``.
The trajectory publisher takes its clock from the node's ``feedforward_efforts`` (stamped
with the joint_states they were computed from) and sends, every ``SEND_PERIOD``, the next
``CHUNK`` desired points from the newest of them as one stamped JointTrajectory, so that the
node always holds the point of the state it is about to receive. Trajectory time 0 is the first state the node
computed for; until then the start point is held. What the robot did comes from the
simulator's own record (``record_file``): every state it published.

Start-up order matters in this environment (Fast DDS from the Jazzy wheels): a reliable reader
created before the writer it reads sometimes received late, in bursts, or nothing (see the
README, "Closed loop"). So the simulator starts first, rnea_node once the simulator's
joint_states publisher is seen, and the trajectory publisher subscribes once the node's
outputs are seen; each topic has one reader.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import rclpy
import yaml
from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.node import Node
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros.demo.bag_recorder import BagRecorder
from rnea_ros.demo.trajectories import MultiSine
from rnea_ros.node.subscription import DedicatedSubscription

CHUNK = 60  # points per desired_accelerations message (60 ms ahead at 1 kHz) ...
SEND_PERIOD = 0.01  # ... sent every 10 ms of wall time: a stall of up to 50 ms loses nothing


def params_file(path: Path, parameters: dict) -> Path:
    """A parameters file for any node name and namespace."""
    path.write_text(yaml.safe_dump({"/**": {"ros__parameters": parameters}}))
    return path


def start(module: str, namespace: str, parameters: dict, folder: Path, env: dict) -> subprocess.Popen:
    """``python -m module`` in ``namespace`` with its parameters and its log in ``folder``."""
    name = module.rsplit(".", 1)[-1]
    params = params_file(folder / f"{namespace}_{name}.yaml", parameters)
    log = (folder / f"{namespace}_{name}.log").open("w")
    command = [sys.executable, "-m", module, "--ros-args", "-r", f"__ns:=/{namespace}", "--params-file", str(params)]
    return subprocess.Popen(command, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT, text=True)


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


def trajectory_chunk(joints: list[str], trajectory: MultiSine, stamp, t0: float, period: float) -> JointTrajectory:
    """The next CHUNK points of ``trajectory`` after the header stamp ``stamp`` (trajectory time
    0 at the stamp ``t0`` [s]), ``period`` apart, as one stamped desired_accelerations message."""
    offsets = np.arange(1, CHUNK + 1) * period
    t = stamp.sec + stamp.nanosec * 1e-9 - t0
    q, qd, qdd = trajectory.at_times(t + offsets)
    msg = JointTrajectory(joint_names=joints)
    msg.header.stamp = stamp
    for k, nanoseconds in enumerate(np.round(offsets * 1e9).astype(np.int64)):
        point = JointTrajectoryPoint(positions=q[k].tolist(), velocities=qd[k].tolist(), accelerations=qdd[k].tolist())
        point.time_from_start = Duration(
            sec=int(nanoseconds // 1_000_000_000), nanosec=int(nanoseconds % 1_000_000_000)
        )
        msg.points.append(point)
    return msg


class TrajectoryPublisher:
    """Sends the trajectory ahead of the node, clocked by its feedforward_efforts."""

    def __init__(self, node: Node, joints: list[str], trajectory: MultiSine, period: float) -> None:
        self.node, self.joints, self.trajectory, self.period = node, joints, trajectory, period
        self.t0: float | None = None
        self.received = 0
        self.latest: tuple[float, np.ndarray] | None = None  # (trajectory time, feed-forward efforts)
        self.desired = node.create_publisher(JointTrajectory, "desired_accelerations", 10)
        self.outputs: DedicatedSubscription | None = None
        self._newest_stamp = None  # builtin_interfaces/Time of the newest feedforward_efforts
        self._sent_stamp = None
        self._stop = threading.Event()
        self._sender = threading.Thread(target=self._send_loop, name="trajectory sender", daemon=True)

    def follow_outputs(self) -> None:
        """Subscribes to the node's feedforward_efforts (call once the node publishes them)."""
        self.outputs = DedicatedSubscription(self.node, JointState, "feedforward_efforts", self._on_output, 100)
        self.outputs.start()
        self._sender.start()

    def hold_start(self) -> None:
        """Until the node computes: the start point, at rest, as an unstamped point ("now")."""
        q, qd, qdd = self.trajectory.at(0.0)
        point = JointTrajectoryPoint(positions=q.tolist(), velocities=qd.tolist(), accelerations=qdd.tolist())
        self.desired.publish(JointTrajectory(joint_names=self.joints, points=[point]))

    def _on_output(self, msg: JointState) -> None:
        """Kept cheap: a publisher that falls behind the node would send stale points."""
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        if self.t0 is None:
            self.t0 = stamp
        self.received += 1
        self.latest = (stamp - self.t0, msg.effort)
        self._newest_stamp = msg.header.stamp

    def _send_loop(self) -> None:
        while not self._stop.wait(SEND_PERIOD):
            stamp = self._newest_stamp
            if stamp is not None and stamp is not self._sent_stamp:
                self._sent_stamp = stamp
                self._send_chunk(stamp)

    def _send_chunk(self, stamp) -> None:
        self.desired.publish(trajectory_chunk(self.joints, self.trajectory, stamp, self.t0, self.period))

    def close(self) -> None:
        self._stop.set()
        if self._sender.is_alive():
            self._sender.join(timeout=2.0)
        if self.outputs is not None:
            self.outputs.destroy()


def run_closed_loop(
    folder: Path,
    namespace: str,
    sim_parameters: dict,
    node_parameters: dict | None,
    trajectory: MultiSine | None,
    joints: list[str],
    env: dict,
    timeout: float = 120.0,
    stop_node_after: float | None = None,
    progress: Callable[[TrajectoryPublisher], None] | None = None,
    bag: Path | None = None,
) -> Run:
    """Runs the simulator until its ``duration`` with rnea_node (none when ``node_parameters`` is
    None; stopped ``stop_node_after`` s of wall time after its effort_commands publisher is seen,
    when given) and, when ``trajectory``
    is given, the trajectory publisher (``progress`` is called with it about twice a second).
    With a trajectory, ``duration`` counts trajectory time: the run is stopped once the node has
    computed that far into it (its start waits for the publisher's subscription, which can take
    seconds to match). With ``bag``, the simulator's joint_states are recorded there as a rosbag2
    (topic /NAMESPACE/joint_states), as ``ros2 bag record`` would. Needs rclpy initialised."""
    folder.mkdir(parents=True, exist_ok=True)
    period = int(sim_parameters.get("publish_every", 1)) / float(sim_parameters.get("rate", 1000.0))
    record = folder / f"{namespace}_record.npz"
    record.unlink(missing_ok=True)
    run_for = float(sim_parameters.get("duration", 0.0)) if trajectory is not None else 0.0
    sim_parameters = {"commands_topic": "effort_commands", "record_file": str(record), **sim_parameters}
    if run_for > 0.0:
        sim_parameters["duration"] = 0.0  # stopped here, by trajectory time
    node = Node("trajectory_publisher", namespace=namespace)
    publisher = TrajectoryPublisher(node, joints, trajectory, period) if trajectory is not None else None
    recorder = BagRecorder(node, bag) if bag is not None else None
    node_diagnostics: dict[str, str] = {}
    node.create_subscription(
        DiagnosticArray, "/diagnostics", lambda msg: _keep_node_diagnostics(msg, namespace, node_diagnostics), 10
    )
    sim = start("rnea_ros.simulation", namespace, sim_parameters, folder, env)
    controller = None
    started = time.monotonic()
    deadline = started + timeout
    next_progress = started
    controller_up = None  # when the node's effort_commands publisher was first seen
    try:
        while sim.poll() is None and time.monotonic() < deadline:
            if controller is None and node_parameters is not None and node.count_publishers("joint_states"):
                controller = start("rnea_ros.node", namespace, node_parameters, folder, env)
            if recorder is not None and not recorder.subscriptions and node.count_publishers("joint_states"):
                recorder.record("joint_states", JointState)
            if publisher is not None and publisher.outputs is None and node.count_publishers("feedforward_efforts"):
                publisher.follow_outputs()
            if publisher is not None and publisher.t0 is None:
                publisher.hold_start()
            rclpy.spin_once(node, timeout_sec=0.05)
            if run_for > 0.0 and publisher.latest is not None and publisher.latest[0] >= run_for:
                break
            if progress is not None and publisher is not None and time.monotonic() >= next_progress:
                progress(publisher)
                next_progress += 0.5
            if controller is not None and controller_up is None and node.count_publishers("effort_commands"):
                controller_up = time.monotonic()
            if (
                stop_node_after is not None
                and controller_up is not None
                and time.monotonic() - controller_up > stop_node_after
            ):
                stop(controller)
                stop_node_after = None
    finally:
        if publisher is not None:
            publisher.close()
        bag_messages = recorder.close() if recorder is not None else 0
        node.destroy_node()
        stop(sim)
        if controller is not None:
            stop(controller)
    sim_log = (folder / f"{namespace}_simulation.log").read_text()
    node_log = (folder / f"{namespace}_node.log").read_text() if controller is not None else ""
    if time.monotonic() >= deadline:
        raise TimeoutError(f"the closed loop did not finish in {timeout} s:\n{sim_log[-2000:]}")
    data = np.load(record)
    stamps = data["stamp"]
    t0 = publisher.t0 if publisher is not None and publisher.t0 is not None else (stamps[0] if len(stamps) else 0.0)
    t = stamps - t0
    q_ref = np.array([trajectory.at(x)[0] for x in t]) if trajectory is not None else None
    names = [str(name) for name in data["joint_names"]]
    return Run(
        names,
        t,
        data["position"],
        data["velocity"],
        data["effort"],
        q_ref,
        list(joints),
        sim_log,
        node_log,
        bag_messages,
        float(t0),
        [str(link) for link in data["contact_links"]] if "contact_links" in data else [],
        data["contact_position"] if "contact_position" in data else None,
        data["contact_wrench"] if "contact_wrench" in data else None,
        node_diagnostics,
    )


def _keep_node_diagnostics(msg: DiagnosticArray, namespace: str, into: dict[str, str]) -> None:
    """The values of rnea_node's status in ``namespace`` (the /diagnostics of other runs are not ours)."""
    for status in msg.status:
        if status.hardware_id.startswith(f"/{namespace}/") and status.name.startswith("rnea_node"):
            into.clear()
            into.update({value.key: value.value for value in status.values})
