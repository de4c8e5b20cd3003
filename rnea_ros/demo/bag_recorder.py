"""A rosbag2 of topics, recorded from DDS while the closed loop runs (``ros2 bag record`` is not
installable here): raw CDR messages, as a bag stores them, written with ``rosbags`` (no ROS).

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

from rnea_ros.node.subscription import DedicatedSubscription

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
    """``python -m rnea_ros.demo.bag_recorder BAG TOPIC AS_TOPIC --ros-args ...``: records TOPIC
    (sensor_msgs/JointState, from a transient-local writer such as rnea_sim's tap) into the
    rosbag2 BAG under AS_TOPIC until SIGINT or SIGTERM, then writes it and prints ``recorded N
    messages``. A process of its own: in the closed loop's runner its thread took the GIL from the
    trajectory sender (tracking 0.65–1.8° instead of 0.007°)."""
    import sys

    import rclpy
    from rclpy.executors import ExternalShutdownException
    from sensor_msgs.msg import JointState

    argv = sys.argv[1:] if argv is None else argv
    own = argv[: argv.index("--ros-args")] if "--ros-args" in argv else argv
    bag, topic, as_topic = own
    rclpy.init(args=["bag_recorder", *argv[len(own) :]])
    node = Node("bag_recorder")
    recorder = BagRecorder(node, Path(bag))
    recorder.record(topic, JointState, as_topic=as_topic, history=True)  # the simulator's tap keeps 10 s
    try:
        while rclpy.ok():
            rclpy.spin_once(node, timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    written = recorder.close()
    print(f"recorded {written} messages, {recorder.dropped} dropped", flush=True)
    node.destroy_node()
    rclpy.try_shutdown()


if __name__ == "__main__":
    main()
