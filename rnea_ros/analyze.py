"""rnea_analyze: does the model explain the efforts the robot measured?

    rnea_analyze RECORDING [--urdf robot.urdf[.xacro]] [--topic /joint_states]
                 [--wrench-topic /ft_sensor ...] [--window 0.05] [--order 3]
                 [--velocities recorded|positions] [--out rnea_analysis] [--no-csv]

RECORDING is a rosbag2 (directory, .db3 or .mcap; read with ``rosbags``, no ROS
needed) or a CSV (``time,<joint>.position[,<joint>.velocity],<joint>.effort,...``).
Without --urdf the bag's /robot_description is used. For every sample:
τ_model = ID(q, q̇, q̈, wrenches) and g(q) from the batch kernel, q̈ (and q̇ when
not recorded, or with --velocities positions) estimated from the positions by a
local polynomial fit over ±window/2 s (Savitzky–Golay on even stamps; uneven
stamps handled). Writes OUT/samples.csv and OUT/torques.png and prints, per joint:
RMS error, correlation, best fit measured ≈ scale·model + offset (a scale far from
1 points at a wrong mass or gear ratio, an offset at friction or sensor bias), and
the residual's fit to viscous·q̇ + Coulomb·sign(q̇). Processed in chunks: memory
stays bounded for recordings of any length.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import itertools
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rnea_ros.differentiate import local_polynomial_derivatives
from rnea_ros.fast_csv import write_rows
from rnea_ros.model import RobotModel
from rnea_ros.recording import (
    DEFAULT_CHUNK,
    JointChunk,
    RecordingError,
    bag_topics,
    open_recording,
    read_bag_description,
    read_bag_wrenches,
)
from rnea_ros.urdf import ModelError

PLOT_POINTS = 20_000


class JointFits:
    """Running sums over the samples of every joint, enough for every figure of the summary.

    Per joint: n, Σm, Σp, Σm², Σp², Σmp, Σ(m−p)² (m measured, p model), and the normal
    equations of (m − p) ≈ viscous·q̇ + Coulomb·sign(q̇) + c.
    """

    def __init__(self, nv: int) -> None:
        self.n = np.zeros(nv, dtype=np.int64)
        self.sums = np.zeros((6, nv))
        self.friction_normal = np.zeros((nv, 3, 3))
        self.friction_rhs = np.zeros((nv, 3))

    def add(self, measured: np.ndarray, model: np.ndarray, qd: np.ndarray) -> None:
        ok = np.isfinite(measured) & np.isfinite(model) & np.isfinite(qd)
        m, p, v = np.where(ok, measured, 0.0), np.where(ok, model, 0.0), np.where(ok, qd, 0.0)
        one, sign, r = ok.astype(float), np.sign(v), m - p
        self.n += ok.sum(axis=0)
        self.sums += [m.sum(0), p.sum(0), (m * m).sum(0), (p * p).sum(0), (m * p).sum(0), (r * r).sum(0)]
        features = (v, sign, one)
        for a in range(3):
            self.friction_rhs[:, a] += (features[a] * r).sum(0)
            for b in range(a, 3):
                self.friction_normal[:, a, b] += (features[a] * features[b]).sum(0)
                self.friction_normal[:, b, a] = self.friction_normal[:, a, b]

    def summary(self, j: int) -> dict[str, float]:
        nan = float("nan")
        n = int(self.n[j])
        if n < 3:
            return dict(n=n, rms=nan, corr=nan, scale=nan, offset=nan, viscous=nan, coulomb=nan, measured_rms=nan)
        sm, sp, smm, spp, smp, see = self.sums[:, j] / n
        var_m, var_p, cov = smm - sm * sm, spp - sp * sp, smp - sm * sp
        scale = cov / var_p if var_p > 0 else nan
        try:
            viscous, coulomb, _ = np.linalg.solve(self.friction_normal[j], self.friction_rhs[j])
        except np.linalg.LinAlgError:
            viscous = coulomb = nan
        return dict(
            n=n,
            rms=float(np.sqrt(max(see, 0.0))),
            corr=float(cov / np.sqrt(var_m * var_p)) if var_m > 0 and var_p > 0 else nan,
            scale=float(scale),
            offset=float(sm - scale * sp),
            viscous=float(viscous),
            coulomb=float(coulomb),
            measured_rms=float(np.sqrt(max(smm, 0.0))),
        )


class Decimator:
    """Keeps every k-th sample for the plots, doubling k whenever more than 2·``limit`` are kept."""

    def __init__(self, limit: int = PLOT_POINTS) -> None:
        self.limit, self.stride, self.seen = limit, 1, 0
        self.parts: list[np.ndarray] = []

    def rows_to_keep(self, count: int) -> np.ndarray:
        """Which of the next ``count`` samples to keep (then pass just those to ``add``)."""
        first = -self.seen % self.stride
        self.seen += count
        return np.arange(first, count, self.stride)

    def add(self, rows: np.ndarray) -> None:
        self.parts.append(rows)
        if sum(len(p) for p in self.parts) > 2 * self.limit:
            # Kept rows are the samples whose index is a multiple of the stride, the first one
            # included: every other one of them is a multiple of the doubled stride.
            self.parts, self.stride = [np.concatenate(self.parts)[::2]], self.stride * 2

    def rows(self) -> np.ndarray:
        return np.concatenate(self.parts) if self.parts else np.empty((0, 0))


@dataclass
class Analysis:
    joint_names: list[str]
    fits: JointFits
    samples: int = 0
    missing_in_recording: list[str] = field(default_factory=list)
    not_in_model: list[str] = field(default_factory=list)
    underived: int = 0  # samples whose window had too few neighbours (NaN derivatives)
    out_of_order: int = 0  # samples whose stamp went back in time
    plot: Decimator = field(default_factory=Decimator)


def to_model_space(chunk: JointChunk, model: RobotModel) -> JointChunk:
    """The chunk in the model's joint order; joints the recording lacks: q = q̇ = 0, effort NaN."""
    n = len(chunk.t)
    q, effort = np.zeros((n, model.nv)), np.full((n, model.nv), np.nan)
    qd = np.zeros((n, model.nv)) if chunk.qd is not None else None
    for j, name in enumerate(model.joint_names):
        if name in chunk.names:
            k = chunk.names.index(name)
            q[:, j], effort[:, j] = chunk.q[:, k], chunk.effort[:, k]
            if qd is not None:
                qd[:, j] = chunk.qd[:, k]
    return JointChunk(list(model.joint_names), chunk.t, q, qd, effort)


