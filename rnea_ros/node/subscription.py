"""A subscription served by its own thread and its own wait set, outside the node's executor.

Why: rclpy's executors rebuild their wait set from every entity of the node on each
wake-up (subscriptions, timers, the six parameter services, QoS event handlers), in
Python: ~150 µs per message before the callback runs. At 1-2 kHz joint_states that
is most of a core and most of the latency. Here the wait set holds one subscription,
is built once, and a wake-up drains every message that is waiting. The rest of the
node (other topics, timers, parameter services) stays with ``rclpy.spin``.

This uses ``rclpy_implementation`` (rclpy's C binding, what its executors use): the
one place in rnea_ros that reaches below the public rclpy API.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.node import Node
from rclpy.qos import QoSProfile

WAKE_PERIOD_NS = 100_000_000  # how often the thread checks for shutdown when no message comes


class DedicatedSubscription:
    def __init__(
        self, node: Node, msg_type, topic: str, callback: Callable, qos: QoSProfile | int, raw: bool = False
    ) -> None:
        """``raw``: the callback gets the serialized message (CDR bytes) instead of the message."""
        self._node = node
        self._callback = callback
        # No QoS event handlers: they would stay with the executor, and rmw reports them ready
        # whenever this subscription has data, so the executor would spin without doing work.
        # The node's diagnostics check publisher QoS compatibility instead.
        quiet = SubscriptionEventCallbacks(use_default_callbacks=False)
        self._subscription = node.create_subscription(msg_type, topic, callback, qos, event_callbacks=quiet, raw=raw)
        node._subscriptions.remove(self._subscription)  # served by this thread, not the executor
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name=f"{topic} subscription", daemon=True)

    @property
    def topic_name(self) -> str:
        return self._subscription.topic_name

    def start(self) -> None:
        self._thread.start()

    def destroy(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        self._subscription.destroy()

    def _serve(self) -> None:
        subscription, context = self._subscription, self._node.context
        with context.handle, subscription.handle:
            wait_set = _rclpy.WaitSet(1, 0, 0, 0, 0, 0, context.handle)
            while not self._stop.is_set() and context.ok():
                wait_set.clear_entities()
                wait_set.add_subscription(subscription.handle)
                wait_set.wait(WAKE_PERIOD_NS)
                while not self._stop.is_set():
                    taken = subscription.handle.take_message(subscription.msg_type, subscription.raw)
                    if taken is None:
                        break
                    self._dispatch(taken[0])

    def _dispatch(self, msg) -> None:
        try:
            self._callback(msg)
        except Exception as error:  # the thread must outlive any bug in a callback
            self._node.get_logger().error(
                f"{self.topic_name} callback raised {error!r}; message dropped", throttle_duration_sec=1.0
            )
