"""The Coulomb term's shape per joint, chosen by the residual on held-out samples (no ROS).

Each shape, a tanh width among ``WIDTHS`` and a lead among ``LEADS`` (0: the friction of today's q̇;
> 0: friction that settles within a time constant, as MuJoCo's soft friction loss does exactly and
a joint's presliding roughly, follows q̇ that far ahead), is fitted on all folds but one and tested
on that one, each in turn (``fold_sums``). With shared columns (links, payload) the joints are fitted
together: each joint's shape is then chosen by the whole fit's held-out residual, one joint at a time.

A shape is taken over one earlier in ``SHAPES`` (no lead before a lead, then the narrower width: dry
friction, sign(q̇), is the law assumed until the data show otherwise) only when it *beats* it: its
held-out score lower by more than the spread of the difference over the folds (one standard error
of the sum), and by more than ``RESOLUTION`` of the score. Scores nearer than that are ties, and
ties go to the earlier shape, so the choice does not follow the last digits of the sums.
"""

from __future__ import annotations

import numpy as np

from rnea_ros.analysis.fold_sums import FoldSums
from rnea_ros.dynamics import regressor

WIDTHS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2)  # rad/s: the tanh widths tried per joint
LEADS = (0.0, 0.001, 0.002, 0.005, 0.01, 0.02)  # s: the Coulomb term's leads tried per joint (with each width)
SHAPES = tuple((width, lead) for lead in LEADS for width in WIDTHS)  # in the order preferred on a tie
# a lead is taken only when it lowers the held-out residual by more than this fraction: with friction
# that settles at once a lead fits as well and trades with the armature (10–16 % off on the stiff arm)
LEAD_GAIN = 0.05
SHORTLIST = 8  # with shared columns: the shapes per joint tried with the whole fit (the best fitted alone)
# held-out scores that differ by less than this fraction are a tie: the whole fit's normal equations
# are solved down to eigenvalues of BASE_TOLERANCE (1e-9) × the largest, so its scores carry rounding
# errors up to ~eps / 1e-9 ≈ 2e-7 of themselves (seed 2's arm, the torques' 12th digit changed: 5e-8)
RESOLUTION = 1e-6


def shape_columns(k: int, shared: int, shapes: int) -> np.ndarray:
    """A joint's columns with the k-th shape: [shared, one per term]."""
    return np.r_[np.arange(shared), shared + regressor.chosen_columns(k, shapes)].astype(int)


def choose_shapes(sums: FoldSums, shapes: tuple, shared: int) -> tuple[np.ndarray, np.ndarray]:
    """(the chosen shape per joint, the held-out residual RMS per joint and shape: NaN where not
    tried). Per joint, the shape whose fit (the joint alone, every column of it) predicts the held-out
    folds best (``_preferred``); with ``shared`` columns, then by the whole fit."""
    K, n_joints = len(shapes), sums.count.shape[1]
    held_out = np.full((n_joints, K), np.nan)
    chosen, simplest = np.zeros(n_joints, dtype=int), np.zeros(n_joints, dtype=int)
    for j in range(n_joints):
        if K > 1 and sums.comparable()[j]:
            folds = np.array([sums.held_out_folds(j, shape_columns(k, shared, K)) for k in range(K)])
            held_out[j] = np.sqrt(folds.sum(axis=1) / max(sums.count[:, j].sum(), 1))
            folds = folds[:, sums.count[:, j] > 0]
            simplest[j] = _simplest(folds, shapes)
            chosen[j] = _preferred(folds, held_out[j], shapes)
    if K > 1 and shared and n_joints:
        shortlists = [_shortlist(held_out[j], [chosen[j], simplest[j]]) for j in range(n_joints)]
        chosen = _choose_together(sums, shapes, shared, chosen, held_out, shortlists)
    return chosen, held_out


