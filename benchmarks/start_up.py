"""rnea_node's first answer as a subscriber sees it, on Go2 with four foot contacts; where its start goes.

    python benchmarks/start_up.py [--rounds 5] [--cold] [--in-process-rounds 0] [--no-docs]

As a user sees it (rnea_ros.testing.start_up): a subscriber of gravity_torques and a driver publishing
joint_states and base_odometry at 200 Hz run first, on a private ROS_DOMAIN_ID, and see each other; then
`rnea_node --ros-args --params-file robot.yaml` starts (the console script scripts/setup installs;
robot.yaml holds Go2's URDF, floating_base and contact_links on the four feet); the figure is the time
from its spawn to the subscriber's first gravity_torques. NUMBA_CACHE_DIR is a fresh directory that
`python -m rnea_ros.compile` fills first (as scripts/setup does): its first start is "after set-up",
the next ones "warm" (median of --rounds), quiet, then beside two busy processes (`while True: pass`).
RNEA_START_TRACE makes the node stamp its phases (wall clock and its own CPU time) on stderr; the
subscriber and the driver stamp when they matched the node's endpoints. --cold: one start on an empty
cache. --in-process-rounds: also the model's build without ROS, cold, after compile and warm.
The node uses its Fast DDS profile (rnea_ros/node/fastdds_start.xml: the user sets none here); the
warm quiet starts are also run with an empty profile of the user's (FASTRTPS_DEFAULT_PROFILES_FILE),
as the node started before it had one (--no-compare: not).
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

from rnea_ros.demo.figures import write_table
from rnea_ros.node.__main__ import PROFILE_VARIABLES, start_profile
from rnea_ros.testing.domain import reserve_domain_id
from rnea_ros.testing.start_up import BARE_COMMAND, FEET, Start, first_answer

GO2 = "go2_description/urdf/go2.urdf"
EMPTY_PROFILE = """<?xml version="1.0" encoding="UTF-8" ?>
<profiles xmlns="http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles"/>
"""
# The node's phases (RNEA_START_TRACE), in order: (stamp, what ends there)
PHASES = (
    ("python", "interpreter and site packages"),
    ("imported", "rnea_ros.node.node and what it imports (rclpy, numpy; numba without ahead-of-time kernels)"),
    ("rclpy init", "rclpy.init"),
    ("parameters", "the node, its publishers and parameters"),
    ("subscribed", "its subscriptions"),
    ("model built", "Go2's model, its kernels from the ahead-of-time module (else numba's cache)"),
    ("first publish", "the first answer computed and published"),
)
START = f"""
import time; t0 = time.perf_counter()
from rnea_ros.dynamics.precompile import kernels_in_cache
from rnea_ros.controller.core import build_live_model
from rnea_ros.controller.settings import settings_from
from rnea_ros.testing.reference import robot_urdf

