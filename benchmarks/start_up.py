"""rnea_node's start-up on Go2 with four foot contacts: cold numba cache, after `python -m rnea_ros.compile`, warm.

    python benchmarks/start_up.py [--rounds 3] [--no-docs]

Each figure is a fresh process that imports the node's core and builds its live model from Go2's URDF
(floating base, contact_links on the four feet): the model, the first inverse dynamics and both contact
distributions, i.e. everything the node computes before its first output; without ROS, so that DDS
discovery does not blur the compile time. Cold: NUMBA_CACHE_DIR is an empty directory. After compile:
the same directory once `python -m rnea_ros.compile` (which never sees Go2) has filled it. Warm: a
second start on that cache. Writes docs/figures/start_up.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from rnea_ros.demo.figures import write_table

FEET = ["FL_foot", "FR_foot", "RL_foot", "RR_foot"]
START = f"""
import time; t0 = time.perf_counter()
from rnea_ros.dynamics.precompile import kernels_in_cache
from rnea_ros.node.core import build_live_model
from rnea_ros.node.settings import settings_from
from rnea_ros.testing.reference import robot_urdf

cached = kernels_in_cache()
urdf = robot_urdf("go2_description/urdf/go2.urdf")
build_live_model(urdf, settings_from({{"floating_base": True, "contact_links": {FEET!r}}}))
print(cached, time.perf_counter() - t0)
"""


def start(cache: str) -> tuple[bool | None, float]:
    """(whether the kernels were in the cache before, seconds to a computing model) of a fresh process."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    out = subprocess.run([sys.executable, "-c", START], env=env, capture_output=True, text=True, check=True)
    cached, seconds = out.stdout.split()[-2:]
    return {"True": True, "False": False}.get(cached), float(seconds)


def compile_all(cache: str) -> float:
    start_time = time.perf_counter()
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    subprocess.run([sys.executable, "-m", "rnea_ros.compile"], env=env, capture_output=True, check=True)
    return time.perf_counter() - start_time


def one_round() -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as cold, tempfile.TemporaryDirectory() as compiled:
        seen_cold, cold_seconds = start(cold)
        compile_seconds = compile_all(compiled)
        seen_compiled, after_compile = start(compiled)
        _, warm = start(compiled)
    assert seen_cold is not True and seen_compiled is not False, (seen_cold, seen_compiled)
    return {"cold": cold_seconds, "compile": compile_seconds, "after compile": after_compile, "warm": warm}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-docs", action="store_true", help="do not write docs/figures/start_up.md")
    args = parser.parse_args()
    rounds = [one_round() for _ in range(args.rounds)]
    load = os.getloadavg()[0]
    table = []
    for name in rounds[0]:
        values = [r[name] for r in rounds]
        table.append((name, f"{statistics.median(values):.2f} s", ", ".join(f"{v:.2f}" for v in values)))
        print(f"{name:14s} median {statistics.median(values):6.2f} s   ({table[-1][2]})")
    if not args.no_docs:
        note = (
            f"Go2 (floating base, 4 foot contacts): a fresh process to a computing live model; medians of "
            f"{args.rounds} rounds; load average {load:.1f} at the end. 'compile' is `python -m rnea_ros.compile`."
        )
        print(f"wrote {write_table('start_up', 'benchmarks/start_up.py', ('start', 'median', 'rounds'), table, note)}")


if __name__ == "__main__":
    main()
