"""The suite's markers and ROS domains: ROS test files say so themselves, the rest is collected
without rclpy, and every process gets a domain id of its own inside ROS's safe range."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rnea_ros.testing.domain import TEST_DOMAIN_IDS, reserve_domain_id

ROOT = Path(__file__).resolve().parents[2]

WITHOUT_ROS = textwrap.dedent(
    """
    import sys
    BLOCKED = {"rclpy", "rcl_interfaces", "std_msgs", "sensor_msgs", "geometry_msgs", "trajectory_msgs",
               "diagnostic_msgs", "nav_msgs", "builtin_interfaces"}
    class NoRos:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named '{name}' (hidden by the test)")
            return None
    sys.meta_path.insert(0, NoRos())
    import pytest
    sys.exit(pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "test"]))
    """
)


@pytest.mark.slow
def test_the_suite_is_collected_without_rclpy_and_leaves_out_only_files_marked_ros():
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_ROS], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    collected = {line.split("::")[0] for line in done.stdout.splitlines() if "::" in line}
    assert "test/dynamics/test_against_pinocchio.py" in collected and "test/analysis/test_analyze.py" in collected
    marked = {
        str(path.relative_to(ROOT))
        for path in (ROOT / "test").rglob("test_*.py")
        if any(line.startswith("pytestmark") and "mark.ros" in line for line in path.read_text().splitlines())
    }
    assert marked and not (marked & collected), marked & collected
    assert "test/node/test_node.py" in marked and "test/simulation/test_legged.py" in marked


def test_domain_ids_are_in_the_safe_range_and_never_shared():
    first, second = reserve_domain_id(), reserve_domain_id()
    assert first != second and {first, second} <= set(TEST_DOMAIN_IDS)
    assert 0 not in TEST_DOMAIN_IDS and max(TEST_DOMAIN_IDS) <= 101
    child = subprocess.run(
        [sys.executable, "-c", "from rnea_ros.testing.domain import reserve_domain_id; print(reserve_domain_id())"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert int(child.stdout) not in (first, second)  # held by this process: the child took another


def test_scripts_test_runs_only_what_its_arguments_name():
    """`scripts/test test/<file>` used to run the whole suite (it always passed `test` to pytest)."""
    done = subprocess.run(
        ["scripts/test", "--collect-only", "test/test_parameter_spec.py"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    collected = {line.split("::")[0] for line in done.stdout.splitlines() if "::" in line}
    assert collected == {"test/test_parameter_spec.py"}, collected
