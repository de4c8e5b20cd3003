"""rnea_analyze's throughput in process, compile excluded: samples per second of model vs measured
(differentiation, inverse dynamics, the fits) on the example arm's 7 joints, beside Pinocchio's
own loop over the same states (`pin.rnea` per sample, the reference), and with --identify and
--identify --inertia.

    python benchmarks/analyze_throughput.py [--seconds 300] [--rounds 3] [--bag-seconds 600] [--no-figures]

The recording is made in memory (the demo trajectory at 1 kHz, efforts from the model plus noise)
and fed to ``analysis.pipeline.analyze`` in chunks as a file would be. Each figure is the best of
``--rounds`` runs, interleaved. The end-to-end row is what a user sees: ``rnea_analyze BAG --urdf
arm.urdf`` run as a command on an MCAP bag of ``--bag-seconds`` at 1 kHz (written first by
benchmarks/analyze.py's writer, rosbags' as rnea_record's), from the process's start to its exit,
summary, samples.csv and torques.png written; the best of ``--rounds`` runs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from rnea_ros import RobotModel
from rnea_ros.analysis.identify import Identification
from rnea_ros.analysis.link_inertia import urdf_link_inertials
from rnea_ros.analysis.pipeline import analyze
from rnea_ros.analysis.recording import JointChunk
from rnea_ros.demo.example_robot import example_arm_urdf, smooth_trajectory
from rnea_ros.demo.figures import write_table
from rnea_ros.testing.reference import PinocchioReference

CHUNK = 50_000
JOINTS = 7


def recording(model: RobotModel, seconds: float) -> list[JointChunk]:
    t = np.arange(int(seconds * 1000)) * 1e-3
    q, qd, qdd = smooth_trajectory(model.nv, t)
    effort = model.inverse_dynamics(q, qd, qdd) + np.random.default_rng(0).normal(scale=0.02, size=q.shape)
    names = model.joint_names[:JOINTS]
    return [
        JointChunk(
            names,
            t[k : k + CHUNK],
            q[k : k + CHUNK, :JOINTS],
            qd[k : k + CHUNK, :JOINTS],
            effort[k : k + CHUNK, :JOINTS],
        )
        for k in range(0, len(t), CHUNK)
    ]


def timed(run) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=300.0, help="recording length at 1 kHz")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bag-seconds", type=float, default=600.0, help="the end-to-end row's bag (0: no row)")
    parser.add_argument("--no-figures", action="store_true", help="print only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        end_to_end = command_on_a_bag(Path(scratch), args.bag_seconds, args.rounds) if args.bag_seconds else None
        measure(args, end_to_end)


def command_on_a_bag(scratch: Path, seconds: float, rounds: int) -> tuple[int, float]:
    """(samples, best wall seconds) of ``rnea_analyze BAG --urdf arm.urdf --out OUT`` in a fresh process."""
    from analyze import write_bag  # benchmarks/analyze.py, beside this script

    bag, urdf = scratch / "bag", scratch / "arm.urdf"
    samples = write_bag(bag, seconds, "mcap")
    urdf.write_text(example_arm_urdf())
    command = [str(Path(sys.executable).parent / "rnea_analyze"), str(bag), "--urdf", str(urdf)]
    best = np.inf
    for k in range(rounds + 1):  # the first run loads numba's cache into the page cache: not counted
        start = time.perf_counter()
        subprocess.run([*command, "--out", str(scratch / f"out{k}")], check=True, capture_output=True)
        if k:
            best = min(best, time.perf_counter() - start)
        if not (scratch / f"out{k}" / "samples.csv").is_file():
            raise RuntimeError("rnea_analyze wrote no samples.csv")
    return samples, best


def measure(args: argparse.Namespace, end_to_end: tuple[int, float] | None) -> None:
    urdf = example_arm_urdf()
    model = RobotModel.from_urdf(urdf)
    chunks = recording(model, args.seconds)
    samples = sum(len(c.t) for c in chunks)
    pinocchio = PinocchioReference(urdf, model)
    states = [(c.q, c.qd, np.gradient(c.qd, c.t, axis=0)) for c in chunks]
    links = urdf_link_inertials(model, urdf)

    def pinocchio_loop() -> None:
        q_full, qd_full, qdd_full = np.zeros(model.nv), np.zeros(model.nv), np.zeros(model.nv)
        for q, qd, qdd in states:
            for k in range(len(q)):
                q_full[:JOINTS], qd_full[:JOINTS], qdd_full[:JOINTS] = q[k], qd[k], qdd[k]
                pinocchio.inverse_dynamics(q_full, qd_full, qdd_full)  # one pin.rnea per sample, Python included

    runs = {
        "model vs measured": lambda: analyze(model, iter(chunks), window=0.05),
        "--identify": lambda: analyze(
            model, iter(chunks), window=0.05, identification=Identification(model.joint_names)
        ),
        "--identify --inertia": lambda: analyze(
            model, iter(chunks), window=0.05, identification=Identification(model.joint_names, links=links)
        ),
        "Pinocchio's loop (pin.rnea per sample)": pinocchio_loop,
    }
    for label, run in runs.items():  # compile and warm up, excluded from the figures
        if label != "Pinocchio's loop (pin.rnea per sample)":
            run()
    best = {label: np.inf for label in runs}
    for _ in range(args.rounds):
        for label, run in runs.items():
            best[label] = min(best[label], timed(run))
    reference = samples / best["Pinocchio's loop (pin.rnea per sample)"]
    rows = []
    rates = {label: samples / seconds for label, seconds in best.items()}
    if end_to_end:
        bag_samples, wall = end_to_end
        rates[f"end to end: `rnea_analyze` on a {bag_samples:,}-sample MCAP bag, process start to exit"] = (
            bag_samples / wall
        )
    for label, rate in rates.items():
        rows.append((label, f"{rate:,.0f}", f"{rate / reference:.2f}"))
        print(f"{label:<42}{rate:>12,.0f} samples/s  ({rate / reference:.2f}x Pinocchio's loop)")
    if not args.no_figures:
        note = (
            f"{samples:,} samples of the example arm's {JOINTS} joints at 1 kHz, in memory, chunks of {CHUNK:,}; "
            f"best of {args.rounds} interleaved rounds, compile excluded. "
            + (
                f"End to end: the command on the bag, wall-clock from its start to its exit (imports, numba's "
                f"cache, the read, the analysis, samples.csv and torques.png), best of {args.rounds} after one "
                f"run not counted ({end_to_end[1]:.2f} s); Pinocchio's loop as above, per sample. "
                if end_to_end
                else ""
            )
            + f"Load average {os.getloadavg()[0]:.1f}. Command: `python benchmarks/analyze_throughput.py`."
        )
        path = write_table(
            "analyze_throughput",
            "benchmarks/analyze_throughput.py",
            ("run", "samples/s", "× Pinocchio's loop"),
            rows,
            note,
        )
        print(f"figures written to {path}")


if __name__ == "__main__":
    main()
