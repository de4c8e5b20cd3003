"""The whole test suite, run twice in a row beside two busy processes (issue 36's "done when");
with --inner-loop, the inner loop (`-m "not ros and not slow"`, issue 34's "under a minute").

    python benchmarks/suite_under_load.py [--runs 2] [--busy 2] [--no-docs]
    python benchmarks/suite_under_load.py --inner-loop --runs 3 --busy 0

Runs `scripts/test` (what CI runs) `--runs` times in a row while `--busy` processes spin
(`python -c "while True: pass"`), records each run's wall-clock time, CPU time (the run's processes,
user + system), outcome line and exit code, and writes docs/figures/suite_under_load.md (or
inner_loop.md). Run it from a fresh clone to measure what CI measures; the spinning processes are
this script's own children and are killed on the way out, whatever happens.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from rnea_ros.demo.figures import write_table

ROOT = Path(__file__).resolve().parents[1]


def load_average() -> str:
    return " / ".join(f"{value:.1f}" for value in os.getloadavg())


INNER_LOOP = ["-m", "not ros and not slow"]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_suite(log: Path, arguments: list[str]) -> tuple[int, float, float, str]:
    """(exit code, wall-clock seconds, CPU seconds, pytest's last line) of one `scripts/test` run
    with ``arguments``, its output in ``log``."""
    start, cpu = time.perf_counter(), children_cpu()
    with log.open("w") as out:
        suite = subprocess.run(
            [str(ROOT / "scripts" / "test"), *arguments], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT
        )
    code = suite.returncode
    seconds, cpu = time.perf_counter() - start, children_cpu() - cpu
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    return code, seconds, cpu, lines[-1] if lines else "(no output)"


def duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{rest} s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--busy", type=int, default=2)
    parser.add_argument("--inner-loop", action="store_true", help='only the inner loop: -m "not ros and not slow"')
    parser.add_argument("--no-docs", action="store_true")
    options = parser.parse_args()
    arguments = INNER_LOOP if options.inner_loop else []
    spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(options.busy)]
    rows = []
    try:
        for run in range(1, options.runs + 1):
            log = Path(f"/tmp/suite_under_load_{os.getpid()}_{run}.log")
            code, seconds, cpu, last = run_suite(log, arguments)
            rows.append([run, duration(seconds), duration(cpu), code, last.strip("= "), load_average()])
            print(*rows[-1], sep=" | ", flush=True)
    finally:
        for process in spinning:
            process.kill()
            process.wait()
    if not options.no_docs:
        flags = " --inner-loop" if options.inner_loop else ""
        what = (
            'the inner loop, `scripts/test -m "not ros and not slow"`,'
            if options.inner_loop
            else ("`scripts/test` (what `.ci/run` runs)")
        )
        beside = f"beside {options.busy} processes spinning `while True: pass`" if options.busy else "otherwise quiet"
        note = (
            f"Command: `python benchmarks/suite_under_load.py{flags} --runs {options.runs} --busy {options.busy}`: "
            f"{what} {options.runs} times in a row, {beside}. CPU: user + system of every process the run started."
        )
        header = [
            "run",
            "wall clock",
            "CPU",
            "exit code",
            "pytest's summary",
            "load average at its end (1 / 5 / 15 min)",
        ]
        name = "inner_loop" if options.inner_loop else "suite_under_load"
        print(write_table(name, "benchmarks/suite_under_load.py", header, rows, note))
    return max(row[3] for row in rows)


if __name__ == "__main__":
    sys.exit(main())
