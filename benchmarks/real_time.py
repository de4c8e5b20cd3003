"""Real time the way ros2_control runs it, on three robots: rnea_sim's joint_trajectory_controller
stand-in (PID inside its 1 kHz step loop) with and without the trajectory's efforts from rnea_node,
the same in lockstep, and beside them rnea_node's own effort_commands loop over DDS in real time.

    python benchmarks/real_time.py      # ~4 min; writes docs/figures/real_time.md and the README's table
    python benchmarks/real_time.py --busy 2    # the same beside two spinning processes: real_time_busy_2.md

A planner's fast multi-sine (points 0.1 s apart) on the example arm with a 2 kg payload known from
corrections (the demo's), the UR5 and the Panda (example-robot-data; gains from rnea_gains at
20 rad/s about the start pose); and a floating base: Solo12 crouching and rising on its four feet
(its PID at 40 rad/s; the efforts are the QP's contact-consistent torques, the base moving as the
feet held still make it; no effort_commands run). RMS tracking error per joint over 4 s,
wall-clock paced.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import against  # benchmarks/against.py (this script's folder is on the path): the load average
import numpy as np
import rclpy

from rnea_ros import RobotModel
from rnea_ros.analysis.gains import critically_damped_gains
from rnea_ros.demo import demo
from rnea_ros.demo.closed_loop import planned_trajectory, run_trajectory_loop
from rnea_ros.demo.example_robot import example_arm_urdf
from rnea_ros.demo.figures import write_readme_table, write_table
from rnea_ros.motion.multisine import fast_multisine
from rnea_ros.testing.closed_loop_runner import run_closed_loop
from rnea_ros.testing.domain import reserve_domain_id
from rnea_ros.testing.legged import SOLO_URDF, solo_crouch, solo_on_its_trajectory_controller
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


RUNS = (("pid", True, False), ("ff", True, True), ("ff lockstep", False, True))  # (label, realtime, feed-forward)


def legged_row(folder: Path) -> tuple:
    """Solo12 crouching on its feet: the JTC stand-in alone, with the node's efforts, and in lockstep."""
    model = RobotModel.from_urdf(SOLO_URDF, floating_base=True)
    names = list(model.joint_names)
    crouch = solo_crouch(model)
    planned = planned_trajectory(names, crouch, SECONDS, spacing=0.1)
    rms = {}
    for label, realtime, feedforward in RUNS:
        sim, node = solo_on_its_trajectory_controller(model, realtime, SECONDS)
        run = run_trajectory_loop(
            folder, f"solo_{len(rms)}", sim, node if feedforward else None, planned, ENV, timeout=240.0,
            reference=crouch,
        )  # fmt: skip
        rms[label] = rms_degrees(run, names)
    print("Solo12 crouching", {label: np.round(value, 4).tolist() for label, value in rms.items()}, flush=True)
    return summary_row("Solo12 crouching (floating base)", rms)


def summary_row(name: str, rms: dict[str, np.ndarray]) -> tuple:
    ratio = rms["pid"] / np.maximum(rms["ff"], 1e-12)
    return (
        name,
        span(rms["pid"], 3),
        span(rms["ff"], 4),
        f"{ratio.min():.0f}–{ratio.max():.0f}×",
        span(rms["ff lockstep"], 4),
        f"{(rms['ff'] / rms['ff lockstep']).max():.2f}",
        span(rms["commands"], 3) if "commands" in rms else "not run",
    )


def rms_degrees(run, joints: list[str]) -> np.ndarray:
    error = run.tracking_error(joints)
    return np.degrees(np.sqrt((error**2).mean(axis=0)))