cached = kernels_in_cache()
urdf = robot_urdf({GO2!r})
build_live_model(urdf, settings_from({{"floating_base": True, "contact_links": {FEET!r}}}))
print(cached, time.perf_counter() - t0)
"""


def compile_all(cache: str) -> float:
    start_time = time.perf_counter()
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    subprocess.run([sys.executable, "-m", "rnea_ros.compile"], env=env, capture_output=True, check=True)
    return time.perf_counter() - start_time


class Robot:
    def __init__(self) -> None:
        from rnea_ros import RobotModel
        from rnea_ros.testing.reference import robot_urdf

        self.urdf = robot_urdf(GO2)
        model = RobotModel.from_urdf(self.urdf, floating_base=True)
        self.joint_names, self.base_link = model.joint_names, model.base_link

    def start(self, env: dict[str, str], command: list[str] | None = None) -> Start:
        if command and (profile := start_profile(env, Path.cwd())):  # the Fast DDS profile rnea_node gives itself
            env = {**env, PROFILE_VARIABLES[0]: str(profile)}
        with tempfile.TemporaryDirectory(prefix="start_up_") as folder:
            start = first_answer(
                Path(folder), self.urdf, self.joint_names, self.base_link, env, contact_links=FEET, command=command
            )
        if start.first is None:
            raise RuntimeError(f"no gravity_torques from {command or 'rnea_node'}:\n{start.output[-3000:]}")
        compiled = "compiling kernels" in start.output
        print(
            f"  {'reference' if command else 'rnea_node'}: first answer {start.first:6.2f} s, CPU {start.cpu:.2f} s, "
            f"load {os.getloadavg()[0]:.1f}" + (" (compiled)" if compiled else ""),
            flush=True,
        )
        return start

    def starts_taking_turns(self, env: dict[str, str], rounds: int) -> tuple[list[Start], list[Start]]:
        """rnea_node's starts and the reference node's, one after the other, the first to go alternating."""
        own, reference = [], []
        for k in range(rounds):
            for first in (k % 2 == 0, k % 2 == 1):
                (own if first else reference).append(self.start(env, None if first else BARE_COMMAND))
        return own, reference


def _busy(count: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def _stop(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        process.kill()
        process.wait()


def median(values: list[float | None]) -> float:
    return statistics.median(v for v in values if v is not None)


def row(name: str, starts: list[Start], reference: list[Start] | None = None) -> tuple[str, ...]:
    firsts = [s.first for s in starts]
    built = [s.phases["model built"][0] for s in starts if "model built" in s.phases]
    return (
        name,
        f"{median(firsts):.2f} s",
        ", ".join(f"{v:.2f}" for v in firsts),
        f"{median(firsts) / median([s.first for s in reference]):.2f}" if reference else "",
        f"{median([s.cpu for s in starts]):.2f} s",
        f"{median([s.listener_matched for s in starts]):.2f} s",
        f"{median([s.driver_matched for s in starts]):.2f} s",
        f"{median(built):.2f} s" if built else "",
    )


def phase_rows(starts: list[Start]) -> list[tuple[str, str, str, str]]:
    """Each phase's median wall-clock and CPU duration (from the previous stamp)."""
    rows, previous = [], None
    for stamp, what in PHASES:
        walls = [s.phases[stamp][0] - (s.phases[previous][0] if previous else 0.0) for s in starts]
        cpus = [s.phases[stamp][1] - (s.phases[previous][1] if previous else 0.0) for s in starts]
        rows.append((stamp, what, f"{statistics.median(walls):.3f} s", f"{statistics.median(cpus):.3f} s"))
        previous = stamp
    return rows


def in_process_rounds(rounds: int) -> list[tuple[str, str, str]]:
    """A fresh process to a computing live model (no ROS): cold, compile, after compile, warm."""
    results = []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory(prefix="numba-cold-") as cold, tempfile.TemporaryDirectory() as compiled:
            cold_seconds = _in_process(cold)
            compile_seconds = compile_all(compiled)
            results.append((cold_seconds, compile_seconds, _in_process(compiled), _in_process(compiled)))
    table = []
    for k, name in enumerate(("cold", "compile", "after compile", "warm")):
        values = [r[k] for r in results]
        table.append((name, f"{statistics.median(values):.2f} s", ", ".join(f"{v:.2f}" for v in values)))
    return table


