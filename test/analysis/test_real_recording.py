"""rnea_analyze on a real robot's recording (the Franka Emika Panda of Gaz et al. 2019, beside the
checkout in ../shared/real_recordings): the joint terms identified on the first part of the
recording explain the held-out rest better than the URDF alone, on every joint.
benchmarks/real_recording.py measures the whole comparison (docs/real-recordings.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rnea_ros import RobotModel
from rnea_ros.dynamics.corrections import load_corrections
from rnea_ros.testing.panda_recording import JOINTS, RECORDING, panda_urdf, read_recording, rnea_analyze

pytestmark = pytest.mark.skipif(
    not RECORDING.is_dir(), reason=f"the real recording is not beside the checkout ({RECORDING} absent)"
)
SPLIT = 14.7  # s: 70 % of the recording trains, the rest is held out
WINDOW = 0.1  # s: fixed, the window choice is tested elsewhere


def written_files_load(out: Path) -> None:
    """What rnea_node (strict inertia) and rnea_sim take; plain MuJoCo cannot open this URDF's
    package:// meshes, the original's no more than ours (rnea_sim loads it without them)."""
    from rnea_ros.simulation.physics import SimOptions, SimRobot

    urdf = (out / "corrected.urdf").read_text()
    armatures = {name: c.armature for name, c in load_corrections(out / "corrections.yaml").joints.items()}
    assert all(a >= 0.0 for a in armatures.values()), armatures
    RobotModel.from_urdf(urdf, strict=True)
    SimRobot(urdf, SimOptions(armature={k: v for k, v in armatures.items() if v}))


@pytest.mark.slow  # three rnea_analyze runs over 21 s at 1 kHz: 29.5 s of CPU on 2026-11-28 (load 20, 2 cores)
def test_joint_terms_identified_on_a_real_robot_beat_the_urdf_on_held_out_data(tmp_path):
    csv = read_recording().write_csv(tmp_path / "panda.csv")
    urdf = tmp_path / "panda.urdf"
    urdf.write_text(panda_urdf(hand=False))  # the variant that fits this recording (the benchmark's table)
    common = ("--urdf", urdf, "--window", WINDOW, "--no-csv")
    trained = rnea_analyze(csv, *common, "--identify", "--end", SPLIT, "--out", tmp_path / "train")
    assert trained.code == 0, trained.output
    corrections = tmp_path / "train" / "corrections.yaml"
    held = ("--start", SPLIT)
    urdf_alone = rnea_analyze(csv, *common, *held, "--out", tmp_path / "urdf")
    corrected = rnea_analyze(csv, *common, *held, "--corrections", corrections, "--out", tmp_path / "corrected")
    assert urdf_alone.code == corrected.code == 0, urdf_alone.output + corrected.output
    before, after = urdf_alone.rms(), corrected.rms()
    assert set(before) == set(after) == set(JOINTS)
    worse = {name: (before[name], after[name]) for name in JOINTS if not after[name] < before[name]}
    assert not worse, f"held-out RMS not below the URDF's (URDF, joint terms): {worse}"


@pytest.mark.slow  # ~30 s of CPU
def test_links_identified_on_a_real_robot_are_written_and_beat_the_joint_terms_held_out(tmp_path):
    """Without the hand, as a user runs it (the window chosen by the recording), the links' inertias
    are written, and they help on the held-out 30 % on every joint."""
    csv = read_recording().write_csv(tmp_path / "panda.csv")
    urdf = tmp_path / "panda.urdf"
    urdf.write_text(panda_urdf(hand=False))
    train = ("--identify", "--end", SPLIT, "--no-csv")
    terms = rnea_analyze(csv, "--urdf", urdf, *train, "--out", tmp_path / "terms")
    links = rnea_analyze(csv, "--urdf", urdf, *train, "--inertia", "--out", tmp_path / "links")
    assert terms.code == links.code == 0, terms.output + links.output
    assert "written: joint terms + inertia (corrected.urdf)" in links.output, links.output
    written_files_load(tmp_path / "links")
    held = ("--start", SPLIT, "--window", links.window(), "--no-csv")
    with_terms = rnea_analyze(
        csv, "--urdf", urdf, "--corrections", tmp_path / "terms" / "corrections.yaml", *held, "--out", tmp_path / "a"
    )
    identified = tmp_path / "links"
    with_links = rnea_analyze(
        csv, "--urdf", identified / "corrected.urdf", "--corrections", identified / "corrections.yaml", *held,
        "--out", tmp_path / "b",
    )  # fmt: skip
    assert with_terms.code == with_links.code == 0, with_terms.output + with_links.output
    before, after = with_terms.rms(), with_links.rms()
    worse = {name: (before[name], after[name]) for name in JOINTS if not after[name] < before[name]}
    assert not worse, f"held-out RMS with the links not below the joint terms' (terms, links): {worse}"
