"""rnea_ros: inverse dynamics of any URDF robot, as a library and as a ROS 2 node.

Rooms (each a subpackage; the README's "Code layout" says what each may import):
``dynamics`` (the library, no ROS), ``node`` (rnea_node, rclpy), ``analysis``
(rnea_analyze), ``demo`` (the main job and the bundled robot), ``testing`` (helpers
for tests and benchmarks).
"""

from rnea_ros.dynamics import ModelError, RobotModel

__all__ = ["ModelError", "RobotModel"]
