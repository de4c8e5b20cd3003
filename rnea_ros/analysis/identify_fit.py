"""The identification's least-squares fit on running sums (no ROS): the pooled sums or one fold's.

A fit is the joint terms fitted (per joint, which of JOINT_TERMS) and the shared columns (a
payload's, or the 10 of each link identified): the joints are solved together, each weighted by
its residual variance (two passes), and with links every link is then kept a rigid body
(``link_inertia.consistent_estimate``). ``held_out`` fits it on all folds but one and tests it on
that one, each in turn: what chooses between joint terms alone and joint terms + the links' inertias.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rnea_ros.analysis import link_inertia
from rnea_ros.analysis.fold_sums import BASE_TOLERANCE, FOLDS, FoldSums
from rnea_ros.dynamics.regressor import JOINT_TERMS

MIN_SAMPLES = 10  # a joint with fewer usable samples (in the sums fitted) is left out of the fit
# joints weighted by (1 / their residual variance) to this power: 1 the maximum-likelihood weighting;
# 0 (ordinary least squares, FIGAROH's) and ½ held out worse on the real Panda (benchmarks/real_recording_ablation.py)
WEIGHT_EXPONENT = 1.0


@dataclass(frozen=True)
class ChosenSums:
    """Per joint, the sums over its chosen Coulomb shape's columns [shared, one per term]."""

    xx: np.ndarray  # (joints, W, W)
    xr: np.ndarray  # (joints, W)
    rr: np.ndarray  # (joints,)
    mm: np.ndarray  # (joints,) Σ measured²
    count: np.ndarray  # (joints,)

    @classmethod
    def of(cls, sums: FoldSums, columns: Sequence[np.ndarray], folds: Sequence[int]) -> ChosenSums:
        folds = list(folds)
        xx, xr = sums.xx[folds].sum(axis=0), sums.xr[folds].sum(axis=0)
        return cls(
            np.stack([xx[j][np.ix_(c, c)] for j, c in enumerate(columns)]),
            np.stack([xr[j][c] for j, c in enumerate(columns)]),
            sums.rr[folds].sum(axis=0),
            sums.mm[folds].sum(axis=0),
            sums.count[folds].sum(axis=0),
        )

    def rss(self, j: int, theta: np.ndarray, local: np.ndarray) -> float:
        """Σ (r − x θ)² of joint j over these sums, θ on its ``local`` columns."""
        xx, xr = self.xx[j][np.ix_(local, local)], self.xr[j][local]
        return max(float(self.rr[j] - 2 * theta @ xr + theta @ xx @ theta), 0.0)


@dataclass(frozen=True)
class Fit:
    theta: np.ndarray
    covariance: np.ndarray
    condition: float
    A: np.ndarray  # the weighted normal equations A θ = b
    b: np.ndarray
    combined: np.ndarray  # per parameter: determined only together with others
    rank: int


@dataclass(frozen=True)
class LinkPriors:
    """The links fitted: their URDF π and the margin each keeps (``link_inertia.margin``), in the
    order of their shared columns."""

    priors: list[np.ndarray]
    floors: list[np.ndarray]


@dataclass(frozen=True)
class Fitted:
    fit: Fit  # the unconstrained weighted least squares
    theta: np.ndarray  # its solution, or with links the consistent one
    index: list[np.ndarray]  # per joint: the global parameter of each of its local columns
    local: list[np.ndarray]  # per joint: its columns among the chosen sums' [shared, one per term]
    rss: np.ndarray  # per joint, at theta
    iterations: int  # of the consistent estimate (0 without links)
    shared: int  # how many shared parameters lead theta


