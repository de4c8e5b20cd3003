"""A subscription served by its own thread and its own wait set, outside the node's executor.

Why: rclpy's executors rebuild their wait set from every entity of the node on each
wake-up (subscriptions, timers, the six parameter services, QoS event handlers), in
Python: ~150 µs per message before the callback runs. At 1-2 kHz joint_states that
is most of a core and most of the latency. Here the wait set holds one subscription,
is built once, and a wake-up drains every message that is waiting. The rest of the
node (other topics, timers, parameter services) stays with ``rclpy.spin``.

Topics that come at the same rate and feed the same computation (a floating base's odometry
beside joint_states) can be served by the same thread (``also_serve``): drained first at each
wake-up, so that the main callback sees their newest message, and never running beside it
(two Python threads would take turns on the GIL in the middle of a computation).

This uses ``rclpy_implementation`` (rclpy's C binding, what its executors use): the
one place in rnea_ros that reaches below the public rclpy API.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import ExitStack

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
        self._subscription = self._subscribe(msg_type, topic, callback, qos, raw)
        self._first: list = []  # (subscription, callback) of ``also_serve``, drained first
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name=f"{topic} subscription", daemon=True)

    @property
    def topic_name(self) -> str:
        return self._subscription.topic_name

    def also_serve(self, msg_type, topic: str, callback: Callable, qos: QoSProfile | int) -> None:
        """Serves ``topic`` in this thread too, before the main topic at each wake-up (before ``start``)."""
        self._first.append((self._subscribe(msg_type, topic, callback, qos, False), callback))

    def _subscribe(self, msg_type, topic: str, callback: Callable, qos: QoSProfile | int, raw: bool):
        # No QoS event handlers: they would stay with the executor, and rmw reports them ready
        # whenever this subscription has data, so the executor would spin without doing work.
        # The node's diagnostics check publisher QoS compatibility instead.
        quiet = SubscriptionEventCallbacks(use_default_callbacks=False)
        subscription = self._node.create_subscription(msg_type, topic, callback, qos, event_callbacks=quiet, raw=raw)
        self._node._subscriptions.remove(subscription)  # served by this thread, not the executor
        return subscription

    def start(self) -> None:
        self._thread.start()

    def destroy(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        self._subscription.destroy()
        for subscription, _ in self._first:
            subscription.destroy()

    def _serve(self) -> None:
        served = [*self._first, (self._subscription, self._callback)]
        context = self._node.context
        with context.handle, ExitStack() as handles:
            for subscription, _ in served:
                handles.enter_context(subscription.handle)
            wait_set = _rclpy.WaitSet(len(served), 0, 0, 0, 0, 0, context.handle)
            while not self._stop.is_set() and context.ok():
                wait_set.clear_entities()
                for subscription, _ in served:
                    wait_set.add_subscription(subscription.handle)
                wait_set.wait(WAKE_PERIOD_NS)
                for subscription, callback in served:
                    self._drain(subscription, callback)

    def _drain(self, subscription, callback: Callable) -> None:
        while not self._stop.is_set():
            taken = subscription.handle.take_message(subscription.msg_type, subscription.raw)
            if taken is None:
                return
            try:
                callback(taken[0])
            except Exception as error:  # the thread must outlive any bug in a callback
                if not self._node.context.ok():
                    return  # shut down (SIGINT, SIGTERM) while a message was served: nothing went wrong
                self._node.get_logger().error(
                    f"{subscription.topic_name} callback raised {error!r}; message dropped", throttle_duration_sec=1.0
                )
