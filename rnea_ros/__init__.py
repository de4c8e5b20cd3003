"""rnea_ros: inverse dynamics of any URDF robot, as a library and as a ROS 2 node."""

from rnea_ros.model import RobotModel
from rnea_ros.urdf import ModelError

__all__ = ["ModelError", "RobotModel"]
