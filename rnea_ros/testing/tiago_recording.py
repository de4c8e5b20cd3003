"""A second real robot's recording, read at run time and never copied: PAL Robotics' TIAGo (torso lift
and arm joints 1-7, ~100 Hz, 80 s), from the public repository ``thanhndv212/figaroh-plus``
(Apache-2.0; ``examples/tiago/data/identification/dynamic/tiago_{position,velocity,effort}.csv``),
brought beside the checkout as a bare git directory (``FIGAROH_PLUS``, or the environment variable
``RNEA_FIGAROH_PLUS``). The URDF is example-robot-data's ``tiago``.

What the files hold, as read from the data and from that repository's identification example:
positions [rad, m for the torso] and velocities as the driver reports them; efforts as motor
readings, not joint torques: a motor current [A] per arm joint, to be multiplied by the gear
reduction and the motor's torque constant (arm 1-2: 100 × 0.136 N·m/A; arm 3-4: 100 × −0.087; arm 5-7:
336 × −0.0613), and for the torso lift a force that leaves out the weight it carries (add g × the mass
of every link above it). The wrist's efforts (arm 5-7) are 0 in 88-90 % of the samples and a few
thousandths of an ampere otherwise, at rest as in motion: not measured.
For ``benchmarks/real_recording.py`` and ``test/analysis/test_real_recording.py``.
"""

from __future__ import annotations

import io
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rnea_ros.testing.reference import EXAMPLE_ROBOT_DATA

FIGAROH_PLUS = Path(os.environ.get("RNEA_FIGAROH_PLUS", "/work/.mirror/thanhndv212+figaroh-plus/repo"))
DATA = "examples/tiago/data/identification/dynamic/tiago_{}.csv"
TIAGO_URDF = EXAMPLE_ROBOT_DATA / "tiago_description" / "robots" / "tiago.urdf"
JOINTS = ["torso_lift_joint"] + [f"arm_{i}_joint" for i in range(1, 8)]
UNMEASURED = ["arm_5_joint", "arm_6_joint", "arm_7_joint"]
# effort [N·m] = reduction × torque constant [N·m/A] × current [A]
CURRENT_TO_TORQUE = {
    "arm_1_joint": 100 * 0.136,
    "arm_2_joint": 100 * 0.136,
    "arm_3_joint": 100 * -0.087,
    "arm_4_joint": 100 * -0.087,
    "arm_5_joint": 336 * -0.0613,
    "arm_6_joint": 336 * -0.0613,
    "arm_7_joint": 336 * -0.0613,
}


@dataclass
class TiagoRecording:
    t: np.ndarray  # (N,) s
    q: np.ndarray  # (N, 8)
    qd: np.ndarray  # (N, 8)
    effort: np.ndarray  # (N, 8) as recorded: currents, the torso's force without the weight

    def part(self, start: float, end: float) -> TiagoRecording:
        """The samples from ``start`` to ``end`` s after the first (end excluded)."""
        elapsed = self.t - self.t[0]
        rows = (elapsed >= start) & (elapsed < end)
        return TiagoRecording(self.t[rows], self.q[rows], self.qd[rows], self.effort[rows])

    def write_csv(self, path: Path) -> Path:
        """rnea_analyze's CSV (``time,<joint>.position,<joint>.velocity,<joint>.effort,...``), efforts as
        recorded (convert them with ``write_conversion``'s file)."""
        header = ["time"] + [f"{name}.{kind}" for name in JOINTS for kind in ("position", "velocity", "effort")]
        columns = [self.t] + [x[:, j] for j in range(len(JOINTS)) for x in (self.q, self.qd, self.effort)]
        np.savetxt(path, np.column_stack(columns), delimiter=",", header=",".join(header), comments="", fmt="%.9g")
        return path


def available() -> str | None:
    """Why the recording cannot be read here, or None when it can."""
    if not (FIGAROH_PLUS / "HEAD").is_file():
        return (
            f"no git directory of github.com/thanhndv212/figaroh-plus at {FIGAROH_PLUS} "
            "(set RNEA_FIGAROH_PLUS to a clone's .git): TIAGo's recording is read from it, never copied"
        )
    return None


def _show(name: str) -> np.ndarray:
    text = subprocess.run(
        ["git", f"--git-dir={FIGAROH_PLUS}", "show", f"HEAD:{DATA.format(name)}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    header = text.split("\n", 1)[0].split(",")
    values = np.loadtxt(io.StringIO(text), delimiter=",", skiprows=1, ndmin=2)
    # columns "- <joint>_<kind>" after the time: put them in JOINTS' order
    columns = [next(k for k, c in enumerate(header) if c.strip("- ").startswith(name_)) for name_ in JOINTS]
    return np.column_stack([values[:, 0], values[:, columns]])


def read_recording() -> TiagoRecording:
    """The three files, read from the repository's git directory (``available`` says why not)."""
    position, velocity, effort = (_show(name) for name in ("position", "velocity", "effort"))
    if not (np.array_equal(position[:, 0], velocity[:, 0]) and np.array_equal(position[:, 0], effort[:, 0])):
        raise ValueError("TIAGo's position, velocity and effort files do not share their stamps")
    return TiagoRecording(position[:, 0], position[:, 1:], velocity[:, 1:], effort[:, 1:])


def carried_mass(urdf: str, joint: str = "torso_lift_joint") -> float:
    """kg: the mass of every link beyond ``joint`` (what the torso lift carries), from the URDF."""
    import pinocchio

    model = pinocchio.buildModelFromXML(urdf)
    data = model.createData()
    pinocchio.computeSubtreeMasses(model, data)
    return float(data.mass[model.getJointId(joint)])


def write_conversion(path: Path, urdf: str, gravity: float = 9.81) -> Path:
    """rnea_analyze's --effort-conversion file for the recorded efforts: the currents to torques, the
    torso's force plus the weight it carries (by ``urdf``'s masses)."""
    lines = ["# TIAGo: effort = scale × recorded + offset (rnea_ros/testing/tiago_recording.py)"]
    lines.append(f"torso_lift_joint: {{scale: 1.0, offset: {gravity * carried_mass(urdf):.6f}}}")
    lines += [f"{name}: {{scale: {scale:.6f}}}" for name, scale in CURRENT_TO_TORQUE.items()]
    path.write_text("\n".join(lines) + "\n")
    return path
