"""Benchmark of the dynamics core against Pinocchio, interleaved in one run, medians.

    scripts/bench            # or: python benchmarks/core.py [--rounds N]

Times single calls of inverse_dynamics / gravity_torques against pinocchio.rnea /
computeGeneralizedGravity, a 1,000-state batch (on numba's threads, and on one) against a Python
loop over pinocchio.rnea, and the first call in a fresh process with a warm numba cache.

The machine may be shared: a single call's figure is, per round, the best of many short batches
(those the scheduler did not interrupt), the contenders taking turns batch by batch; the table
gives the median of the rounds' figures, and the ratio is ours / Pinocchio's within each round.
A batch's figure is the median of its rounds, and its ratio the median of the rounds' ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import numba
import numpy as np
import pinocchio as pin

from rnea_ros import RobotModel
from rnea_ros.demo.figures import write_table
from rnea_ros.testing.reference import EXAMPLE_ARM, PinocchioReference, random_state, robot_urdf

ROBOTS = {
    "example arm (8 DoF, mimic)": (EXAMPLE_ARM.read_text(), False),
    # example-robot-data's panda.urdf as written: 7 arm joints and finger_joint1, finger_joint2 its mimic
    "Panda (7 arm joints + 1 finger, its mimic)": (robot_urdf("panda_description/urdf/panda.urdf"), False),
    "Talos humanoid (44 DoF + free flyer)": (
        robot_urdf("talos_data/robots/talos_full_v2.urdf", strip_mimic=True),
        True,
    ),
}
BATCH = 1_000


def per_call(fn, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def interleaved(contenders: dict[str, object], rounds: int, calls: int) -> dict[str, list[float]]:
    """Per-call time of each contender in each round, the contenders taking turns within every round."""
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, fn in contenders.items():
            samples[name].append(per_call(fn, calls))
    return samples


def on_one_thread(fn):
    """``fn`` run with numba's parallel kernels on one thread."""

    def run():
        threads = numba.get_num_threads()
        numba.set_num_threads(1)
        try:
            fn()
        finally:
            numba.set_num_threads(threads)

    return run


def best_of_batches(contenders: dict[str, object], rounds: int, batches: int = 100, calls: int = 100) -> dict:
    """Per contender, the median over rounds of each round's best batch (``calls`` calls), the
    contenders taking turns batch by batch; and the median of the per-round ratios of each pair
    "ours X" / "pin X"."""
    per_round: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        best = dict.fromkeys(contenders, float("inf"))
        for _ in range(batches):
            for name, fn in contenders.items():
                best[name] = min(best[name], per_call(fn, calls))
        for name in contenders:
            per_round[name].append(best[name])
    figures = {name: statistics.median(times) for name, times in per_round.items()}
    for name in contenders:
        if name.startswith("ours "):
            pin_times = per_round["pin " + name[5:]]
            ratios = [ours / theirs for ours, theirs in zip(per_round[name], pin_times, strict=True)]
            figures["ratio " + name[5:]] = statistics.median(ratios)
    return figures


def bench_robot(label: str, urdf: str, floating: bool, rounds: int) -> list[tuple[str, float, float]]:
    model = RobotModel.from_urdf(urdf, floating_base=floating)
    reference = PinocchioReference(urdf, model)
    pm, pd = reference.model, reference.data
    rng = np.random.default_rng(0)
    q, qd, qdd = random_state(model, rng)
    pq, pv, pa = reference.q(q), reference.v(qd), reference.v(qdd)
    states = [random_state(model, rng) for _ in range(BATCH)]
    Q, QD, QDD = (np.ascontiguousarray(x) for x in zip(*states, strict=True))
    PQ = [reference.q(x) for x in Q]
    PV = [reference.v(x) for x in QD]
    PA = [reference.v(x) for x in QDD]
    assert np.allclose(model.inverse_dynamics(q, qd, qdd), reference.inverse_dynamics(q, qd, qdd))

    def pin_loop():
        for k in range(BATCH):
            pin.rnea(pm, pd, PQ[k], PV[k], PA[k])

    single = best_of_batches(
        {
            "ours ID": lambda: model.inverse_dynamics(q, qd, qdd),
            "pin ID": lambda: pin.rnea(pm, pd, pq, pv, pa),
            "ours g": lambda: model.gravity_torques(q),
            "pin g": lambda: pin.computeGeneralizedGravity(pm, pd, pq),
        },
        rounds,
    )
    batch = interleaved(
        {
            "ours batch": lambda: model.inverse_dynamics(Q, QD, QDD),
            "ours batch 1": on_one_thread(lambda: model.inverse_dynamics(Q, QD, QDD)),
            "pin loop": pin_loop,
        },
        rounds,
        calls=3,
    )
    batch_rows = []
    for name, call in (("ours batch", f"numba's {numba.get_num_threads()} threads"), ("ours batch 1", "one thread")):
        ratios = [ours / theirs for ours, theirs in zip(batch[name], batch["pin loop"], strict=True)]
        batch_rows.append(
            (
                f"inverse_dynamics, batch of {BATCH:,} ({call}; Pinocchio: a Python loop)",
                statistics.median(batch[name]),
                statistics.median(batch["pin loop"]),
                statistics.median(ratios),
            )
        )
    print(f"\n{label}: nq={model.nq}, nv={model.nv}")
    rows = [
        ("inverse_dynamics, single call", single["ours ID"], single["pin ID"], single["ratio ID"]),
        ("gravity_torques, single call", single["ours g"], single["pin g"], single["ratio g"]),
        *batch_rows,
    ]
    for name, ours, theirs, ratio in rows:
        unit, scale = ("µs", 1e6) if theirs < 1e-3 else ("ms", 1e3)
        print(
            f"  {name:38s} rnea_ros {ours * scale:9.2f} {unit}   Pinocchio {theirs * scale:9.2f} {unit}"
            f"   ratio {ratio:5.2f}× (Pinocchio / ours {1 / ratio:5.2f}×)"
        )
    return rows


