"""The suite's markers and ROS domains: ROS test files say so themselves, the rest is collected
without rclpy, the inner loop (``-m "not ros and not slow"``) never imports it and holds no test
over the time limit, and every process gets a domain id of its own inside ROS's safe range."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rnea_ros.testing.domain import TEST_DOMAIN_IDS, reserve_domain_id

ROOT = Path(__file__).resolve().parents[2]
QUICK_START = os.environ | {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # pytest in a subprocess: 0.3 s of CPU, not 1 s

PYTEST_INI = """[pytest]
markers =
    ros: needs ROS 2
    slow: over the time limit
"""
A_ROS_FILE = """import pytest
import rclpy
pytestmark = pytest.mark.ros
def test_ros():
    pass
"""
TIMED_TESTS = """import time
import pytest
def busy(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
def test_quick():
    pass
def test_busy_unmarked():
    busy(0.5)
@pytest.mark.slow
def test_busy_marked_slow():
    busy(0.5)
"""

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


def module_level_marks(path: Path) -> set[str]:
    """The marks a test file's own top-level ``pytestmark`` assignment names (not those in its strings)."""
    marks = set()
    for statement in ast.parse(path.read_text()).body:
        if isinstance(statement, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in statement.targets):
            marks |= {node.attr for node in ast.walk(statement.value) if isinstance(node, ast.Attribute)}
    return marks


@pytest.mark.slow
def test_the_suite_is_collected_without_rclpy_and_leaves_out_only_files_marked_ros():
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_ROS], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    collected = {line.split("::")[0] for line in done.stdout.splitlines() if "::" in line}
    assert "test/dynamics/test_against_pinocchio.py" in collected and "test/analysis/test_analyze.py" in collected
    marked = {
        str(path.relative_to(ROOT)) for path in (ROOT / "test").rglob("test_*.py") if "ros" in module_level_marks(path)
    }
    assert marked and not (marked & collected), marked & collected
    assert "test/node/test_node.py" in marked and "test/simulation/test_legged.py" in marked


def domain_of_a_child(environment: dict[str, str]) -> int:
    """The id another process reserves while this one holds its own."""
    code = "from rnea_ros.testing.domain import reserve_domain_id; print(reserve_domain_id())"
    child = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True, env=environment
    )
    return int(child.stdout)


def test_domain_ids_are_in_the_safe_range_and_never_shared(tmp_path):
    first, second = reserve_domain_id(), reserve_domain_id()
    assert first != second and {first, second} <= set(TEST_DOMAIN_IDS)
    assert 0 not in TEST_DOMAIN_IDS and max(TEST_DOMAIN_IDS) <= 101
    assert domain_of_a_child(dict(os.environ)) not in (first, second)  # held by this process
    # a suite with another TMPDIR shares DDS with this one, so it shares the locks too
    assert domain_of_a_child({**os.environ, "TMPDIR": str(tmp_path)}) not in (first, second)


def test_scripts_test_runs_only_what_its_arguments_name():
    """`scripts/test test/<file>` used to run the whole suite (it always passed `test` to pytest)."""
    done = subprocess.run(
        ["scripts/test", "--collect-only", "test/test_parameter_spec.py"],
        cwd=ROOT, env=QUICK_START, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    collected = {line.split("::")[0] for line in done.stdout.splitlines() if "::" in line}
    assert collected == {"test/test_parameter_spec.py"}, collected


def run_pytest_in(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """pytest in ``folder`` with the suite's conftest, rclpy replaced by an empty module of that name."""
    (folder / "conftest.py").write_text((ROOT / "test" / "conftest.py").read_text())
    (folder / "pytest.ini").write_text(PYTEST_INI)
    (folder / "rclpy.py").write_text("")
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *args]
    environment = os.environ | {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # a second's start instead of several
    return subprocess.run(
        command, cwd=folder, env=environment, capture_output=True, text=True, timeout=120, check=False
    )


def test_a_ros_file_is_not_imported_and_an_unmarked_test_over_the_limit_fails(tmp_path):
    (tmp_path / "test_ros_file.py").write_text(A_ROS_FILE)
    (tmp_path / "test_timed.py").write_text(TIMED_TESTS)
    done = run_pytest_in(tmp_path, "-m", "not ros", "-o", "unmarked_test_limit=0.2")
    assert done.returncode == 1, done.stdout
    assert "FAILED test_timed.py::test_busy_unmarked - not marked slow, yet took" in done.stdout, done.stdout
    assert (
        "PASSED test_timed.py::test_quick" in done.stdout
        and "PASSED test_timed.py::test_busy_marked_slow" in done.stdout
    )
    assert "test_ros" not in done.stdout and "rclpy was imported" not in done.stdout, done.stdout


def test_a_session_without_ros_tests_that_imports_rclpy_fails(tmp_path):
    (tmp_path / "test_sneaky.py").write_text("import rclpy\n\ndef test_nothing_marked():\n    pass\n")
    assert run_pytest_in(tmp_path).returncode == 0  # no -m: ROS tests may be among them
    done = run_pytest_in(tmp_path, "-m", "not ros and not slow")
    assert done.returncode == 1 and "rclpy was imported by a session that deselects" in done.stdout, done.stdout


def test_without_the_projects_venv_pytest_says_what_to_run_in_one_line():
    """A checkout without .venv (numba absent from the Python that runs pytest): one line naming the
    commands, exit code 4 (usage error), not a traceback from conftest."""
    hide_numba = "import sys, pytest; sys.modules['numba'] = None; sys.exit(pytest.main(['-q', 'test/package']))"
    result = subprocess.run(
        [sys.executable, "-c", hide_numba], cwd=ROOT, env=QUICK_START, capture_output=True, text=True, timeout=60
    )
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert result.returncode == 4, lines
    assert len(lines) == 1 and "scripts/test" in lines[0] and "numba" in lines[0], lines
