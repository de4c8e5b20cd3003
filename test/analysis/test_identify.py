"""Identification without a simulator: known parameters in synthetic residuals, and the
corrections file (schema, round trip, refusals)."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.analysis.identify import Identification
from rnea_ros.dynamics.corrections import Corrections, CorrectionsError, JointCorrection
from rnea_ros.testing.reference import ARM_URDF

ARM = RobotModel.from_urdf(ARM_URDF)


def test_known_parameters_are_recovered_from_noisy_residuals_in_chunks():
    rng = np.random.default_rng(4)
    t = np.arange(0, 20, 0.001)[:, None]
    qd = np.hstack([np.sin(2.0 * t), 0.5 * np.cos(3.1 * t), np.zeros_like(t)])  # the third joint does not move
    qdd = np.hstack([2.0 * np.cos(2.0 * t), -1.55 * np.sin(3.1 * t), np.zeros_like(t)])
    truth = Corrections({"a": JointCorrection(1.5, 0.4, 0.05, 0.2), "b": JointCorrection(0.3, 0.1, 0.02, -0.1)})
    model = rng.normal(0, 5.0, qd.shape)  # rigid-body torques of some motion
    measured = model + truth.torques(["a", "b", "c"], qd, qdd) + rng.normal(0, 0.01, qd.shape)
    identification = Identification(["a", "b", "c"])
    for rows in np.array_split(np.arange(len(t)), 7):  # streamed: the same as one call
        identification.add(measured[rows], model[rows], qd[rows], qdd[rows])
    a, b, c = identification.results()
    for result, expected in ((a, truth.joints["a"]), (b, truth.joints["b"])):
        for name in ("viscous", "coulomb", "armature", "offset"):
            assert result.estimates[name].value == pytest.approx(getattr(expected, name), abs=0.01), (result.name, name)
    assert all(c.estimates[name].value is None for name in ("viscous", "coulomb", "armature"))


def test_corrections_round_trip_and_bad_files_are_refused():
    corrections = Corrections.from_dict({"version": 1, "joints": {"joint1": {"viscous": 2.0, "armature": 0.2}}})
    assert Corrections.from_dict(corrections.to_dict()) == corrections
    tau = corrections.torques(ARM.joint_names, np.full(8, 0.5), np.full(8, 2.0))
    assert tau[0] == pytest.approx(2.0 * 0.5 + 0.2 * 2.0) and not tau[1:].any()
    for bad, words in (
        ({"joints": {}}, "version"),
        ({"version": 1, "joints": {"joint1": {"viscous": "fast"}}}, "not a number"),
        ({"version": 1, "joints": {"joint1": {"viscous": float("nan")}}}, "not finite"),
        ({"version": 1, "joints": {"joint1": {"stiction": 1.0}}}, "unknown parameters"),
        ({"version": 1, "joints": {"joint1": {"armature": -1.0}}}, "armature"),
        ([1, 2], "mapping"),
    ):
        with pytest.raises(CorrectionsError, match=words):
            Corrections.from_dict(bad)
    with pytest.raises(CorrectionsError, match="joint9"):
        Corrections.from_dict({"version": 1, "joints": {"joint9": {}}}).check_joints(ARM.joint_names)
