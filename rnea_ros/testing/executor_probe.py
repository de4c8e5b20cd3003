"""An executor's spinning thread watched: messages published one at a time to a node that the
executor spins, each callback holding the GIL for a few ms as rnea_node's trajectory answer does, and
the spinning thread's wake-ups (``wait_for_ready_callbacks`` returns) counted."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from rclpy.node import Node
from std_msgs.msg import Int32

CALLBACK_SECONDS = 0.003


def counting(executor_class: type, num_threads: int = 4):
    """An instance of ``executor_class`` that counts its wake-ups in ``wakeups``."""

    class Counting(executor_class):
        wakeups = 0

        def wait_for_ready_callbacks(self, *args, **kwargs):
            found = super().wait_for_ready_callbacks(*args, **kwargs)
            self.wakeups += 1
            return found

    return Counting(num_threads=num_threads)


def hold_gil(seconds: float) -> None:
    """Python work that holds the GIL (time.sleep would release it)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def slow_callback(msg: Int32, seen: list[int]) -> None:
    hold_gil(CALLBACK_SECONDS)
    seen.append(msg.data)


def served(executor, callback: Callable[[Int32, list[int]], None], topic: str, messages: int) -> list[int]:
    """``messages`` messages published one at a time (each after the previous one's callback), spun by
    ``executor`` on its own thread; the values its callback saw. rclpy must be initialised."""
    node, talker = Node(f"listener_{topic}"), Node(f"talker_{topic}")
    seen: list[int] = []
    node.create_subscription(Int32, topic, lambda msg: callback(msg, seen), 10)
    publisher = talker.create_publisher(Int32, topic, 10)
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        deadline = time.monotonic() + 20.0
        while publisher.get_subscription_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        for k in range(messages):
            publisher.publish(Int32(data=k))
            until = time.monotonic() + 5.0
            while len(seen) <= k and time.monotonic() < until:
                time.sleep(0.001)
    finally:
        executor.shutdown()
        spinner.join(5.0)
        node.destroy_node()
        talker.destroy_node()
    return seen
