"""``python -m rnea_ros.node``: rnea_node, with SIGINT and SIGTERM ending its start cleanly from the
first instant (its modules take 1-2 s to load: numpy, numba, rclpy); ``run`` is also the entry point.

Fast DDS: unless the user sets a profile of their own, the node uses ``fastdds_start.xml`` (next to
this file; it says why): without it, a subscriber already running found the node 2-2.5 s late in
most starts on this machine (docs/figures/start_up.md).

Every message module's ``from rosidl_generator_py import import_type_support`` ran that package's
``__init__``, which imports the IDL code generator too (lark, em: ~30 ms of CPU on the way to the
first answer, for code the node never generates): ``_type_support_without_the_generator`` registers
the package without running it; its other names load when first asked for.

numpy's OpenBLAS starts one thread per core when it loads, and that start doubled numpy's import (0.17-0.23
against 0.10 s of CPU, on the way to the first answer): the node's linear algebra is small (a model's
6x6 blocks, the contact QP's few unknowns), so unless the user sets its threads, OpenBLAS runs on one.
"""

import importlib.util
import os
import signal
import sys
from collections.abc import Mapping, MutableMapping
from pathlib import Path

from rnea_ros.node import start_phase

FASTDDS_PROFILE = Path(__file__).with_name("fastdds_start.xml")
PROFILE_VARIABLES = ("FASTRTPS_DEFAULT_PROFILES_FILE", "FASTDDS_DEFAULT_PROFILES_FILE")
PROFILE_FILES = ("DEFAULT_FASTRTPS_PROFILES.xml", "DEFAULT_FASTDDS_PROFILES.xml")  # read from the working directory
NO_AOT_VARIABLE = "RNEA_NO_AOT"  # set: numba's kernels, as without an ahead-of-time module
FASTDDS_RMWS = ("", "rmw_fastrtps_cpp", "rmw_fastrtps_dynamic_cpp")  # "": Jazzy's default, rmw_fastrtps_cpp
TYPE_SUPPORT_PACKAGE = "rosidl_generator_py"
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")  # what OpenBLAS reads, in order


def start_profile(environ: Mapping[str, str], folder: Path) -> Path | None:
    """The Fast DDS profile the node should use: ours when the middleware is Fast DDS and the user
    set none (neither variable, nor a default file in the working directory ``folder``), else None."""
    if environ.get("RMW_IMPLEMENTATION", "") not in FASTDDS_RMWS or not FASTDDS_PROFILE.is_file():
        return None
    if any(environ.get(name) for name in PROFILE_VARIABLES):
        return None
    if any((folder / name).exists() for name in PROFILE_FILES):
        return None
    return FASTDDS_PROFILE


def one_blas_thread(environ: MutableMapping[str, str]) -> None:
    """OpenBLAS on one thread (see the module) unless ``environ`` sets its threads already."""
    if not any(environ.get(name) for name in BLAS_THREADS):
        environ[BLAS_THREADS[0]] = "1"


def _type_support_without_the_generator() -> None:
    """``rosidl_generator_py`` in sys.modules, its ``import_type_support`` loaded, its ``__init__`` run only
    when another of its names is asked for (see the module); imported as usual when it is not the
    package expected."""
    if TYPE_SUPPORT_PACKAGE in sys.modules:
        return
    spec = importlib.util.find_spec(TYPE_SUPPORT_PACKAGE)
    if spec is None or not spec.submodule_search_locations or spec.loader is None:
        return
    package = importlib.util.module_from_spec(spec)
    sys.modules[TYPE_SUPPORT_PACKAGE] = package
    try:
        from rosidl_generator_py.import_type_support_impl import import_type_support
    except ImportError:
        del sys.modules[TYPE_SUPPORT_PACKAGE]
        return
    package.import_type_support = import_type_support

    def whole(name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        del package.__getattr__
        spec.loader.exec_module(package)
        return getattr(package, name)

    package.__getattr__ = whole


def _kernels_ahead_of_time() -> None:
    """The live kernels from their ahead-of-time module when it is current (``rnea_ros.dynamics.aot``):
    the other kernels' compilation deferred, so that no numba is imported before it is needed."""
    if os.environ.get(NO_AOT_VARIABLE):
        return
    from rnea_ros.dynamics import aot, jit

    if aot.load():
        jit.defer_compilation()


def _interrupt(_signum: int, _frame) -> None:
    raise KeyboardInterrupt


def run() -> None:
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN:
        signal.signal(signal.SIGTERM, _interrupt)  # as SIGINT does, until main() installs its own
    try:
        start_phase("python")
        if profile := start_profile(os.environ, Path.cwd()):  # read when rclpy creates the participant
            os.environ[PROFILE_VARIABLES[0]] = str(profile)
        if "coverage" not in sys.modules:  # not measured: numba's import would load coverage.py (0.1-0.2 s) for nothing
            sys.modules["coverage"] = None
        one_blas_thread(os.environ)  # before numpy's import
        _type_support_without_the_generator()
        _kernels_ahead_of_time()
        from rnea_ros.node.node import main
    except KeyboardInterrupt:  # as node.exit_interrupted does, before that module is there
        print("rnea_node: interrupted while starting", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(0)
    main()


if __name__ == "__main__":
    run()
