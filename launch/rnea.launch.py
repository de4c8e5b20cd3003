"""Start rnea_node. Arguments: urdf (URDF or xacro file; empty: use the robot_description topic),
xacro_args ("name:=value name:=value", passed to xacro), namespace, params_file. All behaviour
lives in the node and its parameters."""

import os

from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription


def _node(context):
    urdf_file = LaunchConfiguration("urdf").perform(context)
    parameters = [LaunchConfiguration("params_file").perform(context)]
    if urdf_file:
        if urdf_file.endswith(".xacro"):
            import xacro

            pairs = (arg.split(":=", 1) for arg in LaunchConfiguration("xacro_args").perform(context).split())
            mappings = {name: value for name, value in pairs}
            description = xacro.process_file(urdf_file, mappings=mappings).toxml()
        else:
            with open(urdf_file) as f:
                description = f.read()
        parameters.append({"robot_description": description})
    return [
        Node(
            package="rnea_ros",
            executable="rnea_node",
            name="rnea_node",
            namespace=LaunchConfiguration("namespace"),
            parameters=parameters,
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
            OpaqueFunction(function=_node),
        ]
    )
