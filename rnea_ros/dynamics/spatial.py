"""Spatial-vector algebra for the numba kernels (Featherstone, RBDA ch. 2).

Values are tuples, so that numba keeps them in registers: a 3-vector is
``(x, y, z)``, a rotation a row-major 9-tuple, and a spatial vector a 6-tuple in
Featherstone's order, angular part first: a motion ``[ω; v]`` or a force ``[n; f]``,
both about the body origin. A Plücker transform ``^iX_λ(i)`` is represented by
the pose ``(R, p)`` of body ``i`` in its parent's frame: Featherstone's
``E = Rᵀ`` and ``r = p``. A spatial inertia is ``(m, h, I)``: mass, first
moment ``h = m c`` and rotational inertia about the body origin.
"""

from __future__ import annotations

import numpy as np

from rnea_ros.dynamics.jit import njit

inline = njit(cache=True, inline="always")

ZERO6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@inline
def cross3(x, y):
    return (x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0])


@inline
def rotate(R, x):
    """R x."""
    return (
        R[0] * x[0] + R[1] * x[1] + R[2] * x[2],
        R[3] * x[0] + R[4] * x[1] + R[5] * x[2],
        R[6] * x[0] + R[7] * x[1] + R[8] * x[2],
    )


@inline
def rotate_T(R, x):
    """Rᵀ x."""
    return (
        R[0] * x[0] + R[3] * x[1] + R[6] * x[2],
        R[1] * x[0] + R[4] * x[1] + R[7] * x[2],
        R[2] * x[0] + R[5] * x[1] + R[8] * x[2],
    )


@inline
def rot_mul(A, B):
    """A B for row-major 3×3 matrices."""
    return (
        A[0] * B[0] + A[1] * B[3] + A[2] * B[6],
        A[0] * B[1] + A[1] * B[4] + A[2] * B[7],
        A[0] * B[2] + A[1] * B[5] + A[2] * B[8],
        A[3] * B[0] + A[4] * B[3] + A[5] * B[6],
        A[3] * B[1] + A[4] * B[4] + A[5] * B[7],
        A[3] * B[2] + A[4] * B[5] + A[5] * B[8],
        A[6] * B[0] + A[7] * B[3] + A[8] * B[6],
        A[6] * B[1] + A[7] * B[4] + A[8] * B[7],
        A[6] * B[2] + A[7] * B[5] + A[8] * B[8],
    )


@inline
def axis_angle(k, angle):
    """Rodrigues' rotation about the unit axis k: I + s [k]× + (1 - c) [k]×²."""
    return axis_angle_sc(k, np.sin(angle), np.cos(angle))


@inline
def axis_angle_sc(k, s, c):
    """``axis_angle`` from the angle's sine and cosine."""
    t = 1.0 - c
    x, y, z = k
    return (
        1.0 - t * (y * y + z * z), t * x * y - s * z, t * x * z + s * y,
        t * x * y + s * z, 1.0 - t * (x * x + z * z), t * y * z - s * x,
        t * x * z - s * y, t * y * z + s * x, 1.0 - t * (x * x + y * y),
    )  # fmt: skip


@inline
def quaternion_to_rotation(x, y, z, w):
    """Rotation matrix of the unit quaternion (x, y, z, w)."""
    return (
        1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w),
        2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w),
        2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y),
    )  # fmt: skip


@inline
def motion_transform(R, p, m):
    """X m: a parent-frame motion seen in the child frame. ω' = Rᵀω, v' = Rᵀ(v + ω × p)."""
    w = (m[0], m[1], m[2])
    wxp = cross3(w, p)
    w2 = rotate_T(R, w)
    v2 = rotate_T(R, (m[3] + wxp[0], m[4] + wxp[1], m[5] + wxp[2]))
    return (w2[0], w2[1], w2[2], v2[0], v2[1], v2[2])


@inline
def force_transform_T(R, p, f):
    """Xᵀ f: a child-frame force seen in the parent frame. f' = R f, n' = R n + p × f'."""
    f2 = rotate(R, (f[3], f[4], f[5]))
    n2 = rotate(R, (f[0], f[1], f[2]))
    pxf = cross3(p, f2)
    return (n2[0] + pxf[0], n2[1] + pxf[1], n2[2] + pxf[2], f2[0], f2[1], f2[2])


@inline
def cross_motion(v, m):
    """v × m (Featherstone's crm)."""
    return (
        v[1] * m[2] - v[2] * m[1],
        v[2] * m[0] - v[0] * m[2],
        v[0] * m[1] - v[1] * m[0],
        v[1] * m[5] - v[2] * m[4] + v[4] * m[2] - v[5] * m[1],
        v[2] * m[3] - v[0] * m[5] + v[5] * m[0] - v[3] * m[2],
        v[0] * m[4] - v[1] * m[3] + v[3] * m[1] - v[4] * m[0],
    )


@inline
def cross_force(v, f):
    """v ×* f (Featherstone's crf)."""
    return (
        v[1] * f[2] - v[2] * f[1] + v[4] * f[5] - v[5] * f[4],
        v[2] * f[0] - v[0] * f[2] + v[5] * f[3] - v[3] * f[5],
        v[0] * f[1] - v[1] * f[0] + v[3] * f[4] - v[4] * f[3],
        v[1] * f[5] - v[2] * f[4],
        v[2] * f[3] - v[0] * f[5],
        v[0] * f[4] - v[1] * f[3],
    )


@inline
def inertia_times(m, h, I, v):
    """I v for the spatial inertia (m, h, I): n = I ω + h × v_lin, f = m v_lin − h × ω."""
    w = (v[0], v[1], v[2])
    u = (v[3], v[4], v[5])
    Iw = rotate(I, w)
    hxu = cross3(h, u)
    hxw = cross3(h, w)
    return (
        Iw[0] + hxu[0], Iw[1] + hxu[1], Iw[2] + hxu[2],
        m * u[0] - hxw[0], m * u[1] - hxw[1], m * u[2] - hxw[2],
    )  # fmt: skip


@inline
def add6(x, y):
    return (x[0] + y[0], x[1] + y[1], x[2] + y[2], x[3] + y[3], x[4] + y[4], x[5] + y[5])


@inline
def scale6(x, s):
    return (x[0] * s, x[1] * s, x[2] * s, x[3] * s, x[4] * s, x[5] * s)


@inline
def dot6(x, y):
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3] + x[4] * y[4] + x[5] * y[5]


@inline
def load3(array, row, col):
    return (array[row, col], array[row, col + 1], array[row, col + 2])


@inline
def load6(array, row, col):
    return (
        array[row, col], array[row, col + 1], array[row, col + 2],
        array[row, col + 3], array[row, col + 4], array[row, col + 5],
    )  # fmt: skip


@inline
def load9(array, row, col):
    return (
        array[row, col], array[row, col + 1], array[row, col + 2],
        array[row, col + 3], array[row, col + 4], array[row, col + 5],
        array[row, col + 6], array[row, col + 7], array[row, col + 8],
    )  # fmt: skip


@inline
def store(array, row, col, values):
    for k in range(len(values)):
        array[row, col + k] = values[k]