def fit_sums(sums: ChosenSums, fitted: Sequence[Sequence[int]], shared: np.ndarray, links: LinkPriors | None) -> Fitted:
    """The fit of these sums: per joint the terms ``fitted`` (indices into JOINT_TERMS) and the
    ``shared`` columns (indices among the first of the sums' columns); with ``links`` (their
    columns are ``shared``) every link kept a rigid body with its margin."""
    n_joints, S = len(fitted), len(shared)
    P = sums.xx.shape[1] - len(JOINT_TERMS)  # the shared columns come first, then one per term
    index, local, size = [], [], S
    for j in range(n_joints):
        index.append(np.r_[np.arange(S), size + np.arange(len(fitted[j]))].astype(int))
        local.append(np.r_[shared, P + np.array(fitted[j], dtype=int)].astype(int))
        size += len(fitted[j])
    usable = sums.count >= MIN_SAMPLES
    counts = np.maximum(sums.count, 1)
    weights = np.where(usable, counts / np.maximum(sums.mm, 1e-18 * counts), 0.0) ** WEIGHT_EXPONENT  # 1 / torque²
    for _ in range(2):
        fit = weighted_fit(sums.xx, sums.xr, weights, index, local, size, links is not None)
        rss = np.array([sums.rss(j, fit.theta[index[j]], local[j]) for j in range(n_joints)])
        dof = np.maximum(sums.count - np.array([len(f) for f in fitted]) - S, 1)
        weights = np.where(usable, 1.0 / np.maximum(rss / dof, 1e-30), 0.0) ** WEIGHT_EXPONENT
    theta, iterations = fit.theta, 0
    if links is not None:
        theta, iterations = link_inertia.consistent_estimate(fit.A, fit.b, links.priors, floors=links.floors)
        rss = np.array([sums.rss(j, theta[index[j]], local[j]) for j in range(n_joints)])
    return Fitted(fit, theta, index, local, rss, iterations, S)


def fold_splits(sums: FoldSums, columns: Sequence[np.ndarray]) -> list[tuple[ChosenSums, ChosenSums]]:
    """(training, test) sums per fold: the test sums are the fold's, the training sums all the others'."""
    return [
        (ChosenSums.of(sums, columns, [k for k in range(FOLDS) if k != test]), ChosenSums.of(sums, columns, (test,)))
        for test in range(FOLDS)
    ]


def held_out(
    splits: Sequence[tuple[ChosenSums, ChosenSums]],
    fitted: Sequence[Sequence[int]],
    shared: np.ndarray,
    links: LinkPriors | None,
) -> np.ndarray:
    """Per joint, the residual RMS on each split's test sums of the fit on its training sums
    (``splits``: (training, test) per fold)."""
    rss, count = np.zeros(len(fitted)), np.zeros(len(fitted))
    for training, test in splits:
        if not test.count.any():  # a recording shorter than FOLDS blocks: an empty fold
            continue
        result = fit_sums(training, fitted, shared, links)
        for j in range(len(fitted)):
            rss[j] += test.rss(j, result.theta[result.index[j]], result.local[j])
        count += test.count
    return np.sqrt(rss / np.maximum(count, 1))


def weighted_fit(xx, xr, weights, index, local, size, links: bool) -> Fit:
    """θ minimising Σ_j w_j |r_j − X_j θ|², its covariance (with w_j = 1/σ_j²), the condition
    number of the Jacobi-scaled normal matrix and, with links, which parameters the recording
    determines only in combination with others (the scaled matrix's null space holds them:
    the least-squares solution there is the minimum-norm one, not information)."""
    A, b = np.zeros((size, size)), np.zeros(size)
    for j, w in enumerate(weights):
        if w > 0.0:
            g, loc = index[j], local[j]
            A[np.ix_(g, g)] += w * xx[j][np.ix_(loc, loc)]
            b[g] += w * xr[j][loc]
    if size == 0:
        return Fit(np.zeros(0), np.zeros((0, 0)), 1.0, A, b, np.zeros(0, dtype=bool), 0)
    diagonal = np.sqrt(np.diag(A))
    scale = np.where(diagonal > 0.0, diagonal, 1.0)
    scaled = A / np.outer(scale, scale)
    combined, rank = np.zeros(size, dtype=bool), size
    if links:
        eigenvalues, vectors = np.linalg.eigh(scaled)
        kept = eigenvalues > BASE_TOLERANCE * eigenvalues[-1]
        rank = int(kept.sum())
        combined = np.linalg.norm(vectors[:, ~kept], axis=1) > 0.05
        inverse = (vectors[:, kept] / eigenvalues[kept]) @ vectors[:, kept].T
        condition = float(eigenvalues[-1] / eigenvalues[kept][0])
    else:
        inverse = np.linalg.pinv(scaled)
        condition = float(np.linalg.cond(scaled))
    theta = inverse @ (b / scale) / scale
    covariance = inverse / np.outer(scale, scale)
    return Fit(theta, covariance, condition, A, b, combined, rank)
