"""The main job: rnea_demo starts the node, drives it, plots, and stops by itself."""

from __future__ import annotations

import os
import subprocess
import sys

from rnea_ros.testing.ros_harness import ROOT, ROS_ENV


def test_demo_runs_and_writes_its_plot(tmp_path):
    plot = tmp_path / "demo.png"
    result = subprocess.run(
        [sys.executable, "-m", "rnea_ros.demo", "--seconds", "2", "--output", str(plot)],
        env={**os.environ, **ROS_ENV},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert plot.read_bytes().startswith(b"\x89PNG")
    assert "feed-forward τ" in result.stdout  # the live table
    assert "vs the library: max difference 0.0e+00" in result.stdout
