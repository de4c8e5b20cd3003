"""The algorithms on a model and its data, as Pinocchio's: ``inverse_dynamics(model, data, q, qd, qdd)``.

The model (``RobotModel``: tree, inertias, compiled entry points; what is read of it: ``KernelModel``,
a Protocol, so that this module below model.py imports nothing of it) is only read; every buffer
written is the data's (``ModelData``, ``model.create_data()``): one data per thread. These are the
only path to the kernels: the methods of ``RobotModel`` call them with a data of the calling thread,
and rnea_node's computation calls them with the data of its own thread (``controller``).

``q``, ``qd``, ``qdd`` and the torques follow ``model.joint_names`` (after the 7/6 floating-base
entries when ``model.floating_base``). 1-D inputs give ``(nv,)``; 2-D inputs ``(N, nq)``,
``(N, nv)`` give ``(N, nv)``.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import NamedTuple, Protocol

import numpy as np

from rnea_ros.dynamics import aot, jit, rnea_block
from rnea_ros.dynamics import rnea as kernel
from rnea_ros.dynamics.compiled import numba_kernel
from rnea_ros.dynamics.data import ModelData
from rnea_ros.dynamics.tree import KinematicTree


class KernelModel(Protocol):
    """What the algorithms read of a model (``RobotModel`` is one)."""

    tree: KinematicTree
    joints: np.ndarray  # the kernels' model (rnea.py)
    bodies: np.ndarray
    joint_names: list[str]
    link_names: list[str]
    nq: int
    nv: int
    floating_base: bool
    data_layout: tuple[int, tuple[float, float, float]]  # data.data_layout's: what a ModelData fits
    entry_points: NamedTuple  # model.EntryPoints: the compiled single-state kernels
    inverse_dynamics_call: tuple  # (entry point, joints, bodies, no external force)
    gravity_call: tuple  # (entry point, joints, bodies)
    no_f_ext: np.ndarray
    zero_v: np.ndarray

    @property
    def num_bodies(self) -> int: ...

    def create_data(self) -> ModelData: ...


# What the hot paths take as is: 1-D C-contiguous float64 arrays (anything else is converted first).
FLOAT64 = np.dtype(np.float64)
VECTOR_STRIDES = (FLOAT64.itemsize,)
_empty = np.empty  # a global name: one attribute lookup fewer per call

_STATUS_MESSAGES = {
    kernel.NON_FINITE_INPUT: "q, qd and qdd must be finite (NaN or Inf found)",
    kernel.BAD_QUATERNION: "the floating-base quaternion q[3:7] must have unit norm",
    kernel.NON_FINITE_OUTPUT: "the torques overflowed (non-finite result); inputs out of range?",
}

# numba's `workqueue` threading layer (its fallback where OpenMP and TBB are missing) aborts
# the process when two threads enter a parallel kernel at once; `omp` and `tbb` are thread-safe.
# Batch calls are serialised until a call has shown which layer numba picked.
THREAD_SAFE_LAYERS = ("omp", "tbb")
_batch_lock = threading.Lock()
_batch_layer_thread_safe = False


def rnea_batch(*args) -> tuple[int, int]:
    """``rnea_block.rnea_batch``, serialised across threads unless numba's threading layer is thread-safe."""
    global _batch_layer_thread_safe
    if jit.deferring():  # rnea_node on ahead-of-time kernels: one thread, no numba while the module has it
        here = aot.exported(rnea_block.rnea_batch_here, args[:-1])
        if here is not None:
            return here(*args[:-1])
    if _batch_layer_thread_safe:
        return rnea_block.rnea_batch(*args)
    with _batch_lock:
        result = numba_kernel(rnea_block.rnea_batch)(*args)  # numba's, even in a process that deferred it
        import numba

        try:  # a small batch runs on the calling thread: no layer chosen yet
            _batch_layer_thread_safe = numba.threading_layer() in THREAD_SAFE_LAYERS
        except ValueError:
            pass
    return result


