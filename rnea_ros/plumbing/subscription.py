"""A subscription served by its own thread and its own wait set, outside the node's executor.

Why: rclpy's executors rebuild their wait set from every entity of the node on each
wake-up (subscriptions, timers, the six parameter services, QoS event handlers), in
Python: ~150 µs per message before the callback runs. At 1-2 kHz joint_states that
is most of a core and most of the latency. Here the wait set holds one subscription,
is built once, and a wake-up drains every message that is waiting. The rest of the
node (other topics, timers, parameter services) stays with ``rclpy.spin``.

Topics that come at the same rate and feed the same computation can be served by the same thread
(``also_serve``), never running beside the main callback (two Python threads would take turns on
the GIL in the middle of a computation):
- every message (a lockstep simulator's answers, each counted): drained first at each wake-up;
- ``newest_only`` (a floating base's odometry or IMU: inputs of which only the latest message
  counts): before each message of the main topic, every waiting message is taken as bytes
  and the newest alone is read and handed to its callback. The main callback thus sees the newest
  even while it catches up on a backlog: drained once per wake-up, a backlog of joint_states ran
  0.1 s ahead of the odometry on a busy machine and the node answered none of them; read one by
  one, the odometry cost the thread enough to lose joint_states.

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
from rclpy.serialization import deserialize_message

from rnea_ros.plumbing.threads import stop_thread

WAKE_PERIOD_NS = 100_000_000  # how often the thread checks for shutdown when no message comes


class DedicatedSubscription:
    def __init__(
        self, node: Node, msg_type, topic: str, callback: Callable, qos: QoSProfile | int, raw: bool = False
    ) -> None:
        """``raw``: the callback gets the serialized message (CDR bytes) instead of the message."""
        self._node = node
        self._callback = callback
        self._subscription = self._subscribe(msg_type, topic, callback, qos, raw)
        self._every: list = []  # (subscription, callback) of ``also_serve``, drained first at each wake-up
        self._newest: list = []  # the same for ``newest_only``, before each message of the main topic
        self._raw_callbacks: set[Callable] = set()  # those of ``also_serve`` that take the bytes
        self._stop = threading.Event()
        self._skip_backlog = False
        self._thread = threading.Thread(target=self._serve, name=f"{topic} subscription", daemon=True)

    @property
    def topic_name(self) -> str:
        return self._subscription.topic_name

    def also_serve(
        self,
        msg_type,
        topic: str,
        callback: Callable,
        qos: QoSProfile | int,
        newest_only: bool = False,
        raw: bool = False,
    ) -> None:
        """Serves ``topic`` in this thread too (before ``start``): every message, or its newest alone
        (see the module docstring); ``raw``: the callback gets the CDR bytes."""
        served = self._newest if newest_only else self._every
        subscription = self._subscribe(msg_type, topic, callback, qos, newest_only or raw)
        served.append((subscription, callback))
        if raw:
            self._raw_callbacks.add(callback)

    def _subscribe(self, msg_type, topic: str, callback: Callable, qos: QoSProfile | int, raw: bool):
        # No QoS event handlers: they would stay with the executor, and rmw reports them ready
        # whenever this subscription has data, so the executor would spin without doing work.
        # The node's diagnostics check publisher QoS compatibility instead.
        quiet = SubscriptionEventCallbacks(use_default_callbacks=False)
        subscription = self._node.create_subscription(msg_type, topic, callback, qos, event_callbacks=quiet, raw=raw)
        self._node._subscriptions.remove(subscription)  # served by this thread, not the executor
        return subscription

    def start(self, backlog: bool = True) -> None:
        """Starts the thread; ``backlog=False``: of the main topic's messages already waiting (those that
        came while the node built its model), the newest alone is served, the others dropped unread."""
        self._skip_backlog = not backlog
        self._thread.start()

    def destroy(self) -> None:
        stop_thread(self._stop, self._thread, timeout=2.0)
        self._subscription.destroy()
        for subscription, _ in self._every + self._newest:
            subscription.destroy()

    def _serve(self) -> None:
        served = [*self._every, *self._newest, (self._subscription, self._callback)]
        context = self._node.context
        with context.handle, ExitStack() as handles:
            for subscription, _ in served:
                handles.enter_context(subscription.handle)
            wait_set = _rclpy.WaitSet(len(served), 0, 0, 0, 0, 0, context.handle)
            if self._skip_backlog:
                self._serve_newest_waiting()
            while not self._stop.is_set() and context.ok():
                wait_set.clear_entities()
                for subscription, _ in served:
                    wait_set.add_subscription(subscription.handle)
                wait_set.wait(WAKE_PERIOD_NS)
                for subscription, callback in self._every:
                    self._drain(subscription, callback)
                self._drain(self._subscription, self._callback, self._newest)

    def _drain(self, subscription, callback: Callable, newest_first: list | tuple = ()) -> None:
        """Serves every waiting message of ``subscription``, each after the newest message of each of
        ``newest_first`` (those are served even when ``subscription`` has nothing)."""
        while not self._stop.is_set():
            if not self._serve_newest_of(newest_first):
                return
            taken = subscription.handle.take_message(subscription.msg_type, subscription.raw)
            if taken is None or not self._serve_one(subscription, callback, taken[0], False):
                return

    def _serve_newest_of(self, subscriptions: list | tuple, deserialize: bool = True) -> bool:
        """The newest waiting message of each of ``subscriptions`` served (read from its bytes when
        ``deserialize``), the others dropped; False once shut down."""
        for subscription, callback in subscriptions:
            newest = None
            while (taken := subscription.handle.take_message(subscription.msg_type, True)) is not None:
                newest = taken[0]
            read = deserialize and callback not in self._raw_callbacks
            if newest is not None and not self._serve_one(subscription, callback, newest, read):
                return False
        return True

    def _serve_newest_waiting(self) -> None:
        """The side topics as at any wake-up, then the main topic's newest waiting message alone."""
        for subscription, callback in self._every:
            self._drain(subscription, callback)
        if self._serve_newest_of(self._newest):
            main = [(self._subscription, self._callback)]
            self._serve_newest_of(main, deserialize=not self._subscription.raw)

    def _serve_one(self, subscription, callback: Callable, taken, deserialize: bool) -> bool:
        """``callback`` on one message (read from its bytes when ``deserialize``); False once shut down."""
        try:
            callback(deserialize_message(taken, subscription.msg_type) if deserialize else taken)
        except Exception as error:  # the thread must outlive any bug in a callback
            if not self._node.context.ok():
                return False  # shut down (SIGINT, SIGTERM) while a message was served: nothing went wrong
            self._node.get_logger().error(
                f"{subscription.topic_name} callback raised {error!r}; message dropped", throttle_duration_sec=1.0
            )
        return True
