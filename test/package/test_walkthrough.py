"""The own-robot walkthrough (docs/own-robot.md), command by command as written there, on a robot the
project does not ship: the UR5 of example-robot-data. The block's commands run in bash with the
environment scripts/env makes (the commands on PATH), a private ROS domain, and a time limit."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from rnea_ros.testing.domain import reserve_domain_id
from rnea_ros.testing.reference import EXAMPLE_ROBOT_DATA

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
MARKER = "<!-- tested: test/package/test_walkthrough.py runs this block -->"


def walkthrough_block() -> str:
    text = (ROOT / "docs/own-robot.md").read_text()
    after = text[text.index(MARKER) + len(MARKER) :]
    return re.search(r"```bash\n(.*?)```", after, re.S).group(1)


def test_the_walkthrough_tracks_a_robot_the_project_does_not_ship(tmp_path):
    env = {
        **os.environ,
        "ROBOT": str(EXAMPLE_ROBOT_DATA / "ur_description/urdf/ur5_robot.urdf"),
        "ROS_DOMAIN_ID": str(reserve_domain_id()),
        "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
    }
    script = f"source {ROOT}/scripts/env\nset -e\n" + walkthrough_block()
    process = subprocess.Popen(
        ["bash", "-c", script], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, start_new_session=True,
    )  # fmt: skip
    try:
        output, _ = process.communicate(timeout=240)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)  # only what this test started: its own session
            process.communicate()
    assert process.returncode == 0, output[-4000:]
    assert "rnea_node feed-forward [N·m]: shoulder_pan_joint" in output  # the node's efforts, seen
    rms = {name: float(value) for name, value in re.findall(r"^\s+(\w+_joint)\s+([\d.]+)$", output, re.M)}
    assert len(rms) == 6, output[-4000:]
    assert max(rms.values()) < 0.1, rms  # lockstep PD + inverse dynamics, degrees
    assert "Traceback" not in output and "RCLError" not in output and "context is invalid" not in output
    assert (tmp_path / "robot.yaml").is_file()