def _choose_together(
    sums: FoldSums,
    shapes: tuple,
    shared: int,
    chosen: np.ndarray,
    held_out: np.ndarray,
    shortlists: list[list[int]],
    sweeps: int = 2,
) -> np.ndarray:
    """Each joint's shape among its ``shortlists``' by the held-out residual of the whole fit, one
    joint at a time (a joint alone, with its own copy of the shared columns, fits too freely to tell);
    ``held_out`` gets the joint's own held-out residual per shape tried."""
    chosen, K = chosen.copy(), len(shapes)
    usable = sums.comparable()
    counts, squares = sums.count.sum(axis=0), np.maximum(sums.mm.sum(axis=0), 1e-30)
    tested = sums.count[:, usable].sum(axis=1) > 0
    for _ in range(sweeps):
        for j in np.flatnonzero(usable):
            folds, own = np.full((K, int(tested.sum())), np.inf), np.full(K, np.inf)
            for k in shortlists[j]:
                chosen[j] = k
                rss = sums.held_out_together_folds([shape_columns(c, shared, K) for c in chosen], usable, shared)
                folds[k] = (rss / squares).sum(axis=1)[tested]  # the joints weighted as the fit weights them
                own[k] = np.sqrt(rss[:, j].sum() / max(counts[j], 1))
            held_out[j] = own
            chosen[j] = _preferred(folds, own, shapes)
    return chosen


def _shortlist(alone: np.ndarray, chosen_alone: list[int]) -> list[int]:
    """The shapes with the least held-out residual of the joint fitted alone: the SHORTLIST best and
    any within RESOLUTION of the last of them, and those chosen fitted alone (with and without a
    lead: a lead must beat the latter)."""
    alone = np.where(np.isfinite(alone), alone, np.inf)
    last = np.sort(alone)[min(SHORTLIST, len(alone)) - 1]
    return sorted({*np.flatnonzero(alone <= last * (1.0 + RESOLUTION)).tolist(), *chosen_alone})


def _preferred(folds: np.ndarray, own: np.ndarray, shapes: tuple) -> int:
    """Of the shapes without a lead, the first in ``shapes`` that none beats (``_beats``: on the
    held-out scores per fold ``folds``, (shapes, folds), non-finite where not tried); a lead only when
    it beats that one and lowers the joint's ``own`` held-out residual by more than LEAD_GAIN: then the
    first such lead that none of them beats."""
    tried = np.isfinite(folds).all(axis=1)
    simplest = _simplest(folds, shapes)
    leads = [
        k
        for k, (_, lead) in enumerate(shapes)
        if lead > 0.0 and tried[k] and own[k] < (1.0 - LEAD_GAIN) * own[simplest] and _beats(folds, k, simplest)
    ]
    return _first_unbeaten(folds, leads) if leads else simplest


def _simplest(folds: np.ndarray, shapes: tuple) -> int:
    """Of the shapes without a lead tried, the first that none of them beats (none tried: the first)."""
    tried = np.isfinite(folds).all(axis=1)
    without_lead = [k for k, (_, lead) in enumerate(shapes) if lead == 0.0 and tried[k]]
    return _first_unbeaten(folds, without_lead) if without_lead else 0


def _first_unbeaten(folds: np.ndarray, candidates: list[int]) -> int:
    """The first of ``candidates`` that no other of them beats (the one with the least score is
    never beaten: there is always one)."""
    return next(k for k in candidates if not any(_beats(folds, m, k) for m in candidates if m != k))


def _beats(folds: np.ndarray, a: int, b: int) -> bool:
    """Whether shape a's held-out score (the sum over the folds) is below b's by more than the spread
    of their difference over the folds (the sum's standard error) and by more than RESOLUTION of b's."""
    d = folds[b] - folds[a]
    spread = np.sqrt(len(d)) * np.std(d, ddof=1) if len(d) > 1 else 0.0
    return bool(d.sum() > max(spread, RESOLUTION * folds[b].sum()))
