"""rnea_ros: inverse dynamics of any URDF robot, as a library and as a ROS 2 node.

Rooms (subpackages and top-level modules, on floors: docs/development.md, "Rooms and floors", says
what each holds and may import): ``dynamics`` (the library, no ROS), ``motion`` (trajectories, no
ROS), ``plumbing`` (the ROS pieces both nodes share), ``analysis`` (rnea_analyze), ``node``
(rnea_node), ``simulation`` (rnea_sim), ``demo`` (the main job and the bundled robot), ``testing``
(helpers for tests and benchmarks).
"""

from rnea_ros.dynamics import ModelError, RobotModel

__all__ = ["ModelError", "RobotModel"]
