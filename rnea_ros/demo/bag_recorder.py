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

from rnea_ros.node.subscription import DedicatedSubscription

MAX_MESSAGES = 2_000_000  # ~30 min of 1 kHz joint_states
DEPTH = 1000


class BagRecorder:
    def __init__(self, node: Node, path: Path, storage: str = "sqlite3") -> None:
        self.node, self.path, self.storage = node, path, storage
        self.subscriptions: dict[str, tuple[str, DedicatedSubscription]] = {}  # topic -> (type name, ...)
        self.messages: list[tuple[str, int, bytes]] = []  # (topic, receive time [ns], CDR)
        self.dropped = 0
        self._lock = threading.Lock()

    def record(self, topic: str, msg_type) -> None:
        """Starts recording ``topic`` (messages of ``msg_type``) from now on."""
        if topic in self.subscriptions:
            return
        type_name = msg_type.__module__.split(".")[0] + "/msg/" + msg_type.__name__

        def keep(raw: bytes, topic: str = topic) -> None:
            with self._lock:
                if len(self.messages) < MAX_MESSAGES:
                    self.messages.append((topic, time.time_ns(), raw))
                else:
                    self.dropped += 1

        subscription = DedicatedSubscription(self.node, msg_type, topic, keep, DEPTH, raw=True)
        subscription.start()
        self.subscriptions[topic] = (type_name, subscription)

    def close(self) -> int:
        """Stops the subscriptions and writes the bag; the number of messages written."""
        from rosbags.rosbag2 import StoragePlugin, Writer
        from rosbags.typesys import Stores, get_typestore

        for _, subscription in self.subscriptions.values():
            subscription.destroy()
        store = get_typestore(Stores.ROS2_JAZZY)
        plugin = StoragePlugin.MCAP if self.storage == "mcap" else StoragePlugin.SQLITE3
        with self._lock, Writer(self.path, version=9, storage_plugin=plugin) as writer:
            connections = {
                topic: writer.add_connection(self.node.resolve_topic_name(topic), type_name, typestore=store)
                for topic, (type_name, _) in self.subscriptions.items()
            }
            for topic, stamp, raw in self.messages:
                writer.write(connections[topic], stamp, raw)
            return len(self.messages)
