"""``rnea`` on many states at once: a block of states side by side, so that each step of the
algorithm is one loop over the block that LLVM vectorises (numba).

``rnea.rnea`` runs one state through the tree; here every body's step runs on ``BLOCK`` states
together (structure of arrays: a quantity's values for the block's states are contiguous), and
the joints' sin and cos of the whole block come first from ``sincos`` (fdlibm's, vectorised:
within one ulp of libm's). The formulas and their order are ``rnea.rnea``'s, so that a batch row
equals the single call's torques to rounding (test/dynamics/test_rnea_block.py).
"""

from __future__ import annotations

import numpy as np

from rnea_ros.dynamics import rnea as kernel
from rnea_ros.dynamics.jit import njit, prange
from rnea_ros.dynamics.rnea import (
    FREE_FLYER,
    JTYPE,
    MASS,
    MULT,
    NON_FINITE_OUTPUT,
    OFFSET,
    OK,
    PARENT,
    PRISMATIC,
    Q_INDEX,
    REVOLUTE,
    V_INDEX,
    WRONG_SIZE,
)
from rnea_ros.dynamics.sincos import LARGEST_REDUCED, sincos
from rnea_ros.dynamics.spatial import (
    add6,
    axis_angle_sc,
    cross_force,
    cross_motion,
    dot6,
    force_transform_T,
    inertia_times,
    load3,
    load9,
    motion_transform,
    quaternion_to_rotation,
    rot_mul,
    rotate,
    scale6,
)

BLOCK = 16  # states side by side: 4 AVX2 vectors, the block's work arrays within L1/L2 for 50 bodies
# Body-states per thread below which a batch runs on one thread (~3 ms of work): a thread woken for
# less costs more than it gives on a shared machine (1,000 Panda states: 0.5 ms on one thread, 23 ms
# on two OpenMP threads at load 14, whose second waits to be scheduled).
PARALLEL_WORK = 250_000
# The outward and inward loops let LLVM fuse a product and a sum into one FMA (one rounding instead
# of two) and nothing else: no reassociation, NaN and Inf kept. 13-16 % less time on the Panda and
# Talos batches; rows differ from the single call's by ~1e-15 relative (test_rnea_block: 1e-13).
CONTRACT = {"contract"}


# Fields of the block's work array ``W``, flat: body i's field j of state k at (i·FIELDS + j)·BLOCK + k,
# the index unsigned (numba then adds no negative-index test, and the address is affine in k).
# Row ``bodies`` is the world's. ``P`` holds a parent's v and a (or a body's force in its parent's
# frame) apart from ``W``: a loop then reads one array and writes the other, and LLVM vectorises it.
WV, WA, WF, WR, WP = 0, 6, 12, 18, 27  # v, a, f, ^iX_λ(i) as (R, p)
WSIN, WCOS, WQD, WQDD, WTAU = 30, 31, 32, 33, 34  # the joint's sin, cos (a prismatic joint's q in
FIELDS = 35  # WSIN), mult·q̇, mult·q̈; mult·S_iᵀ f_i


@njit(cache=True, inline="always")
def _at(i, field, k):
    return np.uint64((i * FIELDS + field) * BLOCK + k)


@njit(cache=True, inline="always")
def _get3(W, i, f0, k):
    return (W[_at(i, f0, k)], W[_at(i, f0 + 1, k)], W[_at(i, f0 + 2, k)])


@njit(cache=True, inline="always")
def _get6(W, i, f0, k):
    return (
        W[_at(i, f0, k)], W[_at(i, f0 + 1, k)], W[_at(i, f0 + 2, k)],
        W[_at(i, f0 + 3, k)], W[_at(i, f0 + 4, k)], W[_at(i, f0 + 5, k)],
    )  # fmt: skip


@njit(cache=True, inline="always")
def _get9(W, i, f0, k):
    return (
        W[_at(i, f0, k)], W[_at(i, f0 + 1, k)], W[_at(i, f0 + 2, k)],
        W[_at(i, f0 + 3, k)], W[_at(i, f0 + 4, k)], W[_at(i, f0 + 5, k)],
        W[_at(i, f0 + 6, k)], W[_at(i, f0 + 7, k)], W[_at(i, f0 + 8, k)],
    )  # fmt: skip


@njit(cache=True, inline="always")
def _put(W, i, f0, k, values):
    for j in range(len(values)):
        W[_at(i, f0 + j, k)] = values[j]


