"""A recording whose held-out part replays its training part is detected and said (issue 46, item 5):
a trajectory played twice makes the last 30 % (and folds in time) a copy of earlier samples.

Recordings made here: the example arm's efforts from Pinocchio (``testing.recorded_data``), one whose
motion repeats with a period of 5.5 s and one whose frequencies never line up again; and the real
Panda recording of Gaz et al. (beside the checkout), which repeats its trajectory 13.345 s later."""

from __future__ import annotations

import re

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.analysis.cli import main
from rnea_ros.analysis.replay import find_replay
from rnea_ros.testing.panda_recording import RECORDING, panda_urdf, read_recording, rnea_analyze
from rnea_ros.testing.recorded_data import Simulation, true_efforts, write_csv
from rnea_ros.testing.reference import ARM_URDF

ARM = RobotModel.from_urdf(ARM_URDF)
RECORDED = ARM.joint_names[:7]
PERIOD = 5.5  # s


def arm_recording(seconds: float, rate: float, repeats: bool, seed: int) -> Simulation:
    """Sums of two sines per joint, with frequencies that are multiples of 2π/PERIOD (``repeats``: the
    motion is the same every PERIOD s) or irrational multiples of each other (it never is)."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, seconds, 1.0 / rate)
    if repeats:
        omega = 2 * np.pi / PERIOD * rng.choice(np.arange(1, 8), size=(2, 7))
    else:
        omega = rng.uniform(0.6, 3.0, (2, 7)) * np.array([[1.0], [np.sqrt(2.0)]])
    amplitude, phase = rng.uniform(0.15, 0.35, (2, 7)), rng.uniform(0.0, 6.3, (2, 7))
    q, qd, qdd = np.zeros((len(t), 7)), np.zeros((len(t), 7)), np.zeros((len(t), 7))
    for a, w, p in zip(amplitude, omega, phase, strict=True):
        angle = np.outer(t, w) + p
        q += a * np.sin(angle)
        qd += a * w * np.cos(angle)
        qdd -= a * w**2 * np.sin(angle)
    pad = np.zeros((len(t), ARM.nv - 7))
    effort = true_efforts(ARM_URDF, ARM, *(np.hstack([x, pad]) for x in (q, qd, qdd)))[:, :7]
    effort += rng.normal(0.0, 0.02, effort.shape)
    q += rng.normal(0.0, 1e-4, q.shape)  # an encoder's noise: no sample is an exact copy
    return Simulation(RECORDED, t + 1_700_000_000.0, q, qd, effort)


def test_the_period_of_a_repeated_trajectory_is_found_and_an_unrepeated_one_has_none():
    for seed in range(3):
        repeated = arm_recording(20.0, 50.0, repeats=True, seed=seed)
        found = find_replay(repeated.t, repeated.q)
        assert found is not None and found.lag == pytest.approx(PERIOD, abs=0.03), (seed, found)
        assert found.distance < 0.02 and found.held_out_fraction() == 1.0, found
        fresh = arm_recording(20.0, 50.0, repeats=False, seed=seed)
        assert find_replay(fresh.t, fresh.q) is None, seed


def test_a_robot_at_rest_at_both_ends_is_no_replay():
    """The same still pose at the start and the end of a recording is not a replay of its motion."""
    fresh = arm_recording(20.0, 50.0, repeats=False, seed=11)
    still = np.broadcast_to(fresh.q[0], (500, 7))  # 10 s at rest before and after
    q = np.vstack([still, fresh.q, still])
    t = np.arange(len(q)) / 50.0
    assert find_replay(t, q) is None


def analyze(tmp_path, recording: Simulation, *extra: object):
    (tmp_path / "arm.urdf").write_text(ARM_URDF)
    csv = write_csv(tmp_path / "arm.csv", recording)
    return rnea_analyze(csv, "--urdf", tmp_path / "arm.urdf", "--window", 0.1, "--no-csv", "--out", tmp_path, *extra)


def test_rnea_analyze_says_a_recording_replays_itself_and_asks_for_another(tmp_path):
    run = analyze(tmp_path, arm_recording(14.0, 100.0, repeats=True, seed=3))
    assert run.code == 0, run.output
    said = re.search(r"replay: the recording repeats its motion: .* what it did ([\d.]+) s earlier", run.output)
    assert said is not None, run.output
    assert float(said[1]) == pytest.approx(PERIOD, abs=0.03), run.output
    assert re.search(r"its last 30% held out \(9\.\d\d-13\.99 s\) is 100% a replay of earlier", run.output), run.output
    assert "--validate OTHER" in run.output, run.output


def test_rnea_analyze_says_nothing_of_a_recording_that_does_not_repeat(tmp_path):
    run = analyze(tmp_path, arm_recording(14.0, 100.0, repeats=False, seed=3))
    assert run.code == 0, run.output
    assert "replay" not in run.output, run.output


def test_several_recordings_each_replaying_itself_is_named(tmp_path, capsys):
    """Several recordings (rnea_analyze's fleet path, their fits pooled): the one that replays its own
    motion is named with its period, the other is not (before, only one recording was checked)."""
    (tmp_path / "arm.urdf").write_text(ARM_URDF)
    repeated = write_csv(tmp_path / "repeated.csv", arm_recording(14.0, 100.0, repeats=True, seed=3))
    fresh = write_csv(tmp_path / "fresh.csv", arm_recording(14.0, 100.0, repeats=False, seed=3))
    argv = [str(repeated), str(fresh), "--urdf", str(tmp_path / "arm.urdf"), "--window", "0.1"]
    assert main([*argv, "--workers", "1", "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    said = re.search(
        rf"{re.escape(str(repeated))}: replay: the recording repeats its motion: .* ([\d.]+) s earlier", out
    )
    assert said is not None, out
    assert float(said[1]) == pytest.approx(PERIOD, abs=0.03), out
    assert f"{fresh}: replay" not in out, out
    assert "the pooled fit's folds in time hold its replayed part" in out, out


@pytest.mark.skipif(not RECORDING.is_dir(), reason=f"the real recording is not beside the checkout ({RECORDING})")
def test_the_real_panda_recording_is_found_to_replay_its_trajectory(tmp_path):
    """Training on its first 70 % (``--end``), rnea_analyze still reads the whole recording's positions:
    its last 30 % replays what it did 13.345 s earlier."""
    csv = read_recording().write_csv(tmp_path / "panda.csv")
    (tmp_path / "panda.urdf").write_text(panda_urdf(hand=False))
    common = ("--urdf", tmp_path / "panda.urdf", "--window", 0.1, "--no-csv", "--out", tmp_path)
    run = rnea_analyze(csv, *common, "--end", 14.7)
    assert run.code == 0, run.output
    said = re.search(r"what it did ([\d.]+) s earlier .*positions within ([\d.]+) RMS", run.output)
    assert said is not None, run.output
    assert float(said[1]) == pytest.approx(13.345, abs=0.02) and float(said[2]) < 0.05, run.output
    assert "its last 30% held out (14.70-21.00 s) is 100% a replay" in run.output, run.output
