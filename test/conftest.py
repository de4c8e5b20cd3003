"""Markers (declared in setup.cfg, [tool:pytest]):

- ``ros``: needs ROS 2: message packages, rclpy, nodes over loopback DDS with a private
  ROS_DOMAIN_ID. The node tests listed in NEEDS_ROS and the demo have it, so that
  ``pytest -m "not ros"`` runs the dynamics core, the analysis and the node's plain-Python
  logic (state, core, loader, settings) alone.
- ``slow``: more than ~10 s on its own (marked where it is defined).
"""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent
NEEDS_ROS = (
    *(HERE / "node" / name for name in ("test_node.py", "test_node_hostile.py", "test_floating_base_node.py")),
    HERE / "node" / "test_node_floods.py",
    HERE / "node" / "test_fuzz_node.py",
    HERE / "node" / "test_node_as_users_expect.py",
    HERE / "package" / "test_demo.py",
    HERE / "simulation" / "test_closed_loop.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path in NEEDS_ROS:
            item.add_marker(pytest.mark.ros)


try:  # without ROS 2 the node room cannot even be imported: collect the rest
    import rclpy  # noqa: F401
except ImportError:
    collect_ignore = [str(place) for place in NEEDS_ROS]
