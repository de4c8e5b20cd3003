"""rnea_node's start-up on Go2 with four foot contacts: cold numba cache, after `python -m rnea_ros.compile`, warm.

    python benchmarks/start_up.py [--rounds 3] [--dds-rounds 1] [--no-docs]

Each figure is a fresh process that imports the node's core and builds its live model from Go2's URDF
(floating base, contact_links on the four feet): the model, the first inverse dynamics and both contact
distributions, i.e. everything the node computes before its first output; without ROS, so that DDS
discovery does not blur the compile time. Cold: NUMBA_CACHE_DIR is an empty directory. After compile:
the same directory once `python -m rnea_ros.compile` (which never sees Go2) has filled it. Warm: a
second start on that cache. Then the same three starts of the real node (`python -m rnea_ros.node`,
robot_description in its parameters file) over loopback DDS: from its process start to the first
feedforward_efforts received by a client that publishes joint_states and base_odometry at 100 Hz.
Writes docs/figures/start_up.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from rnea_ros.demo.figures import write_table

FEET = ["FL_foot", "FR_foot", "RL_foot", "RR_foot"]
START = f"""
import time; t0 = time.perf_counter()
from rnea_ros.dynamics.precompile import kernels_in_cache
from rnea_ros.node.core import build_live_model
from rnea_ros.node.settings import settings_from
from rnea_ros.testing.reference import robot_urdf

cached = kernels_in_cache()
urdf = robot_urdf("go2_description/urdf/go2.urdf")
build_live_model(urdf, settings_from({{"floating_base": True, "contact_links": {FEET!r}}}))
print(cached, time.perf_counter() - t0)
"""


def start(cache: str) -> tuple[bool | None, float]:
    """(whether the kernels were in the cache before, seconds to a computing model) of a fresh process."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    out = subprocess.run([sys.executable, "-c", START], env=env, capture_output=True, text=True, check=True)
    cached, seconds = out.stdout.split()[-2:]
    return {"True": True, "False": False}.get(cached), float(seconds)


def compile_all(cache: str) -> float:
    start_time = time.perf_counter()
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    subprocess.run([sys.executable, "-m", "rnea_ros.compile"], env=env, capture_output=True, check=True)
    return time.perf_counter() - start_time


def one_round() -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as cold, tempfile.TemporaryDirectory() as compiled:
        seen_cold, cold_seconds = start(cold)
        compile_seconds = compile_all(compiled)
        seen_compiled, after_compile = start(compiled)
        _, warm = start(compiled)
    assert seen_cold is not True and seen_compiled is not False, (seen_cold, seen_compiled)
    return {"cold": cold_seconds, "compile": compile_seconds, "after compile": after_compile, "warm": warm}


def first_output_over_dds(cache: str, timeout: float = 600.0) -> float:
    """Seconds from starting rnea_node (Go2, four foot contacts) to its first feedforward_efforts."""
    import rclpy
    from nav_msgs.msg import Odometry

    from rnea_ros import RobotModel
    from rnea_ros.testing.reference import robot_urdf
    from rnea_ros.testing.ros_harness import Client, NodeProcess

    urdf = robot_urdf("go2_description/urdf/go2.urdf")
    model = RobotModel.from_urdf(urdf, floating_base=True)
    parameters = {"robot_description": urdf, "floating_base": True, "contact_links": FEET}
    os.environ["NUMBA_CACHE_DIR"] = cache
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        process = NodeProcess(Path(folder), "start_up", parameters)
        client = Client("start_up", model.joint_names)
        odometry = client.node.create_publisher(Odometry, "base_odometry", 10)
        try:
            while not client.efforts and time.perf_counter() - started < timeout:
                client.send_state(np.zeros(len(model.joint_names)))
                odometry.publish(_standing_odometry(client, model.base_link))
                rclpy.spin_once(client.node, timeout_sec=0.01)
            seconds = time.perf_counter() - started
            assert client.efforts, process.output()
        finally:
            client.close()
            process.stop()
    return seconds


def _standing_odometry(client, base_link: str):
    from nav_msgs.msg import Odometry

    msg = Odometry()
    msg.header.stamp = client.node.get_clock().now().to_msg()
    msg.header.frame_id, msg.child_frame_id = "odom", base_link
    msg.pose.pose.position.z = 0.3
    msg.pose.pose.orientation.w = 1.0
    return msg


def one_dds_round() -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as cold, tempfile.TemporaryDirectory() as compiled:
        cold_seconds = first_output_over_dds(cold)
        compile_all(compiled)
        after_compile = first_output_over_dds(compiled)
        warm = first_output_over_dds(compiled)
    return {"cold": cold_seconds, "after compile": after_compile, "warm": warm}


def summary(rounds: list[dict[str, float]]) -> list[tuple[str, str, str]]:
    table = []
    for name in rounds[0]:
        values = [r[name] for r in rounds]
        table.append((name, f"{statistics.median(values):.2f} s", ", ".join(f"{v:.2f}" for v in values)))
        print(f"{name:14s} median {statistics.median(values):6.2f} s   ({table[-1][2]})")
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dds-rounds", type=int, default=1, help="rounds of the real node over DDS (0: none)")
    parser.add_argument("--no-docs", action="store_true", help="do not write docs/figures/start_up.md")
    args = parser.parse_args()
    print("in process: a fresh process to a computing live model")
    table = summary([one_round() for _ in range(args.rounds)])
    more = []
    if args.dds_rounds:
        import rclpy

        from rnea_ros.testing.ros_harness import init_rclpy

        init_rclpy()
        try:
            print("rnea_node over DDS: process start to the first feedforward_efforts")
            dds = summary([one_dds_round() for _ in range(args.dds_rounds)])
        finally:
            rclpy.shutdown()
        note = (
            f"rnea_node over loopback DDS (Go2, 4 foot contacts): its process start to the first feedforward_efforts; "
            f"medians of {args.dds_rounds} rounds."
        )
        more.append((note, ("start", "median", "rounds"), dds))
    if not args.no_docs:
        note = (
            f"Go2 (floating base, 4 foot contacts): a fresh process to a computing live model; medians of "
            f"{args.rounds} rounds; load average {os.getloadavg()[0]:.1f} at the end. 'compile' is "
            "`python -m rnea_ros.compile`."
        )
        header = ("start", "median", "rounds")
        print(f"wrote {write_table('start_up', 'benchmarks/start_up.py', header, table, note, more)}")


if __name__ == "__main__":
    main()
