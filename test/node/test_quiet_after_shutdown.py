"""A signal that shuts the context down while an executor's callback runs: the callback's rcl call
fails ("context is invalid"), the stopped executor never fetches that error, and Python printed it at
exit ("The following exception was never retrieved"), once in a run of the whole suite under load
(rnea_node's diagnostics timer, SIGINT 2.45 s into its start). Reproduced here on purpose: the callback
waits for the shutdown, then asks rcl for a topic's publishers, as the diagnostics timer does."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from rnea_ros.testing.ros_harness import ROS_ENV

pytestmark = pytest.mark.ros

PROBE = textwrap.dedent(
    """
    import sys, threading, time
    import rclpy
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.node import Node
    from rnea_ros.plumbing.threads import quiet_after_shutdown

    rclpy.init()
    node = Node("quiet_after_shutdown_probe")
    inside = threading.Event()

    def on_timer():
        inside.set()
        deadline = time.monotonic() + 10.0
        while node.context.ok() and time.monotonic() < deadline:
            time.sleep(0.01)
        node.get_publishers_info_by_topic("/joint_states")

    guarded = sys.argv[1] == "guarded"
    node.create_timer(0.05, quiet_after_shutdown(node.context, on_timer) if guarded else on_timer)
    executor = MultiThreadedExecutor(num_threads=2)
    executor.add_node(node)

    def shut_down_once_inside():
        inside.wait(30.0)
        rclpy.shutdown()

    threading.Thread(target=shut_down_once_inside, daemon=True).start()
    executor.spin()
    executor.shutdown()
    del executor
    node.destroy_node()
    print("stopped", inside.is_set())
    """
)


def probe(mode: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, mode],
        env={**os.environ, **ROS_ENV},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "stopped True" in done.stdout  # the shutdown came while the callback ran
    return done.stderr


def test_the_unguarded_callback_leaves_an_error_nobody_fetches():
    assert "never retrieved" in probe("plain")  # the failure the guard is for, still there in rclpy


def test_the_guarded_callback_stops_in_silence():
    assert "never retrieved" not in probe("guarded")


def test_the_guard_lets_errors_through_while_the_context_is_up():
    from rnea_ros.plumbing.threads import quiet_after_shutdown

    class Up:
        def ok(self) -> bool:
            return True

    def broken() -> None:
        raise ValueError("a bug")

    with pytest.raises(ValueError, match="a bug"):
        quiet_after_shutdown(Up(), broken)()
