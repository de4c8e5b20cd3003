"""rnea_sim's ``thread_priority`` (issue 48, the trot on the wall clock): every thread of the simulator
on SCHED_FIFO at that priority, as a robot's drivers and ros2_control's loop run; 0 (the default) leaves
them on the default scheduler. The simulator runs with no controller (the brakes hold the arm)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rnea_ros.demo.closed_loop import start, stop
from rnea_ros.testing.reference import ARM_URDF
from rnea_ros.testing.ros_harness import ROS_ENV

pytestmark = [pytest.mark.ros, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's SCHED_FIFO")]
SAID = "thread_priority: every thread on SCHED_FIFO"


def can_use_fifo() -> bool:
    code = "import os; os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1)); print('yes')"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "yes"


def policies(pid: int) -> set[tuple[int, int]]:
    """(policy, priority) of each thread of ``pid``."""
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found.add((os.sched_getscheduler(int(task.name)), os.sched_getparam(int(task.name)).sched_priority))
        except OSError:  # ended meanwhile
            continue
    return found


def simulator_threads(tmp_path: Path, namespace: str, parameters: dict) -> tuple[set[tuple[int, int]], str]:
    """The simulator's threads' (policy, priority) once it simulates (its log says so), and its log."""
    sim = start("rnea_ros.simulation", namespace, {"robot_description": ARM_URDF, **parameters}, tmp_path, ROS_ENV)
    log = tmp_path / f"{namespace}_simulation.log"
    try:
        deadline = time.monotonic() + 60.0
        while time.monotonic() < deadline and sim.poll() is None and "simulating" not in log.read_text():
            time.sleep(0.1)
        time.sleep(0.5)  # the executor's threads started
        assert sim.poll() is None, log.read_text()[-2000:]
        return policies(sim.pid), log.read_text()
    finally:
        stop(sim)


@pytest.mark.skipif(not can_use_fifo(), reason="this user may not use SCHED_FIFO (rtprio limit 0, not root)")
def test_thread_priority_puts_every_thread_of_the_simulator_on_sched_fifo(tmp_path):
    threads, log = simulator_threads(tmp_path, "sim_fifo", {"thread_priority": 20})
    assert threads == {(os.SCHED_FIFO, 20)}, log[-2000:]
    assert f"{SAID} at priority 20" in log


def test_by_default_the_simulator_stays_on_the_default_scheduler(tmp_path):
    threads, log = simulator_threads(tmp_path, "sim_other", {})
    assert threads == {(os.SCHED_OTHER, 0)}
    assert SAID not in log
