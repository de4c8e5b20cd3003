"""rclpy's MultiThreadedExecutor without the busy loop of Jazzy's (rclpy issue 1452).

Jazzy's executor yields every task that is neither executing nor done before it waits for new work,
and its MultiThreadedExecutor submits each yielded task to its thread pool. A task submitted but not
yet started by a worker is yielded and submitted again at once, over and over: the spinning thread
holds the GIL and a core until a worker gets to the task (seen in rnea_node: hundreds of
submissions of each joint_trajectory message, its answer two to three times slower than in a plain
process; test/node/test_pooled_executor.py counts the wake-ups). Fixed upstream in rclpy 10.0.4
(Rolling, PR 1547), not in Jazzy. Here a task already waiting in the pool is not submitted again:
the spinning thread waits for a worker to start it instead. A task yielded again once a worker has
started it (a coroutine that suspended) is submitted again, as rclpy does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from rclpy.executors import (
    ConditionReachedException,
    ExternalShutdownException,
    MultiThreadedExecutor,
    ShutdownException,
    TimeoutException,
)

QUEUED_WAIT = 0.01  # s the spinning thread waits at most, at a time, for a queued task to start


class PooledExecutor(MultiThreadedExecutor):
    """A MultiThreadedExecutor that submits a task to its pool once until a worker starts it."""

    def __init__(self, num_threads: int | None = None, *, context=None) -> None:
        super().__init__(num_threads, context=context)
        self._queued: dict[object, threading.Event] = {}  # task → set when a worker starts it
        self._queued_lock = threading.Lock()
        self.submitted = 0  # tasks handed to the pool (each start of a callback, each resumption)

    def _spin_once_impl(
        self, timeout_sec: float | None = None, wait_condition: Callable[[], bool] = lambda: False
    ) -> None:
        try:
            handler, _entity, _node = self.wait_for_ready_callbacks(timeout_sec, None, wait_condition)
        except (ExternalShutdownException, ShutdownException, TimeoutException, ConditionReachedException):
            return
        with self._queued_lock:
            started = self._queued.get(handler)
            fresh = started is None
            if fresh:
                started = self._queued[handler] = threading.Event()
        if fresh:
            self._submit(handler, started)
        else:  # yielded again while it waits for a worker: not submitted twice
            started.wait(QUEUED_WAIT)

    def _submit(self, handler, started: threading.Event) -> None:
        def run() -> None:
            with self._queued_lock:
                del self._queued[handler]
            started.set()
            handler()

        self.submitted += 1
        self._executor.submit(run)
        self._futures.append(handler)
        for future in self._futures[:]:
            if future.done():
                self._futures.remove(future)
                future.result()  # raise any exceptions, as rclpy's does
