"""rnea_excite: a designed excitation within the URDF's limits (efforts checked with Pinocchio),
better conditioned than what rnea_play plays by default; its file (no ROS)."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.analysis.excitation import ConditionNumber, Excitation, Margins, design, load, main, urdf_limits
from rnea_ros.motion.multisine import MultiSine, multisine
from rnea_ros.testing.arm_in_mujoco import ARM, START, exciting
from rnea_ros.testing.reference import ARM_URDF

ARM_JOINTS = np.r_[np.ones(7, dtype=bool), False]  # the finger stays


@pytest.fixture(scope="module")
def designed():
    return design(ARM, ARM_URDF, START, moving=ARM_JOINTS, iterations=200)


def test_the_urdfs_limits_are_read():
    limits = urdf_limits(ARM, ARM_URDF)
    assert (limits.lower[3], limits.upper[3], limits.velocity[4], limits.effort[4]) == (-3.0, 0.0, 2.6, 12.0)
    assert limits.lower[6] == -np.inf and limits.upper[6] == np.inf  # joint7 is continuous


@pytest.mark.slow  # the 200-iteration design: 30-50 s of CPU
def test_the_excitation_keeps_within_the_limits_less_the_margins(designed):
    from rnea_ros.testing.reference import PinocchioReference

    limits, margins = urdf_limits(ARM, ARM_URDF), Margins()
    t = np.arange(0.0, 1.0 / designed.trajectory.frequencies[0], 1e-3)  # one period at 1 kHz
    q, qd, qdd = designed.trajectory.at_times(t)
    arm = q[:, ARM_JOINTS]
    assert np.all(arm >= (limits.lower + margins.position - 1e-9)[ARM_JOINTS])
    assert np.all(arm <= (limits.upper - margins.position + 1e-9)[ARM_JOINTS])
    assert np.all(np.abs(qd) <= (1 - margins.velocity) * limits.velocity * 1.001)
    pinocchio = PinocchioReference(ARM_URDF, ARM)
    tau = np.array([pinocchio.inverse_dynamics(*state) for state in zip(q[::10], qd[::10], qdd[::10], strict=True)])
    assert np.all(np.abs(tau) <= (1 - margins.effort) * limits.effort * 1.01)
    assert np.all(np.abs(designed.trajectory.amplitudes[~ARM_JOINTS]) == 0.0)
    assert np.abs(designed.trajectory.amplitudes[ARM_JOINTS]).sum(axis=1).min() > 0.05  # every arm joint moves


@pytest.mark.slow  # the same design
def test_its_condition_number_is_lower_than_the_multisines_by_three_at_least(designed):
    measure = ConditionNumber(ARM, ARM_URDF, START, ARM_JOINTS)
    default = multisine(START, 0.1, [0.2, 0.5])
    default = MultiSine(START, default.amplitudes * ARM_JOINTS[:, None], default.frequencies)
    hand_made = exciting(5, [0.23, 0.61, 1.3])  # the identification tests' multi-sine
    figures = {
        "designed": designed.condition,
        "rnea_play default": measure.of(default, 10.0),
        "hand-made": measure.of(hand_made, 100.0),
    }
    print({k: f"{v:.4g}" for k, v in figures.items()})
    assert figures["designed"] * 3 < figures["hand-made"] and figures["designed"] * 3 < figures["rnea_play default"]


def test_rnea_excite_writes_what_rnea_play_reads(tmp_path, capsys):
    out = tmp_path / "excitation.yaml"
    arm = [f"joint{k}" for k in range(1, 8)]
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(ARM_URDF)
    assert main([str(urdf), "--joints", *arm, "--iterations", "5", "--out", str(out)]) == 0
    assert "condition number" in capsys.readouterr().out
    joints, trajectory = load(out)
    assert joints == ARM.joint_names and trajectory.amplitudes.shape == (8, 5)
    np.testing.assert_allclose(trajectory.frequencies, 0.1 * np.arange(1, 6))
    assert main([str(urdf), "--start", *["9"] * 8, "--out", str(out)]) == 2  # outside the limits
    assert main([str(urdf), "--joints", "elbow", "--out", str(out)]) == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text("joints: [a]\nstart: [.nan]\nfrequencies: [0.1]\namplitudes: [[1.0]]\n")
    with pytest.raises(ValueError, match="malformed"):
        load(bad)


def with_transmissions(urdf: str) -> str:
    """The URDF with a ros_control <transmission> per joint, as real robots' URDFs carry them (its
    <joint> names a joint: no type, no limits)."""
    transmissions = "".join(
        f'<transmission name="t_{name}"><type>transmission_interface/SimpleTransmission</type>'
        f'<joint name="{name}"><hardwareInterface>hardware_interface/EffortJointInterface</hardwareInterface></joint>'
        f'<actuator name="m_{name}"><mechanicalReduction>50</mechanicalReduction></actuator></transmission>'
        for name in ARM.joint_names
    )
    return urdf.replace("</robot>", transmissions + "</robot>")


def test_a_transmissions_joint_is_no_joint_its_limits_stay_the_urdfs(tmp_path, capsys):
    urdf = with_transmissions(ARM_URDF)
    limits, plain = urdf_limits(ARM, urdf), urdf_limits(ARM, ARM_URDF)
    for field in ("lower", "upper", "velocity", "effort"):
        np.testing.assert_array_equal(getattr(limits, field), getattr(plain, field), err_msg=field)
    path, out = tmp_path / "arm.urdf", tmp_path / "excitation.yaml"
    path.write_text(urdf)
    arm = [f"joint{k}" for k in range(1, 8)]
    assert main([str(path), "--joints", *arm, "--iterations", "3", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "condition number inf" not in printed
    _, trajectory = load(out)
    assert np.all(np.abs(trajectory.amplitudes[:7]).sum(axis=1) > 0.0)  # every arm joint moves


def test_a_joint_that_would_never_move_is_refused_and_nothing_is_written(tmp_path, capsys):
    path, out = tmp_path / "arm.urdf", tmp_path / "excitation.yaml"
    path.write_text(ARM_URDF)
    # the finger's travel is less than twice the position margin: it has no room to move
    assert main([str(path), "--joints", "joint1", "finger_left_joint", "--iterations", "3", "--out", str(out)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("rnea_excite: joints ['finger_left_joint'] never move") and "\n" not in error
    assert not out.exists()


def test_an_infinite_condition_number_is_refused():
    still = MultiSine(START, np.zeros((ARM.nv, 5)), 0.1 * np.arange(1, 6))
    moving = np.zeros(ARM.nv, dtype=bool)
    assert "infinite" in Excitation(still, list(ARM.joint_names), np.inf, 1, moving).refusal()
    assert Excitation(still, list(ARM.joint_names), 12.0, 1, moving).refusal() is None