@njit(cache=True)
def _scratch(nb, nq, nv):
    """The block's arrays: q, q̇, q̈ transposed (a column per state), ``W`` and ``P``."""
    W = np.zeros((nb + 1) * FIELDS * BLOCK)
    return np.empty((nq, BLOCK)), np.empty((nv, BLOCK)), np.empty((nv, BLOCK)), W, np.zeros(12 * BLOCK)


@njit(cache=True, inline="always")
def _transpose_in(X, n0, m, XT):
    for k in range(BLOCK):  # row by row: contiguous reads (3 % less time on Talos than column by column)
        n = n0 + k if k < m else n0  # padding: a copy of a valid state, never written out
        for j in range(X.shape[1]):
            XT[j, k] = X[n, j]


@njit(cache=True)
def _joint_inputs(joints, bodies, QT, VT, AT, W) -> None:
    """Each 1-DoF body's sin and cos of its joint angle (mimic coupling applied), mult·q̇, mult·q̈."""
    for i in range(joints.shape[0]):
        jtype, iq, iv = joints[i, JTYPE], joints[i, Q_INDEX], joints[i, V_INDEX]
        if jtype == FREE_FLYER:
            continue
        mult, offset = bodies[i, MULT], bodies[i, OFFSET]
        for k in range(BLOCK):
            W[_at(i, WQD, k)] = mult * VT[iv, k]
            W[_at(i, WQDD, k)] = mult * AT[iv, k]
        if jtype != REVOLUTE:
            for k in range(BLOCK):
                W[_at(i, WSIN, k)] = mult * QT[iq, k] + offset  # a prismatic joint's displacement
            continue
        large = False
        for k in range(BLOCK):
            angle = mult * QT[iq, k] + offset
            W[_at(i, WSIN, k)], W[_at(i, WCOS, k)] = sincos(angle)
            large |= not (abs(angle) < LARGEST_REDUCED)
        if large:  # beyond the exact reduction, NaN, Inf: libm's
            for k in range(BLOCK):
                angle = mult * QT[iq, k] + offset
                W[_at(i, WSIN, k)], W[_at(i, WCOS, k)] = np.sin(angle), np.cos(angle)


@njit(cache=True, fastmath=CONTRACT)
def _outward(joints, bodies, QT, VT, AT, W, P) -> None:
    world = joints.shape[0]
    for i in range(joints.shape[0]):
        parent, jtype, iq, iv = joints[i, PARENT], joints[i, JTYPE], joints[i, Q_INDEX], joints[i, V_INDEX]
        par = world if parent < 0 else parent
        for k in range(12 * BLOCK):  # the parent's v and a (fields 0-11), into P
            P[np.uint64(k)] = W[np.uint64(par * FIELDS * BLOCK + k)]
        m, h, I = bodies[i, MASS], load3(bodies, i, kernel.FIRST_MOMENT), load9(bodies, i, kernel.ROT_INERTIA)
        R_T, p_T, axis = load9(bodies, i, kernel.TREE_R), load3(bodies, i, kernel.TREE_P), load3(bodies, i, kernel.AXIS)
        if jtype == FREE_FLYER:
            for k in range(BLOCK):
                x, y, z, w = QT[iq + 3, k], QT[iq + 4, k], QT[iq + 5, k], QT[iq + 6, k]
                n = (x * x + y * y + z * z + w * w) ** 0.5
                R = quaternion_to_rotation(x / n, y / n, z / n, w / n)
                p = (QT[iq, k], QT[iq + 1, k], QT[iq + 2, k])
                v = (VT[iv + 3, k], VT[iv + 4, k], VT[iv + 5, k], VT[iv, k], VT[iv + 1, k], VT[iv + 2, k])
                aJ = (AT[iv + 3, k], AT[iv + 4, k], AT[iv + 5, k], AT[iv, k], AT[iv + 1, k], AT[iv + 2, k])
                a = add6(motion_transform(R, p, _get6(P, 0, WA, k)), aJ)
                f = add6(inertia_times(m, h, I, a), cross_force(v, inertia_times(m, h, I, v)))
                _store_body(W, i, k, R, p, v, a, f)
        elif jtype == REVOLUTE:
            S = (axis[0], axis[1], axis[2], 0.0, 0.0, 0.0)
            for k in range(BLOCK):
                R = rot_mul(R_T, axis_angle_sc(axis, W[_at(i, WSIN, k)], W[_at(i, WCOS, k)]))
                v, a = _joint_motion(R, p_T, S, W, i, P, k)
                f = add6(inertia_times(m, h, I, a), cross_force(v, inertia_times(m, h, I, v)))
                _store_body(W, i, k, R, p_T, v, a, f)
        else:  # PRISMATIC
            S = (0.0, 0.0, 0.0, axis[0], axis[1], axis[2])
            d = rotate(R_T, axis)
            for k in range(BLOCK):
                q_i = W[_at(i, WSIN, k)]
                p = (p_T[0] + d[0] * q_i, p_T[1] + d[1] * q_i, p_T[2] + d[2] * q_i)
                v, a = _joint_motion(R_T, p, S, W, i, P, k)
                f = add6(inertia_times(m, h, I, a), cross_force(v, inertia_times(m, h, I, v)))
                _store_body(W, i, k, R_T, p, v, a, f)