class ContactKernelArrays(NamedTuple):
    """What ``kernel.with_contact_terms`` reads besides the state, for a kernel that calls it."""

    joints: np.ndarray
    bodies: np.ndarray
    work: np.ndarray  # the caller's data's
    F_unit: np.ndarray  # the kernel f_ext of each unit contact wrench


def _batch_threads() -> int:
    """numba's threads for the calling thread's batches (one while ``jit`` defers: ``rnea_batch``)."""
    if jit.deferring():
        return 1
    numba_kernel(rnea_block.rnea_batch)
    import numba

    return numba.get_num_threads()


def as_float_array(x, name: str = "input") -> np.ndarray:
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name}: expected an array of numbers") from error


def _c_float_array(x) -> np.ndarray:
    """C-contiguous float64: the one layout the single-state kernels are called with."""
    return np.ascontiguousarray(x, dtype=np.float64)


def _rotate_rows(R: np.ndarray, x: np.ndarray) -> np.ndarray:
    """R x for each row x, elementwise so that a batch and its single rows round alike."""
    return x[:, 0:1] * R[:, 0] + x[:, 1:2] * R[:, 1] + x[:, 2:3] * R[:, 2]


def _checked(model: KernelModel, data: ModelData) -> np.ndarray:
    """The data's work array, once the data is known to fit the model (a kernel does not check it).
    On the hot paths the identity test is written inline, this called only when it fails."""
    if data.layout is not model.data_layout and data.layout != model.data_layout:
        raise ValueError("this data was made by a model of another robot or gravity: use model.create_data()")
    return data.work


def inverse_dynamics(model: KernelModel, data: ModelData, q, qd, qdd, wrenches: Mapping | None = None) -> np.ndarray:
    """τ = M(q) q̈ + C(q, q̇) q̇ + g(q) − Σ Jᵀ w.

    ``wrenches`` maps link name → ``[fx, fy, fz, tx, ty, tz]``: the wrench the environment
    applies on the robot, in that link's frame, about its origin."""
    work = data.work if data.layout is model.data_layout else _checked(model, data)
    try:  # the hot path: plain vectors, straight to the kernel (which checks sizes and values)
        plain = q.dtype is qd.dtype is qdd.dtype is FLOAT64 and q.strides == qd.strides == qdd.strides == VECTOR_STRIDES
    except AttributeError:  # lists, tuples: converted below
        plain = False
    if plain and not wrenches:
        tau = _empty(model.nv)
        kernel_function, j, b, no_wrench = model.inverse_dynamics_call
        if status := kernel_function(j, b, q, qd, qdd, no_wrench, work, tau):
            raise status_error(model, status, q, qd, qdd)
        return tau
    q, qd, qdd = _c_float_array(q), _c_float_array(qd), _c_float_array(qdd)
    f_ext = external_forces(model, wrenches, q) if wrenches else model.no_f_ext
    return _run(model, work, q, qd, qdd, f_ext)


def gravity_torques(model: KernelModel, data: ModelData, q) -> np.ndarray:
    """g(q): the torques that hold the robot still against gravity."""
    work = data.work if data.layout is model.data_layout else _checked(model, data)
    try:  # the hot path, as in inverse_dynamics
        plain = q.dtype is FLOAT64 and q.strides == VECTOR_STRIDES
    except AttributeError:
        plain = False
    if plain:
        tau = _empty(model.nv)
        kernel_function, j, b = model.gravity_call
        if status := kernel_function(j, b, q, work, tau):
            raise status_error(model, status, q, model.zero_v, model.zero_v)
        return tau
    q = _c_float_array(q)
    if q.ndim != 1:
        zero = _zeros_like(model, q)
        return _run(model, work, q, zero, zero, model.no_f_ext)
    tau = np.empty(model.nv)
    status = model.entry_points.gravity(model.joints, model.bodies, q, work, tau)
    if status != kernel.OK:
        raise status_error(model, status, q, model.zero_v, model.zero_v)
    return tau


def nonlinear_effects(model: KernelModel, data: ModelData, q, qd) -> np.ndarray:
    """C(q, q̇) q̇ + g(q): Coriolis, centrifugal and gravity torques."""
    q, qd = _c_float_array(q), _c_float_array(qd)
    return _run(model, _checked(model, data), q, qd, _zeros_like(model, q), model.no_f_ext)


