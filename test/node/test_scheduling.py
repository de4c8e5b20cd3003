"""thread_priority's scheduling (plumbing/scheduling.py), each case in a child process: a test run on
SCHED_FIFO would keep its core from everything else on the machine."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SCHED_FIFO is Linux's")


def run_child(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.strip()


def can_use_fifo() -> bool:
    code = "import os; os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1)); print('yes')"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "yes"


@pytest.mark.skipif(not can_use_fifo(), reason="this user may not use SCHED_FIFO (rtprio limit 0, not root)")
def test_every_thread_and_every_later_thread_runs_fifo():
    out = run_child(
        """
        import os, threading
        from pathlib import Path
        from rnea_ros.plumbing.scheduling import use_fifo_scheduling
        stop = threading.Event()
        before = threading.Thread(target=stop.wait); before.start()
        print(use_fifo_scheduling(30))
        seen = []
        after = threading.Thread(target=lambda: seen.append(os.sched_getscheduler(0))); after.start(); after.join()
        policies = {os.sched_getscheduler(int(t.name)) for t in Path('/proc/self/task').iterdir()}
        priorities = {os.sched_getparam(int(t.name)).sched_priority for t in Path('/proc/self/task').iterdir()}
        stop.set(); before.join()
        print(policies == {os.SCHED_FIFO}, priorities == {30}, seen == [os.SCHED_FIFO])
        """
    )
    assert out.splitlines() == ["None", "True True True"]


def test_a_refusal_says_how_to_allow_it_and_leaves_every_thread_as_it_was():
    out = run_child(
        """
        import os, threading
        from pathlib import Path
        from rnea_ros.plumbing import scheduling
        stop = threading.Event()
        for _ in range(3):
            threading.Thread(target=stop.wait).start()
        real, calls = os.sched_setscheduler, []
        def refuse_the_third(thread, policy, param):
            calls.append(policy)
            if policy == os.SCHED_FIFO and len(calls) == 3:
                raise PermissionError(1, "Operation not permitted")
            if policy == os.SCHED_FIFO:
                return  # as if moved: the refusal must put these back
            real(thread, policy, param)
        os.sched_setscheduler = refuse_the_third
        print(scheduling.use_fifo_scheduling(40))
        policies = {os.sched_getscheduler(int(t.name)) for t in Path('/proc/self/task').iterdir()}
        print(policies == {os.SCHED_OTHER}, calls.count(os.SCHED_OTHER))
        stop.set()
        """
    )
    reason, restored = out.splitlines()
    assert reason.startswith("SCHED_FIFO at priority 40 refused (Operation not permitted)")
    assert "ulimit -r" in reason and "limits.conf" in reason and "thread_priority: 0" in reason
    assert restored == "True 2"  # the two threads moved before the refusal, put back


def test_the_default_leaves_the_scheduler_alone():
    from rnea_ros.controller.settings import Settings

    assert Settings().thread_priority == 0
    assert os.sched_getscheduler(0) == os.SCHED_OTHER


@pytest.mark.skipif(not can_use_fifo(), reason="this user may not use SCHED_FIFO (rtprio limit 0, not root)")
def test_ordinary_scheduling_puts_every_thread_back():
    """The trot's planner (testing/trot.py) takes its process to SCHED_FIFO while it runs, and back."""
    out = run_child(
        """
        import os, threading
        from pathlib import Path
        from rnea_ros.plumbing.scheduling import use_fifo_scheduling, use_ordinary_scheduling
        stop = threading.Event()
        threading.Thread(target=stop.wait).start()
        def policies():
            return {(os.sched_getscheduler(int(t.name)), os.sched_getparam(int(t.name)).sched_priority)
                    for t in Path('/proc/self/task').iterdir()}
        print(use_fifo_scheduling(30), policies() == {(os.SCHED_FIFO, 30)})
        later = threading.Thread(target=stop.wait); later.start()
        use_ordinary_scheduling()
        print(policies() == {(os.SCHED_OTHER, 0)})
        stop.set()
        """
    )
    assert out.splitlines() == ["None True", "True"]
