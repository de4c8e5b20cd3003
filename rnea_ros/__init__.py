"""rnea_ros: inverse dynamics of any URDF robot, as a library and as a ROS 2 node.

Rooms (subpackages and top-level modules, on floors: docs/development.md, "Rooms and floors", says
what each holds and may import): ``dynamics`` (the library, no ROS), ``motion`` (trajectories, no
ROS), ``plumbing`` (the ROS pieces both nodes share), ``analysis`` (rnea_analyze), ``node``
(rnea_node), ``simulation`` (rnea_sim), ``demo`` (the main job and the bundled robot), ``testing``
(helpers for tests and benchmarks).

``RobotModel`` and ``ModelError`` are imported on first use (numpy and numba take 1-2 s): ``python -m
rnea_ros.node`` installs its signal handlers before that, so a signal while it loads ends cleanly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rnea_ros.dynamics import ModelError, RobotModel

__all__ = ["ModelError", "RobotModel"]


def __getattr__(name: str) -> object:
    if name in __all__:
        from rnea_ros import dynamics

        return getattr(dynamics, name)
    raise AttributeError(f"module 'rnea_ros' has no attribute '{name}'")
