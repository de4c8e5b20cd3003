"""A corrections file as a careless user, a broken tool or a hostile file would give it: every case
refused with its reason (CorrectionsError), quickly and without reading more than the cap; never a
value other than the whole file's."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest
import yaml

from rnea_ros.dynamics.corrections import (
    MAX_FILE_BYTES,
    Corrections,
    CorrectionsError,
    JointCorrection,
    Payload,
    load_corrections,
    save_corrections,
)
from rnea_ros.dynamics.payload import Inertial

WHOLE = Corrections(
    {
        f"joint{k}": JointCorrection(
            0.1 * k, 0.2 * k, 0.01 * k, -0.3 * k, coulomb_width=0.02, coulomb_lead=0.005 * (k % 3)
        )
        for k in range(1, 8)
    },
    None,
)


def test_the_tool_writes_version_3_ending_with_its_end_mark_and_reads_it_back(tmp_path):
    path = tmp_path / "corrections.yaml"
    save_corrections(WHOLE, path)
    assert path.read_text().rstrip().endswith("end: true")
    assert load_corrections(path) == WHOLE
    assert [p.name for p in tmp_path.iterdir()] == ["corrections.yaml"]  # no temporary left


def test_the_coulomb_lead_is_written_only_when_there_is_one_and_shifts_the_tanh_by_lead_times_qdd(tmp_path):
    path = tmp_path / "corrections.yaml"
    save_corrections(WHOLE, path)
    written = yaml.safe_load(path.read_text())["joints"]
    assert "coulomb_lead" not in written["joint3"] and written["joint1"]["coulomb_lead"] == 0.005
    lead = Corrections({"j": JointCorrection(coulomb=2.0, coulomb_width=0.05, coulomb_lead=0.01)})
    # q̇ = −0.1 rad/s braking at 20 rad/s²: the friction of q̇ 10 ms ahead, +0.1 rad/s
    assert lead.torques(["j"], np.array([-0.1]), np.array([20.0]))[0] == pytest.approx(2.0 * np.tanh(0.1 / 0.05))
    assert lead.torques(["j"], np.array([-0.1]), np.array([0.0]))[0] == pytest.approx(-2.0 * np.tanh(0.1 / 0.05))


def test_a_file_cut_short_while_written_is_refused_at_every_length(tmp_path):
    """Every prefix of a file the tool wrote: refused, or (only the whole file, or it with less
    trailing white space) read as the whole file."""
    whole = tmp_path / "whole.yaml"
    payload = Inertial(1.5, np.array([0.0, 0.01, 0.05]), np.diag([0.002, 0.002, 0.001]))
    save_corrections(Corrections(WHOLE.joints, Payload("tool", payload)), whole)
    text = whole.read_bytes()
    expected = load_corrections(whole).to_dict()
    cut = tmp_path / "cut.yaml"
    accepted = 0
    for length in range(len(text)):
        cut.write_bytes(text[:length])
        try:
            read = load_corrections(cut)
        except CorrectionsError:
            continue
        assert read.to_dict() == expected, length
        accepted += 1
    assert accepted <= 1  # the whole file without its last newline


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("version: true\njoints: {}\nend: true\n", "version"),
        ("version: 3\njoints: {joint1: {viscous: true}}\nend: true\n", "not a number"),
        ("version: 3\njoints: {joint1: {viscous: '1.0'}}\nend: true\n", "not a number"),
        ("version: 3\njoints: {joint1: {viscous: 1.0}, joint1: {viscous: 2.0}}\nend: true\n", "twice"),
        ("version: 3\njoints: {joint1: {viscous: 1.0, viscous: 2.0}}\nend: true\n", "twice"),
        ("version: 3\njoints: {joint1: {coulomb: 1.0e+308}}\nend: true\n", "beyond"),
        ("version: 3\njoints: {joint1: {offset: -1.0e+7}}\nend: true\n", "beyond"),
        ("version: 3\njoints: {joint1: {coulomb: 1.0, coulomb_lead: -0.01}}\nend: true\n", "coulomb_lead"),
        ("version: 3\njoints: {joint1: {coulomb: 1.0, coulomb_lead: 2.0}}\nend: true\n", "coulomb_lead"),
        ("version: 3\njoints: {}\nend: true\nextra: 1\n", "unknown"),
        ("version: 3\nend: true\njoints: {}\n", "last key"),
        ("version: 3\njoints: {}\nend: false\n", "end: true"),
        ("version: 2\njoints: {}\nend: true\n", "needs version 3"),
        ("version: 3\njoints: &a {joint1: {viscous: 1.0}}\nend: true\n", "aliases"),
        (
            "version: 3\njoints: {}\npayload: {link: tool, mass: 1.0e+300, com: [0, 0, 0],"
            " inertia: {ixx: 1, ixy: 0, ixz: 0, iyy: 1, iyz: 0, izz: 1}}\nend: true\n",
            "beyond",
        ),
    ],
)
def test_wrong_types_duplicates_and_absurd_values_are_refused(tmp_path, text, reason):
    path = tmp_path / "corrections.yaml"
    path.write_text(text)
    with pytest.raises(CorrectionsError, match=reason):
        load_corrections(path)


def test_yaml_that_expands_is_refused_before_it_expands(tmp_path):
    """A billion laughs: nine levels of ten aliases would be 10⁹ strings."""
    lines = ["version: 3", "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{k}: &a{k} [{', '.join([f'*a{k - 1}'] * 10)}]" for k in range(1, 9)]
    path = tmp_path / "laughs.yaml"
    path.write_text("\n".join([*lines, "joints: {}", "end: true"]) + "\n")
    start = time.perf_counter()
    with pytest.raises(CorrectionsError, match="aliases"):
        load_corrections(path)
    assert time.perf_counter() - start < 5.0  # a bound on a hang, not a timing claim


def test_a_file_over_the_cap_is_refused_unread_and_a_fifo_without_blocking(tmp_path):
    big = tmp_path / "big.yaml"
    with open(big, "wb") as file:
        file.truncate(200 * (1 << 20))  # 200 MB, sparse
    with pytest.raises(CorrectionsError, match=f"more than the {MAX_FILE_BYTES}"):
        load_corrections(big)
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    outcome = []
    reader = threading.Thread(target=lambda: outcome.append(_refusal(fifo)), daemon=True)
    reader.start()
    reader.join(timeout=10.0)
    assert outcome == ["not a regular file"]
    with pytest.raises(CorrectionsError, match="not a regular file"):
        load_corrections(tmp_path)  # a directory
    with pytest.raises(CorrectionsError, match="No such file"):
        load_corrections(tmp_path / "missing.yaml")


def _refusal(path) -> str:
    try:
        load_corrections(path)
    except CorrectionsError as error:
        return "not a regular file" if "not a regular file" in str(error) else str(error)
    return "read"


def test_an_unwritable_target_is_a_clear_error_and_nothing_is_left_behind(tmp_path):
    with pytest.raises(CorrectionsError, match="cannot write"):
        save_corrections(WHOLE, tmp_path / "missing" / "corrections.yaml")
    (tmp_path / "a_folder.yaml").mkdir()
    with pytest.raises(CorrectionsError, match="cannot write"):
        save_corrections(WHOLE, tmp_path / "a_folder.yaml")
    assert [p.name for p in tmp_path.iterdir()] == ["a_folder.yaml"]


def test_versions_1_and_2_are_read_as_before(tmp_path):
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "joints": {"joint1": {"viscous": 2, "offset": 0.5}}}))
    assert load_corrections(path).joints["joint1"] == JointCorrection(viscous=2.0, offset=0.5)


def test_a_name_the_model_lacks_is_refused_with_the_nearest_names():
    names, links = ["joint1", "joint2", "elbow_joint"], ["base", "tool"]
    typo = Corrections({"jiont2": JointCorrection(offset=1.0), "knee": JointCorrection(offset=1.0)})
    with pytest.raises(CorrectionsError, match=r"\['jiont2', 'knee'\] \(did you mean 'joint2' for 'jiont2'\?\)$"):
        typo.check_joints(names, links)
    payload = Payload("tol", Inertial(1.0, np.zeros(3), np.eye(3) * 1e-3))
    with pytest.raises(CorrectionsError, match=r"'tol' is not a link of the model \(did you mean 'tool' for 'tol'\?\)"):
        Corrections({}, payload).check_joints(names, links)
    Corrections({"joint2": JointCorrection(offset=1.0)}, None).check_joints(names, links)  # fits: no error
