"""The Recursive Newton-Euler Algorithm (Featherstone, RBDA Table 5.1), in numba.

One compiled kernel serves every robot: the model is a pair of flat arrays,
``joints`` (int) and ``bodies`` (float), one row per body in topological order
(``parent[i] < i``), and the work buffers are one preallocated float array.
The column layout is below; ``model.py`` fills it from a URDF.

    v_0 = 0,  a_0 = -g
    for i = 1..N:                                  (outward)
        X_J, S_i = jcalc(jtype_i, q_i);   ^iX_λ(i) = X_J X_T(i)
        v_i = ^iX_λ(i) v_λ(i) + S_i q̇_i
        a_i = ^iX_λ(i) a_λ(i) + S_i q̈_i + v_i × S_i q̇_i
        f_i = I_i a_i + v_i ×* I_i v_i - f_i^ext
    for i = N..1:                                  (inward)
        τ_i = S_iᵀ f_i
        f_λ(i) += ^iX_λ(i)ᵀ f_i

A mimic joint's coordinate is ``mult * q[master] + offset`` and its torque is
added to the master's, scaled by ``mult``. A free-flyer joint (the floating
base) has ``q = [p, quaternion xyzw]`` and ``q̇ = [v, ω]`` in the body frame.
"""

from __future__ import annotations

import numpy as np

from rnea_ros.dynamics.jit import njit
from rnea_ros.dynamics.spatial import (
    ZERO6,
    add6,
    axis_angle,
    cross_force,
    cross_motion,
    dot6,
    force_transform_T,
    inertia_times,
    load3,
    load6,
    load9,
    motion_transform,
    quaternion_to_rotation,
    rot_mul,
    rotate,
    scale6,
    store,
)

# Joint types.
REVOLUTE = 0
PRISMATIC = 1
FREE_FLYER = 2

# Columns of ``joints`` (int64).
PARENT, JTYPE, Q_INDEX, V_INDEX = 0, 1, 2, 3
JOINT_COLUMNS = 4

# Columns of ``bodies`` (float64): X_T as the joint frame's pose in the parent
# body, the joint axis, the mimic coupling, and the inertia about the body origin.
# Each name is the first column of a 9-, 3- or 1-wide field.
TREE_R, TREE_P, AXIS, MULT, OFFSET = 0, 9, 12, 15, 16
MASS, FIRST_MOMENT, ROT_INERTIA = 17, 18, 21
BODY_COLUMNS = 30

# Columns of ``work`` (float64): ^iX_λ(i) as a pose (X_R, X_P), S, v, a, f. ``work``
# has one more row than there are bodies: the last, row -1, is the world, whose
# v = 0 and a = a_0 = -g make gravity act on every body (Featherstone's trick).
X_R, X_P, S_COL, V, A, F = 0, 9, 12, 18, 24, 30
WORK_COLUMNS = 36
WORLD = -1

# Return codes.
OK = 0
WRONG_SIZE = 1
NON_FINITE_INPUT = 2
BAD_QUATERNION = 3
NON_FINITE_OUTPUT = 4

QUATERNION_TOLERANCE = 1e-3  # |‖q_base‖ − 1| a floating base's quaternion may have (also for messages)
# "Finite output": every torque or wrench a kernel returns is below this in magnitude, or refused as
# NON_FINITE_OUTPUT. No robot has one beyond it, and a sum of squares of such values cannot overflow.
LARGEST_OUTPUT = 1e150


@njit(cache=True)
def _all_finite(x) -> bool:
    for k in range(x.shape[0]):
        if not (x[k] - x[k] == 0.0):
            return False
    return True


@njit(cache=True)
def all_below_largest_output(x) -> bool:
    """Every value finite and below ``LARGEST_OUTPUT`` in magnitude (NaN fails the comparison)."""
    for k in range(x.shape[0]):
        if not abs(x[k]) < LARGEST_OUTPUT:
            return False
    return True


