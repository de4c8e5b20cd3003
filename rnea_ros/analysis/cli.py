"""rnea_analyze: does the model explain the efforts the robot measured?

    rnea_analyze RECORDING [--urdf robot.urdf[.xacro]] [--topic /joint_states]
                 [--wrench-topic /ft_sensor ...] [--window SECONDS] [--order 3]
                 [--velocities recorded|positions] [--out rnea_analysis] [--no-csv]
                 [--identify [--coulomb-width W] [--payload-link LINK | --inertia]]
                 [--corrections corrections.yaml] [--effort-delay 0.001]
                 [--start SECONDS] [--end SECONDS] [--urdf-dynamics]
                 [--effort-conversion conversion.yaml]

RECORDING is a rosbag2 (directory, .db3 or .mcap; read with ``rosbags``, no ROS
needed) or a CSV (``time,<joint>.position[,<joint>.velocity],<joint>.effort,...``).
Without --urdf the bag's /robot_description is used. For every sample:
τ_model = ID(q, q̇, q̈, wrenches) and g(q) from the batch kernel, q̈ (and q̇ when
not recorded, or with --velocities positions) estimated from the positions by a
local polynomial fit over ±window/2 s (Savitzky–Golay on even stamps; uneven
stamps handled); the window is chosen per recording, on held-out samples of its
first 30,000, unless --window fixes it. A joint whose effort is not measured is
recorded as an empty CSV field or nan, or as 0 in every one of those samples (a
driver filling in a joint it has no torque of): left out of its rows, named, and
never fitted.
--effort-conversion converts recorded efforts (motor side, currents) to the model's
(rnea_ros/analysis/effort_conversion.py). The URDF's <dynamics damping friction>
(often simulator tuning) is left out of the model unless --urdf-dynamics.
Writes OUT/samples.csv and OUT/torques.png and prints, per joint:
RMS error, correlation, best fit measured ≈ scale·model + offset (a scale far from
1 points at a wrong mass or gear ratio, an offset at friction or sensor bias), and
the residual's fit to viscous·q̇ + Coulomb·sign(q̇). Processed in chunks: memory
stays bounded for recordings of any length.

--identify also fits, per joint, viscous·q̇ + coulomb·tanh((q̇ + lead·q̈)/width) + armature·q̈ + offset
to the residual, prints each value with its standard error (or why the recording cannot
determine it) and writes OUT/corrections.yaml (schema: rnea_ros/dynamics/corrections.py).
The width (0.001–0.2 rad/s) and lead (0–20 ms) are chosen per joint by the residual on held-out
samples (alternate 1,000-sample blocks, fitted on one and tested on the other), unless
--coulomb-width fixes the width (no lead then);
OUT/friction.png shows each joint's fitted friction against the recording's.
With --inertia, every link's 10 inertial parameters are fitted with them (the combinations the
recording determines; the rest stays at the URDF's), each link kept a rigid body, and
OUT/corrected.urdf is written: the URDF with only those links' <inertial> changed.
With --payload-link, the 10 inertial parameters of a load on that link are fitted with them
(every joint together); the payload is written when its mass and centre of mass are
identified (with its inertia only when all of it is identified and physically possible).

--effort-delay pairs each state with the effort recorded that much later: ros2_control (and
rnea_sim) report with each state the effort commanded in the previous cycle, one control period
(1/update_rate) late. --start/--end keep only the samples from/until that many seconds after the
first (leave out a part where brakes held the robot: its efforts are not the robot's dynamics).

--validate OTHER (with --identify): a second recording of the same robot; every model (the URDF alone,
the files written) is run on it with the same window and its residual RMS per joint printed: a
held-out part of one recording may replay its training motion, another recording does not.
A recording that repeats its motion (the same trajectory played again) is detected on its
positions and said (rnea_ros/analysis/replay.py): its folds in time, and a last part held
out, are then no new motion.

--corrections checks a recording against the corrected model (the URDF's, plus a
corrections.yaml: its payload merged in, its joint terms added), as rnea_node computes it.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

# One BLAS thread unless told otherwise, set before numpy loads it: the window's choice makes
# hundreds of small least-squares fits, and OpenBLAS's threads, spinning between them beside
# numba's on 2 busy cores, made them 2-7x slower (0.2 s against 0.6-1.5 s for the 600,000-sample bag)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# numba's OpenMP threads sleep as soon as a parallel loop ends instead of spinning: samples.csv's
# thread (fast_csv.RowWriter) runs beside them, and their spinning took its core (load 7.5, the
# 600,000-sample bag, medians of 3 taking turns: 9.4 s of CPU spinning, 7.7 passive, 8.4 before the thread)
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from rnea_ros.analysis.plot import PlotWorker  # numpy and the standard library: no numba before the fork


def window_argument(text: str) -> float:
    """--window: seconds within (0, 10]."""
    try:
        value = float(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"a number of seconds, got {text!r}") from error
    if not 0.0 < value <= 10.0:
        raise argparse.ArgumentTypeError(f"must be within (0, 10] s, got {text}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="rnea_analyze", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "recording", type=Path, nargs="+", help="rosbag2 directory, .db3, .mcap, or .csv; several: a fleet"
    )
    parser.add_argument("--workers", type=int, default=2, help="fleet: local worker processes (default 2)")
    parser.add_argument("--scheduler", help="fleet: address of a Dask distributed scheduler (tcp://host:port)")
    parser.add_argument(
        "--scheduler-timeout", type=float, default=10.0, help="fleet: s to wait for the scheduler (default 10)"
    )
    parser.add_argument("--urdf", type=Path, help="URDF or xacro file (default: the bag's /robot_description)")
    parser.add_argument("--topic", default="/joint_states", help="sensor_msgs/JointState topic in the bag")
    parser.add_argument("--wrench-topic", action="append", default=[], help="geometry_msgs/WrenchStamped topic")
    parser.add_argument(
        "--window",
        type=window_argument,
        default=None,
        help="differentiation window, s (default: chosen per recording on held-out samples)",
    )
    parser.add_argument("--order", type=int, default=3, help="polynomial degree of the local fit (2..5)")
    parser.add_argument(
        "--velocities", choices=["recorded", "positions"], default="recorded", help="q̇ source when recorded"
    )
    parser.add_argument("--gravity", type=float, nargs=3, default=[0.0, 0.0, -9.81])
    parser.add_argument("--out", type=Path, default=Path("rnea_analysis"), help="output directory")
    parser.add_argument("--no-csv", action="store_true", help="skip OUT/samples.csv")
    parser.add_argument(
        "--parquet", action="store_true", help="also write OUT/samples.parquet (needs pyarrow; for long recordings)"
    )
    parser.add_argument(
        "--identify", action="store_true", help="fit friction, armature, offset; write corrections.yaml"
    )
    parser.add_argument(
        "--coulomb-width", type=float, help="tanh width, rad/s (default: chosen per joint on held-out samples)"
    )
    parser.add_argument(
        "--inertia", action="store_true", help="--identify: also every link's inertia; writes corrected.urdf"
    )
    parser.add_argument("--payload-link", default="", help="--identify: also fit a payload carried by this link")
    parser.add_argument("--effort-delay", type=float, default=0.0, help="s: efforts lag the states by this (default 0)")
    parser.add_argument("--start", type=float, default=0.0, help="s after the first sample (default 0)")
    parser.add_argument("--end", type=float, default=float("inf"), help="s after the first sample (default: all)")
    parser.add_argument("--corrections", type=Path, help="compare with the model plus these corrections")
    parser.add_argument(
        "--urdf-dynamics",
        action="store_true",
        help="add the URDF's <dynamics damping friction> to the model (rnea_node's urdf_joint_dynamics: true); "
        "off by default: real URDFs carry simulator tuning there",
    )
    parser.add_argument("--no-urdf-dynamics", dest="urdf_dynamics", action="store_false", help=argparse.SUPPRESS)
    parser.add_argument(
        "--effort-conversion",
        type=Path,
        help="YAML: per joint, effort = scale × recorded + offset (motor-side or current readings to joint torques)",
    )
    parser.add_argument(
        "--validate",
        type=Path,
        metavar="OTHER",
        help="--identify: a second recording of the same robot, every model's residual on it printed",
    )
    parser.add_argument("--chunk", type=int, help=argparse.SUPPRESS)  # default: recording.DEFAULT_CHUNK
    args = parser.parse_args(argv)
    if not abs(args.effort_delay) <= 1.0:
        parser.error("--effort-delay must be within ±1 s")
    if not args.start < args.end:
        parser.error("--start must be before --end")
    if args.coulomb_width is not None and not 0.0 < args.coulomb_width <= 1e3:
        parser.error("--coulomb-width must be a positive number of rad/s")
    if args.inertia and (not args.identify or args.payload_link or len(args.recording) > 1):
        parser.error("--inertia goes with --identify, one recording, and no --payload-link (a payload is link inertia)")
    if args.validate is not None and (not args.identify or len(args.recording) > 1):
        parser.error("--validate goes with --identify and one recording")
    if len(args.recording) > 1:
        from rnea_ros.analysis.command import fleet_main

        return fleet_main(args)
    args.recording = args.recording[0]
    # torques.png's worker forked first, before numba is imported here: its matplotlib import (~0.5 s of
    # CPU) runs on the other core beside numba's, not beside the analysis
    with PlotWorker() as plotter:
        from rnea_ros.analysis.command import single_recording
        from rnea_ros.dynamics.compiled import quick_cache_loads

        # numba's cached kernels loaded without its compiler's set-up (~0.5 s of CPU less; nothing here
        # compiles a kernel that needs what it leaves out: compiled.quick_cache_loads)
        with quick_cache_loads():
            return single_recording(args, plotter)


MOVED = ("with_corrections", "load_description", "planned_outputs", "single_recording", "fleet_main")


def __getattr__(name: str) -> object:
    """``command``'s functions under this module's name, where they were. Only those: any other name (the
    import system's ``__path__`` asked by ``from cli import entry_point``) must not import numba."""
    if name not in MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from rnea_ros.analysis import command

    return getattr(command, name)


def entry_point() -> None:
    if "coverage" not in sys.modules:  # not measured: numba's import would load coverage.py (~40 ms) for nothing
        sys.modules["coverage"] = None
    code = main()
    # the interpreter's teardown skipped: every output is written and closed by now (torques.png's worker
    # joined), and freeing numba's and LLVM's modules took 0.12-0.14 s of wall after the last line, up to
    # 2.2 s on a busy machine (0.01 s, 0.04-0.08 s busy, without it)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    entry_point()