def span(values: np.ndarray, decimals: int) -> str:
    return f"{values.min():.{decimals}f}–{values.max():.{decimals}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--busy", type=int, default=0, help="processes spinning beside the runs (a loaded machine)")
    args = parser.parse_args()
    os.environ.update(ENV)
    rclpy.init()
    rows = []
    folder = Path(tempfile.mkdtemp(prefix="rnea_real_time_"))
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    load_at_start = against.load_note()
    try:
        for name, urdf, start, kp, kd, sim_extra, node_extra in robots(folder):
            model = RobotModel.from_urdf(urdf)
            names = list(model.joint_names)
            moving = min(model.nv, 7)
            trajectory = fast_multisine(start, moving=moving, amplitude=0.2 if name.startswith("example") else 0.15)
            planned = planned_trajectory(names, trajectory, SECONDS, spacing=0.1)
            rms = {}
            for label, realtime, feedforward in RUNS:
                sim = {"robot_description": urdf, "realtime": realtime, "initial_positions": start.tolist(),
                       "duration": SECONDS + 0.2, "pid_p": kp, "pid_d": kd, **sim_extra}  # fmt: skip
                node = {"robot_description": urdf, **node_extra} if feedforward else None
                tag = f"{name.split()[0].lower()}_{len(rms)}"
                run = run_trajectory_loop(folder, tag, sim, node, planned, ENV, reference=trajectory)
                rms[label] = rms_degrees(run, names[:moving])
            # rnea_node's effort_commands (inverse dynamics + PD) to a JointGroupEffortController: the
            # feedback crosses DDS twice, real time
            sim = {"robot_description": urdf, "realtime": True, "initial_positions": start.tolist(),
                   "duration": SECONDS, **sim_extra}  # fmt: skip
            node = {"robot_description": urdf, "command_source": "inverse_dynamics", "kp": kp, "kd": kd, **node_extra}
            tag = f"{name.split()[0].lower()}_commands"
            run = run_closed_loop(folder, tag, sim, node, trajectory, names, ENV)
            rms["commands"] = rms_degrees(run, names[:moving])
            print(name, {label: np.round(value, 4).tolist() for label, value in rms.items()}, flush=True)
            rows.append(summary_row(name, rms))
        rows.append(legged_row(folder))
    finally:
        for process in busy:
            process.kill()
            process.wait()
        rclpy.try_shutdown()
    header = (
        "robot",
        "JTC: PID alone [°]",
        "JTC: PID + rnea_node's feed-forward [°]",
        "lower by",
        "the same in lockstep [°]",
        "real time / lockstep (worst joint)",
        "effort_commands: PD + inverse dynamics over DDS [°]",
    )
    note = (
        f"RMS tracking error per joint (range over the moving joints), {SECONDS:g} s of a fast multi-sine, "
        "rnea_sim in real time unless said. JTC: its joint_trajectory_controller stand-in (the PID in its "
        "step loop) given a planner's points 0.1 s apart, their efforts filled by rnea_node ahead of time. "
        "effort_commands: rnea_node closes the loop at joint_states' rate on the whole trajectory sent "
        "ahead as desired_accelerations, to a JointGroupEffortController stand-in, same gains. The JTC "
        "columns with rnea_node's efforts and every lockstep run give the same figures run after run; "
        "effort_commands, whose feedback crosses DDS twice in real time, does not (which step a command "
        "lands on varies with the machine's load: beside other work its loop diverges). "
        f"{load_at_start[0].upper()}{load_at_start[1:]} at the start, {against.load_note()} at the end."
    )
    if args.busy:
        note += f" With {args.busy} processes spinning beside the runs, on 2 cores."
        print(f"wrote {write_table(f'real_time_busy_{args.busy}', 'benchmarks/real_time.py', header, rows, note)}")
        return
    print(f"wrote {write_table('real_time', 'benchmarks/real_time.py', header, rows, note)}")
    short = ("robot", "JTC: PID alone", "JTC: PID + rnea_node's efforts", "the same, lockstep", "effort_commands")
    short_rows = [(row[0], row[1], row[2], row[4], row[6]) for row in rows]
    print(f"wrote {write_readme_table('real_time', 'benchmarks/real_time.py', short, short_rows)}")


if __name__ == "__main__":
    main()
