"""The closed-loop runner of the tests and benchmarks (``run_closed_loop``): rnea_sim (robot +
ros2_control stand-in), rnea_node and a trajectory publisher, over loopback DDS, on effort commands
(the demo runs ``rnea_ros.demo.closed_loop.run_trajectory_loop``).
Wiring, as with a real robot: the simulator publishes ``joint_states`` and takes
``effort_commands`` (its ``commands_topic``) like a JointGroupEffortController; rnea_node
subscribes to ``joint_states`` and ``desired_accelerations`` and publishes ``effort_commands``.
Nothing of this process is in the loop: the trajectory goes to the node whole, once, as one
stamped JointTrajectory (``whole_trajectory``), its time 0 one second (``LEAD``) after the first
state the node computed for; until then the start point is held at rest. In lockstep the
simulator waits, at every step, for the node's answer to the state it published (its
``feedforward_efforts`` carry that state's stamp: ``lockstep_answer_topic``). A bag, when asked
for, is recorded by a process of its own from the simulator's second writer of its states
(``tap_topic``). What the robot did comes from the simulator's own record (``record_file``): every
state it published, up to the trajectory's end.

Start-up order matters in this environment (Fast DDS from the Jazzy wheels): a reliable reader
created before the writer it reads sometimes received late, in bursts, or nothing (see
docs/closed-loop.md). So the simulator starts first, rnea_node once the simulator's
joint_states publisher is seen, and the trajectory publisher subscribes once the node's
outputs are seen; each topic has one reader.
"""

from __future__ import annotations

import math
import os
import re
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros.demo.closed_loop import SEND_PERIOD, Run, logs, start, stop
from rnea_ros.motion.multisine import MultiSine
from rnea_ros.plumbing.subscription import DedicatedSubscription
from rnea_ros.plumbing.trajectory_cdr import write_joint_trajectory

TAP = "joint_states_tap"  # the simulator's second writer of its states, for the bag (see rnea_sim's tap_topic)
STRICT_LOCKSTEP_TIMEOUT = 10.0  # s of wall time the simulator waits for one answer of the node
LEAD = 1.0  # s between the node's first output and trajectory time 0: the whole trajectory reaches it first
RESENDS = 3


def cdr_stamp(data: bytes) -> float:
    """header.stamp [s] of a stamped message's CDR bytes (the header first, after the 4-byte encapsulation)."""
    sec, nanosec = struct.unpack_from("<iI" if data[1] == 1 else ">iI", data, 4)
    return sec + nanosec * 1e-9


def exit_reason(code: int) -> str:
    """A process's exit code as words: "exit code 1", "killed by SIGSEGV" (its log then holds every
    thread's Python stack: faulthandler)."""
    if code >= 0:
        return f"exit code {code}"
    try:
        return f"killed by {signal.Signals(-code).name}"
    except ValueError:
        return f"killed by signal {-code}"


def start_recorder(bag: Path, namespace: str, folder: Path, env: dict) -> subprocess.Popen:
    """The bag recorder in a process of its own, recording the simulator's tap as joint_states."""
    log = (folder / f"{namespace}_bag_recorder.log").open("w")
    command = [sys.executable, "-m", "rnea_ros.demo.recorder", str(bag), "--topic", TAP, "--as", "joint_states"]
    command += ["--history"]
    command += ["--ros-args", "-r", f"__ns:=/{namespace}"]
    return subprocess.Popen(command, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT, text=True)


def stop_recorder(process: subprocess.Popen, log: Path) -> int:
    """Stops the recorder (it writes the bag then); the number of messages written."""
    stop(process, timeout=120.0)
    found = re.search(r"recorded (\d+) messages", log.read_text())
    return int(found.group(1)) if found else 0


class LockstepBrokenError(RuntimeError):
    """The simulator stepped without the controller's answer: the run is not a lockstep run."""


def whole_trajectory(joints: list[str], trajectory: MultiSine, t0: float, period: float, seconds: float) -> bytes:
    """The whole trajectory from its time 0 at the stamp ``t0`` [s] to ``seconds``, points ``period``
    apart, as one stamped desired_accelerations message (its CDR bytes: tens of thousands of point
    objects would keep this process's collector busy): sent once, ahead of the node. Its first
    point, ``period`` before time 0, is the start at rest: what the node holds until time 0 (the
    trajectory's own acceleration at 0 is not zero: 1 − cos starts at rest, not without force)."""
    offsets = np.arange(round(seconds / period) + 1) * period
    q, qd, qdd = trajectory.at_times(offsets)
    q, qd, qdd = np.vstack([q[:1], q]), np.vstack([qd[:1], qd]), np.vstack([np.zeros_like(qdd[:1]), qdd])
    stamp = divmod(round((t0 - period) * 1e9), 1_000_000_000)
    fields = {"positions": q, "velocities": qd, "accelerations": qdd}
    return write_joint_trajectory(stamp, "", joints, np.concatenate([[0.0], offsets + period]), fields)


