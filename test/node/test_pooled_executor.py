"""PooledExecutor (plumbing/executor.py) in this process over loopback DDS: each message's callback
holds the GIL for ~3 ms, as rnea_node's trajectory answer does, and the spinning thread's wake-ups
per message are counted. Jazzy's MultiThreadedExecutor, the failure PooledExecutor is for, is measured
beside it by benchmarks/executor_wakeups.py: its count depends on the scheduler (docs/figures/executor_wakeups.md;
3.3 per message in one CI run, over 20 in others), so it is a figure, not a test."""

from __future__ import annotations

import time

import pytest
from rclpy.node import Node
from std_msgs.msg import Int32

from rnea_ros.plumbing.executor import PooledExecutor
from rnea_ros.testing.executor_probe import counting, served, slow_callback
from rnea_ros.testing.ros_harness import rclpy_running

pytestmark = pytest.mark.ros

MESSAGES = 30


ros = pytest.fixture(scope="module", autouse=True)(rclpy_running)


def test_each_message_is_served_once_with_a_few_wakeups():
    executor = counting(PooledExecutor)
    assert served(executor, slow_callback, "pooled", MESSAGES) == list(range(MESSAGES))
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
