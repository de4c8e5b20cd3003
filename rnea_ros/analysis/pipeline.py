"""The rnea_analyze pipeline: recorded chunks → derivatives → model torques → fits and samples.

No command line and no plotting here (``cli``, ``plot``): ``analyze`` takes a model and an
iterator of ``JointChunk`` and returns an ``Analysis``. See ``cli`` for the whole tool.
"""

from __future__ import annotations

import collections
import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, field

import numba
import numpy as np

from rnea_ros.analysis.differentiate import local_polynomial_derivatives
from rnea_ros.analysis.effort_conversion import EffortConversion
from rnea_ros.analysis.fast_csv import write_rows
from rnea_ros.analysis.recording import JointChunk, RecordingError
from rnea_ros.analysis.replay import GRID_POINTS
from rnea_ros.analysis.window import WindowChoice, choose_window
from rnea_ros.dynamics.corrections import CorrectedModel, with_corrections
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.dynamics.regressor import link_regressor, links_regressor

PLOT_POINTS = 20_000
MIN_SAMPLES = 100  # fewer samples say nothing about a robot's dynamics (a fit of 9 gave nan and a scale of 2.4)
WINDOW_CHOICE_SAMPLES = 30_000  # the recording's first samples the differentiation window is chosen on
ZERO_EFFORTS = 0.5  # a joint whose recorded effort is exactly 0 in this fraction of them is not measured


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
        """The samples' terms added, in one compiled pass (numpy's ~20 passes over the chunk took
        0.6 s of CPU for 600,000 samples of 8 joints): per chunk summed apart, then into the totals."""
        n, sums, normal, rhs = _chunk_sums(*(np.ascontiguousarray(a, dtype=np.float64) for a in (measured, model, qd)))
        self.n += n
        self.sums += sums
        self.friction_normal += normal
        self.friction_rhs += rhs

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


