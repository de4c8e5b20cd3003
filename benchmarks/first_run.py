"""What a new user waits for on this machine: a fresh clone's first `scripts/demo` (the venv made from
pip's cache, control_msgs built, numba's cache compiled, then the demo: four real-time runs and the
figures), its second `scripts/demo` (everything made), and `scripts/setup --dev` on top (the test
tools), timed in wall-clock seconds, without other work added and beside busy processes.

    python benchmarks/first_run.py            # writes docs/figures/first_run.md
    python benchmarks/first_run.py --busy 0   # only the run without busy processes added

pip's own cache is the machine's (warm after the first install anywhere on it): a machine that never
installed these wheels also downloads them (about 0.6 GB).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rnea_ros.demo.figures import write_table

ROOT = Path(__file__).resolve().parents[1]
STEPS = (
    ("first scripts/demo (set-up + demo)", ["scripts/demo"]),
    ("second scripts/demo", ["scripts/demo"]),
    ("scripts/setup --dev after them", ["scripts/setup", "--dev"]),
)
TIMEOUT = 3600.0


def user_environment(caches: Path) -> dict[str, str]:
    """This process's environment without the checkout's venv: a shell as a new user has it. numba's cache
    and the node's ahead-of-time module go to an empty folder (``caches``): a new user has neither, and the
    module in ~/.cache built from the same sources would otherwise be found current and its build skipped."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if ".venv" not in p)
    env["NUMBA_CACHE_DIR"] = str(caches)
    return env


def timed_steps(clone: Path, busy: int) -> list[tuple]:
    spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
    machine = f"beside {busy} busy processes" if busy else "no busy process added"
    load = os.getloadavg()[0]
    rows = []
    try:
        for label, command in STEPS:
            start = time.perf_counter()
            result = subprocess.run(
                command,
                cwd=clone,
                env=user_environment(clone.parent / "caches"),
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
            )
            seconds = time.perf_counter() - start
            if result.returncode != 0:
                raise RuntimeError(f"{' '.join(command)} failed ({result.returncode}):\n{result.stderr[-3000:]}")
            rows.append((label, machine, f"{load:.1f}", f"{seconds:.0f}", f"{seconds / 60:.1f}"))
            print(rows[-1], flush=True)
    finally:
        for process in spinning:
            process.kill()
            process.wait()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", type=int, nargs="*", default=[0, 2], help="busy processes beside each run")
    args = parser.parse_args()
    rows = []
    for busy in args.busy:
        with tempfile.TemporaryDirectory(prefix="rnea_first_run_") as folder:
            clone = Path(folder) / "rnea_ros"
            subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
            rows += timed_steps(clone, busy)
    header = ("step", "machine", "load average before", "wall-clock [s]", "[min]")
    note = (
        "A fresh `git clone` of this checkout's HEAD, each step run as a user runs it (no venv active), one after "
        "the other; pip's cache warm, numba's cache and the node's compiled module empty at the start. "
        "The load average is the machine's before the steps (other work included)."
    )
    print(f"wrote {write_table('first_run', 'benchmarks/first_run.py', header, rows, note)}")


if __name__ == "__main__":
    main()
