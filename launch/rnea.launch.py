"""Start rnea_node. Arguments: urdf (URDF or xacro file; empty: use the robot_description topic),
xacro_args ("name:=value name:=value", passed to xacro), namespace, params_file,
effort_commands (where effort_commands go: /<controller>/commands of a JointGroupEffortController)
and use_sim_time. All behaviour lives in the node and its parameters."""

import os

from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription
from rnea_ros.description import read_description


def _node(context):
    urdf_file = LaunchConfiguration("urdf").perform(context)
    parameters = [
        LaunchConfiguration("params_file").perform(context),
        {"use_sim_time": LaunchConfiguration("use_sim_time").perform(context).lower() == "true"},
    ]
    if urdf_file:
        xacro_args = LaunchConfiguration("xacro_args").perform(context)
        parameters.append({"robot_description": read_description(urdf_file, xacro_args)})
    return [
        Node(
            package="rnea_ros",
            executable="rnea_node",
            name="rnea_node",
            namespace=LaunchConfiguration("namespace"),
            parameters=parameters,
            remappings=[("effort_commands", LaunchConfiguration("effort_commands").perform(context))],
            output="screen",
        )
    ]


def generate_launch_description():
    share = get_package_share_directory("rnea_ros")
    return LaunchDescription(
        [
            DeclareLaunchArgument("urdf", default_value="", description="URDF or xacro file (empty: topic)"),
            DeclareLaunchArgument("xacro_args", default_value="", description='xacro arguments: "a:=1 b:=x"'),
            DeclareLaunchArgument("namespace", default_value=""),
            DeclareLaunchArgument("params_file", default_value=os.path.join(share, "config", "rnea.yaml")),
            DeclareLaunchArgument(
                "effort_commands",
                default_value="effort_commands",
                description="topic of the effort commands, e.g. /effort_controller/commands",
            ),
            DeclareLaunchArgument("use_sim_time", default_value="false", description="true: the /clock topic"),
            OpaqueFunction(function=_node),
        ]
    )
