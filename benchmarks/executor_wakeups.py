"""Jazzy's MultiThreadedExecutor against rnea_ros's PooledExecutor: the spinning thread's wake-ups per
message while a callback holds the GIL for 3 ms (as rnea_node's trajectory answer does), messages sent
one at a time, in this process over loopback DDS, quiet and beside two busy processes. Jazzy's
executor submits a callback again and again until a worker starts it (rclpy#1452); how often depends
on the scheduler, hence a figure here and not a test.

    python benchmarks/executor_wakeups.py     # writes docs/figures/executor_wakeups.md
"""

from __future__ import annotations

import os
import subprocess
import sys

import rclpy
from rclpy.executors import MultiThreadedExecutor

from rnea_ros.demo.figures import write_table
from rnea_ros.plumbing.executor import PooledExecutor
from rnea_ros.testing.executor_probe import CALLBACK_SECONDS, counting, served, slow_callback
from rnea_ros.testing.ros_harness import init_rclpy

MESSAGES = 30
ROUNDS = 3
BUSY = 2


def wakeups_per_message(executor_class: type, topic: str) -> float:
    executor = counting(executor_class)
    seen = served(executor, slow_callback, topic, MESSAGES)
    if seen != list(range(MESSAGES)):
        raise RuntimeError(f"{executor_class.__name__} served {len(seen)} of {MESSAGES} messages")
    return executor.wakeups / MESSAGES


def measured(busy: int) -> list[tuple]:
    spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
    machine = f"beside {busy} busy processes" if busy else "quiet"
    try:
        per_executor: dict[str, list[float]] = {"Jazzy's MultiThreadedExecutor": [], "PooledExecutor": []}
        for k in range(ROUNDS):  # interleaved
            per_executor["Jazzy's MultiThreadedExecutor"].append(
                wakeups_per_message(MultiThreadedExecutor, f"stock_{busy}_{k}")
            )
            per_executor["PooledExecutor"].append(wakeups_per_message(PooledExecutor, f"pooled_{busy}_{k}"))
    finally:
        for process in spinning:
            process.kill()
            process.wait()
    stock, pooled = (sorted(values) for values in per_executor.values())
    return [
        ("Jazzy's MultiThreadedExecutor", machine, *(f"{v:.1f}" for v in stock), "1.00×"),
        ("PooledExecutor", machine, *(f"{v:.1f}" for v in pooled), f"{stock[1] / pooled[1]:.1f}× fewer"),
    ]


def main() -> None:
    load = os.getloadavg()[0]
    init_rclpy()  # a private domain, localhost only
    try:
        rows = measured(0) + measured(BUSY)
    finally:
        rclpy.try_shutdown()
    header = ("executor", "machine", "least", "median", "most", "median, against Jazzy's")
    note = (
        f"Wake-ups of the spinning thread per message, {MESSAGES} messages one at a time, each callback "
        f"holding the GIL {CALLBACK_SECONDS * 1e3:.0f} ms, 4 threads; {ROUNDS} interleaved rounds; "
        f"load average {load:.1f} before the run (other work on the machine)."
    )
    for row in rows:
        print(row)
    print(f"wrote {write_table('executor_wakeups', 'benchmarks/executor_wakeups.py', header, rows, note)}")


if __name__ == "__main__":
    main()
