"""rnea_node's start answers first (issue 45): once its model is built it starts the joint_states thread and
holds the rest of its start (the relay's import, the heap's freeze: C calls that keep the GIL from that
thread) until the thread's first publish, or FIRST_ANSWER_WAIT when no state is waiting. The node's
``_start_answering`` with the two objects it uses standing in: a state already waiting, published by a
thread of its own, or none."""

from __future__ import annotations

import threading
import time

import pytest

from rnea_ros.node.node import FIRST_ANSWER_WAIT, RneaNode, _start_answering

pytestmark = pytest.mark.ros

ANSWER = 0.05  # s the stand-in's publish takes


class Outputs:
    def __init__(self) -> None:
        self.published: list[str] = []

    def publish(self, outputs: str) -> None:
        time.sleep(ANSWER)
        self.published.append(outputs)


class JointStates:
    """The joint_states thread: answers the state waiting (if any) on a thread of its own once started."""

    def __init__(self, node: RneaNode, waiting: str | None) -> None:
        self.node, self.waiting, self.thread = node, waiting, None

    def start(self, backlog: bool = True) -> None:
        assert backlog is False  # the newest state waiting, not every one of them
        if self.waiting is not None:
            self.thread = threading.Thread(target=self.node.outputs.publish, args=(self.waiting,))
            self.thread.start()


def started(waiting: str | None) -> tuple[RneaNode, float]:
    node = RneaNode.__new__(RneaNode)  # no rclpy node: only what the start's last step uses
    node.outputs = Outputs()
    node.joint_states = JointStates(node, waiting)
    began = time.monotonic()
    _start_answering(node)
    return node, time.monotonic() - began


def test_the_rest_of_the_start_waits_for_the_answer_of_a_waiting_state():
    node, _ = started("the newest state")
    assert node.outputs.published == ["the newest state"]
    node.joint_states.thread.join(timeout=5.0)
    assert node.outputs.publish.__func__ is Outputs.publish  # the later answers as before, unwrapped
    node.outputs.publish("the next state")
    assert node.outputs.published == ["the newest state", "the next state"]


def test_without_a_state_waiting_the_start_goes_on_after_the_wait():
    node, took = started(None)
    assert FIRST_ANSWER_WAIT <= took < FIRST_ANSWER_WAIT + 1.0
    assert node.outputs.published == []
