"""Solo12 trotting in rnea_sim, lockstep, on joint PD (critically damped at 40 rad/s on each joint's
inertia) plus rnea_node's feed-forward (issue 48, item 4): diagonal pairs, period 0.5 s, duty 0.6,
swing feet lifted 5 cm, in place for 3 s then forward, 0.1 m/s from 5 s on, 10 s; the node's schedule
from its gait parameters, and the control: the same trot with every foot a static contact.

    python benchmarks/trot.py            # ~6 min; writes docs/figures/trot.md
    python benchmarks/trot.py --busy 2   # beside two spinning processes: trot_busy_2.md

The runs are ``rnea_ros/testing/trot.py``'s (``test/simulation/test_trot.py`` checks the same claims).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import rclpy

from rnea_ros import RobotModel
from rnea_ros.demo.figures import write_table
from rnea_ros.testing.domain import reserve_domain_id
from rnea_ros.testing.legged import SOLO_FEET, SOLO_FOOT_RADIUS, SOLO_URDF, solo_trot
from rnea_ros.testing.trot import SPANS, Legged, run_trot

ENV = {"ROS_DOMAIN_ID": str(reserve_domain_id()), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
SECONDS = 10.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", type=int, default=0, help="processes spinning beside the runs (a loaded machine)")
    args = parser.parse_args()
    os.environ.update(ENV)
    rclpy.init()
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        model = RobotModel.from_urdf(SOLO_URDF, floating_base=True)
        robot = Legged(SOLO_URDF, SOLO_FEET, SOLO_FOOT_RADIUS)
        trot = solo_trot(model, speed=0.1, walk_from=3.0, ramp=2.0)
        scores = []
        with tempfile.TemporaryDirectory() as folder:
            for name, gait in (("gait parameters", True), ("static contacts (control)", False)):
                spans = run_trot(Path(folder), f"trot_{int(gait)}", robot, trot, SECONDS, gait, ENV, SPANS)
                for span, score in spans.items():
                    print(score.line())
                    scores.append((f"{name}, {span} ({SPANS[span][0]:g}–{SPANS[span][1]:g} s)", score))
    finally:
        for process in busy:
            process.kill()
            process.wait()
        rclpy.try_shutdown()
    header = [
        "node's schedule, span", "slip per stance max / p50 [mm]", "swing feet: node's force / ground's [N]",
        "swing feet RMS [mm]", "base [cm], [°]", "torque step at switches / elsewhere [N·m]",
        "stance ↔ swing load change [N·m]",
    ]  # fmt: skip
    rows = [
        [
            name,
            f"{s.slip.max() * 1e3:.2f} / {np.median(s.slip) * 1e3:.2f}",
            f"{s.swing_force_node:.3g} / {s.swing_force_ground:.3g}",
            f"{s.swing_rms * 1e3:.2f}",
            f"{s.base_position_error * 1e2:.2f}, {np.degrees(s.base_orientation_error):.2f}",
            f"{s.step_at_events:.3f} / {s.step_elsewhere:.3f}",
            f"{s.load_change:.3f}",
        ]
        for name, s in scores
    ]
    busy_note = f" With {args.busy} processes spinning beside the runs, on 2 cores." if args.busy else ""
    note = (
        f"Solo12 trotting {SECONDS:g} s in lockstep (diagonal pairs, 0.5 s, duty 0.6, feet lifted 5 cm; in place "
        "for 3 s, then forward, 0.1 m/s from 5 s), joint PD at 40 rad/s plus rnea_node's feed-forward (QP, μ 0.8), "
        "scored in place (0.5–3 s) and at full speed (5–10 s). Slip: how far a stance foot's contact point slid "
        "while the ground pushed it (> 1 N; its rolling on its sphere not counted); swing force: the largest the "
        "node gave a foot in swing (contact_states), and the ground's normal force on it in mid-swing (60 ms from "
        "either end); swing RMS: the swing feet against their curve in the base frame; base: the largest distance "
        "from (X(t), 0, standing height) and rotation from level (walking: the drift from where the base was at "
        "5 s); torque step: the applied torques' largest change between two 1 ms states within 60 ms of a "
        "lift-off or touch-down, and elsewhere; load change: a leg's mean torque in mid-stance against mid-swing, "
        "what a switch without ramps would step." + busy_note
    )
    name = f"trot_busy_{args.busy}" if args.busy else "trot"
    print(f"wrote {write_table(name, 'benchmarks/trot.py', header, rows, note)}")


if __name__ == "__main__":
    main()
