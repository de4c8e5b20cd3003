"""A plain rclpy relay of FollowJointTrajectory goals, the baseline of benchmarks/action_forwarding.py:
what forwarding a goal unchanged costs in rclpy alone. Each goal's execute callback sends it on to the
controller's action and waits (asleep) for its acceptance and result, which come on the executor's
other threads; feedback is relayed. No check, no effort, no deadline: nothing rnea_node adds.

    python -m rnea_ros.testing.plain_relay SERVED CONTROLLER   (runs until SIGINT)
"""

from __future__ import annotations

import sys
import threading

import rclpy
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionClient, ActionServer
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node

from rnea_ros.plumbing.actions import RESULT_TIMEOUT

WAIT = 30.0  # s at most for the controller's answer to one goal


def _wait(future) -> object:
    done = threading.Event()
    future.add_done_callback(lambda _future: done.set())
    done.wait(WAIT)
    return future.result() if future.done() else None


class PlainRelay(Node):
    def __init__(self, served: str, controller: str) -> None:
        super().__init__("plain_relay")
        group = ReentrantCallbackGroup()
        self.client = ActionClient(self, FollowJointTrajectory, controller, callback_group=group)
        self.server = ActionServer(
            self, FollowJointTrajectory, served, self._execute, callback_group=group, result_timeout=RESULT_TIMEOUT
        )

    def _execute(self, handle) -> FollowJointTrajectory.Result:
        sent = self.client.send_goal_async(
            handle.request, feedback_callback=lambda msg: handle.publish_feedback(msg.feedback)
        )
        downstream = _wait(sent)
        if downstream is None or not downstream.accepted:
            handle.abort()
            return FollowJointTrajectory.Result()
        response = _wait(downstream.get_result_async())
        if response is None:
            handle.abort()
            return FollowJointTrajectory.Result()
        handle.succeed()
        return response.result


def main() -> None:
    rclpy.init()
    node = PlainRelay(sys.argv[1], sys.argv[2])
    executor = MultiThreadedExecutor(num_threads=4)
    try:
        rclpy.spin(node, executor=executor)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        executor.shutdown(timeout_sec=1.0)
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
