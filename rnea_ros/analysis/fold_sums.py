"""The identification's running sums (no ROS): normal equations per joint and per fold, and what
the friction plot needs per velocity bin; memory does not grow with the recording.

Samples go to ``FOLDS`` folds in turn, in blocks of ``FOLD_SAMPLES``: a fit on all folds but one is
tested on that one, each fold in turn (the held-out residual that chooses the Coulomb shapes and
whether the links' inertias are written). With two folds each fit saw half the recording: on the
Panda without its hand, joint 1's held-out residual with the links came out 0.344 or 0.385 N·m
(joint terms alone: 0.36) as the last 50 ms of the training part were differentiated one-sided or
not, and the links were written or not by chance; on the last 30 % of the recording they are 7 %
better there.
"""

from __future__ import annotations

import numpy as np

FOLD_SAMPLES = 1000  # samples are split into blocks of this many, each block to the next fold
FOLDS = 5  # each held-out fit sees 80 % of the recording
STRETCHES = 10  # at most this many contiguous stretches (two neighbours merged into one when there would be more)
BASE_TOLERANCE = 1e-9  # eigenvalues of a scaled normal matrix below this × the largest are unidentified
_MAGNITUDES = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0]
VELOCITY_EDGES = np.array([-m for m in reversed(_MAGNITUDES)] + [0.0] + _MAGNITUDES)  # rad/s: friction plot bins


