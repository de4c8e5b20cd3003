"""rnea_node's live-path kernels as machine code compiled ahead of time, loaded without importing numba.

``python -m rnea_ros.compile`` builds them (``rnea_ros.aot_build``, numba.pycc) into one extension module
in ``folder()``, beside numba's cache, with a manifest: the exports of each kernel by the numba type of its
arguments, and the hash of every package source the kernels' modules import. ``load`` imports the module
only when it is current: the same sources, numba, llvmlite, Python and CPU (else it says why, and the
node uses numba as before). ``exported`` is then the compiled function for a kernel and its arguments, or
None (not built for these types): the caller goes to numba.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import platform
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

MANIFEST = "manifest.json"
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder that holds rnea_ros/
_module = None
_exports: dict[str, dict[str, str]] = {}  # "module.qualname" → {argument types → exported name}
NOT_LOADED = "not loaded"
_status = NOT_LOADED


def folder() -> Path:
    """Where the module lives: beside numba's cache when NUMBA_CACHE_DIR is set, else in the user's cache
    (never in the package's sources), one subfolder per platform (``platform_tag``)."""
    numba_cache = os.environ.get("NUMBA_CACHE_DIR")
    if numba_cache:
        base = Path(numba_cache)
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rnea_ros"
    return base / "rnea_ros_aot" / platform_tag()


def platform_tag() -> str:
    """What the machine code depends on besides the package's sources: numba, llvmlite, Python, the CPU."""
    parts = [
        sys.version,
        sys.implementation.cache_tag,
        platform.machine(),
        _cpu(),
        *map(_version_file, ("numba", "llvmlite")),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            lines = [line for line in info.read(65536).splitlines() if line.startswith(("model name", "flags"))]
        return "\n".join(lines[:2])
    except OSError:
        return platform.processor()


def _version_file(package: str) -> str:
    """The package's ``_version.py``, read without importing it ("" when it is not installed)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.origin:
        return ""
    try:
        return Path(spec.origin).with_name("_version.py").read_text()
    except OSError:
        return ""


def source_hashes(paths: list[str]) -> dict[str, str]:
    """sha256 of each source, by its path relative to the folder that holds the package."""
    return {path: hashlib.sha256((PACKAGE_ROOT / path).read_bytes()).hexdigest() for path in paths}


def current_manifest(where: Path) -> tuple[dict | None, str]:
    """The manifest of ``where``'s module when it is current, else None; and what was found."""
    try:
        manifest = json.loads((where / MANIFEST).read_text())
    except (OSError, ValueError):
        return None, f"no ahead-of-time kernels in {where} (`python -m rnea_ros.compile` builds them)"
    try:
        current = source_hashes(list(manifest["sources"]))
    except OSError as error:
        current = {str(error): ""}
    changed = sorted(path for path, digest in manifest["sources"].items() if current.get(path) != digest)
    if changed:
        return None, f"the ahead-of-time kernels are stale ({', '.join(changed[:3])} changed since they were built)"
    return manifest, f"ahead-of-time kernels in {where}"


def stale_reason(where: Path) -> str | None:
    """Why ``where`` holds no current module (None: it does)."""
    manifest, found = current_manifest(where)
    return None if manifest is not None else found


def load(where: Path | None = None) -> bool:
    """Imports the current module of ``where`` (``folder()``); False, with ``status()`` saying why, when
    there is none or it is stale."""
    global _module, _exports, _status
    where = folder() if where is None else where
    manifest, _status = current_manifest(where)
    if manifest is None:
        return False
    name = manifest["module"]
    loader = importlib.machinery.ExtensionFileLoader(name, str(where / manifest["file"]))
    spec = importlib.util.spec_from_file_location(name, loader.path, loader=loader)
    try:
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
    except ImportError as error:
        _status = f"the ahead-of-time kernels could not be loaded: {error}"
        return False
    _module, _exports = module, manifest["kernels"]
    _status = f"{sum(map(len, _exports.values()))} kernels loaded ahead of time from {where}"
    return True


def loaded() -> bool:
    return _module is not None


def status() -> str:
    """What ``load`` found: loaded, or why not."""
    return _status


def kernel_name(function: Callable) -> str:
    """A kernel's key in the manifest: its module and qualified name."""
    return f"{function.__module__}.{function.__qualname__}"


def exported(kernel: Callable, args: tuple) -> Callable | None:
    """The compiled ``kernel`` (a plain function or numba's dispatcher) for these arguments' types, or None."""
    if _module is None:
        return None
    function = getattr(kernel, "py_func", kernel)
    by_types = _exports.get(kernel_name(function))
    if by_types is None:
        return None
    try:
        name = by_types.get(signature(args))
    except TypeError:
        return None
    return None if name is None else getattr(_module, name)


def signature(args: tuple) -> str:
    """The arguments' numba types as numba writes them (``numba.typeof``), for the types kernels take."""
    return "(" + ", ".join(map(type_name, args)) + ")"


def type_name(value) -> str:
    """``str(numba.typeof(value))`` for arrays, named and plain tuples, bools, ints and floats."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, tuple):
        return _tuple_name(value)
    if isinstance(value, np.generic):
        return _dtype_name(value.dtype)
    if not isinstance(value, np.ndarray):
        raise TypeError(f"no numba type name for {type(value).__name__}")
    flags = value.flags
    dtype = _dtype_name(value.dtype)
    layout = "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A"
    readonly = "" if flags.writeable else "readonly "
    return f"{readonly}array({dtype}, {value.ndim}d, {layout})"


def _dtype_name(dtype: np.dtype) -> str:
    return "bool" if dtype.kind == "b" else str(dtype)


def _tuple_name(value: tuple) -> str:
    names = [type_name(item) for item in value]
    named = type(value) is not tuple and hasattr(value, "_asdict")
    if names and all(name == names[0] for name in names):
        inner = f"{names[0]} x {len(names)}"
        return f"{type(value).__name__}({inner})" if named else f"UniTuple({inner})"
    return f"{type(value).__name__}({', '.join(names)})" if named else f"Tuple({', '.join(names)})"
