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
import contextlib
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

# One BLAS thread unless told otherwise, set before numpy loads it: the window's choice makes
# hundreds of small least-squares fits, and OpenBLAS's threads, spinning between them beside
# numba's on 2 busy cores, made them 2-7x slower (0.2 s against 0.6-1.5 s for the 600,000-sample bag)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# numba's OpenMP threads sleep as soon as a parallel loop ends instead of spinning: samples.csv's
# thread (fast_csv.RowWriter) runs beside them, and their spinning took its core (load 7.5, the
# 600,000-sample bag, medians of 3 taking turns: 9.4 s of CPU spinning, 7.7 passive, 8.4 before the thread)
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from rnea_ros.analysis.effort_conversion import EffortConversion, load_effort_conversion
from rnea_ros.analysis.fast_csv import RowWriter
from rnea_ros.analysis.parquet import ParquetSamples
from rnea_ros.analysis.pipeline import (
    MIN_SAMPLES,
    WINDOW_CHOICE_SAMPLES,
    ZERO_EFFORTS,
    analyze,
    chosen_window,
    leading_samples,
    sample_columns,
    summary_table,
    too_few_samples,
    zero_effort_joints,
)
from rnea_ros.analysis.plot import PlotWorker, write_friction_plot
from rnea_ros.analysis.recording import (
    DEFAULT_CHUNK,
    RecordingError,
    bag_topics,
    open_recording,
    read_bag_description,
    read_bag_wrenches,
)
from rnea_ros.analysis.replay import find_replay
from rnea_ros.dynamics.compiled import quick_cache_loads
from rnea_ros.dynamics.corrections import (
    CorrectedModel,
    CorrectionsError,
    load_corrections,
    save_corrections,
)
from rnea_ros.dynamics.corrections import with_corrections as corrected_model
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.dynamics.urdf import ModelError

if TYPE_CHECKING:
    from rnea_ros.analysis.identify import Identification


class Progress:
    """A progress line on stderr: redrawn in place on a terminal, every 10 % otherwise."""

    def __init__(self, total: int | None) -> None:
        self.total, self.tty, self.start, self.next_line = total, sys.stderr.isatty(), time.monotonic(), 0.1

    def __call__(self, done: int) -> None:
        rate = done / max(time.monotonic() - self.start, 1e-9)
        fraction = done / self.total if self.total else None
        text = f"analysed {done:,} samples" + (f" of {self.total:,} ({fraction:.0%})" if fraction else "")
        text += f", {rate:,.0f}/s"
        if self.tty:
            sys.stderr.write("\r" + text + "\x1b[K")
        elif fraction is None or fraction >= self.next_line:
            sys.stderr.write(text + "\n")
            self.next_line = (fraction or 0) + 0.1
        sys.stderr.flush()

    def done(self) -> None:
        if self.tty:
            sys.stderr.write("\n")


def load_description(urdf: Path | None, recording: Path) -> str:
    if urdf is not None:
        if urdf.suffix == ".xacro":
            import xacro

            return xacro.process_file(str(urdf)).toxml()
        return urdf.read_text()
    if recording.suffix.lower() != ".csv":
        description = read_bag_description(recording)
        if description:
            return description
    raise RecordingError("no --urdf given and no /robot_description in the recording")


def recording_size(path: Path, topic: str) -> int | None:
    if path.suffix.lower() == ".csv":
        return None
    from rnea_ros.analysis.recording import _open_bag

    reader = _open_bag(path)
    try:
        return sum(c.msgcount for c in reader.connections if c.topic == topic)
    finally:
        reader.close()


def with_corrections(
    model: RobotModel, path: Path | None, identify: bool, urdf_dynamics: bool = False
) -> CorrectedModel:
    """The model with its URDF's joint dynamics and a corrections file applied, as rnea_node applies them."""
    if path is None:
        return corrected_model(model, None, urdf_dynamics)
    if identify:
        raise RecordingError("--identify fits the URDF's model alone: leave --corrections out")
    return corrected_model(model, load_corrections(path), urdf_dynamics)


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
    parser.add_argument("--chunk", type=int, default=DEFAULT_CHUNK, help=argparse.SUPPRESS)
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
        return fleet_main(args)
    args.recording = args.recording[0]
    # numba's cached kernels loaded without its compiler's set-up (~0.5 s of CPU less; nothing here
    # compiles a kernel that needs what it leaves out: compiled.quick_cache_loads)
    with quick_cache_loads(), PlotWorker() as plotter:
        return single_recording(args, plotter)