def with_context(chunks: Iterator[JointChunk], margin: float) -> Iterator[tuple[JointChunk, slice]]:
    """Each chunk extended by ``margin`` seconds of its neighbours, and the slice of its own rows:
    the differentiator then sees the same samples as it would on the whole recording (however
    short the chunks; only ``margin`` seconds are kept on either side)."""
    upcoming: collections.deque[JointChunk] = collections.deque()
    previous: JointChunk | None = None
    while True:
        if not upcoming and (chunk := next(chunks, None)) is not None:
            upcoming.append(chunk)
        if not upcoming:
            return
        current = upcoming.popleft()
        while (not upcoming or upcoming[-1].t[-1] <= current.t[-1] + margin) and (
            chunk := next(chunks, None)
        ) is not None:
            upcoming.append(chunk)
        before = _tail(previous, current.t[0] - margin) if previous is not None else None
        after = _head(_concat(list(upcoming)), current.t[-1] + margin) if upcoming else None
        parts = [p for p in (before, current, after) if p is not None]
        start = len(before.t) if before is not None else 0
        yield _concat(parts), slice(start, start + len(current.t))
        previous = _concat([before, current]) if before is not None else current


def _select(chunk: JointChunk, rows) -> JointChunk:
    qd = None if chunk.qd is None else chunk.qd[rows]
    return JointChunk(chunk.names, chunk.t[rows], chunk.q[rows], qd, chunk.effort[rows])


def _tail(chunk: JointChunk, since: float) -> JointChunk:
    return _select(chunk, slice(np.searchsorted(chunk.t, since, side="left"), None))


def _head(chunk: JointChunk, until: float) -> JointChunk:
    return _select(chunk, slice(0, np.searchsorted(chunk.t, until, side="right")))


def _concat(parts: list[JointChunk]) -> JointChunk:
    qd = None if any(p.qd is None for p in parts) else np.concatenate([p.qd for p in parts])
    return JointChunk(
        parts[0].names,
        np.concatenate([p.t for p in parts]),
        np.concatenate([p.q for p in parts]),
        qd,
        np.concatenate([p.effort for p in parts]),
    )


def held_wrenches(series: dict[str, tuple[np.ndarray, np.ndarray]], t: np.ndarray) -> dict[str, np.ndarray]:
    """Each link's latest wrench at each time (zero before its first one); ``series`` sorted by time."""
    out = {}
    for link, (times, values) in series.items():
        rows = np.searchsorted(times, t, side="right") - 1
        wrench = np.zeros((len(t), 6))
        wrench[rows >= 0] = values[rows[rows >= 0]]
        out[link] = wrench
    return out