@njit(cache=True)
def _subtract_f_ext(f_ext, shared, n0, m, W) -> None:
    """f -= f_ext for the block's states (``rnea.rnea``'s f + (-1)·f_ext)."""
    for i in range(f_ext.shape[1]):
        for k in range(m):
            row = 0 if shared else n0 + k
            for j in range(6):
                W[_at(i, WF + j, k)] = W[_at(i, WF + j, k)] + f_ext[row, i, j] * -1.0


@njit(cache=True, inline="always")
def _joint_motion(R, p, S, W, i, P, k):
    """v and a of a 1-DoF joint's body (``rnea.rnea``'s expressions), its parent's in P."""
    a = add6(motion_transform(R, p, _get6(P, 0, WA, k)), scale6(S, W[_at(i, WQDD, k)]))
    vJ = scale6(S, W[_at(i, WQD, k)])
    v = add6(motion_transform(R, p, _get6(P, 0, WV, k)), vJ)
    return v, add6(a, cross_motion(v, vJ))


@njit(cache=True, inline="always")
def _store_body(W, i, k, R, p, v, a, f):
    _put(W, i, WR, k, R)
    _put(W, i, WP, k, p)
    _put(W, i, WV, k, v)
    _put(W, i, WA, k, a)
    _put(W, i, WF, k, f)


@njit(cache=True, fastmath=CONTRACT)
def _inward(joints, bodies, W, P) -> None:
    for i in range(joints.shape[0] - 1, -1, -1):
        parent, jtype = joints[i, PARENT], joints[i, JTYPE]
        axis, mult = load3(bodies, i, kernel.AXIS), bodies[i, MULT]
        if jtype != FREE_FLYER:
            if jtype == PRISMATIC:
                S = (0.0, 0.0, 0.0, axis[0], axis[1], axis[2])
            else:
                S = (axis[0], axis[1], axis[2], 0.0, 0.0, 0.0)
            for k in range(BLOCK):
                W[_at(i, WTAU, k)] = mult * dot6(S, _get6(W, i, WF, k))
        if parent >= 0:
            for k in range(BLOCK):  # the force in the parent's frame, into P
                _put(P, 0, 0, k, force_transform_T(_get9(W, i, WR, k), _get3(W, i, WP, k), _get6(W, i, WF, k)))
            for k in range(BLOCK):
                _put(W, parent, WF, k, add6(_get6(W, parent, WF, k), _get6(P, 0, 0, k)))


@njit(cache=True)
def _write_out(joints, W, n0, m, TAU) -> None:
    """τ of the block's states into TAU: each joint's mult·S_iᵀ f_i, summed into its coordinate
    from the last body to the first (``rnea.inward``'s order: a mimic joint's share adds to its
    master's)."""
    for k in range(m):
        for j in range(TAU.shape[1]):
            TAU[n0 + k, j] = 0.0
    for i in range(joints.shape[0] - 1, -1, -1):
        iv = joints[i, V_INDEX]
        if joints[i, JTYPE] == FREE_FLYER:  # the base wrench, in Pinocchio's order [f; n]
            for k in range(m):
                for j in range(3):
                    TAU[n0 + k, iv + j] = W[_at(i, WF + 3 + j, k)]
                    TAU[n0 + k, iv + 3 + j] = W[_at(i, WF + j, k)]
        else:
            for k in range(m):
                TAU[n0 + k, iv] += W[_at(i, WTAU, k)]


