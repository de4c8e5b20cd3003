"""rnea_node's answer to a planner's trajectory, in process: CDR bytes in (a raw subscription's) →
arrays → efforts on the JTC's spline → CDR bytes out, for a 1,000-point 7-DoF trajectory (the
example arm, 10 ms apart, no resampling needed), against rclpy's way, same run: the message
deserialized into point objects, the answer built as point objects.

    python benchmarks/trajectory_answer.py [--count 1000]    # writes docs/figures/trajectory_answer.md
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from rclpy.serialization import deserialize_message, serialize_message
from std_msgs.msg import Header
from trajectory_msgs.msg import JointTrajectory

from rnea_ros.demo.closed_loop import planned_trajectory
from rnea_ros.demo.demo import START
from rnea_ros.demo.trajectories import fast_multisine
from rnea_ros.node import messages
from rnea_ros.node.core import RneaCore, build_live_model
from rnea_ros.node.settings import Settings
from rnea_ros.testing.figures import write_table
from rnea_ros.testing.reference import ARM_URDF
from rnea_ros.trajectory import MAX_TRAJECTORY_POINTS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=1000, help="trajectories answered")
    args = parser.parse_args()
    settings = Settings()
    core = RneaCore(settings)
    core.load(build_live_model(ARM_URDF, settings))
    names = list(core.live.model.joint_names)
    planned = planned_trajectory(names, fast_multisine(np.array(START), moving=7), 9.99, spacing=0.01)
    received = serialize_message(planned)  # what a raw subscription gets
    header = Header()
    times = {"node's answer (bytes in, bytes out)": [], "rclpy's way (point objects in and out)": []}
    for k in range(args.count):
        start = time.perf_counter()
        content = messages.read_trajectory(received, MAX_TRAJECTORY_POINTS, "joint_trajectory")
        result = core.trajectory(messages.trajectory_arrays(content))
        messages.trajectory_cdr(header, result)
        times["node's answer (bytes in, bytes out)"].append(time.perf_counter() - start)
        if k % 10 == 0:  # the slow reference: every tenth round
            start = time.perf_counter()
            result = core.trajectory(messages.trajectory_arrays(deserialize_message(received, JointTrajectory)))
            messages.trajectory_message(header, result)
            times["rclpy's way (point objects in and out)"].append(time.perf_counter() - start)
    rows = []
    for label, seconds in times.items():
        ms = np.array(seconds) * 1e3
        rows.append((label, len(ms), f"{np.percentile(ms, 50):.2f}", f"{np.percentile(ms, 99):.2f}", f"{ms.max():.2f}"))
        print(rows[-1])
    note = (
        f"{len(planned.points)} points, {len(names)} joints; trajectory_resampling {settings.trajectory_resampling} s."
    )
    header_row = ("answer", "trajectories", "p50 [ms]", "p99 [ms]", "max [ms]")
    print(f"wrote {write_table('trajectory_answer', 'benchmarks/trajectory_answer.py', header_row, rows, note)}")


if __name__ == "__main__":
    main()
