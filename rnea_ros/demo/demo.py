"""Main job: the closed loop on the bundled example arm, in real time, the way ros2_control runs it.

    rnea_demo [--seconds 4] [--output rnea_demo.png] [--lockstep] [--figures]

The simulated arm (``rnea_sim``: MuJoCo with a joint_trajectory_controller stand-in, its PID inside
the 1 kHz step loop) carries a 2 kg payload on its tool, known to ``rnea_node`` from a corrections
file (what ``rnea_analyze --identify --payload-link`` writes). A planner's trajectory (points 0.1 s
apart) goes to ``rnea_node``'s ``joint_trajectory``; the node answers once, ahead, with every
point's effort on ``feedforward_trajectory``, which the controller adds to its PID. Three times,
the same gains: efforts zero (PD only), gravity (gravity and the payload), full inverse dynamics.
A live table shows each run; then the RMS error per joint of the three runs and how many times
lower it is with the feed-forward, and a PNG. Every process runs in the namespace
``/rnea_demo*``; the whole demo stops by itself in under a minute. ``--lockstep`` runs the
simulator in lockstep instead of real time (the same physics: the loop is inside it).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import rclpy

from rnea_ros.demo.closed_loop import Run, planned_trajectory, run_trajectory_loop
from rnea_ros.demo.example_robot import example_arm_urdf
from rnea_ros.demo.figures import write_table
from rnea_ros.dynamics.corrections import Corrections, Payload, save_corrections
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.dynamics.payload import Inertial
from rnea_ros.motion.multisine import fast_multisine
from rnea_ros.plumbing.signals import join_signal_thread

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
    """Twice a second: the run, its trajectory time and the node's feed-forward efforts, one
    column per joint under a header of the joints' names; "waiting" once per run."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.mode = ""
        self._waiting_said = ""

    def start(self, mode: str) -> None:
        self.mode = mode
        print(f"\n{mode}: the efforts applied [N·m] (the node's feed-forward + the controller's PID)", flush=True)
        print(f"{'t [s]':>7}" + "".join(f"{name[:9]:>10}" for name in self.names), flush=True)

    def show(self, publisher) -> None:
        """``publisher.latest``: (trajectory time, efforts) or None before the trajectory starts."""
        if publisher.latest is None or not np.any(publisher.latest[1]):  # nothing applied yet: still starting
            if self._waiting_said != self.mode:
                self._waiting_said = self.mode
                print("   waiting for the simulator and rnea_node (no effort applied yet) ...", flush=True)
            return
        t, effort = publisher.latest
        print(f"{t:7.2f}" + "".join(_fixed(x, 10) for x in effort[: len(self.names)]), flush=True)


def rms_degrees(error: np.ndarray) -> np.ndarray:
    return np.degrees(np.sqrt((error**2).mean(axis=0)))


COLOURS = {"none": "tab:red", "gravity": "tab:orange", "inverse_dynamics": "tab:blue"}


