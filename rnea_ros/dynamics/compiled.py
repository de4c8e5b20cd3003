"""Numba kernels called without numba's per-call type dispatch, on the hot paths: the ahead-of-time
compiled function when ``aot`` holds the kernel for these types (rnea_node's start), else numba's."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator

from rnea_ros.dynamics import aot, jit

_report: Callable[[str], None] | None = None  # told once why a deferring process turned to numba
_reported = False


def entry_point(kernel, *args) -> Callable:
    """The compiled kernel for these argument types, called without numba's per-call type
    dispatch (~150 ns of a 1–2 µs call, more with many arguments): the ahead-of-time module's
    export when it has one, else numba's (``numba_kernel``). Callers pass only arrays of
    exactly these types (C-contiguous float64 where ``args`` has them): a wrong type is not
    caught. ``kernel``: numba's dispatcher or, while ``jit`` defers, the plain function."""
    exported = aot.exported(kernel, args)
    if exported is not None:
        return exported
    dispatcher = numba_kernel(kernel, args)
    dispatcher(*args)  # compiles, or loads from numba's cache
    import numba

    return dispatcher.overloads[tuple(numba.typeof(a) for a in args)].entry_point


def report_to(report: Callable[[str], None]) -> None:
    """``report`` is told, once, when numba is imported for a kernel the ahead-of-time module lacks."""
    global _report
    _report = report


def numba_kernel(kernel, args: tuple | None = None) -> Callable:
    """numba's dispatcher of ``kernel``: in a process that deferred its kernels (``jit``), numba is
    imported now and its dispatchers put in place of every kernel, loaded from its cache as
    ``quick_cache_loads`` loads them (``args``: the call's, named in the report)."""
    global _reported
    if jit.deferring():
        install_quick_cache_loads()
        jit.compile_deferred()
        if _report is not None and not _reported:
            _reported = True
            _report(f"numba imported for {_call_name(kernel, args)}: not in the ahead-of-time kernels")
    return jit.dispatcher(kernel)


def _call_name(kernel, args: tuple | None) -> str:
    name = aot.kernel_name(getattr(kernel, "py_func", kernel))
    try:
        return name + (aot.signature(args) if args is not None else "")
    except TypeError:
        return name


class LazyEntryPoint:
    """``entry_point`` of a kernel compiled at its first call (few models need it), once even when
    two threads make that call together."""

    def __init__(self, dispatcher) -> None:
        self._dispatcher = dispatcher
        self._entry: Callable | None = None
        self._lock = threading.Lock()

    def __call__(self, *args):
        entry = self._entry
        if entry is None:
            with self._lock:
                if self._entry is None:
                    self._entry = entry_point(self._dispatcher, *args)
                entry = self._entry
        return entry(*args)


BLAS_MODULE = "scipy.linalg.cython_blas"


@contextlib.contextmanager
def quick_cache_loads() -> Iterator[None]:
    """Kernels loaded from numba's cache without numba's whole compiler set up first (rnea_node's run is
    inside it: its start's model ~0.5 s of CPU less, test/node/test_start_up.py). Before each load
    numba refreshes its CPU target: it imports every implementation it could need to compile (~0.3 s), and
    ``numba.np.arraymath``'s import imports ``scipy.linalg`` to see whether BLAS is there (~0.3 s).
    A load needs only numba's runtime initialised and the modules of the kernels' environments
    (imported as the load unpickles them): the same machine code runs, so the numbers are the same.
    scipy is kept out while a load imports ``arraymath`` (its BLAS flag, read only by
    ``np.correlate``/``np.convolve``, set again by ``finish_compiler_set_up``). A kernel not in the
    cache is compiled as usual: numba's compiler refreshes the target itself. Loads and compiles
    hold numba's compiler lock, so no compile sees scipy kept out."""
    undo = install_quick_cache_loads()
    try:
        yield
    finally:
        undo()


def install_quick_cache_loads() -> Callable[[], None]:
    """``quick_cache_loads``'s loads from now on (imports numba); returns what undoes it."""
    from numba.core.caching import Cache
    from numba.core.runtime import rtsys

    load_overload = Cache.load_overload
    if not hasattr(Cache, "_load_overload"):  # numba's private API, as of 0.61-0.68: a numba without it loads as usual
        return lambda: None
    if getattr(load_overload, "quick", False):
        return lambda: None

    def load_quickly(self, sig, target_context):
        rtsys.initialize(target_context)
        blocked = BLAS_MODULE not in sys.modules and "numba.np.arraymath" not in sys.modules
        if blocked:
            sys.modules[BLAS_MODULE] = None  # an ImportError for arraymath's check, without importing scipy
        try:
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)
        finally:
            if blocked and BLAS_MODULE in sys.modules and sys.modules[BLAS_MODULE] is None:
                del sys.modules[BLAS_MODULE]

    load_quickly.quick = True
    Cache.load_overload = load_quickly

    def undo() -> None:
        Cache.load_overload = load_overload

    return undo


def finish_compiler_set_up() -> None:
    """What ``quick_cache_loads`` left out, done now (off the hot path: ~0.6 s of CPU): numba's CPU
    target refreshed, and arraymath's BLAS flag as numba sets it when scipy's BLAS imports."""
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.registry import cpu_target

    with global_compiler_lock:
        arraymath = sys.modules.get("numba.np.arraymath")
        if arraymath is not None and not arraymath._HAVE_BLAS:
            arraymath._HAVE_BLAS = arraymath._check_blas()
        cpu_target.target_context.refresh()
