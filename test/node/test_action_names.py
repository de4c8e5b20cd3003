"""rnea_node's action names (follow_joint_trajectory_action, controller_action) checked with the
settings, without ROS: a name rcl would refuse is a ValueError that says which parameter and why
(the node turns it into its one-line FATAL at start-up: test_action_names_ros.py)."""

from __future__ import annotations

import pytest

from rnea_ros.controller.settings import Settings, ros_name_problem

# names rcl and rmw accept once expanded in a namespace (test_action_names_ros.py checks with rclpy)
VALID = [
    "follow_joint_trajectory",
    "/joint_trajectory_controller/follow_joint_trajectory",
    "~/follow_joint_trajectory",
    "~",
    "arm2/jtc_1/follow",
    "_private/x",
    "{node}/follow",
    "{ns}/jtc/follow",
    "{namespace}/x{node}",
    "a",
]
INVALID = [
    "",
    "bad name!",
    "a//b",
    "//a",
    "a/",
    "/",
    "~/",
    "2arm/follow",
    "arm/2follow",
    "a~b",
    "~a",
    "a-b",
    "a.b",
    "ä",
    "{node",
    "a}b",
    "{unknown}/x",
    "{}",
    "/{ns}/jtc/follow",
]


@pytest.mark.parametrize("name", VALID)
def test_valid_ros_names_pass(name):
    assert ros_name_problem(name) is None


@pytest.mark.parametrize("name", INVALID)
def test_invalid_ros_names_say_why(name):
    problem = ros_name_problem(name)
    assert problem and "\n" not in problem


@pytest.mark.parametrize(
    ("values", "said"),
    [
        ({"follow_joint_trajectory_action": "bad name!"}, "follow_joint_trajectory_action: 'bad name!'"),
        ({"controller_action": ""}, "controller_action: '' is no valid action name: it is empty"),
        ({"controller_action": "a//b"}, "controller_action: 'a//b' is no valid action name: it contains '//'"),
        ({"follow_joint_trajectory_action": "", "controller_action": "a//b"}, "unused while"),
    ],
)
def test_settings_refuse_an_invalid_action_name(values, said):
    with pytest.raises(ValueError, match="is no valid action name") as refused:
        Settings(**values)
    assert said in str(refused.value)


def test_no_action_served_needs_no_controller_action():
    assert Settings(follow_joint_trajectory_action="", controller_action="").controller_action == ""
    assert Settings(controller_action="~/jtc/follow_joint_trajectory").follow_joint_trajectory_action
