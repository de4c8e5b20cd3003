"""rnea_node's first answer as a user sees it: a subscriber and a robot's driver already running, then the
node started as the docs start it, timed from its spawn to the subscriber's first message.

Three processes besides the node, each on the same private ROS_DOMAIN_ID (localhost discovery):

- ``listener``: subscribes to the node's ``gravity_torques``; prints, as JSON lines with ``time.time()``
  stamps, when it is ready, when its subscription matched the node's publisher and when the first
  message came (with the stamp of the joint_states that message answers);
- ``driver``: publishes ``joint_states`` (zeros) and, on a floating base, ``base_odometry`` (standing
  upright) at ``rate`` Hz, stamped with the wall clock; prints when its joint_states publisher matched;
- the node: ``rnea_node --ros-args --params-file <file>`` (the console script ``scripts/setup`` installs),
  or ``python -m rnea_ros.node`` with the same arguments.

``first_answer`` runs one start and returns its events in seconds after the spawn. Run a role with
``python -m rnea_ros.testing.start_up listener|driver ...``; ``... bare --ros-args ...`` is the
reference node (``run_bare``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

READY_TIMEOUT = 60.0  # s for the listener and the driver to start and discover each other
FEET = ["FL_foot", "FR_foot", "RL_foot", "RR_foot"]


def _say(**event: object) -> None:
    print(json.dumps(event), flush=True)


def _ros_node(name: str):
    import rclpy
    from rclpy.node import Node

    rclpy.init(args=[])
    return Node(name)


def run_listener(topic: str, seconds: float) -> None:
    """Prints ``ready`` once it sees the driver's joint_states, ``matched`` and ``first`` (see the module)."""
    import rclpy
    from rclpy.event_handler import SubscriptionEventCallbacks
    from sensor_msgs.msg import JointState

    node = _ros_node("start_up_listener")
    said: set[str] = set()

    def matched(_status) -> None:
        if "matched" not in said:
            said.add("matched")
            _say(event="matched", time=time.time())

    def received(msg: JointState) -> None:
        if "first" not in said:
            said.add("first")
            _say(event="first", time=time.time(), answered=msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9)

    node.create_subscription(
        JointState, topic, received, 10, event_callbacks=SubscriptionEventCallbacks(matched=matched)
    )
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and "first" not in said:
        rclpy.spin_once(node, timeout_sec=0.01)
        if "ready" not in said and node.count_publishers("joint_states"):
            said.add("ready")
            _say(event="ready", time=time.time())


def run_driver(joint_names: list[str], base_link: str | None, rate: float, seconds: float) -> None:
    """Publishes the robot's state at ``rate`` Hz for ``seconds`` (see the module)."""
    import rclpy
    from nav_msgs.msg import Odometry
    from rclpy.event_handler import PublisherEventCallbacks
    from sensor_msgs.msg import JointState

    node = _ros_node("start_up_driver")
    said: set[str] = set()

    def matched(status) -> None:
        if "matched" not in said and status.current_count > 0:
            said.add("matched")
            _say(event="matched", time=time.time())

    callbacks = PublisherEventCallbacks(matched=matched)
    states = node.create_publisher(JointState, "joint_states", 10, event_callbacks=callbacks)
    odometry = node.create_publisher(Odometry, "base_odometry", 10) if base_link else None
    state = JointState(name=joint_names, position=[0.0] * len(joint_names), velocity=[0.0] * len(joint_names))
    standing = Odometry()
    standing.header.frame_id, standing.child_frame_id = "odom", base_link or ""
    standing.pose.pose.position.z, standing.pose.pose.orientation.w = 0.3, 1.0
    period, start = 1.0 / rate, time.monotonic()
    tick = start
    while tick - start < seconds:
        now = time.time()
        stamp = state.header.stamp
        stamp.sec, stamp.nanosec = int(now), int((now % 1.0) * 1e9)
        if odometry is not None:
            standing.header.stamp = stamp
            odometry.publish(standing)
        states.publish(state)
        tick += period
        while (wait := tick - time.monotonic()) > 0:
            rclpy.spin_once(node, timeout_sec=wait)


def run_bare(seconds: float) -> None:
    """The reference node: the least a Python ROS 2 node does to answer, started as rnea_node is (its
    command line's ``--ros-args`` taken by rclpy.init) but with rclpy and sensor_msgs only, no model: it
    answers each joint_states with zeros on ``gravity_torques``, stamped as the state. Its first answer
    is the floor of any rclpy node's on this machine."""
    import rclpy
    from rclpy.executors import ExternalShutdownException
    from sensor_msgs.msg import JointState

    rclpy.init(args=sys.argv)
    node = rclpy.create_node("rnea_node")
    publisher = node.create_publisher(JointState, "gravity_torques", 10)

    def answer(state: JointState) -> None:
        publisher.publish(JointState(header=state.header, name=state.name, effort=[0.0] * len(state.name)))

    node.create_subscription(JointState, "joint_states", answer, 10)
    deadline = time.monotonic() + seconds
    try:
        while rclpy.ok() and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    rclpy.try_shutdown()


BARE_COMMAND = [sys.executable, "-m", "rnea_ros.testing.start_up", "bare"]


