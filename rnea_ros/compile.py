"""``python -m rnea_ros.compile`` (``rnea_compile``): every numba kernel that rnea_node, rnea_sim and
rnea_analyze can use, compiled into numba's cache now rather than at their first message.

scripts/setup runs it after installing; run it after any other install, or after an upgrade of numba
(its cache is per numba version). The node, the simulator and the library then load the kernels in
about a second instead of compiling them (~30 s, more on a loaded machine). Types, never robot sizes,
decide a compilation (``dynamics.precompile``): the small robots below serve every robot.
It also writes the package's bytecode (``compile_bytecode``), as an install by pip does.
"""

from __future__ import annotations

import compileall
import io
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from rnea_ros import aot_build
from rnea_ros.analysis.differentiate import local_polynomial_derivatives, local_polynomial_derivatives_many
from rnea_ros.analysis.fast_csv import RowWriter, format_rows
from rnea_ros.analysis.mcap_scan import _topic_messages, walk_records
from rnea_ros.analysis.pipeline import JointFits
from rnea_ros.controller.core import build_live_model
from rnea_ros.controller.settings import settings_from
from rnea_ros.dynamics.precompile import CONTACT_LINK, SMALL_ROBOT, compile_dynamics


def compile_node() -> None:
    """The node's start-up path (model, contact distributions, the commands' kernel), fixed and floating."""
    build_live_model(SMALL_ROBOT, settings_from({}))
    build_live_model(SMALL_ROBOT, settings_from({"floating_base": True, "contact_links": [CONTACT_LINK]}))


def compile_analysis() -> None:
    """rnea_analyze's own kernels: the derivatives of a recording (one window, and the window's choice
    among several), the fits' sums, the CSV writer (and its thread's), the MCAP walk."""
    t = np.linspace(0.0, 1.0, 50)
    y = np.sin(np.outer(t, [1.0, 2.0]))
    local_polynomial_derivatives(t, y, 0.1)
    local_polynomial_derivatives_many(t, y, [0.1, 0.2], at=np.arange(0, 50, 2))
    JointFits(2).add(y, y, y)
    format_rows(np.zeros((3, 2)))
    with RowWriter(io.BytesIO()) as rows:
        rows.write_rows(np.zeros((3, 2)))
    bag = np.frombuffer(bytes(9), np.uint8)  # a bag's bytes are read-only
    ops, offsets, lengths, _ = walk_records(bag, 0, 9)
    _topic_messages(bag, ops, offsets, lengths, np.zeros(1, np.int64))


def compile_ahead_of_time() -> None:
    """rnea_node's live kernels as an extension module (``aot_build``), loaded at its start without numba;
    when it cannot be built, the node uses numba's cache as before (said here, not an error)."""
    try:
        print(aot_build.build(), flush=True)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
        print(f"rnea_node's kernels not compiled ahead of time, it will use numba's cache: {error}", flush=True)


PACKAGE = Path(__file__).resolve().parent


def compile_bytecode(package: Path = PACKAGE) -> bool:
    """Every module of ``package`` compiled to bytecode beside its source (``__pycache__``), as pip's
    install does: a process that writes none (PYTHONDONTWRITEBYTECODE, a read-only checkout) otherwise
    compiles each module it imports from source at every start (rnea_node: ~50 modules, 0.05-0.15 s of
    CPU before its first answer). False, and said, when some could not be written."""
    written = compileall.compile_dir(package, quiet=2)
    if not written:
        print(f"the bytecode of {package} could not all be written: its modules compile at each import", flush=True)
    return bool(written)


STEPS = (("dynamics", compile_dynamics), ("rnea_node", compile_node), ("rnea_analyze", compile_analysis))


def _timed(name: str, step: Callable[[], None]) -> None:
    step_start = time.perf_counter()
    step()
    print(f"compiled the kernels of {name} in {time.perf_counter() - step_start:.1f} s", flush=True)


def main() -> int:
    start = time.perf_counter()
    # the ahead-of-time build is a process of its own (aot_build): it runs on the other core meanwhile
    ahead = threading.Thread(target=_timed, args=("rnea_node ahead of time", compile_ahead_of_time))
    ahead.start()
    compile_bytecode()
    for name, step in STEPS:
        _timed(name, step)
    ahead.join()
    print(f"numba's cache is ready ({time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
