"""numba's ``njit`` and ``prange`` for the library's kernels, or, while a process defers compilation,
the plain Python functions until it asks for numba's (no ROS).

rnea_node defers (``defer_compilation`` before its imports): its first answer is computed by the
kernels as plain Python (Go2 with four contacts: 7-11 ms an answer), without importing numba (~0.4 s of
CPU) or loading kernels from its cache (~0.2 s); ``compile_deferred`` then puts numba's dispatchers in
place of every deferred function, in each module and class of the package that holds one, and the node
rebuilds its model on them. Any other process compiles as usual: a kernel module imported before
``defer_compilation`` is never deferred.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

PACKAGE = "rnea_ros."
_deferred: list[tuple[Callable, dict]] | None = None  # (function, njit's options), while deferring


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


def compile_deferred() -> int:
    """numba's dispatcher (compiled, or loaded from its cache, at its first call) in place of every
    deferred function, in the package's modules and their classes; kernels decorated later compile
    as usual. How many were deferred."""
    global _deferred
    if _deferred is None:
        return 0
    import numba

    swaps: dict[int, object] = {id(function): numba.njit(**options)(function) for function, options in _deferred}
    swaps[id(_python_prange)] = numba.prange
    count, _deferred = len(swaps) - 1, None
    for name, module in list(sys.modules.items()):
        if module is not None and name.startswith(PACKAGE):
            _swap_in(vars(module), lambda key, value, module=module: setattr(module, key, value), swaps)
            for owner in [value for value in vars(module).values() if isinstance(value, type)]:
                if owner.__module__ == name:
                    _swap_in(vars(owner), lambda key, value, owner=owner: setattr(owner, key, value), swaps)
    return count


def _swap_in(names: dict, assign: Callable[[str, object], None], swaps: dict[int, object]) -> None:
    for key, value in list(names.items()):
        swap = swaps.get(id(value))
        if swap is not None and value is not swap:
            assign(key, swap)
