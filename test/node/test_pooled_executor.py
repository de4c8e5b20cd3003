"""PooledExecutor (plumbing/executor.py) against Jazzy's MultiThreadedExecutor, in this process over
loopback DDS: each message's callback holds the GIL for ~3 ms, as rnea_node's trajectory answer does.
The spinning thread's wake-ups per message are counted (``wait_for_ready_callbacks`` returns)."""

from __future__ import annotations

import threading
import time

import pytest
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node
from std_msgs.msg import Int32

from rnea_ros.plumbing.executor import PooledExecutor
from rnea_ros.testing.ros_harness import rclpy_running

pytestmark = pytest.mark.ros

MESSAGES = 30
CALLBACK_SECONDS = 0.003


ros = pytest.fixture(scope="module", autouse=True)(rclpy_running)


def counting(executor_class):
    class Counting(executor_class):
        wakeups = 0

        def wait_for_ready_callbacks(self, *args, **kwargs):
            found = super().wait_for_ready_callbacks(*args, **kwargs)
            self.wakeups += 1
            return found

    return Counting(num_threads=4)


def busy(seconds: float) -> None:
    """Python work that holds the GIL (time.sleep would release it)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def served(executor, callback, topic: str, messages: int = MESSAGES) -> list[int]:
    """``messages`` messages published one at a time (each after the previous one's callback), spun by
    ``executor`` on its own thread; the values its callback saw."""
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


def slow_callback(msg, seen: list[int]) -> None:
    busy(CALLBACK_SECONDS)
    seen.append(msg.data)


@pytest.mark.slow  # the stock executor spins a core while it waits: 13 s of CPU for 30 messages in CI
def test_jazzys_executor_spins_while_a_callback_waits_for_a_worker():
    """The failure the PooledExecutor is for, still there in the installed rclpy."""
    messages = 10
    executor = counting(MultiThreadedExecutor)
    assert served(executor, slow_callback, "stock", messages) == list(range(messages))
    assert executor.wakeups > 20 * messages


def test_each_message_is_served_once_with_a_few_wakeups():
    executor = counting(PooledExecutor)
    assert served(executor, slow_callback, "pooled") == list(range(MESSAGES))
    assert executor.wakeups < 6 * MESSAGES  # a message's callback, the guard conditions after
    assert executor.submitted < 6 * MESSAGES


def test_a_callbacks_exception_reaches_spin_as_with_rclpys():
    executor = PooledExecutor(num_threads=2)
    node, talker = Node("raising_listener"), Node("raising_talker")

    def raises(_msg) -> None:
        raise ValueError("a bug in a callback")

    node.create_subscription(Int32, "raising", raises, 10)
    publisher = talker.create_publisher(Int32, "raising", 10)
    executor.add_node(node)
    try:
        deadline = time.monotonic() + 20.0
        while publisher.get_subscription_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        with pytest.raises(ValueError, match="a bug in a callback"):
            for _ in range(200):  # the error is raised by a later spin_once, once the task is done
                publisher.publish(Int32(data=1))
                executor.spin_once(timeout_sec=0.05)
    finally:
        executor.shutdown()
        node.destroy_node()
        talker.destroy_node()
