"""Markers (declared in setup.cfg, [tool:pytest]), each declared in the test file that needs it:

- ``ros``: needs ROS 2 (message packages, rclpy, nodes over loopback DDS with a private
  ROS_DOMAIN_ID from ``rnea_ros.testing.domain``). A file that needs it says so at module level,
  ``pytestmark = pytest.mark.ros`` (or a list holding it). Without rclpy such files are not even
  collected: this hook reads the mark from the file's syntax tree, without importing it.
- ``slow``: more than ~10 s on its own (marked where it is defined).

``pytest -m "not ros and not slow"`` is the fast inner loop.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

try:
    ROS_AVAILABLE = importlib.util.find_spec("rclpy") is not None
except ImportError:
    ROS_AVAILABLE = False


def declares_ros_mark(path: Path) -> bool:
    """True when the module assigns ``pytestmark`` a value that names ``pytest.mark.ros``."""
    for statement in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(statement, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "pytestmark" for target in statement.targets
        ):
            return any(isinstance(node, ast.Attribute) and node.attr == "ros" for node in ast.walk(statement.value))
    return False


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    if ROS_AVAILABLE or collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    return True if declares_ros_mark(collection_path) else None
