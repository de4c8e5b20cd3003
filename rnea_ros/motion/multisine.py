"""Reference trajectories for the closed loop (no ROS)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MultiSine:
    """q(t) = start + Σ_k a_k (1 − cos(2π f_k t)) per joint: starts at rest at ``start``
    (smooth velocity), with accelerations that exercise inertia, Coriolis and gravity."""

    start: np.ndarray  # (n,)
    amplitudes: np.ndarray  # (n, K) [rad or m]
    frequencies: np.ndarray  # (K,) [Hz]

    def at(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, q̇, q̈) at time t (held at the start before 0)."""
        q, qd, qdd = self.at_times(np.array([t]))
        return q[0], qd[0], qdd[0]

    def at_times(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, q̇, q̈), one row per time of ``t``."""
        wt = np.outer(np.maximum(t, 0.0), 2.0 * np.pi * self.frequencies)  # (N, K)
        w = 2.0 * np.pi * self.frequencies
        q = self.start + (1.0 - np.cos(wt)) @ self.amplitudes.T
        qd = (w * np.sin(wt)) @ self.amplitudes.T
        qdd = (w * w * np.cos(wt)) @ self.amplitudes.T
        return q, qd, qdd


def fast_multisine(start: np.ndarray, moving: int, amplitude: float = 0.2, seed: int = 3) -> MultiSine:
    """A fast trajectory (0.4 and 0.9 Hz, up to ~1.5 rad/s) for the first ``moving`` joints of ``start``,
    the others held; phases of the joints differ through their amplitude signs."""
    rng = np.random.default_rng(seed)
    amplitudes = np.zeros((len(start), 2))
    amplitudes[:moving] = amplitude * rng.choice([-1.0, 1.0], size=(moving, 2)) * np.array([1.0, 0.6])
    return MultiSine(np.asarray(start, dtype=float), amplitudes, np.array([0.4, 0.9]))


def multisine(start: np.ndarray, amplitude: float, frequencies: list[float]) -> MultiSine:
    """Each joint moves by up to ``amplitude`` [rad or m] away from ``start``, joints out of phase."""
    signs = np.where(np.arange(len(start)) % 2 == 0, 1.0, -1.0)
    weights = np.linspace(1.0, 0.6, len(frequencies))
    amplitudes = 0.5 * amplitude * np.outer(signs, weights / weights.sum())
    return MultiSine(start, amplitudes, np.asarray(frequencies, dtype=float))


def within_limits(
    trajectory: MultiSine, lower: np.ndarray, upper: np.ndarray, margin: float = 0.05
) -> tuple[MultiSine, dict[int, str]]:
    """The trajectory with each joint kept ``margin`` inside [lower, upper]: turned to the side with
    room, or its amplitude cut to the room there is; and, per joint changed, what was done."""
    amplitudes, said = trajectory.amplitudes.copy(), {}
    room_up = np.asarray(upper, dtype=float) - margin - trajectory.start
    room_down = trajectory.start - (np.asarray(lower, dtype=float) + margin)
    for i, row in enumerate(amplitudes):
        up, down = 2.0 * row.clip(min=0.0).sum(), -2.0 * row.clip(max=0.0).sum()  # 1 − cos spans [0, 2]
        if up <= room_up[i] and down <= room_down[i]:
            continue
        outside = room_up[i] < 0 or room_down[i] < 0
        kept = 0.0 if outside else _kept_fraction(up, down, room_up[i], room_down[i])
        turned = 0.0 if outside else _kept_fraction(down, up, room_up[i], room_down[i])
        sign = -1.0 if turned > kept else 1.0
        amplitudes[i] = sign * max(kept, turned) * row
        said[i] = (
            "stands outside its limits less the margin: not moved"
            if max(kept, turned) == 0.0
            else f"moves {'the other way, ' if sign < 0 else ''}{max(kept, turned):.0%} of the amplitude asked "
            f"(limits [{lower[i]:.3g}, {upper[i]:.3g}] less {margin:g})"
        )
    return MultiSine(trajectory.start, amplitudes, trajectory.frequencies), said


def _kept_fraction(up: float, down: float, room_up: float, room_down: float) -> float:
    """The largest fraction of an excursion (``up`` above the start, ``down`` below) within the rooms."""
    fraction = 1.0
    if up > 0:
        fraction = min(fraction, room_up / up)
    if down > 0:
        fraction = min(fraction, room_down / down)
    return float(np.clip(fraction, 0.0, 1.0))