def analyze(
    model: RobotModel,
    chunks: Iterator[JointChunk],
    *,
    wrenches: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
    window: float = 0.05,
    order: int = 3,
    velocities: str = "recorded",
    csv_file=None,
    progress=None,
) -> Analysis:
    """Runs the whole pipeline over ``chunks``; writes sample rows to ``csv_file`` when given."""
    analysis = Analysis(list(model.joint_names), JointFits(model.nv))
    first = next(chunks, None)
    if first is None or len(first.t) == 0:
        raise RecordingError("the recording has no joint samples")
    analysis.missing_in_recording = [n for n in model.joint_names if n not in first.names]
    analysis.not_in_model = [n for n in first.names if n not in model.joint_names]
    if len(analysis.missing_in_recording) == model.nv:
        raise RecordingError(f"no joint of the model is in the recording (recorded: {first.names[:10]})")

    def model_chunks() -> Iterator[JointChunk]:
        latest = -np.inf
        for chunk in itertools.chain([first], chunks):
            in_order = chunk.t >= latest  # stamps that go back across a chunk boundary are dropped
            analysis.out_of_order += int((~in_order).sum())
            if in_order.any():
                latest = chunk.t[in_order][-1]
                yield to_model_space(_select(chunk, in_order), model)

    if csv_file is not None:
        csv_file.write(_csv_header(model.joint_names).encode())
    for extended, core in with_context(model_chunks(), window / 2):
        qd_estimate, qdd_all = local_polynomial_derivatives(extended.t, extended.q, window, order)
        qdd = qdd_all[core]
        qd = qd_estimate[core]
        if extended.qd is not None and velocities == "recorded":  # recorded where recorded
            qd = np.where(np.isnan(extended.qd[core]), qd, extended.qd[core])
        t, q, measured = extended.t[core], extended.q[core], extended.effort[core]
        usable = np.isfinite(qdd).all(axis=1) & np.isfinite(qd).all(axis=1) & np.isfinite(q).all(axis=1)
        analysis.underived += int((~usable).sum())
        tau, gravity = np.full_like(q, np.nan), np.full_like(q, np.nan)
        if usable.any():
            w = held_wrenches(wrenches, t[usable]) if wrenches else None
            tau[usable] = model.inverse_dynamics(q[usable], qd[usable], qdd[usable], w)
            gravity[usable] = model.gravity_torques(q[usable])
        analysis.fits.add(measured, tau, qd)
        analysis.samples += len(t)
        keep = analysis.plot.rows_to_keep(len(t))
        analysis.plot.add(np.concatenate([t[keep, None], measured[keep], tau[keep], gravity[keep]], axis=1))
        if csv_file is not None:
            write_rows(csv_file, np.concatenate([t[:, None], q, measured, tau, gravity], axis=1))
        if progress is not None:
            progress(analysis.samples)
    return analysis


def _csv_header(names: list[str]) -> str:
    columns = ["time"]
    for kind in ("position", "effort_measured", "effort_model", "gravity"):
        columns += [f"{name}.{kind}" for name in names]
    return ",".join(columns) + "\n"


def summary_table(analysis: Analysis) -> str:
    header = (
        f"{'joint':<22}{'samples':>9}{'RMS err':>10}{'RMS meas':>10}{'corr':>7}"
        f"{'scale':>8}{'offset':>9}{'viscous':>9}{'Coulomb':>9}"
    )
    lines = [header, "-" * len(header)]
    for j, name in enumerate(analysis.joint_names):
        s = analysis.fits.summary(j)
        lines.append(
            f"{name:<22}{s['n']:>9}{s['rms']:>10.3f}{s['measured_rms']:>10.3f}{s['corr']:>7.3f}"
            f"{s['scale']:>8.3f}{s['offset']:>9.3f}{s['viscous']:>9.3f}{s['coulomb']:>9.3f}"
        )
    lines.append(
        "RMS err: measured − model; scale, offset: measured ≈ scale·model + offset; "
        "viscous [N·m·s/rad], Coulomb [N·m]: (measured − model) ≈ viscous·q̇ + Coulomb·sign(q̇) + c"
    )
    if analysis.missing_in_recording:
        lines.append(f"model joints not in the recording (q = 0 used): {analysis.missing_in_recording}")
    if analysis.not_in_model:
        lines.append(f"recorded joints that are not independent joints of the model (ignored): {analysis.not_in_model}")
    if analysis.out_of_order:
        lines.append(f"{analysis.out_of_order} samples skipped: their stamps went back in time")
    if analysis.underived:
        lines.append(f"{analysis.underived} samples skipped: too few neighbours within the window to differentiate")
    return "\n".join(lines)