@njit(cache=True)
def _all_zero(x) -> bool:
    for k in range(x.shape[0]):
        if x[k] != 0.0:
            return False
    return True


@njit(cache=True)
def model_sizes(joints) -> tuple[int, int]:
    """(nq, nv) of the model, from its joints alone: a kernel never trusts a caller's array sizes."""
    nv = 0
    free_flyers = 0
    for i in range(joints.shape[0]):
        if joints[i, JTYPE] == FREE_FLYER:
            free_flyers += 1
            nv = max(nv, joints[i, V_INDEX] + 6)
        else:
            nv = max(nv, joints[i, V_INDEX] + 1)
    return nv + free_flyers, nv  # 7 coordinates for a free flyer's 6 velocities


@njit(cache=True)
def _sizes_ok(joints, q, qd, qdd, tau) -> bool:
    nq, nv = model_sizes(joints)
    return q.shape[0] == nq and qd.shape[0] == nv and qdd.shape[0] == nv and tau.shape[0] == nv


@njit(cache=True)
def _quaternion_ok(joints, q) -> bool:
    for i in range(joints.shape[0]):
        if joints[i, JTYPE] == FREE_FLYER:
            iq = joints[i, Q_INDEX]
            norm = (q[iq + 3] ** 2 + q[iq + 4] ** 2 + q[iq + 5] ** 2 + q[iq + 6] ** 2) ** 0.5
            if abs(norm - 1.0) > QUATERNION_TOLERANCE:
                return False
    return True


@njit(cache=True, inline="always")
def jcalc(jtype, bodies, i, q_i):
    """^iX_λ(i) = X_J(q_i) X_T(i), as the pose (R, p) of body i in its parent, and S_i."""
    R_T, p_T, axis = load9(bodies, i, TREE_R), load3(bodies, i, TREE_P), load3(bodies, i, AXIS)
    if jtype == REVOLUTE:
        S = (axis[0], axis[1], axis[2], 0.0, 0.0, 0.0)
        return rot_mul(R_T, axis_angle(axis, q_i)), p_T, S
    S = (0.0, 0.0, 0.0, axis[0], axis[1], axis[2])
    d = rotate(R_T, axis)
    return R_T, (p_T[0] + d[0] * q_i, p_T[1] + d[1] * q_i, p_T[2] + d[2] * q_i), S


@njit(cache=True, inline="always")
def free_flyer_pose(q, iq):
    """The base pose (R, p) in the world from q = [p, xyzw]."""
    x, y, z, w = q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6]
    n = (x * x + y * y + z * z + w * w) ** 0.5
    return quaternion_to_rotation(x / n, y / n, z / n, w / n), (q[iq], q[iq + 1], q[iq + 2])


@njit(cache=True, inline="always")
def free_flyer_motion(qd, qdd, iv):
    """S q̇ and S q̈ of the free flyer from [v, ω] reordered to [ω; v]."""
    vJ = (qd[iv + 3], qd[iv + 4], qd[iv + 5], qd[iv], qd[iv + 1], qd[iv + 2])
    aJ = (qdd[iv + 3], qdd[iv + 4], qdd[iv + 5], qdd[iv], qdd[iv + 1], qdd[iv + 2])
    return vJ, aJ


@njit(cache=True)
def check_inputs(joints, q, qd, qdd, tau) -> int:
    """OK, or why ``rnea`` cannot run on these inputs: sizes, NaN/Inf, a non-unit base quaternion."""
    if not _sizes_ok(joints, q, qd, qdd, tau):
        return WRONG_SIZE
    if not (_all_finite(q) and _all_finite(qd) and _all_finite(qdd)):
        return NON_FINITE_INPUT
    if not _quaternion_ok(joints, q):
        return BAD_QUATERNION
    return OK