FIRST_CALL = """
import time; t0 = time.perf_counter()
from rnea_ros import RobotModel
from rnea_ros.demo.example_robot import example_arm_urdf

m = RobotModel.from_urdf(example_arm_urdf())
m.inverse_dynamics([0.1] * m.nq, [0.0] * m.nv, [0.0] * m.nv)
m.gravity_torques([0.1] * m.nq)
print(time.perf_counter() - t0)
"""


def first_call_seconds() -> float:
    """Import, build the example arm and make the first calls, in a fresh process (warm numba cache)."""
    run = lambda: float(  # noqa: E731
        subprocess.run([sys.executable, "-c", FIRST_CALL], capture_output=True, text=True, check=True)
        .stdout.strip()
        .splitlines()[-1]
    )
    run()  # warms the cache if this checkout has never compiled the kernels
    return statistics.median(run() for _ in range(3))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=21, help="interleaved rounds (median taken)")
    parser.add_argument("--no-docs", action="store_true", help="do not write docs/figures/core.md")
    parser.add_argument("--busy", type=int, default=0, help="processes spinning beside the runs (core_busy_N.md)")
    args = parser.parse_args()
    spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        run(args)
    finally:
        for process in spinning:
            process.kill()
            process.wait()


def busy_note() -> str:
    return f", {BUSY[0]} processes spinning beside the runs on {os.cpu_count()} cores" if BUSY[0] else ""


BUSY = [0]


def run(args: argparse.Namespace) -> None:
    BUSY[0] = args.busy
    print(f"rnea_ros core benchmark — Pinocchio {pin.__version__}, numpy {np.__version__}, {args.rounds} rounds")
    table = []
    for label, (urdf, floating) in ROBOTS.items():
        for name, ours, theirs, ratio in bench_robot(label, urdf, floating, args.rounds):
            unit, scale = ("µs", 1e6) if theirs < 1e-3 else ("ms", 1e3)
            row = (label, name, f"{ours * scale:.2f} {unit}", f"{theirs * scale:.2f} {unit}", f"{ratio:.2f}×")
            table.append((*row, f"{1 / ratio:.2f}×"))
    first_call = first_call_seconds()
    print(f"\nfirst call in a fresh process, warm numba cache: {first_call:.3f} s")
    if not args.no_docs:
        note = (
            f"Medians of {args.rounds} interleaved rounds (a single call: each round's best batch of 100 "
            f"calls among 100, the ratio per round; a batch: 3 calls a round; load average "
            f"{os.getloadavg()[0]:.1f}{busy_note()}); ratio: rnea_ros / Pinocchio, speed-up: its inverse; "
            f"Pinocchio {pin.__version__}, numpy {np.__version__}. "
            f"First call in a fresh process (import, build, first calls; warm numba cache): {first_call:.3f} s."
        )
        header = ("robot", "call", "rnea_ros", "Pinocchio", "ratio", "speed-up")
        name = f"core_busy_{args.busy}" if args.busy else "core"
        print(f"wrote {write_table(name, 'benchmarks/core.py', header, table, note)}")


if __name__ == "__main__":
    main()
