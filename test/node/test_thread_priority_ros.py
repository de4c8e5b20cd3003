"""thread_priority over loopback DDS: every thread of rnea_node on SCHED_FIFO (the executor's threads,
started once it spins, included), and it answers as before."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import rclpy

from rnea_ros import RobotModel
from rnea_ros.testing.reference import ARM_URDF
from rnea_ros.testing.ros_harness import Client, init_rclpy, running_node

ARM = RobotModel.from_urdf(ARM_URDF)


def can_use_fifo() -> bool:
    code = "import os; os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1)); print('yes')"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "yes"


pytestmark = [
    pytest.mark.ros,
    pytest.mark.skipif(not can_use_fifo(), reason="this user may not use SCHED_FIFO (rtprio limit 0, not root)"),
]


def policies(pid: int) -> dict[int, tuple[int, int]]:
    """(policy, priority) of every thread of process ``pid``."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out[int(task.name)] = (
                os.sched_getscheduler(int(task.name)),
                os.sched_getparam(int(task.name)).sched_priority,
            )
        except ProcessLookupError:
            continue
    return out


def test_every_thread_of_the_node_runs_fifo_and_it_still_answers(tmp_path):
    init_rclpy()
    try:
        parameters = {"robot_description": ARM_URDF, "thread_priority": 40}
        client_of = functools.partial(Client, joint_names=ARM.joint_names)
        with running_node(tmp_path, "fifo", parameters, client_of) as (process, client):
            q = np.linspace(-0.4, 0.4, ARM.nv)
            assert client.spin_until(lambda: (client.send_state(q, np.zeros(ARM.nv)), bool(client.efforts))[1], 30.0)
            said = "every thread on SCHED_FIFO at priority 40"  # said once the node is built, before it spins
            assert client.spin_until(lambda: said in process.output(), 10.0), process.output()
            threads = policies(process.process.pid)
            assert len(threads) > 3 and set(threads.values()) == {(os.SCHED_FIFO, 40)}, threads
            np.testing.assert_allclose(client.efforts[-1].effort, ARM.gravity_torques(q), rtol=1e-12, atol=1e-12)
    finally:
        rclpy.try_shutdown()
