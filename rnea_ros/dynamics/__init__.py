"""The dynamics core: URDF → kinematic tree → Recursive Newton-Euler kernels.

A ``RobotModel`` is never written once built (shared by every thread); what an algorithm writes is
a ``ModelData`` (``model.create_data()``), one per thread (``algorithms``).

numpy, numba, lxml and urdf_parser_py only: never rclpy or ROS message packages
(``test/package/test_layout.py`` checks it). ``ModelData``, ``RobotModel`` and ``ModelError`` are
imported on first use: rnea_node's start imports ``jit`` and ``aot`` before any kernel module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rnea_ros.dynamics.data import ModelData
    from rnea_ros.dynamics.model import RobotModel
    from rnea_ros.dynamics.urdf import ModelError

__all__ = ["ModelData", "ModelError", "RobotModel"]
_HOMES = {"ModelData": "data", "RobotModel": "model", "ModelError": "urdf"}


def __getattr__(name: str) -> object:
    if name in _HOMES:
        from importlib import import_module

        return getattr(import_module(f"rnea_ros.dynamics.{_HOMES[name]}"), name)
    raise AttributeError(f"module 'rnea_ros.dynamics' has no attribute '{name}'")
