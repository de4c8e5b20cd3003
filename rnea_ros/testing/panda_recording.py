"""The real Franka Emika Panda recording (Gaz et al., RA-L 2019; ``../shared/real_recordings/
panda_gaz2019``, beside the checkout, never in it) as ``rnea_analyze`` reads it, and the analysis
run the way a user runs it: ``rnea_analyze``'s ``main`` with its arguments, its printed table parsed.
For ``benchmarks/real_recording.py`` and ``test/analysis/test_real_recording.py``."""

from __future__ import annotations

import contextlib
import io
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rnea_ros.testing.reference import EXAMPLE_ROBOT_DATA

RECORDING = Path(__file__).resolve().parents[3] / "shared" / "real_recordings" / "panda_gaz2019"
PANDA_URDF = EXAMPLE_ROBOT_DATA / "panda_description" / "urdf" / "panda.urdf"
JOINTS = [f"panda_joint{i}" for i in range(1, 8)]
HAND_LINKS = {"panda_hand", "panda_hand_tcp", "panda_leftfinger", "panda_rightfinger"}


@dataclass
class Recording:
    t: np.ndarray  # (N,) s
    q: np.ndarray  # (N, 7) rad
    qd: np.ndarray  # (N, 7) rad/s
    tau: np.ndarray  # (N, 7) N·m, the link-side torque sensors

    def write_csv(self, path: Path) -> Path:
        """``time,<joint>.position,<joint>.velocity,<joint>.effort,...``: rnea_analyze's CSV."""
        header = ["time"] + [f"{name}.{kind}" for name in JOINTS for kind in ("position", "velocity", "effort")]
        columns = [self.t] + [x[:, j] for j in range(len(JOINTS)) for x in (self.q, self.qd, self.tau)]
        np.savetxt(path, np.column_stack(columns), delimiter=",", header=",".join(header), comments="", fmt="%.9g")
        return path


def read_recording(folder: Path = RECORDING) -> Recording:
    """The four text files (one number per line; 7 values per sample, row-major)."""
    t = np.loadtxt(folder / "exciting_traj_time.txt")
    q, qd, tau = (
        np.loadtxt(folder / f"exciting_traj_{name}.txt").reshape(-1, len(JOINTS))
        for name in ("positions", "velocity", "torques")
    )
    return Recording(t, q, qd, tau)


def panda_urdf(hand: bool) -> str:
    """example-robot-data's Panda, with its hand (and fingers) or with them removed."""
    text = PANDA_URDF.read_text()
    if hand:
        return text
    robot = ET.fromstring(text)
    for element in list(robot):
        child = element.find("child")
        if element.get("name") in HAND_LINKS or (child is not None and child.get("link") in HAND_LINKS):
            robot.remove(element)
    return ET.tostring(robot, encoding="unicode")


@dataclass
class Run:
    code: int
    output: str  # stdout and stderr, as printed

    def rms(self) -> dict[str, float]:
        """The summary table's "RMS err" per joint (measured − model, N·m)."""
        table = self.output.split("RMS err  RMS meas", 1)[-1].split("\nRMS err:", 1)[0]
        found = {}
        for line in table.splitlines():
            fields = line.split()
            if len(fields) >= 3 and fields[0] in JOINTS:
                found[fields[0]] = float(fields[2])
        return found

    def window(self) -> float:
        """The differentiation window it printed it chose, s."""
        return float(re.search(r"differentiation window ([\d.]+) ms", self.output).group(1)) / 1e3

    def error(self) -> str:
        """The last line it wrote: the reason when it refused."""
        return self.output.strip().splitlines()[-1] if self.output.strip() else ""


def rnea_analyze(*args: object) -> Run:
    """``rnea_analyze ARGS`` in this process, its output captured."""
    from rnea_ros.analysis.cli import main

    output = io.StringIO()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        code = main([str(a) for a in args])
    return Run(code, output.getvalue())
