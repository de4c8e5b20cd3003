"""Benchmark of rnea_analyze on a fleet: N recordings on 1 and 2 local worker processes and
through a Dask scheduler (a LocalCluster of 2 worker processes on loopback), same run.

    python benchmarks/fleet.py [--recordings 8] [--seconds 30]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from rnea_ros.analysis.fleet import RecordingTask, run_tasks
from rnea_ros.demo.example_robot import example_arm_urdf
from rnea_ros.testing.recorded_data import simulate, write_bag


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recordings", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=30.0, help="length of each recording at 1 kHz")
    args = parser.parse_args()
    urdf = example_arm_urdf()
    folder = Path(tempfile.mkdtemp(prefix="rnea_fleet_bench_"))
    try:
        paths = [
            str(write_bag(folder / f"robot{k}", simulate(urdf, args.seconds, viscous={"joint3": 1.0}, seed=k), urdf))
            for k in range(args.recordings)
        ]
        tasks = [RecordingTask(path, urdf) for path in paths]
        samples = args.recordings * int(args.seconds * 1000)
        run_tasks(tasks[:1], workers=1)  # numba's cache and the imports, once
        timings = {}
        for workers in (1, 2):
            start = time.perf_counter()
            run_tasks(tasks, workers=workers)
            timings[f"{workers} local worker(s)"] = time.perf_counter() - start
        from distributed import LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None) as cluster:
            run_tasks(tasks[:2], scheduler=cluster.scheduler_address)  # the workers' imports
            start = time.perf_counter()
            run_tasks(tasks, scheduler=cluster.scheduler_address)
            timings["Dask, 2 workers"] = time.perf_counter() - start
        reference = timings["1 local worker(s)"]
        print(f"{args.recordings} recordings × {args.seconds:.0f} s at 1 kHz ({samples:,} samples):")
        for label, seconds in timings.items():
            print(
                f"  {label:<20} {seconds:6.1f} s  {samples / seconds:>10,.0f} samples/s  "
                f"{reference / seconds:.2f}× of 1 worker"
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