def single_recording(args: argparse.Namespace, plotter: PlotWorker) -> int:
    """``main`` for one recording; the figure drawn by ``plotter``'s process beside the analysis."""
    try:
        refuse_unwritable_outputs(args)  # before minutes of work, not after
        if args.validate is not None and not args.validate.exists():
            raise RecordingError(f"--validate: no such recording '{args.validate}'")
        description = load_description(args.urdf, args.recording)
        model = RobotModel.from_urdf(description, gravity=args.gravity)
        corrected = with_corrections(model, args.corrections, args.identify, args.urdf_dynamics)
        model = corrected.model
        plotter.prepare(model.joint_names)  # its axes made while this process reads and analyses
        if model.floating_base:
            raise RecordingError("floating-base robots are not supported by rnea_analyze (fixed base only)")
        wrenches = read_bag_wrenches(args.recording, args.wrench_topic) if args.wrench_topic else None
        unknown = sorted(set(wrenches or {}) - set(model.link_names))
        if unknown:
            raise RecordingError(f"wrenches in frames that are no link of the model: {unknown}")
        conversion = load_effort_conversion(args.effort_conversion) if args.effort_conversion else None
        if conversion is not None:
            conversion.arrays(model.joint_names)  # unknown joints refused before anything is read
        # the leading samples, read once: the zero efforts are judged on them and the window chosen on them
        leading = leading_samples(
            open_recording(args.recording, args.topic, args.chunk), model, start=args.start, end=args.end
        )
        zero = zero_effort_joints(iter([leading]), model)
        if zero:
            conversion = (conversion or EffortConversion({})).without(zero)
        window, choice = args.window, None
        if window is None:
            if len(leading.t) < MIN_SAMPLES:
                raise too_few_samples(len(leading.t), args.start, args.end)
            choice = chosen_window(
                corrected,
                iter([leading]),  # in model space already, from --start to --end: converted only
                order=args.order,
                velocities=args.velocities,
                effort_conversion=conversion,
            )
            window = choice.window
            print(choice.describe())
        total = recording_size(args.recording, args.topic)
        args.out.mkdir(parents=True, exist_ok=True)
        progress = Progress(total)
        start = time.perf_counter()
        chunks = open_recording(args.recording, args.topic, args.chunk)
        if args.payload_link and args.payload_link not in model.link_names:
            raise RecordingError(f"--payload-link: '{args.payload_link}' is not a link of the model")
        links, contexts, still = recorded_links(model, description, args) if args.inertia else (None, None, {})
        if args.identify:  # imported only when asked for (~0.1 s)
            from rnea_ros.analysis.identify import Identification, identification_table
        identification = (
            Identification(
                model.joint_names,
                args.coulomb_width,
                args.payload_link,
                links,
                link_contexts=contexts,
                qdd_noise=choice.qdd_noise if choice is not None else None,
                still_links=still,
            )
            if args.identify
            else None
        )
        csv_path, parquet_path = args.out / "samples.csv", args.out / "samples.parquet"
        parquet = ParquetSamples(parquet_path, sample_columns(model.joint_names)) if args.parquet else None
        # samples.csv's rows formatted and written by a thread of their own (fast_csv.RowWriter), beside
        # the analysis and then beside torques.png's drawing; the file is complete when the block ends
        with (
            open(csv_path, "wb") if not args.no_csv else contextlib.nullcontext() as csv_raw,
            RowWriter(csv_raw) if csv_raw is not None else contextlib.nullcontext() as csv_file,
            parquet if parquet is not None else contextlib.nullcontext(),
        ):
            analysis = analyze(
                corrected,
                chunks,
                wrenches=wrenches,
                window=window,
                order=args.order,
                velocities=args.velocities,
                csv_file=csv_file,
                progress=progress,
                identification=identification,
                parquet=parquet,
                effort_delay=args.effort_delay,
                start=args.start,
                end=args.end,
                effort_conversion=conversion,
            )
            progress.done()
            plotter.write(analysis, args.out / "torques.png")
        elapsed = time.perf_counter() - start
    except (RecordingError, ModelError, CorrectionsError, OSError, ImportError) as error:
        print(f"rnea_analyze: {error}", file=sys.stderr)
        return 2
    topics = "" if args.recording.suffix.lower() == ".csv" else f" ({len(bag_topics(args.recording))} topics)"
    first, last = analysis.span
    print(
        f"{args.recording}{topics}: {analysis.samples:,} samples of {model.nv} joints spanning {last - first:.1f} s "
        f"of recording, analysed in {elapsed:.1f} s"
    )
    print(summary_table(analysis))
    if zero:
        print(
            f"joints whose recorded effort is exactly 0 in {ZERO_EFFORTS:.0%} or more of the first "
            f"{WINDOW_CHOICE_SAMPLES:,} samples (taken as not measured: their rows left out, nothing fitted): {zero}"
        )
    positions = analysis.positions.rows()
    replay = find_replay(positions[:, 0], positions[:, 1:]) if positions.size else None
    if replay is not None:
        print(replay.describe(validating=args.validate is not None))
    if identification is not None:
        print(identification_table(identification))
        try:
            save_corrections(identification.corrections(), args.out / "corrections.yaml")
            write_friction_plot(identification, args.out / "friction.png")
            if args.inertia:
                write_corrected_urdf(identification, description, args.out / "corrected.urdf")
            if args.validate is not None:
                print(validation(args, corrected, identification, description, window, conversion))
        except (CorrectionsError, OSError, RecordingError, ModelError) as error:
            print(f"rnea_analyze: {error}", file=sys.stderr)
            return 2
    print("wrote " + ", ".join(str(p) for p in planned_outputs(args)))
    return 0


