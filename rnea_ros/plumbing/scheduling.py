"""Real-time scheduling of a whole process, as ros2_control's controller_manager does for its loop (no ROS).

Beside busy processes, Linux's default scheduler shares a core in slices of several milliseconds: an
answer that needs 3 ms of CPU waits tens of milliseconds for its turn. SCHED_FIFO threads run as soon
as they are ready, ahead of every ordinary one. Every thread the process has (rmw's included) is
moved; threads started later inherit their creator's policy.

A SCHED_FIFO thread that never sleeps keeps its core from ordinary threads (the kernel's throttling
leaves them 5 %), and one at the controllers' priority delays them: ros2_control's update loop runs
at 50 by default, so a node beside it takes less.
"""

from __future__ import annotations

import os
from pathlib import Path

RTPRIO_HINT = (
    "allow it with 'ulimit -r 99' in the shell that starts the node, or for a user with a line "
    "'<user> - rtprio 99' in /etc/security/limits.conf (then log in again); or run without it: thread_priority: 0"
)


def use_fifo_scheduling(priority: int) -> str | None:
    """Moves every thread of this process to SCHED_FIFO at ``priority`` (1–99); None when done, else
    why not (the process's threads are then as they were)."""
    if not hasattr(os, "sched_setscheduler") or not Path("/proc/self/task").is_dir():
        return "this system has no SCHED_FIFO (Linux only)"
    moved = []
    try:
        for thread in _threads():
            try:
                os.sched_setscheduler(thread, os.SCHED_FIFO, os.sched_param(priority))
            except ProcessLookupError:  # the thread ended meanwhile
                continue
            moved.append(thread)
    except (PermissionError, OSError) as error:
        for thread in moved:
            _ordinary(thread)
        return f"SCHED_FIFO at priority {priority} refused ({error.strerror or error}): {RTPRIO_HINT}"
    return None


def use_ordinary_scheduling() -> None:
    """Every thread of this process back on the default scheduler."""
    for thread in _threads():
        _ordinary(thread)


def _threads() -> list[int]:
    return [int(task.name) for task in Path("/proc/self/task").iterdir()]


def _ordinary(thread: int) -> None:
    try:
        os.sched_setscheduler(thread, os.SCHED_OTHER, os.sched_param(0))
    except OSError:
        pass