@dataclass
class Start:
    """One start's events, in seconds after the node's spawn (None: not seen)."""

    first: float | None = None  # the listener's first gravity_torques
    listener_matched: float | None = None  # the node's gravity_torques publisher matched the listener
    driver_matched: float | None = None  # the driver's joint_states matched the node's subscription
    answered: float | None = None  # when the joint_states that the first message answers was sent
    model_loaded: float | None = None  # the node's "robot model loaded" line
    phases: dict[str, tuple[float, float]] = field(default_factory=dict)  # RNEA_START_TRACE: (wall, CPU) [s]
    cpu: float | None = None  # the node's CPU time [s] (user + system, all threads) when the first message came
    output: str = field(default="", repr=False)


def node_command(console_script: bool) -> list[str]:
    """rnea_node as the docs start it: its console script when installed, else ``python -m rnea_ros.node``."""
    script = shutil.which("rnea_node") if console_script else None
    return [script] if script else [sys.executable, "-m", "rnea_ros.node"]


def _role(folder: Path, name: str, arguments: list[str], env: dict[str, str]) -> tuple[subprocess.Popen, Path]:
    log = folder / f"{name}.jsonl"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "rnea_ros.testing.start_up", name, *arguments],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    return process, log


def _events(log: Path) -> dict[str, dict]:
    events = {}
    for line in log.read_text().splitlines():
        if line.startswith("{"):
            event = json.loads(line)
            events.setdefault(event["event"], event)
    return events


def _wait_for(log: Path, event: str, process: subprocess.Popen, timeout: float) -> dict | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        if event in (events := _events(log)):
            return events[event]
        time.sleep(0.01)
    return _events(log).get(event)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def first_answer(
    folder: Path,
    urdf: str,
    joint_names: list[str],
    base_link: str | None,
    env: dict[str, str],
    *,
    contact_links: list[str] | None = None,
    console_script: bool = True,
    command: list[str] | None = None,
    rate: float = 200.0,
    timeout: float = 120.0,
) -> Start:
    """Starts the listener and the driver, waits until they see each other, spawns the node and
    returns its start's events (its process is stopped before this returns). ``env``: the processes'
    environment (ROS_DOMAIN_ID, NUMBA_CACHE_DIR, RNEA_START_TRACE...). ``command``: another node in
    rnea_node's place, given the same ``--ros-args`` (``BARE_COMMAND``: the reference)."""
    parameters = {"robot_description": urdf, "floating_base": base_link is not None}
    if contact_links:
        parameters["contact_links"] = contact_links
    params = folder / "robot.yaml"
    params.write_text(yaml.safe_dump({"rnea_node": {"ros__parameters": parameters}}))
    seconds = str(timeout + READY_TIMEOUT)
    listener, listener_log = _role(folder, "listener", ["gravity_torques", seconds], env)
    driver, driver_log = _role(folder, "driver", [json.dumps(joint_names), base_link or "", str(rate), seconds], env)
    node, cpu = None, None
    try:
        if _wait_for(listener_log, "ready", listener, READY_TIMEOUT) is None:
            raise RuntimeError(f"the listener never saw the driver: {listener_log.read_text()[-2000:]}")
        node_log = (folder / "node.log").open("w")
        spawned = time.time()
        node = subprocess.Popen(
            [*(command or node_command(console_script)), "--ros-args", "--params-file", str(params)],
            env=env,
            stdout=node_log,
            stderr=subprocess.STDOUT,
        )
        _wait_for(listener_log, "first", listener, timeout)
        cpu = process_cpu(node.pid)
    finally:
        for process in (node, driver, listener):
            if process is not None:
                _stop(process)
    start = _start_events(spawned, _events(listener_log), _events(driver_log), folder / "node.log")
    start.cpu = cpu
    return start


def process_cpu(pid: int) -> float | None:
    """User + system CPU time [s] of a running process (None once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _start_events(spawned: float, heard: dict[str, dict], drove: dict[str, dict], node_log: Path) -> Start:
    def after(event: dict | None, key: str = "time") -> float | None:
        return None if event is None else event[key] - spawned

    output = node_log.read_text()
    start = Start(
        first=after(heard.get("first")),
        listener_matched=after(heard.get("matched")),
        driver_matched=after(drove.get("matched")),
        answered=after(heard.get("first"), "answered"),
        output=output,
    )
    for line in output.splitlines():
        if "robot model loaded" in line and start.model_loaded is None and "[" in line:
            start.model_loaded = float(line.split("[")[2].split("]")[0]) - spawned  # [INFO] [<wall clock>] [...]
        if line.startswith("rnea_node start "):
            phase, stamp, cpu = line.removeprefix("rnea_node start ").rsplit(" ", 2)
            start.phases[phase] = (float(stamp) - spawned, float(cpu))
    return start


def main() -> None:
    if sys.argv[1:2] == ["bare"]:  # its command line is rclpy's
        run_bare(READY_TIMEOUT)
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("role", choices=("listener", "driver"))
    parser.add_argument("arguments", nargs="*")
    args = parser.parse_args()
    if args.role == "listener":
        topic, seconds = args.arguments
        run_listener(topic, float(seconds))
    else:
        names, base_link, rate, seconds = args.arguments
        run_driver(json.loads(names), base_link or None, float(rate), float(seconds))


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # stopped by first_answer
        pass
