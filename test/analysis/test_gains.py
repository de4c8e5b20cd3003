"""rnea_gains against Pinocchio's mass matrix (CRBA) on a robot the project does not ship (UR5)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
import yaml

from rnea_ros import RobotModel
from rnea_ros.analysis.gains import critically_damped_gains, main, mass_matrix
from rnea_ros.testing.reference import EXAMPLE_ROBOT_DATA, PinocchioReference

UR5_FILE = EXAMPLE_ROBOT_DATA / "ur_description/urdf/ur5_robot.urdf"
UR5 = RobotModel.from_urdf(UR5_FILE.read_text())


def test_the_mass_matrix_is_pinocchios():
    reference = PinocchioReference(UR5_FILE.read_text(), UR5)
    q = np.random.default_rng(3).uniform(-2, 2, UR5.nq)
    M = pin.crba(reference.model, reference.data, reference.q(q))
    M = np.triu(M) + np.triu(M, 1).T
    rows = [joint.idx_v for joint in reference.joints]
    np.testing.assert_allclose(mass_matrix(UR5, q), M[np.ix_(rows, rows)], rtol=1e-9, atol=1e-12)


def test_gains_are_critically_damped_on_each_joints_inertia():
    q = np.zeros(UR5.nq)
    names, kp, kd = critically_damped_gains(UR5, q, 20.0, ["wrist_3_joint", "shoulder_pan_joint"])
    assert names == ["wrist_3_joint", "shoulder_pan_joint"]
    inertia = np.diag(mass_matrix(UR5, q))[[5, 0]]
    np.testing.assert_allclose(kp, 400.0 * inertia)
    np.testing.assert_allclose(kd**2, 4.0 * kp * inertia)  # ζ = kd / (2 √(kp M)) = 1
    with pytest.raises(ValueError, match="positive"):
        critically_damped_gains(UR5, q, -1.0)
    with pytest.raises(ValueError, match="does not have"):
        critically_damped_gains(UR5, q, 20.0, ["joint_1"])


def test_the_command_prints_a_parameters_file(capsys):
    assert main([str(UR5_FILE), "--bandwidth", "15", "--with-description"]) == 0
    parameters = yaml.safe_load(capsys.readouterr().out)["/**"]["ros__parameters"]
    assert parameters["command_joints"] == list(UR5.joint_names)
    assert len(parameters["kp"]) == len(parameters["kd"]) == UR5.nv and min(parameters["kp"]) > 0
    assert RobotModel.from_urdf(parameters["robot_description"]).joint_names == UR5.joint_names
    assert main([str(UR5_FILE), "--pose", "0.1"]) == 2
    assert "--pose has 1 values" in capsys.readouterr().err


def test_a_robot_without_a_movable_joint_is_refused_in_one_line(tmp_path, capsys):
    urdf = tmp_path / "fixed.urdf"
    urdf.write_text(
        "<robot name='bolted'><link name='base'/><link name='tool'/>"
        "<joint name='bolt' type='fixed'><parent link='base'/><child link='tool'/></joint></robot>"
    )
    assert main([str(urdf)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # no empty gains file
    assert captured.err.count("\n") == 1 and "no movable joint" in captured.err
