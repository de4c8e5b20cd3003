"""Real time the way ros2_control runs it, on three robots: rnea_sim's joint_trajectory_controller
stand-in (PID inside its 1 kHz step loop) with and without the trajectory's efforts from rnea_node.

    python benchmarks/real_time.py      # ~2 min; writes docs/figures/real_time.md

A planner's fast multi-sine (points 0.1 s apart) on the example arm with a 2 kg payload known from
corrections (the demo's), the UR5 and the Panda (example-robot-data; gains from rnea_gains at
20 rad/s about the start pose). RMS tracking error per joint over 4 s, wall-clock paced.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import rclpy

from rnea_ros import RobotModel
from rnea_ros.analysis.gains import critically_damped_gains
from rnea_ros.demo import demo
from rnea_ros.demo.closed_loop import planned_trajectory, run_trajectory_loop
from rnea_ros.demo.example_robot import example_arm_urdf
from rnea_ros.demo.trajectories import fast_multisine
from rnea_ros.testing.domain import reserve_domain_id
from rnea_ros.testing.figures import write_table
from rnea_ros.testing.reference import robot_urdf

ENV = {"ROS_DOMAIN_ID": str(reserve_domain_id()), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
SECONDS = 4.0


def robots(folder: Path):
    """(name, URDF, start, kp, kd, extra simulator parameters, extra node parameters)."""
    arm = example_arm_urdf()
    corrections = str(demo.payload_corrections(folder))
    yield (
        "example arm + 2 kg",
        arm,
        np.array(demo.START),
        demo.KP,
        demo.KD,
        demo.PAYLOAD,
        {"corrections_file": corrections},
    )
    for name, path, start in (
        ("UR5", "ur_description/urdf/ur5_robot.urdf", [0.0, -1.2, 1.2, -1.0, -1.5, 0.0]),
        ("Panda", "panda_description/urdf/panda.urdf", [0.0, -0.5, 0.0, -2.0, 0.0, 1.6, 0.8, 0.02]),
    ):
        urdf = robot_urdf(path)
        model = RobotModel.from_urdf(urdf)
        q0 = np.array(start)
        _, kp, kd = critically_damped_gains(model, q0, 20.0)
        yield name, urdf, q0, kp.tolist(), kd.tolist(), {}, {}


def main() -> None:
    os.environ.update(ENV)
    rclpy.init()
    rows = []
    folder = Path(tempfile.mkdtemp(prefix="rnea_real_time_"))
    try:
        for name, urdf, start, kp, kd, sim_extra, node_extra in robots(folder):
            model = RobotModel.from_urdf(urdf)
            names = list(model.joint_names)
            moving = min(model.nv, 7)
            trajectory = fast_multisine(start, moving=moving, amplitude=0.2 if name.startswith("example") else 0.15)
            planned = planned_trajectory(names, trajectory, SECONDS, spacing=0.1)
            rms = {}
            for feedforward in (False, True):
                sim = {"robot_description": urdf, "realtime": True, "initial_positions": start.tolist(),
                       "duration": SECONDS + 0.2, "pid_p": kp, "pid_d": kd, **sim_extra}  # fmt: skip
                node = {"robot_description": urdf, **node_extra} if feedforward else None
                tag = f"{name.split()[0].lower()}_{int(feedforward)}"
                run = run_trajectory_loop(folder, tag, sim, node, planned, ENV, reference=trajectory)
                error = run.tracking_error(names[:moving])
                rms[feedforward] = np.degrees(np.sqrt((error**2).mean(axis=0)))
            ratio = rms[False] / np.maximum(rms[True], 1e-12)
            print(
                f"{name}: PID alone {np.round(rms[False], 4)}; PID + feed-forward {np.round(rms[True], 4)}", flush=True
            )
            alone = f"{rms[False].min():.3f}–{rms[False].max():.3f}"
            helped = f"{rms[True].min():.4f}–{rms[True].max():.4f}"
            rows.append((name, alone, helped, f"{ratio.min():.0f}–{ratio.max():.0f}×"))
    finally:
        rclpy.try_shutdown()
    header = ("robot", "PID alone [°]", "PID + rnea_node's feed-forward [°]", "lower by")
    note = (
        f"RMS tracking error per joint (range over the moving joints), {SECONDS:g} s of a fast multi-sine "
        "from a planner's points 0.1 s apart, rnea_sim in real time with its joint_trajectory_controller stand-in."
    )
    print(f"wrote {write_table('real_time', 'benchmarks/real_time.py', header, rows, note)}")


if __name__ == "__main__":
    main()