class TrajectoryPublisher:
    """Sends the whole trajectory to the node once, ahead: its time 0 is LEAD after the first state
    the node computed for (held at the start until then), so that nothing in this process is in
    the loop afterwards (clocking pieces by the node's outputs left the node without points
    whenever this process was starved of CPU: tracking 0.65–1.8° instead of 0.007°)."""

    def __init__(
        self,
        node: Node,
        joints: list[str],
        trajectory: MultiSine,
        period: float,
        seconds: float = 60.0,
        align: float = 0.0,
        watch: dict[str, Callable[[bytes], None]] | None = None,
        follow: str = "feedforward_efforts",
    ) -> None:
        self.node, self.joints, self.trajectory, self.period = node, joints, trajectory, period
        self.follow = follow  # the node's output stamped with each state it answers
        self.seconds, self.align, self.watch = seconds, align, watch or {}
        self.sent = 0  # times the whole trajectory was published
        self.t0: float | None = None
        self.received = 0
        self.latest: float | None = None  # the trajectory time of the newest state answered
        self.desired = node.create_publisher(JointTrajectory, "desired_accelerations", 10)
        self.outputs: DedicatedSubscription | None = None
        self._stop = threading.Event()
        self._sender = threading.Thread(target=self._send_loop, name="trajectory sender", daemon=True)

    def follow_outputs(self) -> None:
        """Subscribes to the node's ``follow`` output (call once the node publishes it). Its messages and
        the watched ones are taken as bytes: read as messages, 1-2 kHz of them cost this process (which
        holds the trot's planner) a tenth of a core."""
        self.outputs = DedicatedSubscription(self.node, JointState, self.follow, self._on_output, 100, raw=True)
        for topic, callback in self.watch.items():
            self.outputs.also_serve(JointState, topic, callback, 1000, raw=True)
        self.outputs.start()
        self._sender.start()

    def hold_start(self) -> None:
        """Until the node computes: the start point, at rest, as an unstamped point ("now")."""
        q, qd, _ = self.trajectory.at(0.0)
        point = JointTrajectoryPoint(positions=q.tolist(), velocities=qd.tolist(), accelerations=[0.0] * len(q))
        self.desired.publish(JointTrajectory(joint_names=self.joints, points=[point]))

    def _on_output(self, data: bytes) -> None:
        stamp = cdr_stamp(data)
        if self.t0 is None:
            self.t0 = stamp + LEAD if not self.align else math.ceil((stamp + LEAD) / self.align) * self.align
        self.received += 1
        self.latest = stamp - self.t0

    def _send_loop(self) -> None:
        """Once the time 0 is known: the whole trajectory, sent RESENDS times (the node keeps the newest)."""
        message = None
        while self.sent < RESENDS and not self._stop.wait(SEND_PERIOD):
            if self.t0 is not None:
                if message is None:
                    message = whole_trajectory(self.joints, self.trajectory, self.t0, self.period, self.seconds)
                self.desired.publish(message)
                self.sent += 1
                self._stop.wait(0.1)

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
    align: float = 0.0,
    watch: dict[str, Callable[[bytes], None]] | None = None,
    follow: str = "feedforward_efforts",
) -> Run:
    """Runs the simulator until its ``duration`` with rnea_node (none when ``node_parameters`` is
    None; stopped ``stop_node_after`` s of wall time after its first effort_commands, when given:
    counted from its publisher's appearance, a loaded machine stopped a node still loading its
    model) and, when ``trajectory`` is given, the trajectory publisher (``progress`` is called with
    it about twice a second).
    With a trajectory, ``duration`` counts trajectory time: the run is stopped once the node has
    computed that far into it (its start waits for the publisher's subscription, which can take
    seconds to match). With ``bag``, the simulator's joint_states are recorded there as a rosbag2
    (topic /NAMESPACE/joint_states), as ``ros2 bag record`` would. ``align`` [s]: the trajectory's
    time 0 on a stamp that is a multiple of it (a gait's period: the node's gait cycle starts at
    stamp 0); ``watch``: more of the node's JointState outputs (contact_states) by topic, each
    message's CDR bytes to its callback, on the thread that reads its feedforward_efforts (or ``follow``: another
    JointState output stamped with each state answered, such as joint_commands, so that the node need
    not publish feedforward_efforts). Needs rclpy initialised."""
    folder.mkdir(parents=True, exist_ok=True)
    period = int(sim_parameters.get("publish_every", 1)) / float(sim_parameters.get("rate", 1000.0))
    record = folder / f"{namespace}_record.npz"
    record.unlink(missing_ok=True)
    run_for = float(sim_parameters.get("duration", 0.0)) if trajectory is not None else 0.0
    sim_parameters = {"commands_topic": "effort_commands", "record_file": str(record), **sim_parameters}
    if bag is not None:
        sim_parameters["tap_topic"] = TAP
    if node_parameters is not None and not sim_parameters.get("realtime", True):
        sim_parameters.setdefault("lockstep_answer_topic", "feedforward_efforts")  # strict lockstep
        # a busy machine may stall the node for a while (a collection, converting a 16,000-point
        # trajectory): lockstep waits it out; a node that stops is seen gone within 0.1 s
        sim_parameters.setdefault("lockstep_timeout", STRICT_LOCKSTEP_TIMEOUT)
    if run_for > 0.0:
        sim_parameters["duration"] = 0.0  # stopped here, by trajectory time
    node = Node("trajectory_publisher", namespace=namespace)
    publisher = None
    if trajectory is not None:
        publisher = TrajectoryPublisher(node, joints, trajectory, period, (run_for or 55.0) + 5.0, align, watch, follow)
    recorder = None  # the bag recorder's process, once the simulator's tap is seen
    node_diagnostics: dict[str, str] = {}
    node.create_subscription(
        DiagnosticArray, "/diagnostics", lambda msg: _keep_node_diagnostics(msg, namespace, node_diagnostics), 10
    )
    sim = start("rnea_ros.simulation", namespace, sim_parameters, folder, env)
    controller = None
    started = time.monotonic()
    deadline = started + timeout
    next_progress = started
    first_command: list[float] = []  # when the node's first effort_commands arrived here
    if stop_node_after is not None:
        node.create_subscription(
            Float64MultiArray, "effort_commands", lambda _: first_command or first_command.append(time.monotonic()), 10
        )
    try:
        while sim.poll() is None and time.monotonic() < deadline:
            if controller is None and node_parameters is not None and node.count_publishers("joint_states"):
                controller = start("rnea_ros.node", namespace, node_parameters, folder, env)
            if bag is not None and recorder is None and node.count_publishers(TAP):
                recorder = start_recorder(bag, namespace, folder, env)
            if publisher is not None and publisher.outputs is None and node.count_publishers(follow):
                publisher.follow_outputs()
            if publisher is not None and not publisher.sent:
                publisher.hold_start()  # until the whole trajectory is out: the start point, fresh
            rclpy.spin_once(node, timeout_sec=0.05)
            if run_for > 0.0 and publisher.latest is not None and publisher.latest >= run_for:
                break
            if progress is not None and publisher is not None and time.monotonic() >= next_progress:
                progress(publisher)
                next_progress += 0.5
            if stop_node_after is not None and first_command and time.monotonic() - first_command[0] > stop_node_after:
                stop(controller)
                stop_node_after = None
    finally:
        if publisher is not None:
            publisher.close()
        bag_messages = stop_recorder(recorder, folder / f"{namespace}_bag_recorder.log") if recorder is not None else 0
        node.destroy_node()
        sim_code = stop(sim)
        if controller is not None:
            stop(controller)
    sim_log, node_log = logs(folder, namespace, controller, deadline, "the closed loop")
    if "strict lockstep broken" in sim_log:
        raise LockstepBrokenError(f"{namespace}: the simulator stepped without the node's answer\n{sim_log[-1500:]}")
    if not record.exists():  # seen once under load, the simulator's log ending at its start line
        how = "killed, still running 10 s after SIGINT" if sim_code == -9 else exit_reason(sim_code)
        raise RuntimeError(f"{namespace}: the simulator wrote no record ({how})\n{sim_log[-1500:]}")
    data = np.load(record)
    stamps = data["stamp"]
    t0 = publisher.t0 if publisher is not None and publisher.t0 is not None else (stamps[0] if len(stamps) else 0.0)
    t = stamps - t0
    # the states up to the trajectory's end: after it the node holds its last point, while this
    # process may take a moment to stop the simulator
    kept = t <= run_for + 1e-9 if trajectory is not None and run_for > 0.0 else np.ones(len(t), dtype=bool)
    t = t[kept]
    q_ref = np.array([trajectory.at(x)[0] for x in t]) if trajectory is not None else None
    names = [str(name) for name in data["joint_names"]]
    contact = {k: data[k][kept] if k in data and len(data[k]) else None for k in ("contact_position", "contact_wrench")}
    return Run(
        names,
        t,
        data["position"][kept],
        data["velocity"][kept],
        data["effort"][kept],
        q_ref,
        list(joints),
        sim_log,
        node_log,
        bag_messages,
        float(t0),
        [str(link) for link in data["contact_links"]] if "contact_links" in data else [],
        contact["contact_position"],
        contact["contact_wrench"],
        node_diagnostics,
    )


def _keep_node_diagnostics(msg: DiagnosticArray, namespace: str, into: dict[str, str]) -> None:
    """The values of rnea_node's status in ``namespace`` (the /diagnostics of other runs are not ours)."""
    for status in msg.status:
        if status.hardware_id.startswith(f"/{namespace}/") and status.name.startswith("rnea_node"):
            into.clear()
            into.update({value.key: value.value for value in status.values})
