"""The dynamics core: URDF → kinematic tree → Recursive Newton-Euler kernels.

A ``RobotModel`` is never written once built (shared by every thread); what an algorithm writes is
a ``ModelData`` (``model.create_data()``), one per thread (``algorithms``).

numpy, numba, lxml and urdf_parser_py only: never rclpy or ROS message packages
(``test/package/test_layout.py`` checks it).
"""

from rnea_ros.dynamics.data import ModelData
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.dynamics.urdf import ModelError

__all__ = ["ModelData", "ModelError", "RobotModel"]
