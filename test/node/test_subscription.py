"""DedicatedSubscription over loopback DDS, in this process: what its thread serves, in which order.

Messages are queued before the thread starts, so each test sees one wake-up's worth of backlog."""

from __future__ import annotations

import threading
import time

import pytest
import rclpy
from rclpy.node import Node
from std_msgs.msg import Float64, Int32

from rnea_ros.plumbing.subscription import DedicatedSubscription
from rnea_ros.testing.ros_harness import init_rclpy

pytestmark = pytest.mark.ros

QUEUE = 20


@pytest.fixture(scope="module", autouse=True)
def ros():
    init_rclpy()
    yield
    rclpy.try_shutdown()


@pytest.fixture
def node(request):
    node = Node(f"subscription_test_{request.node.name[:40]}", namespace=f"/subscription_{id(request)}")
    yield node
    node.destroy_node()


def served_in_order(
    node: Node, newest_only: bool, main_count: int, side_count: int, backlog: bool = True
) -> list[tuple[str, float]]:
    """Queues ``side_count`` side messages then ``main_count`` main ones, starts the thread, and
    returns what it served, in order."""
    served: list[tuple[str, float]] = []
    done = threading.Event()

    def on_main(msg: Int32) -> None:
        served.append(("main", msg.data))
        if msg.data == main_count - 1:
            done.set()

    subscription = DedicatedSubscription(node, Int32, "main", on_main, QUEUE)
    subscription.also_serve(Float64, "side", lambda msg: served.append(("side", msg.data)), QUEUE, newest_only)
    main, side = node.create_publisher(Int32, "main", QUEUE), node.create_publisher(Float64, "side", QUEUE)
    deadline = time.monotonic() + 10.0
    while (main.get_subscription_count() == 0 or side.get_subscription_count() == 0) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert main.get_subscription_count() and side.get_subscription_count(), "no match within 10 s"
    for k in range(side_count):
        side.publish(Float64(data=float(k)))
    for k in range(main_count):
        main.publish(Int32(data=k))
    time.sleep(0.5)  # delivered to the readers' queues (loopback), the thread not started yet
    subscription.start(backlog)
    try:
        assert done.wait(10.0), f"the main topic was not served: {served}"
        time.sleep(0.1)
    finally:
        subscription.destroy()
    return served


def test_newest_only_serves_the_newest_side_message_before_the_main_topics_backlog(node):
    served = served_in_order(node, newest_only=True, main_count=3, side_count=5)
    assert served == [("side", 4.0), ("main", 0), ("main", 1), ("main", 2)]


def test_every_message_of_a_side_topic_is_served_before_the_main_topic(node):
    served = served_in_order(node, newest_only=False, main_count=2, side_count=5)
    assert served == [("side", float(k)) for k in range(5)] + [("main", 0), ("main", 1)]


def test_without_the_backlog_only_the_newest_waiting_message_of_the_main_topic_is_served(node):
    served = served_in_order(node, newest_only=True, main_count=3, side_count=5, backlog=False)
    assert served == [("side", 4.0), ("main", 2)]
