"""Main job: the closed loop on the bundled example arm.

    rnea_demo [--seconds 4] [--output rnea_demo.png] [--realtime]

The simulated arm (``rnea_sim``: MuJoCo, a stand-in for the driver and a
JointGroupEffortController) carries a 2 kg payload on its tool, with a force/torque sensor
between the two whose wrench goes to ``rnea_node`` (``wrench_topics``). ``rnea_node`` turns
``joint_states`` and a fast trajectory into ``effort_commands`` = source + Kp e + Kd ė with
the same gains three times: feedback only, gravity compensation (gravity and the measured
payload), and full inverse dynamics. A live table shows each run; then the tracking error per
joint of the three runs goes to a PNG, with the RMS errors in the legend. Every process runs
in the namespace ``/rnea_demo*``, and the whole demo stops by itself in about 40 s.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import rclpy

from rnea_ros.demo.closed_loop import Run, TrajectoryPublisher, run_closed_loop
from rnea_ros.demo.example_robot import example_arm_urdf
from rnea_ros.demo.trajectories import fast_multisine
from rnea_ros.dynamics.model import RobotModel

NAMESPACE = "rnea_demo"
START = [0.0, 1.0, 0.0, -1.5, 0.0, 1.5, 0.0, 0.02]
# Critically damped at ~20-25 rad/s on the arm's own inertias at START (ω² M_ii, 2 ω M_ii)
KP = [600.0, 900.0, 250.0, 150.0, 12.0, 15.0, 1.0, 40.0]
KD = [60.0, 90.0, 25.0, 15.0, 1.2, 1.5, 0.1, 4.0]
PAYLOAD = {"payload_link": "tcp", "payload_mass": 2.0, "payload_com": [0.0, 0.0, 0.05], "payload_inertia": [0.004] * 3}
MODES = {  # command_source -> label
    "none": "PD only",
    "gravity": "PD + gravity compensation",
    "inverse_dynamics": "PD + inverse dynamics",
}


def _fixed(x: float, width: int) -> str:
    """x with 2 decimals, right-aligned; never "-0.00"."""
    text = f"{x:.2f}"
    return f"{'0.00' if text == '-0.00' else text:>{width}}"


class LiveTable:
    """Twice a second: the run, its trajectory time and the node's feed-forward efforts."""

    def __init__(self, names: list[str]) -> None:
        self.names = names[:4]
        self.mode = ""
        print(f"{'run':<27}{'t [s]':>7}   node's feed-forward τ [N·m] of " + ", ".join(self.names), flush=True)

    def show(self, publisher: TrajectoryPublisher) -> None:
        if publisher.latest is None:
            print(f"{self.mode:<27}{'':>7}   waiting for rnea_node", flush=True)
            return
        t, effort = publisher.latest
        print(f"{self.mode:<27}{t:7.2f}   " + " ".join(_fixed(x, 8) for x in effort[:4]), flush=True)


def rms_degrees(error: np.ndarray) -> np.ndarray:
    return np.degrees(np.sqrt((error**2).mean(axis=0)))


def write_plot(runs: dict[str, Run], names: list[str], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(names), 1, figsize=(10, 2.0 * len(names)), sharex=True)
    for source, run in runs.items():
        started = run.time >= 0.0
        error = np.degrees(run.tracking_error(names))
        rms = rms_degrees(np.radians(error))
        for k, ax in enumerate(axes):
            ax.plot(run.time[started], error[:, k], lw=0.8, label=f"{MODES[source]} (RMS {rms[k]:.3g}°)")
    for k, ax in enumerate(axes):
        ax.set_ylabel(f"{names[k]}\nerror [°]")
        ax.set_yscale("symlog", linthresh=0.01)
        ax.legend(fontsize=7, loc="upper right")
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("trajectory time [s]")
    fig.suptitle("Example arm with a 2 kg payload, rnea_sim at 1 kHz: tracking error q_d − q, same PD gains")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(seconds: float, output: Path, realtime: bool) -> int:
    urdf = example_arm_urdf()
    model = RobotModel.from_urdf(urdf)
    moving = model.joint_names[:7]  # the gripper holds its opening
    trajectory = fast_multisine(np.array(START), moving=7)
    sim = {
        "robot_description": urdf,
        "realtime": realtime,
        "initial_positions": START,
        "duration": seconds,
        "release_after_commands": 50,
        "sensor_topic": "tcp_wrench",
        **PAYLOAD,
    }
    table = LiveTable(model.joint_names)
    runs: dict[str, Run] = {}
    with tempfile.TemporaryDirectory(prefix="rnea_demo_") as folder:
        for source, label in MODES.items():
            table.mode = label
            node = {
                "robot_description": urdf,
                "command_source": source,
                "kp": KP,
                "kd": KD,
                "wrench_topics": ["tcp_wrench"],
            }
            runs[source] = run_closed_loop(
                Path(folder), f"{NAMESPACE}_{source}", sim, node, trajectory, model.joint_names,
                {}, progress=table.show,
            )  # fmt: skip
    print(f"\nRMS tracking error [°] over {seconds:.0f} s ({'real time' if realtime else 'lockstep'}):")
    print(f"{'':<27}" + "".join(f"{name:>9}" for name in moving))
    for source, result in runs.items():
        print(f"{MODES[source]:<27}" + "".join(f"{x:9.4f}" for x in rms_degrees(result.tracking_error(moving))))
    write_plot(runs, moving, output)
    print(f"plot written to {output}")
    return 0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=4.0, help="length of each run (simulated time)")
    parser.add_argument("--output", type=Path, default=Path("rnea_demo.png"), help="PNG plot to write")
    parser.add_argument("--realtime", action="store_true", help="the simulator on the wall clock, not in lockstep")
    args = parser.parse_args(argv)
    rclpy.init()
    try:
        code = run(args.seconds, args.output, args.realtime)
    except KeyboardInterrupt:
        code = 130
    finally:
        rclpy.try_shutdown()
    sys.exit(code)


if __name__ == "__main__":
    main()
