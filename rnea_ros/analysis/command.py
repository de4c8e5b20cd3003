"""What ``rnea_analyze``'s arguments run (``cli`` parses them): one recording's analysis, summary and
files, or a fleet's identification. Imported by ``cli.main`` after torques.png's worker process is
forked, so that matplotlib's import there runs beside numba's here."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

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
    bag_summary,
    bag_topics,
    open_recording,
    read_bag_description,
    read_bag_wrenches,
)
from rnea_ros.analysis.replay import find_replay
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
    return bag_summary(path).count(topic)


def with_corrections(
    model: RobotModel, path: Path | None, identify: bool, urdf_dynamics: bool = False
) -> CorrectedModel:
    """The model with its URDF's joint dynamics and a corrections file applied, as rnea_node applies them."""
    if path is None:
        return corrected_model(model, None, urdf_dynamics)
    if identify:
        raise RecordingError("--identify fits the URDF's model alone: leave --corrections out")
    return corrected_model(model, load_corrections(path), urdf_dynamics)


def single_recording(args: argparse.Namespace, plotter: PlotWorker) -> int:
    """``main`` for one recording; the figure drawn by ``plotter``'s process beside the analysis."""
    args.chunk = DEFAULT_CHUNK if args.chunk is None else args.chunk
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

    args.chunk = DEFAULT_CHUNK if args.chunk is None else args.chunk
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
