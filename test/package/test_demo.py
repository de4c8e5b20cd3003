"""The main job: rnea_demo runs the closed loop three times, shows its table, plots, and stops by itself."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rnea_ros.testing.ros_harness import ROOT, ROS_ENV

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def test_demo_runs_the_closed_loop_and_writes_its_plot(tmp_path):
    plot = tmp_path / "demo.png"
    result = subprocess.run(
        [sys.executable, "-m", "rnea_ros.demo", "--seconds", "2", "--output", str(plot)],
        env={**os.environ, **ROS_ENV},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert plot.read_bytes().startswith(b"\x89PNG")
    assert "the efforts applied" in result.stdout  # the live table
    assert result.stdout.count("waiting for the simulator") <= 3  # once per run at most
    assert "PD + inverse dynamics tracks" in result.stdout and "better than PD alone" in result.stdout
    rows = {}
    for line in result.stdout.splitlines():
        for label in ("PD only", "PD + gravity compensation", "PD + inverse dynamics"):
            if line.startswith(label) and line[len(label) :].split() and "." in line.split()[-1]:
                values = line[len(label) :].split()
                if len(values) == 7:
                    rows[label] = [float(x) for x in values]
    assert set(rows) == {"PD only", "PD + gravity compensation", "PD + inverse dynamics"}, result.stdout[-3000:]
    # the feed-forward helps on every joint: full inverse dynamics below gravity compensation below PD alone (RMS)
    assert sum(rows["PD + inverse dynamics"]) < sum(rows["PD + gravity compensation"]) < sum(rows["PD only"])
    assert max(rows["PD + inverse dynamics"]) < 0.5