@njit(cache=True)
def check_configuration(joints, q, output_size) -> int:
    """``check_inputs`` for a state at rest (g(q), Jᵀ): q alone, and the size of the output rows."""
    nq, nv = model_sizes(joints)
    if q.shape[0] != nq or output_size != nv:
        return WRONG_SIZE
    if not _all_finite(q):
        return NON_FINITE_INPUT
    if not _quaternion_ok(joints, q):
        return BAD_QUATERNION
    return OK


@njit(cache=True)
def rnea(joints, bodies, q, qd, qdd, f_ext, work, tau, at_rest) -> None:
    """τ = ID(q, q̇, q̈, f_ext) for one state, written into ``tau``. Inputs already checked.
    ``at_rest``: g(q), q̇ = q̈ = 0 without f_ext, and ``qd``, ``qdd``, ``f_ext`` are not read."""
    with_velocity = not at_rest and not _all_zero(qd)  # g(q) and q̇ = 0 skip the velocity terms
    for i in range(joints.shape[0]):
        parent, jtype, iq, iv = joints[i, PARENT], joints[i, JTYPE], joints[i, Q_INDEX], joints[i, V_INDEX]
        v = ZERO6
        if jtype == FREE_FLYER:
            R, p = free_flyer_pose(q, iq)
            S = ZERO6  # not used: the free flyer's S is the identity
            a = motion_transform(R, p, load6(work, WORLD, A))
            if not at_rest:
                v, aJ = free_flyer_motion(qd, qdd, iv)
                a = add6(a, aJ)  # v × vJ = v × v = 0
        else:
            mult = bodies[i, MULT]  # a mimic joint follows its master's coordinate
            R, p, S = jcalc(jtype, bodies, i, mult * q[iq] + bodies[i, OFFSET])
            a = motion_transform(R, p, load6(work, parent, A))
            if not at_rest:
                a = add6(a, scale6(S, mult * qdd[iv]))
            if with_velocity:
                vJ = scale6(S, mult * qd[iv])
                v = add6(motion_transform(R, p, load6(work, parent, V)), vJ)
                a = add6(a, cross_motion(v, vJ))
        m, h, I = bodies[i, MASS], load3(bodies, i, FIRST_MOMENT), load9(bodies, i, ROT_INERTIA)
        f = inertia_times(m, h, I, a)
        if with_velocity:
            f = add6(f, cross_force(v, inertia_times(m, h, I, v)))
        if not at_rest:
            f = add6(f, scale6(load6(f_ext, i, 0), -1.0))
        store(work, i, X_R, R)
        store(work, i, X_P, p)
        store(work, i, S_COL, S)
        store(work, i, V, v)
        store(work, i, A, a)
        store(work, i, F, f)

    inward(joints, bodies, work, tau)


@njit(cache=True, inline="always")
def inward(joints, bodies, work, tau) -> None:
    """The inward loop: τ_i = S_iᵀ f_i and f_λ(i) += ^iX_λ(i)ᵀ f_i, from the leaves to the root.
    A body without force adds nothing: skipped (off a unit wrench's chain, most bodies are)."""
    tau[:] = 0.0
    for i in range(joints.shape[0] - 1, -1, -1):  # the world row needs no force
        parent, iv = joints[i, PARENT], joints[i, V_INDEX]
        f = load6(work, i, F)
        if dot6(f, f) == 0.0:
            continue
        if joints[i, JTYPE] == FREE_FLYER:  # the base wrench, in Pinocchio's order [f; n]
            for k in range(3):
                tau[iv + k] = f[3 + k]
                tau[iv + 3 + k] = f[k]
        else:
            tau[iv] += bodies[i, MULT] * dot6(load6(work, i, S_COL), f)
        if parent >= 0:
            f_parent = add6(load6(work, parent, F), force_transform_T(load9(work, i, X_R), load3(work, i, X_P), f))
            store(work, parent, F, f_parent)


