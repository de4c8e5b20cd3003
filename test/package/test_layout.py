"""The rooms keep to what they may import (README, "Code layout")."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "rnea_ros"
ROS = {"rclpy", "std_msgs", "sensor_msgs", "geometry_msgs", "trajectory_msgs", "diagnostic_msgs", "nav_msgs"}
ROS |= {"rcl_interfaces", "builtin_interfaces", "launch", "launch_ros", "ament_index_python"}
# The node room's plain-Python logic, tested without ROS.
PLAIN_NODE_MODULES = ("parameters", "settings", "state", "torques", "core", "loader", "diagnostics")


def imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module if node.module.startswith("rnea_ros") else node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("path", sorted((PACKAGE / "dynamics").glob("*.py")), ids=lambda p: p.name)
def test_dynamics_imports_numpy_numba_lxml_urdf_parser_only(path):
    allowed_third_party = {"numpy", "numba", "lxml", "urdf_parser_py"}
    for root in imported_roots(path):
        if root.startswith("rnea_ros"):
            assert root.startswith("rnea_ros.dynamics"), f"{path.name} imports {root}"
        else:
            if (path.name, root) in (("corrections.py", "yaml"), ("contact_forces.py", "quadprog")):
                continue  # optional: imported when a corrections file is read or written, or a QP solved
            assert root in allowed_third_party or root in sys.stdlib_module_names, f"{path.name} imports {root}"


@pytest.mark.parametrize("name", PLAIN_NODE_MODULES)
def test_node_logic_never_imports_ros(name):
    roots = imported_roots(PACKAGE / "node" / f"{name}.py")
    assert not roots & ROS, roots & ROS
    assert not any(
        root in (f"rnea_ros.node.{m}" for m in ("node", "messages", "ros_parameters", "subscription")) for root in roots
    )


@pytest.mark.parametrize("room", ["dynamics", "analysis"])
def test_offline_rooms_never_import_ros_or_the_node(room):
    for path in (PACKAGE / room).glob("*.py"):
        roots = imported_roots(path)
        assert not roots & ROS, f"{path.name}: {roots & ROS}"
        assert not any(root.startswith(("rnea_ros.node", "rnea_ros.demo.demo")) for root in roots), path.name


def test_only_the_simulation_imports_mujoco():
    for path in PACKAGE.rglob("*.py"):
        if "mujoco" in imported_roots(path) or "import mujoco" in path.read_text():
            assert path.parent.name == "simulation", f"{path.relative_to(PACKAGE)} imports mujoco"


SHARED_PLUMBING = (
    "rnea_ros.node.subscription",
    "rnea_ros.node.ros_parameters",
    "rnea_ros.parameter_spec",
    "rnea_ros.trajectory",  # the JTC's spline: the controller's interpolation, not the robot's dynamics
    "rnea_ros.trajectory_cdr",  # JointTrajectory read from its bytes
)


def test_simulation_imports_the_physics_and_ros_only():
    allowed = {"numpy", "lxml", "mujoco"} | ROS
    for path in (PACKAGE / "simulation").glob("*.py"):
        for root in imported_roots(path):
            if root.startswith("rnea_ros"):
                # the dedicated subscription and the parameter declarations are shared ROS plumbing; the
                # simulated robot knows no rnea_ros dynamics
                assert root.startswith("rnea_ros.simulation") or root in SHARED_PLUMBING, (path.name, root)
            else:
                assert root in allowed or root in sys.stdlib_module_names, (path.name, root)


BLOCK_ROS = """
import sys
class NoROS:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ImportError("ROS is not installed here: " + name)
sys.meta_path.insert(0, NoROS())
"""


def run_without_ros(code: str) -> subprocess.CompletedProcess:
    script = BLOCK_ROS.format(blocked=ROS) + code
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)


def test_the_library_and_the_node_logic_import_without_rclpy():
    result = run_without_ros(
        "from rnea_ros import RobotModel, ModelError\n"
        "import rnea_ros.node.core, rnea_ros.node.loader, rnea_ros.analysis.pipeline, rnea_ros.demo.example_robot\n"
        "from rnea_ros.demo.example_robot import example_arm_urdf\n"
        "print(RobotModel.from_urdf(example_arm_urdf()).nv)\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "8"


def test_the_blocker_does_block_the_node():
    result = run_without_ros("import rnea_ros.node.node\n")
    assert result.returncode != 0 and "ROS is not installed here: rclpy" in result.stderr


def test_the_checkout_does_not_shadow_ros_modules(tmp_path):
    """scripts/env puts only the package on the path: the checkout's launch/ is no `launch` module
    (run from elsewhere: Python puts the working directory itself on the path)."""
    code = (
        "import importlib.util as u; s = u.find_spec('launch'); print(s and list(s.submodule_search_locations or []))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert str(PACKAGE.parent / "launch") not in result.stdout, result.stdout
