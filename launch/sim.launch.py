"""Try rnea_node on a simulated robot before real hardware: rnea_sim (MuJoCo, in place of the
driver and a JointGroupEffortController) and rnea_node, wired as with ros2_control: the node's
effort_commands remapped to the simulator's effort_controller/commands. Arguments: urdf (URDF or
xacro file; default: the bundled example arm), namespace, params_file (rnea_node),
sim_params_file (rnea_sim). Send desired_accelerations (a JointTrajectory, see the README) to move it."""

import os

from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription
from rnea_ros.description import read_description


def _nodes(context):
    description = read_description(LaunchConfiguration("urdf").perform(context))
    namespace = LaunchConfiguration("namespace")
    return [
        Node(
            package="rnea_ros",
            executable="rnea_sim",
            name="rnea_sim",
            namespace=namespace,
            parameters=[LaunchConfiguration("sim_params_file").perform(context), {"robot_description": description}],
            output="screen",
        ),
        Node(
            package="rnea_ros",
            executable="rnea_node",
            name="rnea_node",
            namespace=namespace,
            # rnea_sim applies the URDF's <dynamics>: the node adds them too, unless the params file says otherwise
            parameters=[
                {"urdf_joint_dynamics": True},
                LaunchConfiguration("params_file").perform(context),
                {"robot_description": description},
            ],
            remappings=[("effort_commands", "effort_controller/commands")],
            output="screen",
        ),
    ]


def generate_launch_description():
    share = get_package_share_directory("rnea_ros")
    return LaunchDescription(
        [
            DeclareLaunchArgument("urdf", default_value=os.path.join(share, "urdf", "example_arm.urdf")),
            DeclareLaunchArgument("namespace", default_value=""),
            DeclareLaunchArgument("params_file", default_value=os.path.join(share, "config", "rnea.yaml")),
            DeclareLaunchArgument("sim_params_file", default_value=os.path.join(share, "config", "sim.yaml")),
            OpaqueFunction(function=_nodes),
        ]
    )
