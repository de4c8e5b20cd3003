"""Identification of friction, armature and offset on MuJoCo's robot with what the URDF leaves
out (joint damping, friction loss and rotor inertia set in the simulator, never in the URDF),
and what it must refuse to report. MuJoCo is imported inside the tests, which run after the
session's DDS tests (see rnea_ros/simulation/sim_node.py on load order)."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.analysis.identify import Identification
from rnea_ros.motion.multisine import MultiSine
from rnea_ros.testing.arm_in_mujoco import ARM, START, TRUTH, simulate


def identify(trajectory: MultiSine, seconds: float) -> Identification:
    q, qd, qdd, applied = simulate(trajectory, seconds)
    identification = Identification(ARM.joint_names)
    identification.add(applied, ARM.inverse_dynamics(q, qd, qdd), qd, qdd)
    return identification


def test_friction_and_armature_are_found_within_ten_percent():
    amplitudes = np.zeros((8, 3))
    amplitudes[:7] = [0.15, 0.08, 0.05]  # every joint within its limits (joint2 up to 1.56 of 1.8 rad)
    exciting = MultiSine(START, amplitudes, np.array([0.3, 0.7, 1.3]))
    results = identify(exciting, 12.0).results()
    for j, result in enumerate(results[:7]):
        found = {k: e.value for k, e in result.estimates.items()}
        print(result.name, {k: None if v is None else round(v, 4) for k, v in found.items()})
        assert found["viscous"] == pytest.approx(TRUTH["damping"][j], rel=0.1)
        assert found["coulomb"] == pytest.approx(TRUTH["frictionloss"][j], rel=0.1)
        assert found["armature"] == pytest.approx(TRUTH["armature"][j], rel=0.1)
        assert result.residual_rms_after < result.residual_rms_before / 3


def test_a_joint_that_does_not_move_is_not_identifiable():
    amplitudes = np.zeros((8, 3))
    amplitudes[:6] = [0.25, 0.15, 0.1]  # joint7 and the gripper stay still
    identification = identify(MultiSine(START, amplitudes, np.array([0.3, 0.7, 1.3])), 3.0)
    results = {r.name: r for r in identification.results()}
    for name in ("joint7", "finger_left_joint"):
        for parameter in ("viscous", "coulomb", "armature"):
            estimate = results[name].estimates[parameter]
            assert estimate.value is None and "not excited" in estimate.why, (name, parameter, estimate)
    written = identification.corrections().joints.get("joint7")  # what was not identified is left out (zero)
    assert written is None or (written.viscous, written.coulomb, written.armature) == (0.0, 0.0, 0.0)
    assert results["joint1"].estimates["viscous"].value is not None
