"""Solo12 and Go2 trotting in rnea_sim, lockstep, on joint PD (critically damped at 40 rad/s on each
joint's inertia) plus rnea_node's feed-forward (issue 48, item 4): diagonal pairs, period 0.5 s, duty
0.6, swing feet lifted 5 cm, in place for 3 s then forward, 0.1 m/s from 5 s on, 10 s; the node's
schedule from its gait parameters, the planner (this process) closing the loop on the base through
desired_base_acceleration at 3 Hz (``rnea_ros/testing/trot.py``'s ``BaseFeedback``); the same without the base
feedback; and the control: the same trot with every foot a static contact.

    python benchmarks/trot.py                # Solo12, ~10 min; writes docs/figures/trot.md
    python benchmarks/trot.py --robot Go2    # docs/figures/trot_go2.md
    python benchmarks/trot.py --busy 2       # beside two spinning processes: trot_busy_2.md
    python benchmarks/trot.py --realtime [--robot Go2] [--busy 2]   # trot_realtime[_go2][_busy_2].md

``--realtime``: the trot with the joints' PD in the simulator's motor drivers at every 1 ms step
(rnea_sim ``controller: motor_pd``, on the node's joint_commands; the node's own PD off, its
``joint_states_depth`` 1), in lockstep and on the wall clock (the states every 1 and every 2 ms),
each real-time figure also as a ratio to the lockstep run's (issue 48: within 1.5×). On the wall clock
the node samples its references ``WALL_CLOCK_LEAD`` after each state's stamp (its ``reference_lead``;
``--lead 0``: at the stamp, as before). ``--priorities``: the simulator, the planner and the node on
SCHED_FIFO (testing/trot.py's priorities, which the wall-clock test uses: robust beside busy processes;
on a machine with little else running their real-time share throttles itself, see docs/closed-loop.md).

The runs are ``rnea_ros/testing/trot.py``'s (``test/simulation/test_trot.py`` checks the same claims).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import rclpy

from rnea_ros import RobotModel
from rnea_ros.demo.figures import write_table
from rnea_ros.testing import legged
from rnea_ros.testing.domain import reserve_domain_id
from rnea_ros.testing.trot import (
    BASE_OMEGA,
    GO2_BASE_OMEGA,
    NODE_PRIORITY,
    PLANNER_PRIORITY,
    SIM_PRIORITY,
    SPANS,
    WALL_CLOCK_LEAD,
    Legged,
    run_trot,
)

ENV = {"ROS_DOMAIN_ID": str(reserve_domain_id()), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
SECONDS = 10.0
ROBOTS = {
    "Solo12": (Legged(legged.SOLO_URDF, legged.SOLO_FEET, legged.SOLO_FOOT_RADIUS), legged.solo_trot),
    "Go2": (Legged(legged.GO2_URDF, legged.GO2_FEET, legged.GO2_FOOT_RADIUS), legged.go2_trot),
}
RUNS = (  # (name, the node's gait parameters, the planner's base feedback [rad/s], its sway reference)
    ("gait parameters, base feedback", True, BASE_OMEGA, True),
    ("gait parameters, base feedback, level reference", True, BASE_OMEGA, False),
    ("gait parameters, no base feedback", True, 0.0, False),
)
# the control: Solo12's without the planner (with it, once fallen, the planner's demands blew
# MuJoCo's state up at 10.2 s), Go2's with it (without, it falls on the gait already)
CONTROL = {"Solo12": ("static contacts (control), no base feedback", False, 0.0, False)}
CONTROL["Go2"] = ("static contacts (control), base feedback", False, GO2_BASE_OMEGA, True)
BASE = {"Solo12": BASE_OMEGA, "Go2": GO2_BASE_OMEGA}  # the planner's gains, position and rotation
# --realtime: (name, wall clock, the simulator's states every that many 1 ms steps); the first is the reference
REAL_TIME_RUNS = (
    ("lockstep, motor PD", False, 1),
    ("real time, motor PD, states every 1 ms", True, 1),
    ("real time, motor PD, states every 2 ms", True, 2),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", choices=list(ROBOTS), default="Solo12", help="Go2 writes trot_go2.md")
    parser.add_argument("--busy", type=int, default=0, help="processes spinning beside the runs (a loaded machine)")
    parser.add_argument("--realtime", action="store_true", help="motor PD, lockstep against the wall clock")
    parser.add_argument("--lead", type=float, default=WALL_CLOCK_LEAD, help="--realtime: the node's reference_lead [s]")
    parser.add_argument(
        "--priorities", action="store_true", help="--realtime: the simulator, planner and node on SCHED_FIFO"
    )
    args = parser.parse_args()
    if args.realtime:
        real_time(args)
        return
    os.environ.update(ENV)
    rclpy.init()
    scores, load = [], os.getloadavg()[0]
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    robot, make_trot = ROBOTS[args.robot]
    try:
        trot = make_trot(RobotModel.from_urdf(robot.urdf, floating_base=True), speed=0.1, walk_from=3.0)
        with tempfile.TemporaryDirectory() as folder:
            for k, (name, gait, base, sway) in enumerate([*RUNS, CONTROL[args.robot]]):
                if args.robot != "Solo12" and "level reference" in name:
                    continue  # Go2 meets its targets on a level reference (its sway not measured)
                base, sway = (BASE[args.robot] if base else 0.0), sway and args.robot == "Solo12"
                name = name.replace(", level reference", "") if args.robot != "Solo12" else name
                spans = run_trot(Path(folder), f"trot_{k}", robot, trot, SECONDS, gait, ENV, SPANS, base, sway=sway)
                for span, score in spans.items():
                    print(score.line())
                    scores.append((f"{name}, {span} ({SPANS[span][0]:g}–{SPANS[span][1]:g} s)", score))
    finally:
        for process in busy:
            process.kill()
            process.wait()
        rclpy.try_shutdown()
    header = [
        "node's schedule, planner, span", "slip per stance max / p50 [mm]", "swing feet: node's force / ground's [N]",
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
        f"{args.robot} trotting {SECONDS:g} s in lockstep (diagonal pairs, 0.5 s, duty 0.6, feet lifted 5 cm; in "
        "place for 3 s, then forward, 0.1 m/s from 5 s), joint PD at 40 rad/s plus rnea_node's feed-forward (QP, "
        "μ 0.8). Base feedback: the planner's desired_base_acceleration, a PD at 3 Hz on the base's position "
        f"({BASE_OMEGA:.2f} rad/s) and {np.atleast_1d(BASE[args.robot])[-1] / (2 * np.pi):g} Hz on its rotation, "
        "critically damped, on its pose and twist plus the reference's acceleration, sent from another process "
        "for each state; its orientation reference the sway about the support line of a pair standing alone "
        "(testing/legged.py's SupportLineSway; 'level reference': level) "
        "(the node takes the newest: lockstep is then no longer exactly repeatable), the base scored against its "
        "reference itself; without it, walking, the drift from where the base was at 5 s. Scored in place "
        "(0.5–3 s) and at full speed (5–10 s). Slip: how far a stance foot's contact point slid while the ground "
        "pushed it (> 1 N; its rolling on its sphere not counted); swing force: the largest the node gave a foot "
        "in swing (contact_states), and the ground's normal force on it in mid-swing (60 ms from either end); "
        "swing RMS: the swing feet against their curve in the base frame; base: the largest distance from (X(t), "
        "0, standing height) and rotation from level; torque step: the applied torques' largest change between "
        "two 1 ms states within 60 ms of a lift-off or touch-down, and elsewhere; load change: a leg's mean torque "
        f"in mid-stance against mid-swing, what a switch without ramps would step. Load average {load:.1f} at the "
        "start (2 cores)." + busy_note
    )
    name = "trot" if args.robot == "Solo12" else f"trot_{args.robot.lower()}"
    name = f"{name}_busy_{args.busy}" if args.busy else name
    print(f"wrote {write_table(name, 'benchmarks/trot.py', header, rows, note)}")


def real_time(args) -> None:
    """The trot on motor_pd, lockstep then on the wall clock; trot_realtime[_go2][_busy_N].md."""
    os.environ.update(ENV)
    rclpy.init()
    load = os.getloadavg()[0]
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    robot, make_trot = ROBOTS[args.robot]
    results = []
    try:
        trot = make_trot(RobotModel.from_urdf(robot.urdf, floating_base=True), speed=0.1, walk_from=3.0)
        with tempfile.TemporaryDirectory() as folder:
            for k, (name, realtime, every) in enumerate(REAL_TIME_RUNS):
                try:
                    spans = run_trot(
                        Path(folder), f"rt_{k}", robot, trot, SECONDS, True, ENV, SPANS, BASE[args.robot],
                        realtime=realtime, sway=args.robot == "Solo12", publish_every=every, motor_pd=True,
                        reference_lead=args.lead if realtime else 0.0, priorities=args.priorities,
                    )  # fmt: skip
                except RuntimeError as error:  # a run that stopped (blew up) is a figure too
                    print(f"{name}: {str(error).splitlines()[0]}")
                    results.append((name, None, str(error).splitlines()[0]))
                    continue
                for score in spans.values():
                    print(score.line())
                results.append((name, spans, sim_counts(Path(folder) / f"rt_{k}_simulation.log")))
    finally:
        for process in busy:
            process.kill()
            process.wait()
        rclpy.try_shutdown()
    header = [
        "run, span", "slip max [mm]", "swing feet: node's / ground's force [N]",
        "swing feet RMS [mm] (× lockstep walking)", "base [cm] (×), [°] (×)", "torque step at switches [N·m]",
        "the simulator's counts",
    ]  # fmt: skip
    reference = results[0][1]
    rows = []
    for name, spans, counts in results:
        if spans is None:
            rows.append([name, "–", "–", "–", "–", "–", counts])
            continue
        for span, s in spans.items():
            # in place, lockstep's figures are near 0 (0.7 mm, 0.01 cm): every ratio is to lockstep walking's
            walking = reference["walking"] if reference is not None else s
            label = f"{name}, {span} ({SPANS[span][0]:g}–{SPANS[span][1]:g} s)"
            rows.append(real_time_row(label, s, walking, counts if span == "walking" else "", spans is reference))
    busy_note = f" With {args.busy} processes spinning beside the runs, on 2 cores." if args.busy else ""
    note = (
        f"{args.robot} trotting {SECONDS:g} s as in trot.md (gait parameters, base feedback"
        f"{', sway reference' if args.robot == 'Solo12' else ''}), the joints' PD (40 rad/s) closed by the "
        "simulator's motor drivers at every 1 ms step (rnea_sim controller motor_pd) on rnea_node's joint_commands "
        "(its reference and feed-forward; the node's own kp, kd off; joint_states_depth 1: the node answers the "
        "newest state), in lockstep and on the wall clock (rnea_sim realtime: the node's commands taken as they "
        "come, the last one held; a backlog behind the wall clock over 2 ms, the simulator starved of CPU, is "
        "slipped rather than made up by stepping faster than real time: its realtime_catch_up). On the wall clock "
        f"the node's reference_lead is {args.lead * 1e3:g} ms (its references, the trajectory's point and the "
        "contact schedule's weights, those of each state's stamp plus that, the time its command is applied; "
        f"{lead_rule(args.lead)}); in lockstep 0. {priority_note(args.priorities)} Ratios: to the "
        "lockstep run's walking figure (5–10 s). Walking, that is the issue's 'within 1.5× of lockstep'; in place "
        "lockstep's own figures are near 0 (swing feet ~0.7 mm, base ~0.01 cm, ~0.1°: the sampling's floor), a "
        "ratio to them says nothing, and the bound given instead is the walking lockstep figure's (the ratio "
        "shown). The simulator's counts: commands taken per physics step, their age at arrival from their stamp "
        "(the state they answer plus the lead: what the lead left over; p50, max), and from the brakes' release "
        "the simulated time over the wall time (real-time "
        "factor), the largest backlog and the wall time slipped. "
        f"Load average {load:.1f} at the start (2 cores)." + busy_note
    )
    name = "trot_realtime" if args.robot == "Solo12" else f"trot_realtime_{args.robot.lower()}"
    name = f"{name}_busy_{args.busy}" if args.busy else name
    print(f"wrote {write_table(name, 'benchmarks/trot.py', header, rows, note)}")


def priority_note(on: bool) -> str:
    """What the note says of the processes' scheduling on the wall clock."""
    if not on:
        return "Every process on the default scheduler."
    return (
        f"On the wall clock the simulator, the planner and the node on SCHED_FIFO at {SIM_PRIORITY}, "
        f"{PLANNER_PRIORITY} and {NODE_PRIORITY} (testing/trot.py: as a legged robot's computer runs its loops), "
        "ahead of every ordinary process."
    )


