"""Invalid action names stop rnea_node at start-up as every other bad parameter does: one line
"[FATAL] … fix the parameters", exit code 1, no traceback (it was a traceback from rclpy's action
server or client). And the plain check (settings.ros_name_problem) agrees with rclpy's own on
every name of test_action_names.py: an action server and client made with each name."""

from __future__ import annotations

import pytest
import rclpy
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionClient, ActionServer
from test_action_names import INVALID, VALID  # beside this file: pytest puts test/node on the path

from rnea_ros.controller.settings import ros_name_problem
from rnea_ros.testing.ros_harness import NodeProcess, init_rclpy

pytestmark = pytest.mark.ros


@pytest.fixture(scope="module")
def node():
    init_rclpy()
    node = rclpy.create_node("rnea_node", namespace="/action_names")  # rnea_node's name: {node} expands alike
    yield node
    node.destroy_node()
    rclpy.try_shutdown()


def rclpy_accepts(node, name: str) -> bool:
    """Whether rclpy makes an action server and an action client named ``name`` (nothing is served)."""
    accepted = []
    for make in (
        lambda: ActionServer(node, FollowJointTrajectory, name, execute_callback=lambda handle: None),
        lambda: ActionClient(node, FollowJointTrajectory, name),
    ):
        try:
            made = make()
        except ValueError:  # rclpy's words for an invalid name (InvalidTopicNameException is one too)
            accepted.append(False)
        else:
            made.destroy()
            accepted.append(True)
    assert accepted[0] == accepted[1], name
    return accepted[0]


@pytest.mark.filterwarnings("ignore:Failed to fini publisher:RuntimeWarning")  # rclpy's client refusing a name
def test_the_plain_check_agrees_with_rclpy(node):
    for name in VALID + INVALID:
        assert (ros_name_problem(name) is None) == rclpy_accepts(node, name), name


@pytest.mark.parametrize(
    ("parameters", "named"),
    [
        ({"follow_joint_trajectory_action": "bad name!"}, "follow_joint_trajectory_action: 'bad name!'"),
        ({"controller_action": ""}, "controller_action: ''"),
        ({"controller_action": "a//b"}, "controller_action: 'a//b'"),
    ],
    ids=["bad name!", "empty controller_action", "a//b"],
)
def test_an_invalid_action_name_stops_the_node_with_one_fatal_line(tmp_path, parameters, named):
    process = NodeProcess(tmp_path, "bad_action_name", parameters)
    try:
        code = process.process.wait(timeout=30)
    finally:
        process.stop()
    log = process.output()
    fatal = [line for line in log.splitlines() if "FATAL" in line]
    assert code == 1, log[-2000:]
    assert len(fatal) == 1, log[-2000:]
    assert named in fatal[0] and fatal[0].endswith("fix the parameters. Shutting down."), fatal[0]
    assert "Traceback" not in log, log[-2000:]
