"""numba's ``njit`` and ``prange`` for the package's kernels, or, in a process that defers them, the plain
Python functions until it asks for numba's (no ROS, numba imported only when compiling).

rnea_node defers (``defer_compilation``, called by its ``__main__`` before any kernel module is imported)
when its live-path kernels are in a current ahead-of-time module (``aot``): its start then imports no
numba (~0.4 s of CPU) and loads nothing from numba's cache. A kernel or argument type the module does not
hold asks for numba (``compile_deferred``): numba's dispatchers then replace every deferred function in the
package's modules and classes, as a process that never deferred has them. Any other process compiles as
usual: a kernel module imported before ``defer_compilation`` is never deferred.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

PACKAGE = "rnea_ros."
_deferred: list[tuple[Callable, dict]] | None = None  # (function, njit's options), while deferring
_dispatchers: dict[int, object] = {}  # id(plain function) → its dispatcher, once compiled
_lock = threading.Lock()


def defer_compilation() -> None:
    """Kernels decorated from now on stay plain Python until ``compile_deferred``."""
    global _deferred
    if _deferred is None:
        _deferred = []


def deferring() -> bool:
    return _deferred is not None


def _python_prange(*args: int) -> range:
    return range(*args)


def njit(*args, **options):
    """``numba.njit``; while deferring, the function itself (recorded for ``compile_deferred``)."""
    if _deferred is None:
        import numba

        return numba.njit(*args, **options)

    def record(function: Callable) -> Callable:
        _deferred.append((function, options))
        return function

    return record(args[0]) if args and callable(args[0]) else record


def __getattr__(name: str):
    if name == "prange":  # numba's when a module imports it outside deferral, else range
        if _deferred is None:
            import numba

            return numba.prange
        return _python_prange
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def dispatcher(kernel: Callable) -> Callable:
    """numba's dispatcher of ``kernel`` (a dispatcher, or a deferred function: all are compiled first)."""
    if hasattr(kernel, "py_func"):
        return kernel
    compile_deferred()
    return _dispatchers.get(id(kernel), kernel)


def compile_deferred() -> int:
    """numba's dispatcher (compiled, or loaded from its cache, at its first call) in place of every
    deferred function, in the package's modules and their classes; kernels decorated later compile
    as usual. How many were deferred (0 once done, or when nothing was)."""
    global _deferred
    with _lock:
        if _deferred is None:
            return 0
        import numba

        swaps: dict[int, object] = {id(function): numba.njit(**options)(function) for function, options in _deferred}
        _dispatchers.update(swaps)
        swaps[id(_python_prange)] = numba.prange
        for name, module in list(sys.modules.items()):
            if module is not None and name.startswith(PACKAGE):
                _swap_in(vars(module), lambda key, value, module=module: setattr(module, key, value), swaps)
                for owner in [value for value in vars(module).values() if isinstance(value, type)]:
                    if owner.__module__ == name:
                        _swap_in(vars(owner), lambda key, value, owner=owner: setattr(owner, key, value), swaps)
        count, _deferred = len(swaps) - 1, None
        return count


def _swap_in(names: dict, assign: Callable[[str, object], None], swaps: dict[int, object]) -> None:
    for key, value in list(names.items()):
        swap = swaps.get(id(value))
        if swap is not None and value is not swap:
            assign(key, swap)