def lead_rule(lead: float) -> str:
    """How the note's reference_lead was chosen."""
    if lead == WALL_CLOCK_LEAD:
        return "the commands' p50 age at arrival without a lead, 2.0 ms for both robots at 22:05 UTC on 2026-11-28"
    return "given by --lead" if lead else "none: each reference is its state's"


def real_time_row(name: str, s, r, counts: str, reference: bool = False) -> list[str]:
    """One run's span; each figure also as a ratio to ``r``'s (the lockstep run's walking) unless ``reference``."""

    def ratio(x: float, x0: float) -> str:
        return f" ({x / x0:.2f}×)" if x0 > 0 and not reference else ""

    tilt, tilt_0 = s.base_orientation_error, r.base_orientation_error
    return [
        name,
        f"{s.slip.max() * 1e3:.2f}",
        f"{s.swing_force_node:.3g} / {s.swing_force_ground:.3g}",
        f"{s.swing_rms * 1e3:.2f}{ratio(s.swing_rms, r.swing_rms)}",
        f"{s.base_position_error * 1e2:.2f}{ratio(s.base_position_error, r.base_position_error)}, "
        f"{np.degrees(tilt):.2f}{ratio(tilt, tilt_0)}",
        f"{s.step_at_events:.3f}",
        counts,
    ]


def sim_counts(log: Path) -> str:
    """'N commands taken in M steps; age p50 a ms, max b ms' from the simulator's summary line."""
    text = log.read_text() if log.exists() else ""
    steps = re.search(r"in (\d+) steps: (\d+) commands taken", text)
    age = re.search(r"age at arrival p50 (-?[\d.]+) ms, max (-?[\d.]+) ms", text)
    pace = re.search(r"since the release ([\d.]+)x real time, largest backlog ([\d.]+) ms, ([\d.]+) s slipped", text)
    if not steps:
        return "no summary"
    line = f"{steps.group(2)} commands in {steps.group(1)} steps"
    line += f"; age p50 {age.group(1)} ms, max {age.group(2)} ms" if age else ""
    return line + (
        f"; {pace.group(1)}× real time, backlog ≤ {pace.group(2)} ms, {pace.group(3)} s slipped" if pace else ""
    )


if __name__ == "__main__":
    main()