@njit(cache=True)
def rnea_rows(joints, bodies, Q, QD, QDD, F_ext, work, TAU, start, stop) -> tuple[int, int]:
    """TAU[n] = ID(Q[n], QD[n], QDD[n], F_ext[n or 0]) for start ≤ n < stop, a block at a time;
    (status, row) of the first row that fails a check (``rnea.check_inputs``' and the output's, a
    block's inputs checked before its outputs), or (OK, -1). Sizes are checked by the caller.
    ``work``'s world row gives a_0 = -g."""
    nb = joints.shape[0]
    QT, VT, AT, W, P = _scratch(nb, Q.shape[1], QD.shape[1])
    for k in range(BLOCK):
        for j in range(6):
            W[_at(nb, WA + j, k)] = work[work.shape[0] - 1, kernel.A + j]
    shared = F_ext.shape[0] == 1
    with_f_ext = not kernel._all_zero(F_ext[0].ravel()) if shared else True
    for n0 in range(start, stop, BLOCK):
        m = min(BLOCK, stop - n0)
        for n in range(n0, n0 + m):  # the block's rows checked as it is read: they stay in cache for the kernel
            if not (kernel._all_finite(Q[n]) and kernel._all_finite(QD[n]) and kernel._all_finite(QDD[n])):
                return kernel.NON_FINITE_INPUT, n
            if not kernel._quaternion_ok(joints, Q[n]):
                return kernel.BAD_QUATERNION, n
        _transpose_in(Q, n0, m, QT)
        _transpose_in(QD, n0, m, VT)
        _transpose_in(QDD, n0, m, AT)
        _joint_inputs(joints, bodies, QT, VT, AT, W)
        _outward(joints, bodies, QT, VT, AT, W, P)
        if with_f_ext:
            _subtract_f_ext(F_ext, shared, n0, m, W)
        _inward(joints, bodies, W, P)
        _write_out(joints, W, n0, m, TAU)
        for k in range(m):
            if not kernel.all_below_largest_output(TAU[n0 + k]):
                return NON_FINITE_OUTPUT, n0 + k
    return OK, -1


@njit(cache=True)
def rnea_batch(joints, bodies, Q, QD, QDD, F_ext, work, TAU, n_threads):
    """``rnea_rows`` on every row: on this thread, or split into one chunk per thread when there is
    enough work (``PARALLEL_WORK``; an OpenMP region costs a wait for its threads however little
    they do: 27 ms for 1,000 Panda states at load 22, against 0.6 ms on this thread). ``F_ext``
    has one row per state or a single shared row. Returns (status, row) of the first failing row,
    or (OK, -1)."""
    n_states = Q.shape[0]
    if not _sizes_fit(joints, Q, QD, QDD, TAU):
        return WRONG_SIZE, 0
    n_chunks = min(n_threads, max(1, n_states * joints.shape[0] // PARALLEL_WORK))
    if n_chunks == 1:
        return rnea_rows(joints, bodies, Q, QD, QDD, F_ext, work, TAU, 0, n_states)
    return _in_chunks(joints, bodies, Q, QD, QDD, F_ext, work, TAU, n_chunks)


@njit(cache=True)
def rnea_batch_here(joints, bodies, Q, QD, QDD, F_ext, work, TAU):
    """``rnea_batch`` on the calling thread: no parallel region (rnea_node's trajectories, one thread,
    from its ahead-of-time module)."""
    if not _sizes_fit(joints, Q, QD, QDD, TAU):
        return WRONG_SIZE, 0
    return rnea_rows(joints, bodies, Q, QD, QDD, F_ext, work, TAU, 0, Q.shape[0])


@njit(cache=True)
def _sizes_fit(joints, Q, QD, QDD, TAU) -> bool:
    n_states = Q.shape[0]
    nq, nv = kernel.model_sizes(joints)
    if Q.shape[1] != nq or QD.shape[1] != nv or QDD.shape[1] != nv or TAU.shape[1] != nv:
        return False
    return QD.shape[0] == n_states and QDD.shape[0] == n_states and TAU.shape[0] == n_states


@njit(cache=True, parallel=True)
def _in_chunks(joints, bodies, Q, QD, QDD, F_ext, work, TAU, n_chunks):
    n_states = Q.shape[0]
    chunk = (n_states + n_chunks - 1) // n_chunks
    failed_row = np.full(n_chunks, n_states)
    failed_status = np.zeros(n_chunks, np.int64)
    for c in prange(n_chunks):
        status, row = rnea_rows(joints, bodies, Q, QD, QDD, F_ext, work, TAU, c * chunk, min(n_states, (c + 1) * chunk))
        if status != OK:
            failed_row[c], failed_status[c] = row, status
    for c in range(n_chunks):
        if failed_row[c] < n_states:
            return failed_status[c], failed_row[c]
    return OK, -1
