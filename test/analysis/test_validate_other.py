"""rnea_analyze --identify --validate OTHER (issue 46, item 5): the models fitted on one recording are
run on a second recording of the same robot, a different trajectory, and their residuals printed.
Both recordings are made here: the example arm, efforts from Pinocchio (``testing.recorded_data``)."""

from __future__ import annotations

import contextlib
import io

import numpy as np

from rnea_ros import RobotModel
from rnea_ros.analysis.cli import main
from rnea_ros.testing.recorded_data import Simulation, simulate, true_efforts, write_csv
from rnea_ros.testing.reference import ARM_URDF

ARM = RobotModel.from_urdf(ARM_URDF)
RECORDED = ARM.joint_names[:7]


def other_trajectory(seconds: float, rate: float, viscous: float, seed: int) -> Simulation:
    """Another motion of the same arm (other frequencies and phases than ``simulate``'s), joint3 with
    ``viscous`` friction, joint1 with its URDF's <dynamics> (as ``simulate`` gives it)."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, seconds, 1.0 / rate)
    amplitude, omega, phase = rng.uniform(0.2, 0.6, 7), rng.uniform(0.7, 2.5, 7), rng.uniform(0, 6.3, 7)
    angle = np.outer(t, omega) + phase
    q, qd, qdd = amplitude * np.sin(angle), amplitude * omega * np.cos(angle), -amplitude * omega**2 * np.sin(angle)
    pad = np.zeros((len(t), ARM.nv - 7))
    effort = true_efforts(ARM_URDF, ARM, *(np.hstack([x, pad]) for x in (q, qd, qdd)))[:, :7]
    effort[:, 0] += 0.5 * qd[:, 0] + 0.1 * np.tanh(qd[:, 0] / 0.01)
    effort[:, 2] += viscous * qd[:, 2]
    effort += rng.normal(0.0, 0.02, effort.shape)
    return Simulation(RECORDED, t + 1_700_000_000.0, q, qd, effort)


def test_every_model_is_reported_on_another_recording(tmp_path, capsys):
    training = simulate(ARM_URDF, 6.0, rate=250.0, joints=RECORDED, viscous={"joint3": 1.0}, seed=8)
    other = other_trajectory(6.0, 250.0, 1.0, seed=9)
    (tmp_path / "arm.urdf").write_text(ARM_URDF)
    argv = [str(write_csv(tmp_path / "train.csv", training)), "--urdf", str(tmp_path / "arm.urdf"), "--identify"]
    argv += ["--validate", str(write_csv(tmp_path / "other.csv", other)), "--window", "0.05", "--no-csv"]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main([*argv, "--out", str(tmp_path / "out")]) == 0
    lines = printed.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("validation on ") and "other.csv" in line)
    rows = {line.split()[0]: line for line in lines[start + 2 : start + 4]}
    urdf = [float(x) for x in rows["URDF"].split()[1:]]
    written = [float(x) for x in rows["files"].split()[2:]]
    # joint3's viscous friction, found on the training recording, explains the other one too
    assert urdf[2] > 0.3 and written[2] < 0.1 * urdf[2], printed.getvalue()
    assert written[-1] < urdf[-1]  # over the joints
    assert all(w <= u * 1.05 for w, u in zip(written[:7], urdf[:7], strict=True)), printed.getvalue()


def test_a_missing_validation_recording_is_one_line_and_exit_2(tmp_path, capsys):
    training = simulate(ARM_URDF, 1.0, rate=250.0, joints=RECORDED, seed=10)
    (tmp_path / "arm.urdf").write_text(ARM_URDF)
    argv = [str(write_csv(tmp_path / "t.csv", training)), "--urdf", str(tmp_path / "arm.urdf"), "--identify"]
    assert main([*argv, "--validate", str(tmp_path / "none.csv"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--validate: no such recording" in err[0]