def recorded_links(model: RobotModel, description: str, args: argparse.Namespace) -> tuple[dict, dict, dict]:
    """The links whose inertias --inertia identifies, their contexts, and the links left out because their
    joint is not in the recording (its q held at 0: the link never moves against its parent, and keeps the
    URDF's inertial), each with why. TIAGo's 40 hand joints are not in its recording: their links' 400
    columns made --inertia run for over 4 min of CPU without finishing."""
    from rnea_ros.analysis.link_inertia import link_contexts, urdf_link_inertials

    links = urdf_link_inertials(model, description)
    contexts = link_contexts(model, description, links)
    first = next(open_recording(args.recording, args.topic, args.chunk), None)
    recorded = set(first.names) if first is not None else set(model.joint_names)
    still = {
        name: "its joint is not in the recording"
        for name, context in contexts.items()
        if context.joint and context.joint not in recorded
    }
    return (
        {name: inertial for name, inertial in links.items() if name not in still},
        {name: context for name, context in contexts.items() if name not in still},
        still,
    )


def validation(args, urdf_model: CorrectedModel, identification, description: str, window: float, conversion) -> str:
    """Every model's residual RMS per joint on the --validate recording (the same window, delay and
    conversion): the URDF alone, and the files written (the corrected URDF with --inertia)."""
    from rnea_ros.analysis.link_inertia import corrected_urdf

    corrections = identification.corrections()
    written = corrected_model(urdf_model.model, corrections, urdf_model.urdf_dynamics)
    if args.inertia and identification.links_result().written:
        inertials = identification.links_result().inertials()
        corrected = RobotModel.from_urdf(corrected_urdf(description, inertials), gravity=args.gravity)
        written = corrected_model(corrected, corrections, urdf_model.urdf_dynamics)
    models = {"URDF": urdf_model, "files written": written}
    rms, unmeasured, missing = {}, [], []
    for label, model in models.items():
        analysis = analyze(
            model,
            open_recording(args.validate, args.topic, args.chunk),
            window=window,
            order=args.order,
            velocities=args.velocities,
            effort_delay=args.effort_delay,
            effort_conversion=conversion,
        )
        rms[label] = [analysis.fits.summary(j)["rms"] for j in range(len(analysis.joint_names))]
        missing = analysis.missing_in_recording
        unmeasured = [name for name in analysis.unmeasured() if name not in missing]
    names = urdf_model.model.joint_names
    shown = [j for j, name in enumerate(names) if name not in unmeasured and name not in missing]
    lines = [f"validation on {args.validate} (another recording; residual RMS per joint):"]
    widths = {j: max(12, len(names[j]) + 1) for j in shown}
    lines.append(f"{'model':<16}" + "".join(f"{names[j]:>{widths[j]}}" for j in shown) + f"{'over joints':>13}")
    for label, values in rms.items():
        finite = [values[j] for j in shown if values[j] == values[j]]
        over = (sum(v * v for v in finite) / max(len(finite), 1)) ** 0.5
        lines.append(f"{label:<16}" + "".join(f"{values[j]:>{widths[j]}.4f}" for j in shown) + f"{over:>13.4f}")
    if unmeasured:
        lines.append(f"not measured there (no effort, or 0 as in the first recording): {unmeasured}")
    if missing:
        lines.append(f"{len(missing)} joints of the model are not in it")
    return "\n".join(lines)


