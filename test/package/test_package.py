"""The package as ROS users get it: colcon builds and installs it; the code is ruff-clean."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_FILES = ["package.xml", "setup.py", "setup.cfg", "resource", "rnea_ros", "launch", "config"]


def test_ruff_is_clean():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", str(ROOT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_colcon_build_installs_the_package(tmp_path):
    source = tmp_path / "src" / "rnea_ros"
    source.mkdir(parents=True)
    for name in PACKAGE_FILES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(path, source / name)
    colcon = Path(sys.executable).with_name("colcon")
    result = subprocess.run(
        [str(colcon), "build", "--base-paths", "src", "--event-handlers", "console_direct-"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLCON_HOME": str(tmp_path / "colcon_home")},
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    install = tmp_path / "install" / "rnea_ros"
    share = install / "share" / "rnea_ros"
    assert (install / "share/ament_index/resource_index/packages/rnea_ros").is_file()
    assert (share / "package.xml").is_file()
    assert (share / "launch" / "rnea.launch.py").is_file()
    assert (share / "launch" / "sim.launch.py").is_file() and (share / "config" / "sim.yaml").is_file()
    assert (share / "config" / "rnea.yaml").is_file()
    assert (share / "urdf" / "example_arm.urdf").is_file()
    for script in ("rnea_node", "rnea_demo", "rnea_analyze"):
        assert (install / "lib" / "rnea_ros" / script).is_file(), script
    installed = list(install.glob("lib/python3*/site-packages/rnea_ros/demo/robots/example_arm.urdf"))
    assert installed, "the example URDF must ship inside the Python package too"