def wrench_jacobian_transpose(
    model: KernelModel, data: ModelData, q, links: list[str], components: tuple[int, ...] | None = None
) -> np.ndarray:
    """Jᵀ of wrenches on ``links`` at the single state q: (nv, Σ components), 6 per link by default.

    Column 6k + i is what a unit wrench component i ([fx, fy, fz, tx, ty, tz], in the frame of
    links[k], about its origin) does to the generalized forces, so that ``inverse_dynamics(q, qd,
    qdd, {link: w})`` = ``inverse_dynamics(q, qd, qdd)`` − Jᵀ w. ``components`` (3 or 6 per link)
    keeps only the first ones of each link's six columns: 3 for a link that takes forces only (a
    point contact), at half the cost. Computed with the kernel itself, in one call:
    Jᵀ e = −ID(q, 0, 0, e) without gravity."""
    q = _c_float_array(q)
    work = _checked(model, data)
    F_ext = unit_wrench_stack(model, data, links, components)
    responses = np.empty((len(F_ext), model.nv))
    status = kernel.unit_wrench_responses(model.joints, model.bodies, q, F_ext, work, responses)
    if status != kernel.OK:
        raise status_error(model, status, q, model.zero_v, model.zero_v)
    return -responses.T


def with_contact_terms(
    model: KernelModel,
    data: ModelData,
    q,
    qd,
    qdd,
    wrenches: Mapping | None,
    links: list[str],
    components: tuple[int, ...] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(``inverse_dynamics``, ``gravity_torques``, ``wrench_jacobian_transpose(q, links, components)``)
    at one state, in one kernel call: a floating-base robot on contact links, at every joint_states."""
    q, qd, qdd = _c_float_array(q), _c_float_array(qd), _c_float_array(qdd)
    if q.ndim != 1 or qd.ndim != 1 or qdd.ndim != 1:
        raise status_error(model, kernel.WRONG_SIZE, q, qd, qdd)
    dynamics = contact_kernel_arrays(model, data, links, components)
    nv = model.nv
    tau, g, JT = np.empty(nv), np.empty(nv), np.empty((nv, len(dynamics.F_unit)))
    f_ext = kernel_external_forces(model, wrenches)
    args = (model.joints, model.bodies, q, qd, qdd, f_ext, dynamics.F_unit, dynamics.work, tau, g, JT)
    status = model.entry_points.with_contact_terms(*args)
    if status != kernel.OK:
        raise status_error(model, status, q, qd, qdd)
    return tau, g, JT


def contact_kernel_arrays(
    model: KernelModel, data: ModelData, links: list[str], components: tuple[int, ...] | None = None
) -> ContactKernelArrays:
    """What ``kernel.with_contact_terms`` takes besides the state and the outputs, for a caller that
    calls it from its own kernel; ``work`` is the data's: the caller's thread's."""
    work = _checked(model, data)
    return ContactKernelArrays(model.joints, model.bodies, work, unit_wrench_stack(model, data, links, components))


def kernel_external_forces(model: KernelModel, wrenches: Mapping | None) -> np.ndarray:
    """The kernel's f_ext (bodies, 6) of ``wrenches`` at one state (see ``inverse_dynamics``)."""
    return (external_forces(model, wrenches, model.zero_v) if wrenches else model.no_f_ext)[0]


def unit_wrench_stack(
    model: KernelModel, data: ModelData, links: list[str], components: tuple[int, ...] | None
) -> np.ndarray:
    """The kernel f_ext of each column of ``wrench_jacobian_transpose`` (kept in the data per links and components)."""
    components = tuple(components) if components is not None else (6,) * len(links)
    key = (tuple(links), components)
    F_ext = data.unit_wrenches.get(key)
    if F_ext is None:
        if len(components) != len(links) or not all(c in (3, 6) for c in components):
            raise ValueError(f"components must be 3 or 6 per link, got {list(components)} for {len(links)} links")
        F_ext = np.ascontiguousarray(
            np.concatenate(
                [
                    np.concatenate(_unit_wrenches(model, data, link)[:c])
                    for link, c in zip(links, components, strict=True)
                ]
            )
        )
        data.unit_wrenches[key] = F_ext
    return F_ext


def _unit_wrenches(model: KernelModel, data: ModelData, link: str) -> list[np.ndarray]:
    """The six unit wrenches on ``link`` as kernel f_ext arrays (they do not depend on q)."""
    cached = data.unit_wrenches.get(link)
    if cached is None:
        cached = [external_forces(model, {link: e}, model.zero_v) for e in np.eye(6)]
        data.unit_wrenches[link] = cached
    return cached


def _zeros_like(model: KernelModel, q: np.ndarray) -> np.ndarray:
    return model.zero_v if q.ndim == 1 else np.zeros((len(q), model.nv))


def _run(model: KernelModel, work: np.ndarray, q, qd, qdd, f_ext) -> np.ndarray:
    j, b = model.joints, model.bodies
    if q.ndim == 1 and qd.ndim == 1 and qdd.ndim == 1:  # the hot path: sizes checked in the kernel
        tau = np.empty(model.nv)
        status = model.entry_points.inverse_dynamics(j, b, q, qd, qdd, f_ext[0], work, tau)
        if status != kernel.OK:
            raise status_error(model, status, q, qd, qdd)
        return tau
    if not (q.ndim == qd.ndim == qdd.ndim == 2) or not (len(q) == len(qd) == len(qdd)):
        raise status_error(model, kernel.WRONG_SIZE, q, qd, qdd)
    tau = np.empty((len(q), model.nv))
    status, row = rnea_batch(j, b, q, qd, qdd, f_ext, work, tau, _batch_threads())
    if status != kernel.OK:
        raise status_error(model, status, q, qd, qdd, row)
    return tau


def status_error(model: KernelModel, status: int, q, qd, qdd, row: int | None = None) -> ValueError:
    """The error a kernel's ``status`` (not OK) means for the inputs (q, qd, qdd)."""
    if status == kernel.WRONG_SIZE:
        return ValueError(
            f"wrong input shapes: q {q.shape}, qd {qd.shape}, qdd {qdd.shape}; expected "
            f"(nq,), (nv,), (nv,) or (N, nq), (N, nv), (N, nv) with nq={model.nq}, nv={model.nv} "
            f"(joints: {model.joint_names})"
        )
    where = f"state {row}: " if row is not None else ""
    return ValueError(where + _STATUS_MESSAGES[status])


def external_forces(model: KernelModel, wrenches: Mapping[str, object], q: np.ndarray) -> np.ndarray:
    """External forces per body, in the body frame, Featherstone order [n; f] (one row per state of q)."""
    if not isinstance(wrenches, Mapping):
        raise TypeError(
            f"wrenches must map link names to [fx, fy, fz, tx, ty, tz] (a dict), got {type(wrenches).__name__}"
        )
    batch = q.shape[0] if q.ndim == 2 else None
    f_ext = np.zeros((batch or 1, model.num_bodies, 6))
    for link, wrench in wrenches.items():
        frame = model.tree.link_frames.get(link)
        if frame is None:
            raise ValueError(f"wrench on unknown link '{link}' (links: {model.link_names})")
        w = as_float_array(wrench, f"wrench on '{link}'")
        if w.shape not in ((6,), (batch, 6)) or not np.all(np.isfinite(w)):
            raise ValueError(
                f"wrench on '{link}' must be finite with shape (6,)"
                + (f" or ({batch}, 6)" if batch else "")
                + f", got shape {w.shape}"
            )
        if frame.body < 0:
            continue  # carried by the world: no joint feels it
        w = np.atleast_2d(w)
        force = _rotate_rows(frame.R, w[:, :3])
        torque = _rotate_rows(frame.R, w[:, 3:]) + np.cross(frame.p, force)
        f_ext[:, frame.body, :3] += torque
        f_ext[:, frame.body, 3:] += force
    return f_ext