class FoldSums:
    """Per fold and joint: Σ x xᵀ, Σ x r, Σ r², Σ measured², the rows counted; per joint and
    velocity bin: Σ x, Σ r, the rows counted."""

    def __init__(self, joints: int, width: int, stretches: bool = True) -> None:
        """``stretches``: also keep ``StretchSums`` (what chooses the joint terms needs them)."""
        self.samples = 0
        self.count = np.zeros((FOLDS, joints), dtype=np.int64)
        self.xx = np.zeros((FOLDS, joints, width, width))
        self.xr = np.zeros((FOLDS, joints, width))
        self.rr = np.zeros((FOLDS, joints))
        self.mm = np.zeros((FOLDS, joints))
        self.binned_x = np.zeros((joints, len(VELOCITY_EDGES) + 1, width))
        self.binned_r = np.zeros((joints, len(VELOCITY_EDGES) + 1))
        self.binned_count = np.zeros((joints, len(VELOCITY_EDGES) + 1), dtype=np.int64)
        self.stretches = StretchSums(joints, width) if stretches else None

    def add(self, x: np.ndarray, r: np.ndarray, measured: np.ndarray, ok: np.ndarray, velocity: np.ndarray) -> None:
        """Rows x (N, joints, width) and residuals r (N, joints), zero where not ``ok``."""
        bins = np.digitize(velocity, VELOCITY_EDGES)
        for j in range(r.shape[1]):
            rows = ok[:, j]
            np.add.at(self.binned_x[j], bins[rows, j], x[rows, j])
            np.add.at(self.binned_r[j], bins[rows, j], r[rows, j])
            np.add.at(self.binned_count[j], bins[rows, j], 1)
        fold = ((self.samples + np.arange(len(r))) // FOLD_SAMPLES) % FOLDS
        self.samples += len(r)
        active = np.flatnonzero(ok.any(axis=0))  # the other joints' rows are all zero (not in the recording)
        for k in range(FOLDS):
            rows = fold == k
            self.count[k] += ok[rows].sum(axis=0)
            by_joint = x[rows][:, active].transpose(1, 2, 0)  # (joints, columns, N): one matrix product per joint
            self.xx[k][active] += by_joint @ by_joint.transpose(0, 2, 1)
            self.xr[k][active] += (by_joint @ r[rows][:, active].T[:, :, None])[..., 0]
            self.rr[k] += (r[rows] ** 2).sum(axis=0)
            self.mm[k] += (np.where(ok[rows], measured[rows], 0.0) ** 2).sum(axis=0)
        if self.stretches is not None:
            self.stretches.add(x, r, measured, ok)

    def comparable(self, least: int = 10) -> np.ndarray:
        """Per joint: whether at least two folds hold ``least`` of its rows (a recording shorter than
        FOLDS blocks leaves the last folds empty: they are neither fitted on nor tested)."""
        return (self.count >= least).sum(axis=0) >= 2

    def merge(self, other: FoldSums) -> None:
        """As if ``other``'s samples had been added here."""
        self.samples += other.samples
        self.binned_x += other.binned_x
        self.binned_r += other.binned_r
        self.binned_count += other.binned_count
        self.count += other.count
        self.xx += other.xx
        self.xr += other.xr
        self.rr += other.rr
        self.mm += other.mm
        if self.stretches is not None:
            self.stretches.merge(other.stretches)

    def held_out_rms(self, j: int, columns: np.ndarray) -> float:
        """Joint j fitted alone on these columns: its residual RMS on each fold, fitted on the others."""
        return float(np.sqrt(self.held_out_folds(j, columns).sum() / max(self.count[:, j].sum(), 1)))

    def held_out_folds(self, j: int, columns: np.ndarray) -> np.ndarray:
        """Joint j fitted alone on these columns: per fold, its residual sum of squares there, fitted
        on the others."""
        rss = np.zeros(FOLDS)
        for test in range(FOLDS):
            xx = (self.xx[:, j].sum(axis=0) - self.xx[test, j])[np.ix_(columns, columns)]
            diagonal = np.sqrt(np.diag(xx))
            scale = np.where(diagonal > 0.0, diagonal, 1.0)
            xr = (self.xr[:, j].sum(axis=0) - self.xr[test, j])[columns]
            theta = np.linalg.pinv(xx / np.outer(scale, scale), rcond=BASE_TOLERANCE) @ (xr / scale)
            theta /= scale
            xx_t, xr_t = self.xx[test, j][np.ix_(columns, columns)], self.xr[test, j][columns]
            rss[test] = max(self.rr[test, j] - 2 * theta @ xr_t + theta @ xx_t @ theta, 0.0)
        return rss

    def held_out_together(self, columns: list[np.ndarray], usable: np.ndarray, shared: int) -> np.ndarray:
        """Per joint: the held-out residual RMS of the whole fit (the first ``shared`` columns are
        every joint's, then ``columns[j]``'s own), each fold fitted on the others, each joint weighted
        by its torque's mean square."""
        rss = self.held_out_together_folds(columns, usable, shared).sum(axis=0)
        return np.sqrt(rss / np.maximum(self.count.sum(axis=0), 1))

    def held_out_together_folds(self, columns: list[np.ndarray], usable: np.ndarray, shared: int) -> np.ndarray:
        """(FOLDS, joints): as ``held_out_together``, each joint's residual sum of squares per fold."""
        n = len(columns)
        own = len(columns[0]) - shared if n else 0
        size = shared + own * n
        rss = np.zeros((FOLDS, n))
        weights = np.where(usable, self.count.sum(axis=0) / np.maximum(self.mm.sum(axis=0), 1e-30), 0.0)
        blocks = [np.r_[np.arange(shared), shared + own * j + np.arange(own)].astype(int) for j in range(n)]
        xx_all, xr_all = self.xx.sum(axis=0), self.xr.sum(axis=0)
        for test in range(FOLDS):
            A, b = np.zeros((size, size)), np.zeros(size)
            for j in np.flatnonzero(usable):
                g, c = blocks[j], columns[j]
                A[np.ix_(g, g)] += weights[j] * (xx_all[j] - self.xx[test, j])[np.ix_(c, c)]
                b[g] += weights[j] * (xr_all[j] - self.xr[test, j])[c]
            diagonal = np.sqrt(np.diag(A))
            scale = np.where(diagonal > 0.0, diagonal, 1.0)
            theta = (
                np.linalg.pinv(A / np.outer(scale, scale), rcond=BASE_TOLERANCE, hermitian=True) @ (b / scale) / scale
            )
            for j in np.flatnonzero(usable):
                t, c = theta[blocks[j]], columns[j]
                xx, xr = self.xx[test, j][np.ix_(c, c)], self.xr[test, j][c]
                rss[test, j] = max(self.rr[test, j] - 2 * t @ xr + t @ xx @ t, 0.0)
        return rss


class StretchSums:
    """Per contiguous stretch of the recording, in order: Σ x xᵀ, Σ x r, Σ r², Σ measured², the rows
    counted (as ``FoldSums``' per fold). A stretch holds ``length`` samples (the last fewer); when a
    new one would make more than STRETCHES, each two neighbours become one and ``length`` doubles."""

    def __init__(self, joints: int, width: int) -> None:
        self.joints, self.width, self.length = joints, width, FOLD_SAMPLES
        self.filled: list[int] = []  # samples per stretch
        self.sums: list[list[np.ndarray]] = []  # per stretch: [count, xx, xr, rr, mm]

    def _new(self) -> list[np.ndarray]:
        j, w = self.joints, self.width
        return [np.zeros(j, dtype=np.int64), np.zeros((j, w, w)), np.zeros((j, w)), np.zeros(j), np.zeros(j)]

    def add(self, x: np.ndarray, r: np.ndarray, measured: np.ndarray, ok: np.ndarray) -> None:
        start = 0
        while start < len(r):
            if not self.filled or self.filled[-1] >= self.length:
                if len(self.filled) == STRETCHES:
                    self._halve()
                if not self.filled or self.filled[-1] >= self.length:
                    self.filled.append(0)
                    self.sums.append(self._new())
            end = min(len(r), start + self.length - self.filled[-1])
            rows = slice(start, end)
            active = np.flatnonzero(ok[rows].any(axis=0))
            by_joint = x[rows][:, active].transpose(1, 2, 0)
            count, xx, xr, rr, mm = self.sums[-1]
            count += ok[rows].sum(axis=0)
            xx[active] += by_joint @ by_joint.transpose(0, 2, 1)
            xr[active] += (by_joint @ r[rows][:, active].T[:, :, None])[..., 0]
            rr += (r[rows] ** 2).sum(axis=0)
            mm += (np.where(ok[rows], measured[rows], 0.0) ** 2).sum(axis=0)
            self.filled[-1] += end - start
            start = end

    def _halve(self) -> None:
        """Each two neighbouring stretches become one."""
        filled, sums = [], []
        for k in range(0, len(self.filled), 2):
            pair = range(k, min(k + 2, len(self.filled)))
            filled.append(sum(self.filled[i] for i in pair))
            sums.append([sum(self.sums[i][a] for i in pair) for a in range(5)])
        self.filled, self.sums, self.length = filled, sums, 2 * self.length

    def merge(self, other: StretchSums) -> None:
        """``other``'s stretches after these (as if its samples had been added here)."""
        other = StretchSums._copy(other)
        while other.length < self.length:
            other._halve()
        while self.length < other.length:
            self._halve()
        self.filled += other.filled
        self.sums += other.sums
        while len(self.filled) > STRETCHES:
            self._halve()

    @staticmethod
    def _copy(other: StretchSums) -> StretchSums:
        copy = StretchSums(other.joints, other.width)
        copy.length, copy.filled = other.length, list(other.filled)
        copy.sums = [[a.copy() for a in stretch] for stretch in other.sums]
        return copy

    def _stacked(self, a: int) -> np.ndarray:
        if self.sums:
            return np.stack([stretch[a] for stretch in self.sums])
        return self._new()[a][None][:0]

    # the arrays ``identify_fit.ChosenSums.of`` reads, per stretch (as FoldSums' per fold)
    count = property(lambda self: self._stacked(0))
    xx = property(lambda self: self._stacked(1))
    xr = property(lambda self: self._stacked(2))
    rr = property(lambda self: self._stacked(3))
    mm = property(lambda self: self._stacked(4))
