"""What keeps ``--identify --inertia`` above FIGAROH's method on some joints of the real Panda recording?

Each choice of rnea_analyze's fit is changed alone, in a process of its own, and the fit is held out
as ``benchmarks/real_recording.py`` does (train on the first 70 %, hold out the rest, through
``rnea_analyze``'s ``main``); FIGAROH's method on the same split and q̈ is the reference, in the same
run. The choices:

- the joints' weighting: by 1 / residual variance (ours), by 1 / residual RMS, or equal (ordinary
  least squares, FIGAROH's) — ``identify_fit.WEIGHT_EXPONENT`` 1, ½, 0;
- a joint's samples slower than 0.01 rad/s left out of its rows, or kept (``identify.STICTION_SPEED``);
- the pull toward the URDF, 1e-4 or 1e-6 (``link_inertia.PRIOR_WEIGHT``);
- negative armatures refused, or kept (``JointTerm.nonnegative``; a file rnea_node refuses: held out in
  this process only);
- a link whose identified centre of mass is beyond 1.5 × its reach kept at the URDF's values, or
  written (``link_inertia.COM_BOUND`` 10).

    python benchmarks/real_recording_ablation.py    # writes docs/figures/real_recording_ablation.md
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

VARIANTS = {
    "as shipped": {},
    "joints weighted equally (ordinary least squares)": {"weight_exponent": 0.0},
    "joints weighted by 1 / residual RMS": {"weight_exponent": 0.5},
    "slow samples kept (stiction speed 0)": {"stiction_speed": 0.0},
    "pull toward the URDF 1e-6": {"prior_weight": 1e-6},
    "negative armatures kept": {"negative_armature": True},
    "centre-of-mass bound 10 × reach": {"com_bound": 10.0},
}
COMMAND = "python benchmarks/real_recording_ablation.py"


def run_variant(name: str, hand: bool, folder: Path) -> dict:
    """In this process: the variant's changes, then its held-out RMS per joint and the window it chose."""
    changes = VARIANTS[name]
    if changes.get("negative_armature"):  # before any module copies the terms
        from rnea_ros.dynamics import regressor

        regressor.JOINT_TERMS = tuple(dataclasses.replace(t, nonnegative="") for t in regressor.JOINT_TERMS)
    from rnea_ros.analysis import identify, identify_fit, link_inertia

    identify_fit.WEIGHT_EXPONENT = changes.get("weight_exponent", identify_fit.WEIGHT_EXPONENT)
    identify.STICTION_SPEED = changes.get("stiction_speed", identify.STICTION_SPEED)
    link_inertia.PRIOR_WEIGHT = changes.get("prior_weight", link_inertia.PRIOR_WEIGHT)
    link_inertia.COM_BOUND = changes.get("com_bound", link_inertia.COM_BOUND)

    import real_recording as rr

    from rnea_ros.testing.panda_recording import RECORDING, panda_urdf, read_recording, rnea_analyze

    recording = read_recording(RECORDING)
    split = round(rr.TRAIN_FRACTION * (recording.t[-1] - recording.t[0]), 3)
    csv = recording.write_csv(folder / "panda.csv")
    urdf = folder / "panda.urdf"
    urdf.write_text(panda_urdf(hand))
    terms = rnea_analyze(csv, "--urdf", urdf, "--identify", "--end", split, "--out", folder / "terms", "--no-csv")
    window = terms.window()  # as benchmarks/real_recording.py chooses it
    rms = rr.with_inertia(csv, urdf, folder, split, window)
    out = {"window": window, "rms": rms if isinstance(rms, str) else rms.tolist()}
    if name == "as shipped":
        out["figaroh"] = rr.figaroh(recording, urdf.read_text(), split, window).tolist()
    return out


def variant_in_subprocess(name: str, hand: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="rnea_ablation_") as folder:
        command = [sys.executable, __file__, "--variant", name, "--folder", folder]
        done = subprocess.run(command + (["--hand"] if hand else []), capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            raise RuntimeError(f"{name}: {done.stderr[-2000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])


def rows_of(hand: bool) -> list[list[object]]:
    label = "with hand" if hand else "without hand"
    results = {name: variant_in_subprocess(name, hand) for name in VARIANTS}
    figaroh = np.array(results["as shipped"]["figaroh"])
    rows = [[label, "FIGAROH's method (same split and q̈)", f"{np.sqrt(np.mean(figaroh**2)):.3f}", "", ""]]
    rows[0] += [f"{x:.3f}" for x in figaroh]
    for name, result in results.items():
        if isinstance(result["rms"], str):
            rows.append([label, name, result["rms"], "", "", *[""] * len(figaroh)])
            continue
        rms = np.array(result["rms"])
        ratio = rms / figaroh
        worst = f"{ratio.max():.3f} (joint {int(ratio.argmax()) + 1})"
        above = str(int((ratio > 1.0).sum()))
        rows.append([label, name, f"{np.sqrt(np.mean(rms**2)):.3f}", worst, above, *(f"{x:.3f}" for x in rms)])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", choices=list(VARIANTS), help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--hand", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.variant:
        print(json.dumps(run_variant(args.variant, args.hand, args.folder)))
        return
    from rnea_ros.demo.figures import write_table
    from rnea_ros.testing.panda_recording import JOINTS, RECORDING

    if not RECORDING.is_dir():
        sys.exit(f"no recording at {RECORDING}: ../shared/real_recordings/ must be beside the checkout")
    rows = rows_of(True) + rows_of(False)
    path = write_table(
        "real_recording_ablation",
        "benchmarks/real_recording_ablation.py",
        ["URDF", "rnea_analyze --identify --inertia", "held-out RMS over joints [N·m]", "worst ratio to FIGAROH's",
         "joints above FIGAROH's", *(f"joint {j + 1}" for j in range(len(JOINTS)))],
        rows,
        f"Command: `{COMMAND}`. The Panda recording of Gaz et al. 2019, trained on the first 70 %, held out "
        "the rest, as benchmarks/real_recording.py; one choice of the fit changed at a time, each in its own "
        "process. Held-out residual RMS per joint [N·m].",
    )  # fmt: skip
    print(path.read_text())


if __name__ == "__main__":
    main()
