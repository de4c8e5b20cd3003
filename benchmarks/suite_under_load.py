"""The whole test suite, run twice in a row beside two busy processes (issue 36's "done when").

    python benchmarks/suite_under_load.py [--runs 2] [--busy 2] [--no-docs]

Runs `scripts/test` (what CI runs) `--runs` times in a row while `--busy` processes spin
(`python -c "while True: pass"`), records each run's wall-clock time, outcome line and exit code,
and writes docs/figures/suite_under_load.md. Run it from a fresh clone to measure what CI measures;
the spinning processes are this script's own children and are killed on the way out, whatever happens.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from rnea_ros.demo.figures import write_table

ROOT = Path(__file__).resolve().parents[1]


def load_average() -> str:
    return " / ".join(f"{value:.1f}" for value in os.getloadavg())


def run_suite(log: Path) -> tuple[int, float, str]:
    """(exit code, seconds, pytest's last line) of one `scripts/test` run, its output in ``log``."""
    start = time.perf_counter()
    with log.open("w") as out:
        suite = subprocess.run([str(ROOT / "scripts" / "test")], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    code = suite.returncode
    seconds = time.perf_counter() - start
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    return code, seconds, lines[-1] if lines else "(no output)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--busy", type=int, default=2)
    parser.add_argument("--no-docs", action="store_true")
    options = parser.parse_args()
    spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(options.busy)]
    rows = []
    try:
        for run in range(1, options.runs + 1):
            code, seconds, last = run_suite(Path(f"/tmp/suite_under_load_{os.getpid()}_{run}.log"))
            minutes, rest = divmod(round(seconds), 60)
            rows.append([run, f"{minutes} min {rest:02d} s", code, last.strip("= "), load_average()])
            print(*rows[-1], sep=" | ", flush=True)
    finally:
        for process in spinning:
            process.kill()
            process.wait()
    if not options.no_docs:
        note = (
            f"Command: `python benchmarks/suite_under_load.py --runs {options.runs} --busy {options.busy}` "
            f"from a fresh clone: `scripts/test` (what `.ci/run` runs) {options.runs} times in a row beside "
            f"{options.busy} processes spinning `while True: pass`."
        )
        header = ["run", "wall clock", "exit code", "pytest's summary", "load average at its end (1 / 5 / 15 min)"]
        print(write_table("suite_under_load", "benchmarks/suite_under_load.py", header, rows, note))
    return max(row[2] for row in rows)


if __name__ == "__main__":
    sys.exit(main())
