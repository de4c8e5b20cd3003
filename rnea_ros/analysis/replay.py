"""Does a recording replay itself? A trajectory played twice makes its later part a copy of its earlier
part: samples held out by time (the last 30 %, or folds in time) are then no new motion, and a fit
looks better on them than it is on another recording (issue 46: the Panda recording of Gaz et al.
repeats its trajectory 13.345 s later, and a plain least-squares fit looked 5× better than the URDF
on its last 30 %, worse than it on a second recording).

The positions, resampled on a uniform grid, are compared with themselves shifted by every lag: the
RMS difference between q(t) and q(t − lag) over the samples both cover, divided by the motion of those
samples about their mean (the square root of the two parts' summed variances: 1 for unrelated
motions, 0 for a copy). The sums for every lag come from one FFT (an autocorrelation), so a
recording of any length costs O(N log N) on at most ``GRID_POINTS`` points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GRID_POINTS = 16_384  # the positions are resampled on at most this many points
REPLAY_DISTANCE = 0.15  # a lag whose normalised distance is below this replays the motion
DECORRELATED = 0.5  # lags are searched from the first one whose distance reaches this
MIN_OVERLAP = 0.1  # the part replayed: at least this fraction of the span...
MIN_OVERLAP_SECONDS = 1.0  # ... and of seconds
MIN_MOTION = 0.1  # ... and moving: its variance at least this fraction of the whole recording's
HELD_OUT = 0.3  # the last part a user holds out by time (the convention of docs/analyze.md)


@dataclass(frozen=True)
class Replay:
    """The recording from ``start + lag`` replays its motion ``lag`` seconds earlier."""

    lag: float  # s: the period of the repetition
    distance: float  # normalised RMS difference (0: a copy, ~1: unrelated)
    rms: float  # rad (or m): RMS difference of the positions, over the joints and the samples
    start: float  # s, the recording's first stamp
    span: float  # s, the recording's length

    @property
    def replayed(self) -> float:
        """Seconds of the recording that replay earlier ones (from ``start + lag`` to its end)."""
        return self.span - self.lag

    def held_out_fraction(self) -> float:
        """Of the last ``HELD_OUT`` of the recording, the fraction that replays earlier samples."""
        return min(1.0, self.replayed / (HELD_OUT * self.span))

    def describe(self, validating: bool) -> str:
        held = self.held_out_fraction()
        lines = [
            f"replay: the recording repeats its motion: from {self.lag:.2f} s on it replays what it did "
            f"{self.lag:.3f} s earlier ({self.replayed:.2f} s of {self.span:.2f} s; positions within "
            f"{self.rms:.3g} RMS, {self.distance:.1%} of their motion)",
            f"  its last {HELD_OUT:.0%} held out ({self.span * (1 - HELD_OUT):.2f}-{self.span:.2f} s) is "
            f"{held:.0%} a replay of earlier samples: folds in time and a held-out last part are no new motion, "
            "and a fit looks better on them than on another recording",
        ]
        if not validating:
            lines.append("  validate on a second recording of the robot: --validate OTHER")
        return "\n".join(lines)


def uniform_positions(t: np.ndarray, q: np.ndarray, points: int = GRID_POINTS) -> tuple[np.ndarray, float]:
    """``q`` (N, n) at stamps ``t`` (increasing, repeats allowed) linearly resampled on a uniform grid of
    at most ``points`` points, no finer than the recording's median step: (positions, step)."""
    t, unique = np.unique(t, return_index=True)
    q = q[unique]
    span = t[-1] - t[0]
    steps = np.diff(t)
    step = max(float(np.median(steps)), span / (points - 1))
    grid = t[0] + step * np.arange(int(span / step) + 1)
    return np.column_stack([np.interp(grid, t, q[:, j]) for j in range(q.shape[1])]), step


def find_replay(t: np.ndarray, q: np.ndarray) -> Replay | None:
    """The repetition in positions ``q`` (N, n) at stamps ``t``: the shortest lag at which the
    recording replays itself (see the module), or None when it does not."""
    finite = np.isfinite(q).all(axis=0)
    if len(t) < 16 or not finite.any():
        return None
    x, step = uniform_positions(np.asarray(t, float), np.asarray(q, float)[:, finite])
    n = len(x)
    span = step * (n - 1)
    x = x - x.mean(axis=0)
    total_variance = float(np.sum(x.var(axis=0)))
    if not total_variance > 0.0:
        return None
    lags = np.arange(n)
    overlap = n - lags  # samples both the part and its copy cover
    # Σ over the overlap of |x(i)|² (later part) and |x(i − lag)|² (earlier part), and Σ x(i)·x(i − lag)
    squares = np.sum(x * x, axis=1)
    cumulative = np.concatenate([[0.0], np.cumsum(squares)])
    later, earlier = cumulative[-1] - cumulative[lags], cumulative[overlap]
    size = 1 << int(np.ceil(np.log2(2 * n)))
    spectrum = np.fft.rfft(x, size, axis=0)
    cross = np.fft.irfft(np.sum(spectrum * np.conj(spectrum), axis=1).real, size)[:n]
    distance_squared = np.maximum(later + earlier - 2.0 * cross, 0.0)
    # the motion of each part about its own mean (Σ over joints of variance × count)
    motion = _centred(x, later, lags, overlap, later_part=True) + _centred(x, earlier, lags, overlap, later_part=False)
    with np.errstate(invalid="ignore", divide="ignore"):
        distance = np.sqrt(distance_squared / motion)
    admissible = (
        (overlap * step >= max(MIN_OVERLAP * span, MIN_OVERLAP_SECONDS))
        & (motion >= 2.0 * MIN_MOTION * total_variance * overlap)
        & np.isfinite(distance)
    )
    decorrelated = np.flatnonzero(distance >= DECORRELATED)
    if len(decorrelated) == 0:
        return None
    admissible[: decorrelated[0]] = False
    candidates = np.flatnonzero(admissible & (distance < REPLAY_DISTANCE))
    if len(candidates) == 0:
        return None
    best = float(distance[candidates].min())
    # the shortest lag close to the best one: a period, not one of its multiples
    near = candidates[distance[candidates] <= 2.0 * best + 0.02]
    lag = int(near[0])
    while lag + 1 < n and admissible[lag + 1] and distance[lag + 1] < distance[lag]:
        lag += 1  # down to the local minimum
    rms = float(np.sqrt(distance_squared[lag] / (overlap[lag] * x.shape[1])))
    return Replay(lag * step, float(distance[lag]), rms, float(t[0]), span)


def _centred(x: np.ndarray, squares: np.ndarray, lags, overlap, later_part: bool) -> np.ndarray:
    """Σ over joints and the part's samples of (x − the part's mean)², for every lag: the later part
    x[lag:] or the earlier x[:N − lag] (``squares``: their Σ|x|²)."""
    cumulative = np.concatenate([np.zeros((1, x.shape[1])), np.cumsum(x, axis=0)])
    sums = cumulative[-1] - cumulative[lags] if later_part else cumulative[overlap]
    return squares - np.sum(sums * sums, axis=1) / overlap
