"""control_msgs as MoveIt and a real joint_trajectory_controller see it: the type hashes (RIHS01) of the
interfaces built by scripts/build-interfaces (or of a ROS install's package) equal those of the real
Jazzy package, so that the two match over DDS. The expected hashes were read on a real Jazzy system."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")
from ament_index_python.packages import get_package_share_directory  # noqa: E402
from control_msgs.action import FollowJointTrajectory  # noqa: E402
from control_msgs.msg import JointComponentTolerance, JointTolerance, JointTrajectoryControllerState  # noqa: E402

from rnea_ros.testing.domain import reserve_domain_id  # noqa: E402

JAZZY_TYPE_HASHES = {
    "control_msgs/msg/JointTrajectoryControllerState": (
        "RIHS01_51d8dd89cc624cbe9daaeeb4d80d6de9b86168ffdc3be41fefc0953e3c26e480"
    ),
    "control_msgs/action/FollowJointTrajectory_FeedbackMessage": (
        "RIHS01_80398fcb9674a79081a9906e2ccf0c804dd7cb15e22e362e606ee87186beab71"
    ),
    "control_msgs/msg/JointTolerance": "RIHS01_c254f9cece0f3b733017b6990fd46d1326e25242d6b8844398c97d9a88e7d648",
}
MESSAGE_CLASSES = {
    "control_msgs/msg/JointTrajectoryControllerState": JointTrajectoryControllerState,
    "control_msgs/action/FollowJointTrajectory_FeedbackMessage": FollowJointTrajectory.Impl.FeedbackMessage,
    "control_msgs/msg/JointTolerance": JointTolerance,
}


def installed_type_hashes(interface: str) -> dict[str, str]:
    """Every hash in the installed type description of ``interface`` ("msg/JointTolerance"), by type name."""
    description = Path(get_package_share_directory("control_msgs")) / f"{interface}.json"
    return {entry["type_name"]: entry["hash_string"] for entry in json.loads(description.read_text())["type_hashes"]}


@pytest.fixture(scope="module")
def node():
    context = rclpy.Context()
    with pytest.MonkeyPatch.context() as environment:
        environment.setenv("ROS_DOMAIN_ID", str(reserve_domain_id()))  # read by rclpy.init
        rclpy.init(context=context)
    node = rclpy.create_node("control_msgs_type_hashes", context=context)
    yield node
    node.destroy_node()
    rclpy.shutdown(context=context)


@pytest.mark.parametrize("type_name", sorted(JAZZY_TYPE_HASHES))
def test_the_type_hash_announced_over_dds_is_jazzys(node, type_name):
    topic = "/type_hash_" + type_name.rsplit("/", 1)[1].lower()
    publisher = node.create_publisher(MESSAGE_CLASSES[type_name], topic, 1)
    try:
        (endpoint,) = node.get_publishers_info_by_topic(topic)
        assert endpoint.topic_type == type_name
        assert str(endpoint.topic_type_hash) == JAZZY_TYPE_HASHES[type_name]
    finally:
        node.destroy_publisher(publisher)


@pytest.mark.parametrize("type_name", sorted(JAZZY_TYPE_HASHES))
def test_the_installed_type_descriptions_carry_jazzys_hashes(type_name):
    interface = "action/FollowJointTrajectory" if "/action/" in type_name else type_name.split("/", 1)[1]
    assert installed_type_hashes(interface)[type_name] == JAZZY_TYPE_HASHES[type_name]


def test_the_fields_and_constants_of_the_tolerances_are_jazzys():
    assert JointTolerance.get_fields_and_field_types() == {
        "name": "string",
        "position": "double",
        "velocity": "double",
        "acceleration": "double",
    }
    assert (JointComponentTolerance.X_AXIS, JointComponentTolerance.ROTATION) == (1, 5)
    result = FollowJointTrajectory.Result
    assert (result.SUCCESSFUL, result.INVALID_JOINTS, result.GOAL_TOLERANCE_VIOLATED) == (0, -2, -5)