def write_plot(runs: dict[str, Run], names: list[str], path: Path, clock: str, summary: str = "") -> None:
    """Left: the tracking error of every joint over time, one panel per run on its own (linear)
    scale; right: the RMS error per joint of the three runs as bars on a log scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(13, 7.5))
    grid = fig.add_gridspec(len(runs), 2, width_ratios=(1.35, 1.0), hspace=0.45, wspace=0.18)
    for row, (source, run) in enumerate(runs.items()):
        ax = fig.add_subplot(grid[row, 0])
        started = run.time >= 0.0
        error = np.degrees(run.tracking_error(names))
        for k, name in enumerate(names):
            ax.plot(run.time[started], error[:, k], lw=0.8, label=name)
        ax.set_title(f"{MODES[source]}: largest error {np.abs(error).max():.3g}°", fontsize=10, loc="left")
        ax.set_ylabel("q_d − q [°]")
        ax.grid(alpha=0.3)
        if row == len(runs) - 1:
            ax.set_xlabel("trajectory time [s]")
            ax.legend(fontsize=7, ncol=len(names), loc="upper center", bbox_to_anchor=(0.5, -0.35), frameon=False)
    bars = fig.add_subplot(grid[:, 1])
    width = 0.8 / len(runs)
    x = np.arange(len(names))
    for k, (source, run) in enumerate(runs.items()):
        rms = rms_degrees(run.tracking_error(names))
        bars.bar(
            x + (k - 1) * width, rms, width, color=COLOURS[source], label=f"{MODES[source]} (mean {rms.mean():.3g}°)"
        )
    bars.set_yscale("log")
    bars.set_xticks(x, [name.replace("joint", "j") for name in names])
    bars.set_ylabel("RMS tracking error [°] (log scale)")
    bars.set_title("RMS error per joint: lower is better", fontsize=10, loc="left")
    bars.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.06), frameon=False)
    bars.grid(alpha=0.3, axis="y", which="both")
    title = (
        f"Example arm with a 2 kg payload, rnea_sim at 1 kHz ({clock}), a joint_trajectory_controller's PID "
        "with the trajectory's efforts from rnea_node"
    )
    fig.suptitle(f"{title}\n{summary}" if summary else title)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)


def headline(rms: dict[str, np.ndarray]) -> str:
    """One line: how much lower the error is with the feed-forward than with PD alone."""
    ratio = rms["none"] / np.maximum(rms["inverse_dynamics"], 1e-12)
    gravity = rms["none"] / np.maximum(rms["gravity"], 1e-12)
    return (
        f"PD + inverse dynamics tracks {ratio.min():.0f}–{ratio.max():.0f}× better than PD alone on every joint "
        f"(gravity compensation alone: {gravity.min():.1f}–{gravity.max():.1f}×)"
    )


def payload_corrections(folder: Path) -> Path:
    """The payload as a corrections file, as rnea_analyze --identify --payload-link writes it."""
    inertial = Inertial(PAYLOAD["payload_mass"], np.array(PAYLOAD["payload_com"]), np.diag(PAYLOAD["payload_inertia"]))
    path = folder / "corrections.yaml"
    save_corrections(Corrections({}, Payload(PAYLOAD["payload_link"], inertial)), path)
    return path


def run(seconds: float, output: Path, realtime: bool, figures: bool = False) -> int:
    urdf = example_arm_urdf()
    model = RobotModel.from_urdf(urdf)
    names = list(model.joint_names)
    moving = names[:7]  # the gripper holds its opening
    trajectory = fast_multisine(np.array(START), moving=7)
    planned = planned_trajectory(names, trajectory, seconds, spacing=0.1)  # a planner's points, 0.1 s apart
    sim = {
        "robot_description": urdf,
        "realtime": realtime,
        "initial_positions": START,
        "duration": seconds + 0.2,
        "pid_p": KP,
        "pid_d": KD,
        **PAYLOAD,
    }
    table = LiveTable(moving)
    runs: dict[str, Run] = {}
    with tempfile.TemporaryDirectory(prefix="rnea_demo_") as folder:
        corrections = str(payload_corrections(Path(folder)))
        for source, label in MODES.items():
            table.start(label)
            node = {"robot_description": urdf, "command_source": source, "corrections_file": corrections}
            runs[source] = run_trajectory_loop(
                Path(folder), f"{NAMESPACE}_{source}", sim, node, planned, {},
                reference=trajectory, progress=table.show,
            )  # fmt: skip
    clock = "real time" if realtime else "lockstep"
    rms = {source: rms_degrees(result.tracking_error(moving)) for source, result in runs.items()}
    print(f"\nRMS tracking error [°] over {seconds:g} s ({clock}):")
    print(f"{'':<27}" + "".join(f"{name:>9}" for name in moving))
    for source, values in rms.items():
        print(f"{MODES[source]:<27}" + "".join(f"{x:9.4f}" for x in values))
    print(headline(rms))
    write_plot(runs, moving, output, clock, headline(rms))
    print(f"plot written to {output}")
    if figures:
        rows = [(MODES[source], *(f"{x:.4f}" for x in values)) for source, values in rms.items()]
        note = f"{seconds:g} s per run, {clock}; {headline(rms)}."
        path = write_table("demo", "rnea_ros/demo/demo.py", ("RMS error [°]", *moving), rows, note)
        print(f"figures written to {path}")
    return 0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=4.0, help="length of each run (simulated time)")
    parser.add_argument("--output", type=Path, default=Path("rnea_demo.png"), help="PNG plot to write")
    parser.add_argument("--lockstep", action="store_true", help="the simulator in lockstep, not on the wall clock")
    parser.add_argument(
        "--figures", action="store_true", help="write the RMS table to docs/figures/demo.md (from a checkout)"
    )
    args = parser.parse_args(argv)
    rclpy.init()
    try:
        code = run(args.seconds, args.output, not args.lockstep, args.figures)
    except KeyboardInterrupt:
        code = 130
    finally:
        join_signal_thread()  # before its executors go
        rclpy.try_shutdown()
    sys.exit(code)


if __name__ == "__main__":
    main()