@numba.njit(cache=True)
def _chunk_sums(measured, model, qd):  # pragma: no cover - compiled
    """``JointFits``' terms of one chunk: the samples where measured, model and q̇ are all finite;
    the friction law's columns q̇, sign(q̇), 1 (``regressor.friction_law_columns``, test_pipeline.py)."""
    rows, m = measured.shape
    n = np.zeros(m, np.int64)
    sums = np.zeros((6, m))
    normal = np.zeros((m, 3, 3))
    rhs = np.zeros((m, 3))
    for i in range(rows):
        for j in range(m):
            a, p, v = measured[i, j], model[i, j], qd[i, j]
            if not (np.isfinite(a) and np.isfinite(p) and np.isfinite(v)):
                continue
            r = a - p
            n[j] += 1
            sums[0, j] += a
            sums[1, j] += p
            sums[2, j] += a * a
            sums[3, j] += p * p
            sums[4, j] += a * p
            sums[5, j] += r * r
            s = np.sign(v)
            rhs[j, 0] += v * r
            rhs[j, 1] += s * r
            rhs[j, 2] += r
            normal[j, 0, 0] += v * v
            normal[j, 0, 1] += v * s
            normal[j, 0, 2] += v
            normal[j, 1, 1] += s * s
            normal[j, 1, 2] += s
            normal[j, 2, 2] += 1.0
    for j in range(m):
        normal[j, 1, 0], normal[j, 2, 0], normal[j, 2, 1] = normal[j, 0, 1], normal[j, 0, 2], normal[j, 1, 2]
    return n, sums, normal, rhs


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
    measured_samples: np.ndarray | None = None  # per joint: samples with a finite recorded effort
    span: tuple[float, float] = (math.inf, -math.inf)  # stamps of the first and last samples analysed
    underived: int = 0  # samples whose window had too few neighbours (NaN derivatives)
    out_of_order: int = 0  # samples whose stamp went back in time
    plot: Decimator = field(default_factory=Decimator)
    # (t, q in the model's joint order) of the whole recording, --start and --end aside: for ``replay``
    positions: Decimator = field(default_factory=lambda: Decimator(GRID_POINTS // 2))

    def unmeasured(self) -> list[str]:
        """The joints with no finite recorded effort (not in the recording, or recorded without one)."""
        if self.measured_samples is None:
            return []
        return [name for name, n in zip(self.joint_names, self.measured_samples, strict=True) if n == 0]


def to_model_space(chunk: JointChunk, model: RobotModel, conversion: EffortConversion | None = None) -> JointChunk:
    """The chunk in the model's joint order, efforts converted to the model's units; joints the
    recording lacks: q = q̇ = 0, effort NaN."""
    where: dict[str, int] = {}
    for k, name in enumerate(chunk.names):
        where.setdefault(name, k)  # a name recorded twice: its first column
    runs = _column_runs([where.get(name, -1) for name in model.joint_names])

    def gathered(values: np.ndarray, fill: float) -> np.ndarray:
        """The recorded columns in the model's order, ``fill`` for the joints not recorded: a C-ordered
        copy, a run of consecutive columns at a time (np.take of all columns at once: ~5x the time, 0.2 s
        of CPU for the benchmark bag; a column at a time ~10x)."""
        if values.shape[1] == 0:
            return np.full((len(chunk.t), model.nv), fill)
        values = np.asarray(values, dtype=np.float64)
        out = np.empty((len(values), model.nv))
        for start, stop, first in runs:
            out[:, start:stop] = fill if first < 0 else values[:, first : first + stop - start]
        return out

    q, effort = gathered(chunk.q, 0.0), gathered(chunk.effort, np.nan)
    qd = gathered(chunk.qd, 0.0) if chunk.qd is not None else None
    if conversion is not None:
        scale, offset = conversion.arrays(model.joint_names)
        effort = effort * scale + offset
    return JointChunk(list(model.joint_names), chunk.t, q, qd, effort)


def _column_runs(columns: list[int]) -> list[tuple[int, int, int]]:
    """(start, stop, first) per run of model columns [start, stop) read from consecutive recorded
    columns from ``first`` on (first -1: a run of joints not recorded)."""
    runs: list[tuple[int, int, int]] = []
    for k, column in enumerate(columns):
        if runs and _continues(runs[-1], k, column):
            runs[-1] = (runs[-1][0], k + 1, runs[-1][2])
        else:
            runs.append((k, k + 1, max(column, -1)))
    return runs


def _continues(run: tuple[int, int, int], k: int, column: int) -> bool:
    """Whether model column k, read from recorded ``column`` (< 0: not recorded), extends ``run``."""
    start, _, first = run
    if column < 0 or first < 0:
        return column < 0 and first < 0
    return column == first + k - start


def with_context(chunks: Iterator[JointChunk], margin: float) -> Iterator[tuple[JointChunk, slice, bool, bool]]:
    """Each chunk extended by ``margin`` seconds of its neighbours, the slice of its own rows, and
    whether the extended chunk begins with the recording's first sample and ends with its last: the
    differentiator then sees the same samples as it would on the whole recording (however short the
    chunks; only ``margin`` seconds are kept on either side)."""
    upcoming: collections.deque[JointChunk] = collections.deque()
    previous: JointChunk | None = None
    consumed = 0  # samples of the chunks before the current one
    while True:
        if not upcoming and (chunk := next(chunks, None)) is not None:
            upcoming.append(chunk)
        if not upcoming:
            return
        current = upcoming.popleft()
        exhausted = False
        while not upcoming or upcoming[-1].t[-1] <= current.t[-1] + margin:
            if (chunk := next(chunks, None)) is None:
                exhausted = True
                break
            upcoming.append(chunk)
        before = _tail(previous, current.t[0] - margin) if previous is not None else None
        # stamps never go back across chunks (``analyze`` drops those that do): the head of the
        # chunks ahead is the heads of each, concatenated (not all of them, copied)
        after = _concat([_head(c, current.t[-1] + margin) for c in upcoming]) if upcoming else None
        parts = [p for p in (before, current, after) if p is not None]
        start = len(before.t) if before is not None else 0
        at_start = start == consumed  # the context before holds every earlier sample
        at_end = exhausted and (after is None or len(after.t) == sum(len(c.t) for c in upcoming))
        yield _concat(parts), slice(start, start + len(current.t)), at_start, at_end
        consumed += len(current.t)
        # what the next chunk's context before may take: the samples within margin of this one's last
        previous = _concat([_tail(p, current.t[-1] - margin) for p in (before, current) if p is not None])


def _select(chunk: JointChunk, rows) -> JointChunk:
    if isinstance(rows, np.ndarray) and rows.dtype == bool and rows.all():
        return chunk  # every row: the arrays themselves, not copies
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
    model: RobotModel | CorrectedModel,
    chunks: Iterator[JointChunk],
    *,
    wrenches: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
    window: float = 0.05,
    order: int = 3,
    velocities: str = "recorded",
    csv_file=None,
    progress=None,
    identification=None,
    parquet=None,
    effort_delay: float = 0.0,
    start: float = 0.0,
    end: float = math.inf,
    effort_conversion: EffortConversion | None = None,
) -> Analysis:
    """Runs the whole pipeline over ``chunks``; writes sample rows to ``csv_file`` when given.
    The model's torques are those of ``corrections.with_corrections`` (as rnea_node computes them; a
    bare model: rigid bodies only, the URDF's joint damping and friction left out); ``model`` may be
    such a ``CorrectedModel`` itself (a corrections file applied, or the URDF's joint dynamics added).
    ``effort_delay``: the effort in a message was applied that long before its stamp (ros2_control
    reports the effort of the previous cycle's command: one control period), so the state at t is
    paired with the effort recorded at t + effort_delay (interpolated). Only the samples from
    ``start`` to ``end`` seconds after the first one are analysed (e.g. not while brakes hold).
    ``effort_conversion`` turns recorded efforts (motor side, currents) into the model's units."""
    corrected = model if isinstance(model, CorrectedModel) else with_corrections(model, None, urdf_dynamics=False)
    model = corrected.model
    analysis = Analysis(list(model.joint_names), JointFits(model.nv), measured_samples=np.zeros(model.nv, np.int64))
    first = next(chunks, None)
    if first is None or len(first.t) == 0:
        raise RecordingError("the recording has no joint samples")
    analysis.missing_in_recording = [n for n in model.joint_names if n not in first.names]
    analysis.not_in_model = [n for n in first.names if n not in model.joint_names]
    if len(analysis.missing_in_recording) == model.nv:
        raise RecordingError(f"no joint of the model is in the recording (recorded: {first.names[:10]})")

    first_stamp = first.t[0]
    # samples within ``margin`` before start and after end are read too, to differentiate the first
    # and last samples analysed as on the whole recording (one-sided, q̈ was noise there: the Panda's
    # held-out joint 3 0.48 N·m against 0.38 from the whole recording's derivatives); a window is
    # widened up to ±window where it holds too few stamps (``differentiate``)
    margin = window + abs(effort_delay)
    analysed_from, analysed_to = first_stamp + start, first_stamp + end

    def model_chunks() -> Iterator[JointChunk]:
        latest = -np.inf
        for chunk in itertools.chain([first], chunks):
            in_order = chunk.t >= latest  # stamps that go back across a chunk boundary are dropped
            analysis.out_of_order += int((~in_order).sum())
            keep = in_order & (chunk.t >= analysed_from - margin) & (chunk.t <= analysed_to + margin)
            ordered = np.flatnonzero(in_order)
            kept = to_model_space(_select(chunk, ordered[analysis.positions.rows_to_keep(len(ordered))]), model)
            analysis.positions.add(np.column_stack([kept.t, kept.q]))
            if in_order.any():
                latest = chunk.t[in_order][-1]
            if keep.any():
                yield to_model_space(_select(chunk, keep), model, effort_conversion)

    if csv_file is not None:
        csv_file.write(_csv_header(model.joint_names).encode())
    for extended, own, at_start, at_end in with_context(model_chunks(), margin):
        # the own rows from --start to --end: consecutive (the stamps are sorted), so a slice (views, not copies)
        own_t = extended.t[own]
        first_row = own.start + int(np.searchsorted(own_t, analysed_from, side="left"))
        core = slice(first_row, own.start + int(np.searchsorted(own_t, analysed_to, side="right")))
        if core.stop <= core.start:
            continue
        qd_estimate, qdd_all = local_polynomial_derivatives(
            extended.t, extended.q, window, order, starts=at_start, ends=at_end
        )
        qdd = qdd_all[core]
        qd = qd_estimate[core]
        if extended.qd is not None and velocities == "recorded":  # recorded where recorded
            qd = np.where(np.isnan(extended.qd[core]), qd, extended.qd[core])
        t, q = extended.t[core], extended.q[core]
        measured = extended.effort[core] if effort_delay == 0.0 else _delayed(extended, t + effort_delay)
        usable = np.isfinite(qdd).all(axis=1) & np.isfinite(qd).all(axis=1) & np.isfinite(q).all(axis=1)
        analysis.underived += int((~usable).sum())
        writes_rows = csv_file is not None or parquet is not None
        keep = analysis.plot.rows_to_keep(len(t))
        # g(q) is only shown: computed for the rows written or plotted, not for every fit
        w = held_wrenches(wrenches, t[usable]) if wrenches and usable.any() else None
        tau, gravity = _torques(corrected, q, qd, qdd, usable, usable if writes_rows else _only(keep, usable), w)
        analysis.fits.add(measured, tau, qd)
        analysis.measured_samples += np.isfinite(measured).sum(axis=0)
        if identification is not None:
            identification.add(measured, tau, qd, qdd, _payload_regressor(model, identification, q, qd, qdd, usable))
        analysis.samples += len(t)
        analysis.span = (min(analysis.span[0], t[0]), max(analysis.span[1], t[-1]))
        analysis.plot.add(np.concatenate([t[keep, None], measured[keep], tau[keep], gravity[keep]], axis=1))
        if writes_rows:
            # a sample skipped (no derivatives) has no model effort: not a row of the output
            rows = np.concatenate([t[:, None], q, measured, tau, gravity], axis=1)
            rows = rows if usable.all() else rows[usable]
            if csv_file is not None:
                write_rows(csv_file, rows)
            if parquet is not None:
                parquet.write(rows)
        if progress is not None:
            progress(analysis.samples)
    if analysis.samples < MIN_SAMPLES:
        raise too_few_samples(analysis.samples, start, end)
    return analysis


def _only(rows: np.ndarray, usable: np.ndarray) -> np.ndarray:
    """``usable`` restricted to ``rows``."""
    mask = np.zeros_like(usable)
    mask[rows] = usable[rows]
    return mask


def _torques(
    corrected: CorrectedModel,
    q: np.ndarray,
    qd: np.ndarray,
    qdd: np.ndarray,
    usable: np.ndarray,
    gravity_rows: np.ndarray,
    wrenches: dict[str, np.ndarray] | None,
) -> tuple[np.ndarray, np.ndarray]:
    """(the corrected model's τ at the ``usable`` rows, g(q) at the ``gravity_rows``; NaN elsewhere).
    Without wrenches both are one batch, g(q) as the rows of q̇ = q̈ = 0 (``gravity_torques``' own
    rows, the same bits: every row is computed alone): twice the states, enough for the batch kernel
    to split them over numba's threads (``rnea_block.PARALLEL_WORK``), where each call alone ran on one."""
    model = corrected.model
    n, m = int(usable.sum()), int(gravity_rows.sum())
    if wrenches is None and n == m == len(q):  # usually: the rows themselves, not copies picked by a mask
        both = _with_gravity(model, q, qd, qdd, q)
        return corrected.joint_torques(qd, qdd, both[:n]), both[n:]
    tau, gravity = np.full_like(q, np.nan), np.full_like(q, np.nan)
    if wrenches is not None or not n or not m:
        if n:
            tau[usable] = corrected.inverse_dynamics(q[usable], qd[usable], qdd[usable], wrenches)
        if m:
            gravity[gravity_rows] = model.gravity_torques(q[gravity_rows])
        return tau, gravity
    both = _with_gravity(model, q[usable], qd[usable], qdd[usable], q[gravity_rows])
    tau[usable] = corrected.joint_torques(qd[usable], qdd[usable], both[:n])
    gravity[gravity_rows] = both[n:]
    return tau, gravity


def _with_gravity(model: RobotModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, q_still: np.ndarray) -> np.ndarray:
    """ID(q, q̇, q̈) and then g(q_still) as one batch's rows."""
    still = np.zeros((len(q_still), qd.shape[1]))
    return model.inverse_dynamics(
        np.concatenate([q, q_still]), np.concatenate([qd, still]), np.concatenate([qdd, still])
    )


def too_few_samples(count: int, start: float, end: float) -> RecordingError:
    return RecordingError(
        f"only {count} samples between --start {start:g} s and --end {end:g} s (both after the recording's first "
        f"stamp): at least {MIN_SAMPLES} are needed; check them against the recording's length"
    )


def chosen_window(
    corrected: CorrectedModel,
    chunks: Iterator[JointChunk],
    *,
    order: int = 3,
    velocities: str = "recorded",
    start: float = 0.0,
    end: float = math.inf,
    effort_conversion: EffortConversion | None = None,
) -> WindowChoice:
    """The differentiation window chosen on the recording's first samples (``analysis.window``)."""
    samples = leading_samples(chunks, corrected.model, start=start, end=end, effort_conversion=effort_conversion)
    if len(samples.t) < MIN_SAMPLES:
        raise too_few_samples(len(samples.t), start, end)
    try:
        return choose_window(corrected, samples, order, velocities)
    except ValueError as error:
        raise RecordingError(str(error)) from error


def leading_samples(
    chunks: Iterator[JointChunk],
    model: RobotModel,
    *,
    start: float = 0.0,
    end: float = math.inf,
    effort_conversion: EffortConversion | None = None,
    limit: int = WINDOW_CHOICE_SAMPLES,
) -> JointChunk:
    """Up to ``limit`` samples from ``start`` to ``end`` s after the first, in time order and model space:
    what the differentiation window is chosen on."""
    parts, count, first_stamp, latest = [], 0, None, -np.inf
    for chunk in chunks:
        if first_stamp is None and len(chunk.t):
            first_stamp = chunk.t[0]
        if first_stamp is None:
            continue
        keep = (chunk.t >= latest) & (chunk.t >= first_stamp + start) & (chunk.t <= first_stamp + end)
        if keep.any():
            latest = chunk.t[keep][-1]
            parts.append(to_model_space(_select(chunk, keep), model, effort_conversion))
            count += int(keep.sum())
        if count >= limit:
            break
    if not parts:
        raise too_few_samples(0, start, end)
    return _select(_concat(parts), slice(0, limit))


def zero_effort_joints(
    chunks: Iterator[JointChunk], model: RobotModel, *, start: float = 0.0, end: float = math.inf
) -> list[str]:
    """The model's joints whose recorded effort is exactly 0 in at least ``ZERO_EFFORTS`` of the leading
    samples (as ``leading_samples`` reads them, before any conversion): a driver that fills in the
    effort of a joint it does not measure (TIAGo's wrist: 0 in 88-90 % of its samples, a few
    thousandths otherwise, at rest as in motion). A measured torque is exactly 0 only as it crosses zero.
    Only joints that move are judged (a still joint may hold no load), and only beside a joint whose
    efforts are not mostly 0 (a recording whose efforts are all 0 has none to tell apart)."""
    samples = leading_samples(chunks, model, start=start, end=end)
    if len(samples.t) < MIN_SAMPLES:
        return []
    mostly_zero = np.mean(samples.effort == 0.0, axis=0) >= ZERO_EFFORTS
    measured = np.isfinite(samples.effort).any(axis=0) & ~mostly_zero
    moving = np.ptp(samples.q, axis=0) > 1e-3
    if not measured.any():
        return []
    return [name for name, zero in zip(model.joint_names, mostly_zero & moving, strict=True) if zero]


def _delayed(chunk: JointChunk, at: np.ndarray) -> np.ndarray:
    """The chunk's efforts at the times ``at`` (linear between samples; NaN outside the chunk)."""
    out = np.full((len(at), chunk.effort.shape[1]), np.nan)
    for j in range(chunk.effort.shape[1]):
        out[:, j] = np.interp(at, chunk.t, chunk.effort[:, j], left=np.nan, right=np.nan)
    return out


def _payload_regressor(model: RobotModel, identification, q, qd, qdd, usable) -> np.ndarray | None:
    """The identification's payload (or links') regressor at the usable rows (NaN elsewhere), if it has one."""
    if not identification.payload_columns:
        return None
    Y = np.full((*q.shape, identification.payload_columns), np.nan)
    if usable.any():
        state = q[usable], qd[usable], qdd[usable]
        if identification.links:
            Y[usable] = links_regressor(model, list(identification.links), *state)
        else:
            Y[usable] = link_regressor(model, identification.payload_link, *state)
    return Y


def sample_columns(names: list[str]) -> list[str]:
    """The columns of samples.csv and samples.parquet."""
    columns = ["time"]
    for kind in ("position", "effort_measured", "effort_model", "gravity"):
        columns += [f"{name}.{kind}" for name in names]
    return columns


def _csv_header(names: list[str]) -> str:
    return ",".join(sample_columns(names)) + "\n"


def summary_table(analysis: Analysis) -> str:
    header = (
        f"{'joint':<22}{'samples':>9}{'RMS err':>10}{'RMS meas':>10}{'corr':>7}"
        f"{'scale':>8}{'offset':>9}{'viscous':>9}{'Coulomb':>9}"
    )
    lines = [header, "-" * len(header)]
    unmeasured = analysis.unmeasured()
    for j, name in enumerate(analysis.joint_names):
        if name in unmeasured:
            continue
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
    recorded_unmeasured = [n for n in unmeasured if n not in analysis.missing_in_recording]
    if recorded_unmeasured:
        lines.append(f"joints recorded without an effort (not measured; their rows left out): {recorded_unmeasured}")
    if analysis.not_in_model:
        lines.append(f"recorded joints that are not independent joints of the model (ignored): {analysis.not_in_model}")
    if analysis.out_of_order:
        lines.append(f"{analysis.out_of_order} samples skipped: their stamps went back in time")
    if analysis.underived:
        lines.append(
            f"{analysis.underived} samples skipped: too few neighbours within the window to differentiate "
            "(fewer than order + 1 distinct stamps within ±window: a gap in the recording)"
        )
    return "\n".join(lines)
