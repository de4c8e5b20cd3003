"""rnea_node's live-path kernels compiled ahead of time (numba.pycc) into one extension module, which the
node loads without importing numba (``rnea_ros.dynamics.aot``; issue 45: the first answer).

``build`` runs ``python -m rnea_ros.aot_build <folder>`` in a process of its own: pycc links the machine
code of the kernels each live kernel calls from their LLVM IR, so they are compiled there afresh (a
throw-away numba cache), never loaded from numba's cache. The exports are every signature the node's
model build and answers give the live kernels (the kernels the node calls from Python; those they call are
compiled into them), for this CPU with its own features, as numba's JIT compiles them: the same machine
code's numbers. pycc is pending deprecation since numba 0.57 (still in 0.68): a numba without it builds
nothing, and the node uses numba's kernels as before.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from rnea_ros.controller import torques
from rnea_ros.dynamics import aot, contact_distribution, contact_forces, rnea, rnea_block

# The kernels rnea_node calls from Python on its live path (entry_point, LazyEntryPoint).
LIVE_KERNELS = (
    rnea.inverse_dynamics,
    rnea.gravity,
    rnea.with_contact_terms,
    contact_distribution._minimum_norm_torques,
    contact_forces._contact_consistent_torques,
    torques._in_command_order_clipped,
    rnea_block.rnea_batch_here,  # a trajectory's points (algorithms.rnea_batch)
)
BUILD_TIMEOUT = 1800  # s: a fresh compile of the live kernels, on a loaded machine


def build(where: Path | None = None) -> str:
    """Builds the module into ``where`` (``aot.folder()``) in a process of its own, unless the one there is
    current; what it did."""
    where = aot.folder() if where is None else where
    if aot.stale_reason(where) is None:
        return f"rnea_node's ahead-of-time kernels in {where} are current"
    with tempfile.TemporaryDirectory(prefix="rnea_aot_numba_") as numba_cache:
        environ = {**os.environ, "NUMBA_CACHE_DIR": numba_cache}
        run = subprocess.run(
            [sys.executable, "-m", "rnea_ros.aot_build", str(where)],
            env=environ,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT,
        )
    if run.returncode != 0:
        raise RuntimeError(f"the ahead-of-time build failed:\n{run.stderr[-3000:]}")
    return run.stdout.strip()


def _package_sources() -> list[str]:
    """The package's sources the live kernels' modules import (their globals can come only from them),
    and this module's (the kernels and the signatures built)."""
    root = aot.PACKAGE_ROOT
    paths = []
    for name, module in sorted(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if name.startswith("rnea_ros") and path and path.endswith(".py"):
            paths.append(str(Path(path).resolve().relative_to(root)))
    return [*paths, str(Path(__file__).resolve().relative_to(root))]  # and what the module is built of


def _run_live_path() -> None:
    """Every signature the node gives its live kernels: a fixed and a floating base, each distribution."""
    from rnea_ros.controller.core import build_live_model
    from rnea_ros.controller.settings import settings_from
    from rnea_ros.dynamics.precompile import CONTACT_LINK, SMALL_ROBOT, small_robot

    build_live_model(SMALL_ROBOT, settings_from({}))
    for kind in contact_distribution.KINDS:
        settings = settings_from({"floating_base": True, "contact_links": [CONTACT_LINK], "contact_distribution": kind})
        build_live_model(SMALL_ROBOT, settings).bound.run_distributions()
    model = small_robot(True)
    zero = model.zero_v
    model.with_contact_terms(model.neutral_configuration(), zero, zero, None, [CONTACT_LINK], (3,))
    torques.compile_kernels()
    for base in (False, True):  # a trajectory's batch, as algorithms._run passes it
        model = small_robot(base)
        Q, V = np.tile(model.neutral_configuration(), (3, 1)), np.zeros((3, model.nv))
        work = model.thread_data().work
        for f_ext in (model.no_f_ext, np.zeros((3, model.num_bodies, 6))):
            rnea_block.rnea_batch_here(model.joints, model.bodies, Q, V, V, f_ext, work, np.empty((3, model.nv)))


def _compile(where: Path, sources: list[str]) -> dict:
    from numba.core import codegen
    from numba.pycc import CC

    # numba's JIT compiles for this CPU with its features; pycc's 'host' takes the CPU model's defaults
    codegen.AOTCPUCodegen._customize_tm_features = lambda self: self._get_host_cpu_features()
    hashes = aot.source_hashes(sources)
    name = "rnea_live_" + hashlib.sha256(json.dumps(hashes, sort_keys=True).encode()).hexdigest()[:12]
    cc = CC(name)
    cc.target_cpu = "host"
    cc.output_dir = str(where)
    kernels: dict[str, dict[str, str]] = {}
    for kernel in LIVE_KERNELS:
        for args in kernel.signatures:
            symbol = f"k{sum(map(len, kernels.values()))}"
            cc.export(symbol, kernel.overloads[args].signature)(kernel.py_func)
            kernels.setdefault(aot.kernel_name(kernel.py_func), {})["(" + ", ".join(map(str, args)) + ")"] = symbol
    cc.compile()
    return {"module": name, "file": Path(cc.output_file).name, "sources": hashes, "kernels": kernels}


def main(where: Path) -> int:
    start = time.perf_counter()
    sources = _package_sources()
    _run_live_path()
    where.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".building-", dir=where))
    try:
        manifest = _compile(staging, sources)
        (where / aot.MANIFEST).unlink(missing_ok=True)  # a node starting meanwhile uses numba
        for old in where.glob("rnea_live_*"):
            old.unlink()
        os.replace(staging / manifest["file"], where / manifest["file"])
        (staging / aot.MANIFEST).write_text(json.dumps(manifest, indent=1))
        os.replace(staging / aot.MANIFEST, where / aot.MANIFEST)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    count = sum(map(len, manifest["kernels"].values()))
    print(f"{count} live kernels compiled ahead of time into {where} in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
