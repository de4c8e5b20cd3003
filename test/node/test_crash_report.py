"""A crash in C code leaves every thread's Python stack in the process's log (faulthandler).

rnea_sim once died of SIGSEGV at its start in a quiet suite (exit code -11), its log ending at its
start line: nothing said where. A SIGSEGV sent to a running rnea_node stands in for such a crash."""

from __future__ import annotations

import signal
import time

import pytest

from rnea_ros.testing.closed_loop_runner import exit_reason
from rnea_ros.testing.reference import ARM_URDF
from rnea_ros.testing.ros_harness import NodeProcess

pytestmark = [pytest.mark.ros, pytest.mark.slow]
READY = "robot model loaded"


def test_a_segfault_writes_every_threads_stack_to_the_log(tmp_path):
    node = NodeProcess(tmp_path, "crash_report", {"robot_description": ARM_URDF})
    deadline = time.monotonic() + 60.0
    while READY not in node.output() and node.process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert READY in node.output(), node.output()[-2000:]
    time.sleep(1.0)  # its executor's threads running
    code = node.stop(signal.SIGSEGV)
    output = node.output()
    assert exit_reason(code) == "killed by SIGSEGV", output[-2000:]
    assert "Fatal Python error: Segmentation fault" in output, output[-2000:]
    # faulthandler heads the thread that took the signal "Current thread 0x…", every other "Thread 0x…";
    # the kernel picks which: at least the main thread and the subscription's server thread are listed
    threads = output.count("Current thread 0x") + output.count("Thread 0x")
    assert threads >= 2, output[-3000:]


def test_exit_reasons_in_words():
    assert exit_reason(0) == "exit code 0"
    assert exit_reason(2) == "exit code 2"
    assert exit_reason(-11) == "killed by SIGSEGV"
    assert exit_reason(-9) == "killed by SIGKILL"
