"""The differentiation window, chosen by the recording itself.

q̈ comes from a local polynomial fit of the positions over a window (``differentiate``): too short
a window and q̈ is the positions' noise amplified (at 100 Hz, 50 ms is 5 samples), too long and the
fast motion is smoothed away. Each candidate window (a number of samples at the recording's median
rate) is scored as the friction width is: the measured effort less the model's is fitted with the
joint terms (viscous, Coulomb, armature, offset) and a per-joint multiple of the model's own torque
on alternate blocks of samples and tested on the others (summed over the measured joints relative
to their efforts' variance); the shortest window within 1 % of the least held-out residual is taken
(a longer one smooths the motion away for a gain the data cannot tell from noise).

The model's torque as a column: without it, a URDF 20–30 % wrong made the residual fall with the
window's length (smoothing its wrong inertial torque away) and chose 280–400 ms on noise-free 1 kHz
simulated recordings, where any window fits; the identified arm then tracked 1.1–5.5× worse in real
time than with 50 ms (benchmarks/identification.py --real-time). With it: 4–6 ms for two of three
wrong URDFs there (200 ms still for the third: what a per-joint multiple does not absorb), and on
the real Panda 139 ms with either URDF (99 ms with the hand's before).

Every candidate is scored on the same samples: those every candidate differentiates (a window
that leaves samples out used to drop them from its own score, and so looked better: at 1 kHz a
4 ms window with 10,684 of 60,001 samples left out won, and the gravity identified from it was
2.4 % off). A candidate that leaves out more than ``MAX_LEFT_OUT`` of the samples a longer one
differentiates is not chosen. A candidate of k samples spans k sampling periods (±k/2 around the
sample, midway between two samples' stamps: jitter does not move its outer samples in or out),
the period the median step between distinct stamps (a stamp repeated is not a step of 0).

A recording of 15,000 samples or more is scored on every k-th stretch of ``FOLD_SAMPLES`` (k =
samples // ``SCORED_SAMPLES``; the folds then alternate between stretches): the derivatives there
are the whole recording's, taken from all the samples around them.

Every candidate's derivatives come from one pass over the samples
(``differentiate.local_polynomial_derivatives_many``: a sample's windows are nested, the longest's
sums gathered outward once), the same fits as window by window up to rounding.

Alongside, the noise the chosen window leaves in q̈: the positions' noise (from the residuals of
short local cubic fits, which any motion smoother than the sampling leaves ~nothing in) times the
filter's gain for the second derivative. An armature whose q̈ excitation is within a few times that noise cannot be told
from the noise (``Identification`` is told).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from rnea_ros.analysis.differentiate import local_polynomial_derivatives_many
from rnea_ros.analysis.recording import JointChunk
from rnea_ros.dynamics.regressor import DEFAULT_COULOMB_WIDTH, joint_columns

# window lengths in samples at the median rate
CANDIDATE_SAMPLES = (5, 7, 9, 13, 17, 25, 35, 51, 71, 101, 141, 201, 281, 401)
MAX_WINDOW = 0.5  # s: beyond, the fit is no longer local for any robot's motion
FOLD_SAMPLES = 1_000  # samples per block of the two folds (fewer in short recordings)
SCORE_TOLERANCE = 0.01  # relative: held-out residuals closer than this are the same to the data
MAX_LEFT_OUT = 0.001  # a window leaving out more than this fraction of what a longer one covers is not chosen
# fits taken on every stride-th stretch of FOLD_SAMPLES samples, stride = samples // SCORED_SAMPLES (1
# below twice this): the 600,000-sample benchmark bag's choice took 3.3 of its 13.7 s of CPU on all
# its 30,000 leading samples. Stretches, not every stride-th sample: the stamps' rounding (float64 at
# 1.7e9 s) repeats every few samples, and every 4th sample saw another q̈ noise than all of them
SCORED_SAMPLES = 7_500


@dataclass(frozen=True)
class WindowChoice:
    window: float  # s
    samples: int  # at the median sampling period
    period: float  # s, the median sampling period
    scores: dict[float, float]  # window -> held-out residual (relative, summed over measured joints)
    # the samples chosen on (distinct stamps) and the measured joints: for ``qdd_noise``, only when asked
    noise_samples: tuple[np.ndarray, np.ndarray, np.ndarray] = field(repr=False)
    order: int = 3
    left_out: dict[float, int] = field(default_factory=dict)  # window -> fitted samples it leaves without derivatives
    scored: int = 0  # the samples every candidate was scored on
    considered: int = 0  # the samples the choice was made on
    stride: int = 1  # fits taken on every stride-th stretch of FOLD_SAMPLES of them

    @cached_property
    def qdd_noise(self) -> np.ndarray:
        """Per joint: std of q̈'s noise at this window (nan: not measured). Computed when first asked
        (--identify's armature test reads it; a plain analysis never does)."""
        t, q, measured = self.noise_samples
        gain = second_derivative_gain(self.samples, self.order, self.period)
        return np.where(measured, position_noise(t, q) * gain, np.nan)

    def describe(self) -> str:
        tried = ", ".join(f"{w * 1e3:.0f} ms: {s:.4g}" for w, s in sorted(self.scores.items()))
        left = self.left_out.get(self.window, 0)
        return (
            f"differentiation window {self.window * 1e3:.1f} ms ({self.samples} samples at "
            f"{1 / self.period:.0f} Hz), chosen on held-out samples (relative residual {tried}); "
            f"every candidate scored on the same {self.scored:,} of {self.considered:,} samples"
            + (f" (every {self.stride}th stretch of {FOLD_SAMPLES:,})" if self.stride > 1 else "")
            + "; "
            + (
                f"{left:,} left out by this window (fewer than order + 1 distinct stamps within ±window: a gap)"
                if left
                else "this window differentiates every one"
            )
        )


def sampling_period(t: np.ndarray) -> float:
    """The median step between distinct stamps (0: fewer than two distinct stamps)."""
    steps = np.diff(np.unique(t))
    return float(np.median(steps)) if len(steps) else 0.0


def candidate_windows(period: float, order: int) -> list[tuple[int, float]]:
    """(samples, seconds) of each candidate: odd counts of at least order + 2 samples, at most MAX_WINDOW;
    k samples span k periods (±k/2 around a sample: its outer samples half a period inside)."""
    out = [(k, k * period) for k in CANDIDATE_SAMPLES if k >= order + 2 and k * period <= MAX_WINDOW]
    return out or [(order + 2, (order + 2) * period)]


def choose_window(corrected, samples: JointChunk, order: int, velocities: str = "recorded") -> WindowChoice:
    """The window of the least held-out residual of the joint terms on ``samples`` (model space:
    ``samples.names`` are the model's joints, efforts converted, unmeasured efforts NaN)."""
    period = sampling_period(samples.t)
    if not period > 0:
        raise ValueError("cannot choose a differentiation window: the stamps do not advance")
    measured = np.isfinite(samples.effort).any(axis=0)
    candidates = candidate_windows(period, order)
    stride = max(1, len(samples.t) // SCORED_SAMPLES)
    at = np.flatnonzero(np.arange(len(samples.t)) // FOLD_SAMPLES % stride == 0)
    derivatives = _derivatives(samples, [window for _, window in candidates], order, velocities, at)
    fitted = JointChunk(samples.names, samples.t[at], samples.q[at], None, samples.effort[at])
    usable = {
        window: np.isfinite(qd).all(axis=1) & np.isfinite(qdd).all(axis=1) for window, (qd, qdd) in derivatives.items()
    }
    common = np.logical_and.reduce(list(usable.values()))
    left_out, eligible = {}, {}
    for i, (_, window) in enumerate(candidates):
        left_out[window] = int((~usable[window]).sum())
        longer = np.logical_or.reduce([usable[w] for _, w in candidates[i + 1 :]] or [np.zeros_like(common)])
        eligible[window] = (longer & ~usable[window]).sum() <= MAX_LEFT_OUT * len(at)
    scores = {
        window: _held_out_score(corrected, fitted, *derivatives[window], common, measured) for _, window in candidates
    }
    least = min(scores[w] for w in scores if eligible[w])  # the longest candidate always is
    if not np.isfinite(least):
        raise ValueError("cannot choose a differentiation window: no window leaves enough samples to fit")
    # the shortest window within SCORE_TOLERANCE of the least residual: a longer one smooths the motion
    # (a bias) for a difference the data cannot tell from their own noise
    count, window = next((k, w) for k, w in candidates if eligible[w] and scores[w] <= least * (1 + SCORE_TOLERANCE))
    distinct = np.r_[True, np.diff(samples.t) > 0]  # a stamp repeated adds no information on the noise
    noise_samples = (samples.t[distinct], samples.q[distinct], measured)
    return WindowChoice(
        window, count, period, scores, noise_samples, order, left_out, int(common.sum()), len(samples.t), stride
    )


def _derivatives(
    samples: JointChunk, windows: list[float], order: int, velocities: str, at: np.ndarray
) -> dict[float, tuple[np.ndarray, np.ndarray]]:
    """window -> (q̇, q̈) at samples ``at`` of every candidate, in one pass (``local_polynomial_derivatives_many``)."""
    out = {}
    for window, (qd_fit, qdd) in zip(
        windows, local_polynomial_derivatives_many(samples.t, samples.q, windows, order, at), strict=True
    ):
        qd = qd_fit
        if samples.qd is not None and velocities == "recorded":
            qd = np.where(np.isnan(samples.qd[at]), qd_fit, samples.qd[at])
        out[window] = qd, qdd
    return out


def _held_out_score(corrected, samples: JointChunk, qd, qdd, usable, measured) -> float:
    if usable.sum() < 4 * 10:
        return np.inf
    q, qd, qdd, effort = samples.q[usable], qd[usable], qdd[usable], samples.effort[usable]
    model = corrected.inverse_dynamics(q, qd, qdd)
    residual = effort - model
    fold = (np.arange(len(q)) // min(FOLD_SAMPLES, max(len(q) // 10, 10))) % 2
    folds = [np.flatnonzero(fold == train) for train in (0, 1)]  # the rows of each fold, when every row is ok
    # the regressor's terms, every joint at once (elementwise: each joint's as alone)
    joint_terms = joint_columns(qd, qdd, [(DEFAULT_COULOMB_WIDTH, 0.0)])
    total = 0.0
    for j in np.flatnonzero(measured):
        ok = np.isfinite(residual[:, j])
        every = bool(ok.all())
        features = np.column_stack([joint_terms[:, j], model[:, j]])  # a scale absorbs a wrong URDF's gross error
        squared, count = 0.0, 0
        for train in (0, 1):
            if every:
                fit_rows, test_rows = folds[train], folds[1 - train]
            else:
                fit_rows, test_rows = np.flatnonzero(ok & (fold == train)), np.flatnonzero(ok & (fold != train))
            if len(fit_rows) < 10 or not len(test_rows):
                return np.inf
            theta = np.linalg.lstsq(features[fit_rows], residual[fit_rows, j], rcond=None)[0]
            error = residual[test_rows, j] - features[test_rows] @ theta
            squared, count = squared + float(error @ error), count + len(test_rows)
        variance = float(np.var(effort[ok, j] if not every else effort[:, j])) or 1.0
        total += squared / count / variance
    return total


def position_noise(t: np.ndarray, q: np.ndarray, samples: int = 7, order: int = 3) -> np.ndarray:
    """Per column, the std of white noise on q: the residual at each sample of a cubic fitted to its
    ``samples`` neighbours (uneven stamps as they are), scaled by its variance factor 1 − h_ii; any
    motion smoother than the sampling leaves ~nothing there. Robust: the median of the squares."""
    n, half = len(t), samples // 2
    if n < samples + 1:
        return np.full(q.shape[1], np.nan)
    centres = np.arange(half, n - half)
    rows = centres[:, None] + np.arange(-half, half + 1)
    s = t[rows] - t[centres][:, None]
    s = s / np.maximum(np.abs(s).max(axis=1, keepdims=True), 1e-300)  # conditioning
    # even stamps give a few distinct windows (45 in the benchmark bag's leading 30,000): each pseudo-inverse once
    # (when the first 1,000 show few; jittered stamps' are all distinct, not worth sorting). Rows told
    # apart by their bytes (one sort of 1-D keys: 10x faster than np.unique(axis=0)'s, the same rows)
    keys = np.ascontiguousarray(s).view(np.dtype((np.void, s.dtype.itemsize * s.shape[1])))[:, 0]
    few = len(np.unique(keys[:1_000])) <= 100
    if few:
        _, first, which = np.unique(keys, return_index=True, return_inverse=True)
        distinct = s[first]
    else:
        distinct, which = s, np.arange(len(s))
    V = distinct[:, :, None] ** np.arange(order + 1)  # (windows, samples, order + 1)
    fit_at_centre = np.linalg.pinv(V)[:, 0, :][which.ravel()]  # the fitted value at s = 0 from the window's samples
    leverage = fit_at_centre[:, half]
    residual = q[centres] - np.einsum("nk,nkj->nj", fit_at_centre, q[rows])
    scaled = residual**2 / np.maximum(1.0 - leverage, 1e-12)[:, None]
    return np.sqrt(np.nanmedian(scaled, axis=0) / 0.4549)  # 0.4549: the median of χ²(1)


def second_derivative_gain(samples: int, order: int, period: float) -> float:
    """‖h‖₂ of the local polynomial's q̈ estimate at the centre of ``samples`` evenly spaced samples:
    white noise σ on q becomes σ·gain on q̈."""
    s = (np.arange(samples) - (samples - 1) / 2) * period
    V = np.vander(s, order + 1, increasing=True)
    h = 2.0 * np.linalg.pinv(V)[2]
    return float(np.linalg.norm(h))