@njit(cache=True, nogil=True, _nrt=False)
def inverse_dynamics(joints, bodies, q, qd, qdd, f_ext, work, tau) -> int:
    """The checked entry point: ``check_inputs``, ``rnea``, then the output check. Returns a status."""
    status = check_inputs(joints, q, qd, qdd, tau)
    if status != OK:
        return status
    rnea(joints, bodies, q, qd, qdd, f_ext, work, tau, False)
    return OK if all_below_largest_output(tau) else NON_FINITE_OUTPUT


@njit(cache=True, nogil=True, _nrt=False)
def gravity(joints, bodies, q, work, tau) -> int:
    """g(q) = ID(q, 0, 0, 0): the same kernel at rest (nothing allocated, q̇ and q̈ not read)."""
    status = check_configuration(joints, q, tau.shape[0])
    if status != OK:
        return status
    rnea(joints, bodies, q, q, q, work, work, tau, True)  # q and work stand for the unread arguments
    return OK if all_below_largest_output(tau) else NON_FINITE_OUTPUT


@njit(cache=True, nogil=True)
def unit_wrench_responses(joints, bodies, q, F_ext, work, TAU) -> int:
    """TAU[n] = ID(q, 0, 0, F_ext[n]) without gravity = −Jᵀ F_ext[n], for each n, in one call: the
    transforms once, then per wrench the inward loop alone (at rest and without gravity every
    body's force is −f_ext)."""
    status = check_configuration(joints, q, TAU.shape[1])
    if status != OK:
        return status
    for i in range(joints.shape[0]):
        jtype, iq = joints[i, JTYPE], joints[i, Q_INDEX]
        if jtype == FREE_FLYER:
            R, p = free_flyer_pose(q, iq)
            S = ZERO6
        else:
            R, p, S = jcalc(jtype, bodies, i, bodies[i, MULT] * q[iq] + bodies[i, OFFSET])
        store(work, i, X_R, R)
        store(work, i, X_P, p)
        store(work, i, S_COL, S)
    for n in range(F_ext.shape[0]):
        status = _unit_wrench_response(joints, bodies, F_ext[n], work, TAU[n])
        if status != OK:
            return status
    return OK


@njit(cache=True, nogil=True)
def with_contact_terms(joints, bodies, q, qd, qdd, f_ext, F_unit, work, tau, g, JT) -> int:
    """``inverse_dynamics``, ``gravity`` and the contact Jacobian at one state in one call (the
    node's hot path with contact links): τ, g(q) and JT[:, n] = Jᵀ F_unit[n] = −(the response
    of ``unit_wrench_responses``). The unit wrenches' inward loops use the transforms that g's
    pass left in ``work`` (the same q)."""
    status = inverse_dynamics(joints, bodies, q, qd, qdd, f_ext, work, tau)
    if status != OK:
        return status
    if g.shape[0] != tau.shape[0] or JT.shape[0] != tau.shape[0] or JT.shape[1] != F_unit.shape[0]:
        return WRONG_SIZE
    rnea(joints, bodies, q, q, q, work, work, g, True)
    if not all_below_largest_output(g):
        return NON_FINITE_OUTPUT
    response = np.empty(tau.shape[0])
    for n in range(F_unit.shape[0]):
        status = _unit_wrench_response(joints, bodies, F_unit[n], work, response)
        if status != OK:
            return status
        for k in range(response.shape[0]):
            JT[k, n] = -response[k]
    return OK


@njit(cache=True, inline="always")
def _unit_wrench_response(joints, bodies, f_ext, work, tau) -> int:
    """ID(q, 0, 0, f_ext) without gravity, from the transforms in ``work``: the inward loop alone."""
    for i in range(joints.shape[0]):
        store(work, i, F, scale6(load6(f_ext, i, 0), -1.0))
    inward(joints, bodies, work, tau)
    return OK if all_below_largest_output(tau) else NON_FINITE_OUTPUT
