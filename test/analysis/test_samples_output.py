"""OUT/samples.csv holds the samples analysed, never a row without a model effort: a sample without
enough neighbours to differentiate (a sample alone beyond a gap) is skipped and counted, not written with NaN."""

from __future__ import annotations

import numpy as np

from rnea_ros import RobotModel
from rnea_ros.analysis.cli import main
from rnea_ros.demo.example_robot import example_arm_urdf

URDF = example_arm_urdf()


def test_samples_without_derivatives_are_counted_and_not_written(tmp_path, capsys):
    names = list(RobotModel.from_urdf(URDF).joint_names)
    t = np.r_[np.arange(0.0, 2.0, 0.002), 3.0]  # 1,000 samples at 500 Hz, then one alone after a 1 s gap
    q = 0.3 * np.sin(np.outer(t, np.arange(1, len(names) + 1)))
    columns = ["time"] + [f"{n}.{kind}" for n in names for kind in ("position", "effort")]
    values = np.column_stack([t] + [x[:, j] for j in range(len(names)) for x in (q, np.zeros_like(q))])
    recording = tmp_path / "recording.csv"
    np.savetxt(recording, values, delimiter=",", header=",".join(columns), comments="", fmt="%.17g")
    (tmp_path / "arm.urdf").write_text(URDF)
    # 8 ms: 5 samples; the first and the last of the 500 Hz part get a one-sided window (they were
    # skipped before: 3 samples within ±4 ms, a cubic needs 4); the lone one has no neighbour within ±8 ms
    argv = [str(recording), "--urdf", str(tmp_path / "arm.urdf"), "--window", "0.008", "--out", str(tmp_path)]
    assert main(argv) == 0
    assert "1 samples skipped: too few neighbours" in capsys.readouterr().out
    written = np.loadtxt(tmp_path / "samples.csv", delimiter=",", skiprows=1)
    assert len(written) == len(t) - 1
    assert np.isfinite(written).all()
    np.testing.assert_array_equal(written[:, 0], np.round(t[:-1], 6))


def test_a_part_of_the_recording_is_differentiated_as_in_the_whole(tmp_path):
    """--start and --end choose the samples analysed, not the samples the derivatives see: the
    first and last samples of the part get the model effort they get in the whole recording."""
    names = list(RobotModel.from_urdf(URDF).joint_names)
    t = np.arange(0.0, 3.0, 0.002)
    q = 0.3 * np.sin(np.outer(t, np.linspace(2.0, 9.0, len(names))))
    columns = ["time"] + [f"{n}.{kind}" for n in names for kind in ("position", "effort")]
    values = np.column_stack([t] + [x[:, j] for j in range(len(names)) for x in (q, np.zeros_like(q))])
    recording = tmp_path / "recording.csv"
    np.savetxt(recording, values, delimiter=",", header=",".join(columns), comments="", fmt="%.17g")
    (tmp_path / "arm.urdf").write_text(URDF)
    common = [str(recording), "--urdf", str(tmp_path / "arm.urdf"), "--window", "0.1"]
    assert main([*common, "--out", str(tmp_path / "whole")]) == 0
    assert main([*common, "--start", "1.0", "--end", "2.0", "--out", str(tmp_path / "part")]) == 0
    whole = np.loadtxt(tmp_path / "whole" / "samples.csv", delimiter=",", skiprows=1)
    part = np.loadtxt(tmp_path / "part" / "samples.csv", delimiter=",", skiprows=1)
    assert part[0, 0] == 1.0 and part[-1, 0] == 2.0
    rows = np.searchsorted(whole[:, 0], part[:, 0])
    np.testing.assert_array_equal(whole[rows], part)  # every column, the model's efforts included