def write_plot(analysis: Analysis, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = analysis.plot.rows()
    n = len(analysis.joint_names)
    t = rows[:, 0] - rows[0, 0] if len(rows) else np.empty(0)
    measured, tau, gravity = rows[:, 1 : 1 + n], rows[:, 1 + n : 1 + 2 * n], rows[:, 1 + 2 * n : 1 + 3 * n]
    fig, axes = plt.subplots(n + 1, 1, figsize=(10, 1.7 * (n + 1) + 1), sharex=True)
    for j, ax in enumerate(axes[:-1]):
        ax.plot(t, measured[:, j], lw=0.8, label="measured")
        ax.plot(t, tau[:, j], lw=0.8, label="model τ")
        ax.plot(t, gravity[:, j], "--", lw=0.8, label="gravity g(q)")
        ax.set_ylabel(analysis.joint_names[j], fontsize=8)
    for j in range(n):
        axes[-1].plot(t, measured[:, j] - tau[:, j], lw=0.6, label=analysis.joint_names[j])
    axes[-1].set_ylabel("residual\nmeasured − model", fontsize=8)
    axes[-1].legend(fontsize=6, ncol=4, loc="upper right")
    axes[0].legend(fontsize=8, loc="upper right")
    axes[0].set_title("measured efforts vs rigid-body model")
    axes[-1].set_xlabel("time [s]")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


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
    from rnea_ros.recording import _open_bag

    reader = _open_bag(path)
    try:
        return sum(c.msgcount for c in reader.connections if c.topic == topic)
    finally:
        reader.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="rnea_analyze", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("recording", type=Path, help="rosbag2 directory, .db3, .mcap, or .csv")
    parser.add_argument("--urdf", type=Path, help="URDF or xacro file (default: the bag's /robot_description)")
    parser.add_argument("--topic", default="/joint_states", help="sensor_msgs/JointState topic in the bag")
    parser.add_argument("--wrench-topic", action="append", default=[], help="geometry_msgs/WrenchStamped topic")
    parser.add_argument("--window", type=float, default=0.05, help="differentiation window, s (default 0.05)")
    parser.add_argument("--order", type=int, default=3, help="polynomial degree of the local fit (2..5)")
    parser.add_argument(
        "--velocities", choices=["recorded", "positions"], default="recorded", help="q̇ source when recorded"
    )
    parser.add_argument("--gravity", type=float, nargs=3, default=[0.0, 0.0, -9.81])
    parser.add_argument("--out", type=Path, default=Path("rnea_analysis"), help="output directory")
    parser.add_argument("--no-csv", action="store_true", help="skip OUT/samples.csv")
    parser.add_argument("--chunk", type=int, default=DEFAULT_CHUNK, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        model = RobotModel.from_urdf(load_description(args.urdf, args.recording), gravity=args.gravity)
        if model.floating_base:
            raise RecordingError("floating-base robots are not supported by rnea_analyze (fixed base only)")
        wrenches = read_bag_wrenches(args.recording, args.wrench_topic) if args.wrench_topic else None
        unknown = sorted(set(wrenches or {}) - set(model.link_names))
        if unknown:
            raise RecordingError(f"wrenches in frames that are no link of the model: {unknown}")
        total = recording_size(args.recording, args.topic)
        args.out.mkdir(parents=True, exist_ok=True)
        progress = Progress(total)
        start = time.perf_counter()
        chunks = open_recording(args.recording, args.topic, args.chunk)
        csv_path = args.out / "samples.csv"
        with open(csv_path, "wb") if not args.no_csv else contextlib.nullcontext() as csv_file:
            analysis = analyze(
                model,
                chunks,
                wrenches=wrenches,
                window=args.window,
                order=args.order,
                velocities=args.velocities,
                csv_file=csv_file,
                progress=progress,
            )
        progress.done()
        write_plot(analysis, args.out / "torques.png")
        elapsed = time.perf_counter() - start
    except (RecordingError, ModelError, OSError) as error:
        print(f"rnea_analyze: {error}", file=sys.stderr)
        return 2
    topics = "" if args.recording.suffix.lower() == ".csv" else f" ({len(bag_topics(args.recording))} topics)"
    print(f"{args.recording}{topics}: {analysis.samples:,} samples of {model.nv} joints in {elapsed:.1f} s")
    print(summary_table(analysis))
    outputs = [args.out / "torques.png"] + ([] if args.no_csv else [csv_path])
    print("wrote " + ", ".join(str(p) for p in outputs))
    return 0


def entry_point() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry_point()