def planned_outputs(args: argparse.Namespace) -> list[Path]:
    """Every file a single recording's analysis writes into ``--out``."""
    names = ["torques.png"] + ([] if args.no_csv else ["samples.csv"]) + (["samples.parquet"] if args.parquet else [])
    if args.identify:
        names += ["corrections.yaml", "friction.png"] + (["corrected.urdf"] if args.inertia else [])
    return [args.out / name for name in names]


def refuse_unwritable_outputs(args: argparse.Namespace) -> None:
    """OSError naming the first output that cannot be written; nothing is made yet (a run refused
    later leaves no empty ``--out``)."""
    existing = next(folder for folder in (args.out, *args.out.parents) if folder.exists() or folder == Path("/"))
    if not existing.is_dir():
        raise OSError(f"cannot write into '{args.out}': '{existing}' is a file")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise OSError(f"cannot write into '{args.out}': '{existing}' is not writable")
    for path in planned_outputs(args):
        if path.is_dir():
            raise OSError(f"cannot write '{path}': a directory of that name is in the way")


def write_corrected_urdf(identification: Identification, description: str, path: Path) -> Path:
    """The URDF with the identified links' <inertial>, written atomically; prints the links' table."""
    from rnea_ros.analysis.identify import links_table
    from rnea_ros.analysis.link_inertia import corrected_urdf

    result = identification.links_result()
    print(links_table(result))
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(corrected_urdf(description, result.inertials()))
    temporary.replace(path)
    return path


def fleet_main(args: argparse.Namespace) -> int:
    """Several recordings of robots with one description: identified one by one (each a task),
    pooled, with a summary per recording that flags the ones that drift."""
    from rnea_ros.analysis.fleet import FailedRecording, RecordingTask, fleet_table, pooled, replay_lines, run_tasks
    from rnea_ros.analysis.identify import identification_table

    try:
        description = load_description(args.urdf, args.recording[0])
        if RobotModel.from_urdf(description).floating_base:
            raise RecordingError("floating-base robots are not supported by rnea_analyze (fixed base only)")
        tasks = [
            RecordingTask(
                str(path), description, args.topic, args.window, args.order, args.coulomb_width,
                tuple(args.gravity), args.chunk, args.payload_link, args.effort_delay, args.start, args.end,
                args.urdf_dynamics,
            )
            for path in args.recording
        ]  # fmt: skip
        start = time.perf_counter()
        outcomes = run_tasks(tasks, args.workers, args.scheduler, args.scheduler_timeout)
        elapsed = time.perf_counter() - start
        args.out.mkdir(parents=True, exist_ok=True)
    except (RecordingError, ModelError, OSError, ImportError) as error:
        print(f"rnea_analyze: {error}", file=sys.stderr)
        return 2
    failed = [o for o in outcomes if isinstance(o, FailedRecording)]
    results = [o for o in outcomes if not isinstance(o, FailedRecording)]
    for failure in failed:
        print(f"rnea_analyze: {failure.path} left out: {failure.reason}", file=sys.stderr)
    if not results:
        print("rnea_analyze: no recording of the fleet could be analysed", file=sys.stderr)
        return 2
    where = f"the Dask cluster at {args.scheduler}" if args.scheduler else f"{max(args.workers, 1)} local worker(s)"
    print(f"{len(results)} recordings, {sum(r.samples for r in results):,} samples, on {where} in {elapsed:.1f} s")
    print(fleet_table(results))
    for line in replay_lines(results):
        print(line)
    total = pooled(results)
    print("\npooled over the fleet:")
    print(identification_table(total))
    corrections_path = args.out / "corrections.yaml"
    try:
        save_corrections(total.corrections(), corrections_path)
    except CorrectionsError as error:
        print(f"rnea_analyze: {error}", file=sys.stderr)
        return 2
    print(f"wrote {corrections_path}")
    if failed:
        print(f"{len(failed)} of {len(outcomes)} recordings left out (named above)")
    return 1 if failed else 0


def entry_point() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry_point()
