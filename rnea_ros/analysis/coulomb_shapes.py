"""The Coulomb term's shape per joint, chosen by the residual on held-out samples (no ROS).

Each shape, a tanh width among ``WIDTHS`` and a lead among ``LEADS`` (0: the friction of today's q̇;
> 0: friction that settles within a time constant, as MuJoCo's soft friction loss does exactly and
a joint's presliding roughly, follows q̇ that far ahead), is fitted on all folds but one and tested
on that one, each in turn (``fold_sums``). With shared columns (links, payload) the joints are fitted
together: each joint's shape is then chosen by the whole fit's held-out residual, one joint at a time.
"""

from __future__ import annotations

import numpy as np

from rnea_ros.analysis.fold_sums import FoldSums
from rnea_ros.dynamics import regressor

WIDTHS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2)  # rad/s: the tanh widths tried per joint
LEADS = (0.0, 0.001, 0.002, 0.005, 0.01, 0.02)  # s: the Coulomb term's leads tried per joint (with each width)
SHAPES = tuple((width, lead) for lead in LEADS for width in WIDTHS)
# a lead is taken only when it lowers the held-out residual by more than this fraction: with friction
# that settles at once a lead fits as well and trades with the armature (10–16 % off on the stiff arm)
LEAD_GAIN = 0.05
SHORTLIST = 8  # with shared columns: the shapes per joint tried with the whole fit (the best fitted alone)


def shape_columns(k: int, shared: int, shapes: int) -> np.ndarray:
    """A joint's columns with the k-th shape: [shared, one per term]."""
    return np.r_[np.arange(shared), shared + regressor.chosen_columns(k, shapes)].astype(int)


def choose_shapes(sums: FoldSums, shapes: tuple, shared: int) -> tuple[np.ndarray, np.ndarray]:
    """(the chosen shape per joint, the held-out residual RMS per joint and shape: NaN where not
    tried). Per joint, the shape whose fit (the joint alone, every column of it) predicts the held-out
    folds best; with ``shared`` columns, then by the whole fit."""
    K, n_joints = len(shapes), sums.count.shape[1]
    held_out = np.full((n_joints, K), np.nan)
    chosen = np.zeros(n_joints, dtype=int)
    for j in range(n_joints):
        if K > 1 and sums.comparable()[j]:
            held_out[j] = [sums.held_out_rms(j, shape_columns(k, shared, K)) for k in range(K)]
            finite = np.where(np.isfinite(held_out[j]), held_out[j], np.inf)
            chosen[j] = _simplest_best(finite, finite, shapes)
    if K > 1 and shared and n_joints:
        chosen = _choose_together(sums, shapes, shared, chosen, held_out)
    return chosen, held_out


def _choose_together(
    sums: FoldSums, shapes: tuple, shared: int, chosen: np.ndarray, held_out: np.ndarray, sweeps: int = 2
) -> np.ndarray:
    """Each joint's shape by the held-out residual of the whole fit, one joint at a time (a joint
    alone, with its own copy of the shared columns, fits too freely to tell); ``held_out`` gets
    the joint's own held-out residual per shape tried."""
    chosen, K = chosen.copy(), len(shapes)
    usable = sums.comparable()
    shortlists = [_shortlist(held_out[j], shapes) for j in range(len(chosen))]
    counts, squares = sums.count.sum(axis=0), np.maximum(sums.mm.sum(axis=0), 1e-30)
    for _ in range(sweeps):
        for j in np.flatnonzero(usable):
            scores, own = np.full(K, np.inf), np.full(K, np.inf)
            for k in shortlists[j]:
                chosen[j] = k
                rms = sums.held_out_together([shape_columns(c, shared, K) for c in chosen], usable, shared)
                scores[k] = float(np.sum(rms**2 * counts / squares))
                own[k] = rms[j]
            held_out[j] = own
            chosen[j] = _simplest_best(scores, own, shapes)
    return chosen


def _shortlist(alone: np.ndarray, shapes: tuple) -> list[int]:
    """The SHORTLIST shapes with the least held-out residual of the joint fitted alone, and
    the best without a lead (a lead must beat it)."""
    alone = np.where(np.isfinite(alone), alone, np.inf)
    without_lead = [k for k, (_, lead) in enumerate(shapes) if lead == 0.0]
    best_without = without_lead[int(np.argmin(alone[without_lead]))]
    return sorted({*np.argsort(alone, kind="stable")[:SHORTLIST].tolist(), best_without})


def _simplest_best(scores: np.ndarray, own: np.ndarray, shapes: tuple) -> int:
    """The shape of the lowest held-out score, unless the best without a lead is within LEAD_GAIN
    of it in the joint's ``own`` held-out residual."""
    best = int(np.argmin(scores))
    without_lead = [k for k, (_, lead) in enumerate(shapes) if lead == 0.0]
    simplest = without_lead[int(np.argmin(scores[without_lead]))]
    return best if own[best] < (1.0 - LEAD_GAIN) * own[simplest] else simplest
