"""rnea_record: a rosbag2 that rnea_analyze reads, recorded from DDS without ``ros2 bag record``
(which needs a ROS install): raw CDR messages, as a bag stores them, written with ``rosbags``.

    rnea_record BAG [--topic joint_states] [--wrench-topic ft_sensor ...] [--seconds S]
                    [--storage sqlite3|mcap] [--history] [--ros-args -r __ns:=/robot ...]

Records ``joint_states`` (sensor_msgs/JointState; with ``--history`` from a transient-local
writer, with what it still keeps), the latched ``robot_description`` (rnea_analyze reads the URDF
from the bag) and the wrench topics (geometry_msgs/WrenchStamped) until SIGINT/SIGTERM or
``--seconds``, then writes BAG and prints ``recorded N messages``. Then: ``rnea_analyze BAG``.

Messages are kept in memory until ``close`` (sqlite3 connections belong to the thread that
opened them; the subscriptions' threads only append), at most ``MAX_MESSAGES``; the ones
beyond are counted in ``dropped``. Subscribe only once a topic's publisher is seen (see
``closed_loop`` on start-up order).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from rnea_ros.plumbing.signals import join_signal_thread
from rnea_ros.plumbing.subscription import DedicatedSubscription

MAX_MESSAGES = 2_000_000  # ~30 min of 1 kHz joint_states
DEPTH = 10_000  # the simulator's tap keeps as many: a starved recorder catches up


class BagRecorder:
    def __init__(self, node: Node, path: Path, storage: str = "sqlite3") -> None:
        self.node, self.path, self.storage = node, path, storage
        self.subscriptions: dict[str, tuple[str, DedicatedSubscription, str]] = {}  # topic -> (type, ..., bag topic)
        self.messages: list[tuple[str, int, bytes]] = []  # (topic, receive time [ns], CDR)
        self.dropped = 0
        self._lock = threading.Lock()

    def record(self, topic: str, msg_type, as_topic: str | None = None, history: bool = False) -> None:
        """Starts recording ``topic`` (messages of ``msg_type``) in the bag under ``as_topic``
        (default: its own name): from now on, or with ``history`` also what a transient-local
        writer still keeps (a recorder that matched late misses nothing then)."""
        if topic in self.subscriptions:
            return
        type_name = msg_type.__module__.split(".")[0] + "/msg/" + msg_type.__name__

        def keep(raw: bytes, topic: str = topic) -> None:
            with self._lock:
                if len(self.messages) < MAX_MESSAGES:
                    self.messages.append((topic, time.time_ns(), raw))
                else:
                    self.dropped += 1

        qos = QoSProfile(
            depth=DEPTH,
            reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL if history else DurabilityPolicy.VOLATILE,
        )
        subscription = DedicatedSubscription(self.node, msg_type, topic, keep, qos, raw=True)
        subscription.start()
        self.subscriptions[topic] = (type_name, subscription, as_topic or topic)

    def close(self) -> int:
        """Stops the subscriptions and writes the bag; the number of messages written."""
        from rosbags.rosbag2 import StoragePlugin, Writer
        from rosbags.typesys import Stores, get_typestore

        for _, subscription, _ in self.subscriptions.values():
            subscription.destroy()
        store = get_typestore(Stores.ROS2_JAZZY)
        plugin = StoragePlugin.MCAP if self.storage == "mcap" else StoragePlugin.SQLITE3
        with self._lock, Writer(self.path, version=9, storage_plugin=plugin) as writer:
            connections = {
                topic: writer.add_connection(self.node.resolve_topic_name(name), type_name, typestore=store)
                for topic, (type_name, _, name) in self.subscriptions.items()
            }
            for topic, stamp, raw in self.messages:
                writer.write(connections[topic], stamp, raw)
            return len(self.messages)


def main(argv: list[str] | None = None) -> None:
    import argparse
    import sys

    import rclpy
    from geometry_msgs.msg import WrenchStamped
    from rclpy.executors import ExternalShutdownException
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    argv = sys.argv[1:] if argv is None else argv
    own = argv[: argv.index("--ros-args")] if "--ros-args" in argv else argv
    parser = argparse.ArgumentParser(
        prog="rnea_record", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("bag", type=Path, help="the rosbag2 directory to write (must not exist)")
    parser.add_argument("--topic", default="joint_states", help="sensor_msgs/JointState topic (default joint_states)")
    parser.add_argument("--as", dest="as_topic", help="its name in the bag (default: as recorded)")
    parser.add_argument("--wrench-topic", action="append", default=[], help="geometry_msgs/WrenchStamped topic")
    parser.add_argument("--seconds", type=float, default=float("inf"), help="stop after this long (default: SIGINT)")
    parser.add_argument("--storage", choices=["sqlite3", "mcap"], default="sqlite3")
    parser.add_argument(
        "--history",
        action="store_true",
        help="the topic's writer is transient local (rnea_sim's tap): also what it still keeps",
    )
    args = parser.parse_args(own)
    if args.bag.exists():
        parser.error(f"{args.bag} exists: rosbag2 writes a new directory")
    rclpy.init(args=["rnea_record", *argv[len(own) :]])
    node = Node("rnea_record")
    recorder = BagRecorder(node, args.bag, args.storage)
    recorder.record(args.topic, JointState, as_topic=args.as_topic, history=args.history)
    recorder.record("robot_description", String, history=True)
    for topic in args.wrench_topic:
        recorder.record(topic, WrenchStamped)
    print(f"recording {node.resolve_topic_name(args.topic)} into {args.bag}; Ctrl-C to stop", flush=True)
    deadline = time.monotonic() + args.seconds
    try:
        while rclpy.ok() and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    join_signal_thread()  # before rclpy's global executor goes
    written = recorder.close()
    print(f"recorded {written} messages, {recorder.dropped} dropped", flush=True)
    node.destroy_node()
    rclpy.try_shutdown()


if __name__ == "__main__":
    main()
