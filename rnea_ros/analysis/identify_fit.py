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


def stretch_splits(sums: FoldSums, columns: Sequence[np.ndarray]) -> list[tuple[ChosenSums, ChosenSums]]:
    """(training, test) sums per contiguous stretch of the recording (``fold_sums.StretchSums``): the
    test sums are the stretch's, the training sums all the others'."""
    stretches = sums.stretches
    n = len(stretches.filled) if stretches is not None else 0
    return [
        (ChosenSums.of(stretches, columns, [k for k in range(n) if k != t]), ChosenSums.of(stretches, columns, (t,)))
        for t in range(n)
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


# --- which joint terms: decided per joint, term by term, on held-out folds ---------------------------
RESOLUTION = 0.01  # a term's standard error, as torque, below 1 % of the joint's torque RMS resolves it
# a term makes a joint worse held out when leaving it out lowers the joint's held-out mean square by more
# than this many standard errors of that change over the folds (a change within the folds' own spread is
# no evidence: the calibration loop's joint1 offset, 0.4 % on 1.5 of them, was dropped and its armature
# then came out 12 % off)
WORSE_MARGIN = 2.0


@dataclass(frozen=True)
class TermChoice:
    fitted: list[list[int]]  # per joint, the terms kept (JOINT_TERMS indices)
    why: list[dict[int, str]]  # per joint, each term left out and why
    urdf: np.ndarray  # per joint, the held-out residual RMS of the URDF alone (no term)
    held_out: np.ndarray  # per joint, with the terms kept


def choose_terms(
    pooled: ChosenSums,
    splits: Sequence[tuple[ChosenSums, ChosenSums]],
    candidates: Sequence[Sequence[int]],
    shared: int,
    negative_armature: bool = False,
    free: int = 0,
    stretches: Sequence[tuple[ChosenSums, ChosenSums]] = (),
) -> TermChoice:
    """Per joint, alone (a joint's terms do not depend on another's), which of its ``candidates`` (the
    terms the recording excites) are fitted, one term at a time:

    1. a term that cannot be negative and comes out negative is left out, the most negative first
       (an armature only unless ``negative_armature``: beside the links' inertias it may turn positive);
    2. a term is resolved when its standard error, as torque, is below RESOLUTION of the joint's torque
       RMS, or when leaving it out raises the joint's held-out residual by more than RESOLUTION; of the
       terms not resolved the least resolved is left out, then the rest fitted again (terms trade with
       each other: two correlated terms unresolved together can each be resolved alone);
    3. a term that makes the joint worse held out (leaving it out lowers the held-out mean square by more
       than WORSE_MARGIN standard errors over the folds) is left out, the one whose removal lowers it most
       first; then, while the terms predict held-out samples worse than the URDF alone, the term whose
       removal lowers the residual most;
    4. the same on ``stretches`` (``stretch_splits``: each contiguous stretch of the recording held out
       in turn): while the terms predict them worse than the URDF alone, the term whose removal lowers
       that residual most is left out (a fold's test blocks lie between its training blocks: a term
       standing in for the rigid body's error in the poses recorded looks better there than on motion
       of its own).

    ``shared``: the columns before the terms' in the sums; ``free``: how many of them (a payload's) are
    fitted beside each joint's terms (the fit that will be written holds them: without them a payload's
    torque, several times the terms', was all the folds saw)."""
    urdf = np.sqrt(_fold_total(splits, lambda test, j: test.rr[j]) / np.maximum(_test_count(splits), 1))
    fitted, why, scores = [], [], np.array(urdf)
    for j, candidate in enumerate(candidates):
        terms, reasons = list(candidate), {}
        if pooled.count[j] >= MIN_SAMPLES:
            joint = _JointAlone(pooled, splits, j, shared, free)
            _resolve(joint, terms, reasons, negative_armature)
            scores[j] = _prune(joint, terms, reasons, _JointAlone(pooled, stretches, j, shared, free))
        fitted.append(terms)
        why.append(reasons)
    return TermChoice(fitted, why, urdf, scores)


@dataclass(frozen=True)
class _Folds:
    """A joint's held-out residual: per fold its sum of squares and samples."""

    rss: np.ndarray
    count: np.ndarray

    @property
    def rms(self) -> float:
        return float(np.sqrt(self.rss.sum() / max(self.count.sum(), 1)))

    def lowered_by(self, other: _Folds) -> tuple[float, float]:
        """How much ``other`` lowers the held-out mean square below this one (the folds' mean change),
        and the standard error of that change over the folds (inf with fewer than two folds)."""
        used = self.count > 0
        change = (self.rss[used] - other.rss[used]) / self.count[used]
        if len(change) < 2:
            return float(change.sum()), np.inf
        return float(change.mean()), float(change.std(ddof=1) / np.sqrt(len(change)))


@dataclass(frozen=True)
class _JointAlone:
    """Joint j's own least-squares fits on its terms and the ``free`` first columns."""

    pooled: ChosenSums
    splits: Sequence[tuple[ChosenSums, ChosenSums]]
    j: int
    shared: int
    free: int

    def columns(self, terms: Sequence[int]) -> np.ndarray:
        return np.r_[np.arange(self.free), self.shared + np.array(terms, dtype=int)].astype(int)

    def fit(self, sums: ChosenSums, terms: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Values and standard errors of every column fitted (the free ones first)."""
        columns = self.columns(terms)
        xx, xr = sums.xx[self.j][np.ix_(columns, columns)], sums.xr[self.j][columns]
        diagonal = np.sqrt(np.diag(xx))
        scale = np.where(diagonal > 0.0, diagonal, 1.0)
        inverse = np.linalg.pinv(xx / np.outer(scale, scale), rcond=BASE_TOLERANCE, hermitian=True)
        inverse /= np.outer(scale, scale)
        theta = inverse @ xr
        rss = max(float(sums.rr[self.j] - 2 * theta @ xr + theta @ xx @ theta), 0.0)
        variance = rss / max(int(sums.count[self.j]) - len(columns), 1)
        return theta, np.sqrt(np.maximum(np.diag(inverse), 0.0) * variance)

    def terms(self, terms: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """The pooled fit's values and standard errors of ``terms``."""
        theta, se = self.fit(self.pooled, terms)
        return theta[self.free :], se[self.free :]

    def held_out(self, terms: Sequence[int]) -> _Folds:
        """Its residual on each fold of the fit on the others."""
        columns, rss, count = self.columns(terms), [], []
        for training, test in self.splits:
            theta = self.fit(training, terms)[0] if len(columns) else np.zeros(0)
            rss.append(test.rss(self.j, theta, columns) if test.count[self.j] else 0.0)
            count.append(test.count[self.j])
        return _Folds(np.array(rss), np.array(count))


def _resolve(joint: _JointAlone, terms: list[int], reasons: dict, negative_armature: bool) -> None:
    pooled, j, shared = joint.pooled, joint.j, joint.shared
    n, torque_rms = pooled.count[j], max(float(np.sqrt(pooled.mm[j] / max(pooled.count[j], 1))), 1e-9)
    while terms:
        theta, se = joint.terms(terms)
        signs = [
            (theta[i] / max(se[i], 1e-300), k)
            for i, k in enumerate(terms)
            if JOINT_TERMS[k].nonnegative
            and theta[i] < 0.0
            and (negative_armature or JOINT_TERMS[k].derivative != "qdd")
        ]
        if signs:
            _, k = min(signs)
            value = theta[terms.index(k)]
            reasons[k] = f"{value:.3g} < 0: {JOINT_TERMS[k].nonnegative}"
            terms.remove(k)
            continue
        rms = np.sqrt(np.diag(pooled.xx[j])[[shared + k for k in terms]] / n)
        resolution = se * rms / (RESOLUTION * torque_rms)
        unresolved = []
        if (resolution > 1.0).any():
            with_all = joint.held_out(terms).rms
            poor = [k for i, k in enumerate(terms) if resolution[i] > 1.0]
            for without, k in _leaving_out(joint, terms, poor):
                if not without.rms > with_all * (1.0 + RESOLUTION):
                    i = terms.index(k)
                    unresolved.append((resolution[i], k, se[i], with_all, without.rms))
        if not unresolved:
            return
        _, k, error, with_all, without = max(unresolved)
        reasons[k] = (
            f"standard error {error:.3g} too large for this recording, and the held-out residual without it "
            f"{without:.4g} within {RESOLUTION:.0%} of {with_all:.4g} with it"
        )
        terms.remove(k)


def _prune(joint: _JointAlone, terms: list[int], reasons: dict, stretches: _JointAlone) -> float:
    """Leaves out the terms that make the joint worse held out (see ``choose_terms``: ``joint`` on the
    folds, ``stretches`` on the contiguous stretches); returns the joint's held-out residual RMS on the
    folds with the terms kept (the URDF's without any)."""
    score = joint.held_out(terms)
    while terms:
        worse = []
        for without, k in _leaving_out(joint, terms, terms):
            lowered, error = score.lowered_by(without)
            if lowered > WORSE_MARGIN * error and lowered > 1e-12 * score.rms**2:
                worse.append((without.rms, k, without, lowered, lowered / error if error > 0.0 else np.inf))
        if not worse:
            break
        _, k, without, lowered, errors = min(worse)
        reasons[k] = (
            f"left out: it makes the joint's held-out residual worse ({score.rms:.4g} with it, {without.rms:.4g} "
            f"without; the mean square {lowered:.3g} lower without it, {errors:.1f} standard errors over the folds)"
        )
        terms.remove(k)
        score = without
    score = _not_worse_than_urdf(joint, terms, reasons, score, "held-out samples")
    if terms and stretches.splits:
        what, kept = "held-out stretches of the recording", len(terms)
        _not_worse_than_urdf(stretches, terms, reasons, stretches.held_out(terms), what)
        if len(terms) < kept:
            score = joint.held_out(terms)
    return score.rms


def _not_worse_than_urdf(joint: _JointAlone, terms: list[int], reasons: dict, score: _Folds, what: str) -> _Folds:
    """While the joint's terms predict ``joint``'s held-out samples worse than the URDF alone, leaves out
    the term whose removal lowers that residual most; returns the residual with the terms kept."""
    urdf = joint.held_out([])
    while terms and not score.rms <= urdf.rms:
        without, k = min(_leaving_out(joint, terms, terms), key=lambda trial: trial[0].rms)
        reasons[k] = (
            f"left out: with it the joint's terms predict {what} worse than the URDF "
            f"({score.rms:.6g} with it, the URDF's {urdf.rms:.6g}: {score.rms - urdf.rms:.3g} more; "
            f"{without.rms:.6g} without it)"
        )
        terms.remove(k)
        score = without
    return score


def _leaving_out(joint: _JointAlone, terms: list[int], out: Sequence[int]) -> list[tuple[_Folds, int]]:
    """For each term of ``out``: the joint's held-out residual with ``terms`` but that one, and the term."""
    return [(joint.held_out([t for t in terms if t != k]), k) for k in out]


def _fold_total(splits, value) -> np.ndarray:
    return np.sum([[value(test, j) for j in range(len(test.count))] for _, test in splits], axis=0)


def _test_count(splits) -> np.ndarray:
    return np.sum([test.count for _, test in splits], axis=0)


def links_with_information(
    sums: ChosenSums, fitted: Sequence[Sequence[int]], columns: Sequence[np.ndarray]
) -> tuple[list[int], list[int]]:
    """Which links (each its 10 shared ``columns``) the recording says anything about, beside the
    joint terms ``fitted`` and the other links: a link whose columns add no rank to the rest's (no joint
    torque depends on its parameters, or only as another column does: the first link of an arm turning
    about a vertical axis, whose only torque is its inertia about that axis, its joint's armature's
    column) is one the data do not determine, and keeps the URDF's values exactly. Each link is
    tested against the joint terms and the links before it in ``columns`` (the tree's order): of two
    links that share their directions, the nearer the base keeps them. Returns
    (informative, silent) as indices into ``columns``."""
    shared = np.concatenate(columns) if len(columns) else np.zeros(0, dtype=int)
    P, S = sums.xx.shape[1] - len(JOINT_TERMS), len(shared)
    index, local, size = [], [], S
    for f in fitted:
        index.append(np.r_[np.arange(S), size + np.arange(len(f))].astype(int))
        local.append(np.r_[shared, P + np.array(f, dtype=int)].astype(int))
        size += len(f)
    counts = np.maximum(sums.count, 1)
    weights = np.where(sums.count >= MIN_SAMPLES, counts / np.maximum(sums.mm, 1e-18 * counts), 0.0)
    A = weighted_fit(sums.xx, sums.xr, weights, index, local, size, False).A
    diagonal = np.sqrt(np.diag(A))
    scaled = A / np.outer(*(2 * [np.where(diagonal > 0.0, diagonal, 1.0)]))
    floor = BASE_TOLERANCE * max(float(np.linalg.eigvalsh(scaled)[-1]), 1e-300) if size else 0.0

    def rank(keep: np.ndarray) -> int:
        return int((np.linalg.eigvalsh(scaled[np.ix_(keep, keep)]) > floor).sum()) if len(keep) else 0

    # each link against the joint terms and the links before it (``columns`` in the tree's order: its
    # parent's before it): a gripper finger fixed to its parent spans the parent's columns, and testing
    # each link against all the others left the wrist's last link out (the finger's bounds then kept both)
    chosen, silent = np.arange(S, size), []
    before = rank(chosen)
    for l in range(len(columns)):
        trial = np.r_[np.arange(10 * l, 10 * l + 10), chosen]
        now = rank(trial)
        if now > before:
            chosen, before = trial, now
        else:
            silent.append(l)
    return [l for l in range(len(columns)) if l not in silent], sorted(silent)
