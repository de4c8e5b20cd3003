"""Benchmark of rnea_analyze: one hour of a 7-DoF arm at 1 kHz (3.6 M samples) in a rosbag2.

    python benchmarks/analyze.py [--seconds 3600] [--storage sqlite3|mcap] [--keep]

Writes the bag (joint_states of the example arm's 7 revolute joints along the demo
trajectory, efforts from the model plus viscous friction and noise) into a temporary
directory, then times ``rnea_analyze BAG --urdf ...`` in fresh processes: without a samples
file, with samples.csv, and with samples.parquet (zstd; needs pyarrow), plot included each
time; reports wall times, the files' sizes and the peak memory.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from rnea_ros import RobotModel
from rnea_ros.analysis.recording import joint_state_layout
from rnea_ros.demo.example_robot import example_arm_urdf, smooth_trajectory

ROOT = Path(__file__).resolve().parents[1]

CHUNK = 100_000


def write_bag(path: Path, seconds: float, storage: str) -> int:
    """Serialises one JointState, then patches stamps and values into copies of its bytes."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    JointState, Header, Time = (
        store.types[k] for k in ("sensor_msgs/msg/JointState", "std_msgs/msg/Header", "builtin_interfaces/msg/Time")
    )
    model = RobotModel.from_urdf(example_arm_urdf())
    names = model.joint_names[:7]
    template_msg = JointState(
        header=Header(stamp=Time(sec=0, nanosec=0), frame_id=""),
        name=names,
        position=np.zeros(7),
        velocity=np.zeros(7),
        effort=np.zeros(7),
    )
    template = np.frombuffer(store.serialize_cdr(template_msg, JointState.__msgtype__), dtype=np.uint8)
    layout = joint_state_layout(template.tobytes())
    rng = np.random.default_rng(0)
    n = int(seconds * 1000)
    plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        connection = writer.add_connection("/joint_states", JointState.__msgtype__, typestore=store)
        for start in range(0, n, CHUNK):
            k = np.arange(start, min(start + CHUNK, n))
            t_ns = 1_700_000_000_000_000_000 + k * 1_000_000
            q, qd, qdd = smooth_trajectory(model.nv, k * 1e-3)
            effort = model.inverse_dynamics(q, qd, qdd)[:, :7] + 0.5 * qd[:, :7]
            effort += rng.normal(scale=0.02, size=effort.shape)
            block = np.tile(template, (len(k), 1))
            block[:, 4:8] = (t_ns // 1_000_000_000).astype("<i4").view(np.uint8).reshape(-1, 4)
            block[:, 8:12] = (t_ns % 1_000_000_000).astype("<u4").view(np.uint8).reshape(-1, 4)
            for (offset, count), values in zip(layout.arrays, (q[:, :7], qd[:, :7], effort), strict=True):
                block[:, offset : offset + 8 * count] = np.ascontiguousarray(values).view(np.uint8)
            for row, stamp in zip(block, t_ns, strict=True):
                writer.write(connection, int(stamp), row.tobytes())
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3600.0, help="recording length at 1 kHz")
    parser.add_argument("--storage", choices=["sqlite3", "mcap"], default="sqlite3")
    parser.add_argument("--keep", action="store_true", help="keep the bag and the outputs")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="rnea_analyze_bench_"))
    try:
        bag = workdir / "recording"
        start = time.perf_counter()
        samples = write_bag(bag, args.seconds, args.storage)
        size = sum(f.stat().st_size for f in bag.iterdir()) / 2**20
        print(f"wrote {samples:,} samples ({size:,.0f} MiB, {args.storage}) in {time.perf_counter() - start:.0f} s")
        urdf = workdir / "arm.urdf"
        urdf.write_text(example_arm_urdf())
        base = [sys.executable, "-m", "rnea_ros.analysis.cli", str(bag), "--urdf", str(urdf)]
        walls = {}
        for label, options in (("nothing", ["--no-csv"]), ("csv", []), ("parquet", ["--no-csv", "--parquet"])):
            out = workdir / f"out_{label}"
            start = time.perf_counter()
            result = subprocess.run([*base, "--out", str(out), *options], cwd=ROOT, capture_output=True, text=True)
            walls[label] = time.perf_counter() - start
            if result.returncode != 0:
                raise SystemExit(result.stdout + result.stderr)
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**10  # the largest run so far
            if label == "csv":
                print(result.stdout.strip().splitlines()[0])
                print(
                    f"rnea_analyze: {walls[label]:.1f} s wall for {samples:,} samples "
                    f"({samples / walls[label]:,.0f} samples/s), peak RSS {peak:,.0f} MiB"
                )
        sizes = {
            "csv": (workdir / "out_csv/samples.csv").stat().st_size / 2**20,
            "parquet": (workdir / "out_parquet/samples.parquet").stat().st_size / 2**20,
        }
        print(f"without a samples file: {walls['nothing']:.1f} s wall")
        for label in ("csv", "parquet"):
            print(
                f"samples.{label}: {sizes[label]:,.1f} MiB, {walls[label]:.1f} s wall "
                f"({walls[label] - walls['nothing']:+.1f} s for writing it)"
            )
    finally:
        if args.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