def _in_process(cache: str) -> float:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    out = subprocess.run([sys.executable, "-c", START], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="warm starts, quiet and busy each")
    parser.add_argument("--busy", type=int, default=2, help="busy processes beside the busy rounds")
    parser.add_argument("--cold", action="store_true", help="also one start on an empty numba cache")
    parser.add_argument("--in-process-rounds", type=int, default=0)
    parser.add_argument("--no-docs", action="store_true", help="do not write docs/figures/start_up.md")
    parser.add_argument("--no-compare", action="store_true", help="no warm starts without the node's profile")
    args = parser.parse_args()
    robot = Robot()
    base_env = {
        **os.environ,
        "ROS_DOMAIN_ID": str(reserve_domain_id()),
        "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
        "RNEA_START_TRACE": "1",
    }
    table, loads = [], []
    if args.cold:
        with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
            print("cold: an empty numba cache")
            table.append(row("cold (empty numba cache)", [robot.start({**base_env, "NUMBA_CACHE_DIR": cache})]))
    with tempfile.TemporaryDirectory(prefix="numba-") as cache:
        env = {**base_env, "NUMBA_CACHE_DIR": cache}
        print(f"python -m rnea_ros.compile: {compile_all(cache):.0f} s")
        print("after set-up: the first start on that cache")
        table.append(row("after set-up, quiet", [robot.start(env)]))
        own: list[Start] = []
        print(f"warm, quiet: {args.rounds} starts, taking turns with the reference node's")
        quiet, quiet_reference = robot.starts_taking_turns(env, args.rounds)
        loads.append(os.getloadavg()[0])
        table.append(row("warm, quiet", quiet, quiet_reference))
        table.append(row("reference node, warm, quiet", quiet_reference, quiet_reference))
        if not args.no_compare:
            print(f"warm, quiet, an empty Fast DDS profile of the user's: {args.rounds} starts")
            profile = Path(cache) / "empty_profile.xml"
            profile.write_text(EMPTY_PROFILE)
            own = [robot.start({**env, "FASTRTPS_DEFAULT_PROFILES_FILE": str(profile)}) for _ in range(args.rounds)]
            loads.append(os.getloadavg()[0])
            table.append(row("warm, quiet, without the node's Fast DDS profile", own))
        print(f"warm, beside {args.busy} busy processes: {args.rounds} starts, taking turns with the reference's")
        spinning = _busy(args.busy)
        try:
            busy, busy_reference = robot.starts_taking_turns(env, args.rounds)
            loads.append(os.getloadavg()[0])
        finally:
            _stop(spinning)
        table.append(row(f"warm, beside {args.busy} busy processes", busy, busy_reference))
        table.append(row(f"reference node, warm, beside {args.busy} busy processes", busy_reference, busy_reference))
    header = (
        "start",
        "first answer (median)",
        "each start",
        "× the reference node",
        "node CPU",
        "subscriber matched",
        "driver matched",
        "model built",
    )
    for line in table:
        print("  ".join(line))
    phases = phase_rows(quiet), phase_rows(busy), phase_rows(own) if own else [("",) * 4] * len(PHASES)
    phase_table = [(a[0], a[1], a[2], a[3], b[2], b[3], c[2], c[3]) for a, b, c in zip(*phases, strict=True)]
    columns = ("phase ends", "what", "quiet: wall", "quiet: CPU", "busy: wall", "busy: CPU")
    columns += ("quiet, without the profile: wall", "CPU")
    for line in phase_table:
        print("  ".join(line))
    if args.no_docs:
        return
    note = (
        "rnea_node's first answer as a subscriber sees it (rnea_ros.testing.start_up): Go2 with contact_links on "
        "its four feet; a subscriber of gravity_torques and a driver publishing joint_states and base_odometry at "
        "200 Hz started first, on a private ROS_DOMAIN_ID with localhost discovery, and seeing each other; then "
        "`rnea_node --ros-args --params-file robot.yaml`. Times from the node's spawn: to the subscriber's first "
        "gravity_torques (the figure), to the subscriber's and the driver's endpoints matching the node's, and "
        "to the node's model built; the node's CPU time (all threads) when the first answer came. numba's cache "
        "and the node's ahead-of-time kernels beside it filled by `python -m rnea_ros.compile` (after set-up: its "
        "first start). The node uses its Fast DDS "
        "profile (rnea_ros/node/fastdds_start.xml, as when the user sets none); 'without' gives it an empty one "
        "of the user's (FASTRTPS_DEFAULT_PROFILES_FILE), as it started before issue 45. Load average "
        f"{loads[0]:.1f} after the quiet starts (other work on the machine)"
        + (f", {loads[1]:.1f} after those without the profile" if len(loads) > 2 else "")
        + f", {loads[-1]:.1f} after the busy ones. The reference node (rnea_ros.testing.start_up's "
        "run_bare), started the same way, taking turns with rnea_node's warm starts: rclpy and sensor_msgs only, "
        "it answers each joint_states with zeros, with the Fast DDS profile rnea_node gives itself; its first "
        "answer is the floor of any rclpy node here."
    )
    more = [
        (
            "Where a warm start goes: the node's phases (RNEA_START_TRACE), medians of the starts above, each "
            "from the end of the previous phase (the first from the spawn), wall clock and the node's CPU time.",
            columns,
            phase_table,
        )
    ]
    if args.in_process_rounds:
        more.append(
            (
                f"Without ROS: a fresh process to a computing live model (Go2, 4 foot contacts); medians of "
                f"{args.in_process_rounds} rounds. 'compile' is `python -m rnea_ros.compile`.",
                ("start", "median", "rounds"),
                in_process_rounds(args.in_process_rounds),
            )
        )
    print(f"wrote {write_table('start_up', 'benchmarks/start_up.py', header, table, note, more)}")


if __name__ == "__main__":
    main()
