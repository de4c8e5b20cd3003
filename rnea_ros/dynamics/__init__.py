"""The dynamics core: URDF → kinematic tree → Recursive Newton-Euler kernels.

numpy, numba, lxml and urdf_parser_py only: never rclpy or ROS message packages
(``test/package/test_layout.py`` checks it).
"""

from rnea_ros.dynamics.model import RobotModel
from rnea_ros.dynamics.urdf import ModelError

__all__ = ["ModelError", "RobotModel"]
