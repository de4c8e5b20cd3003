"""Identification without a simulator: known parameters in synthetic residuals, and the
corrections file (schema, round trip, refusals)."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.analysis.identify import Identification, identification_table
from rnea_ros.dynamics.corrections import Corrections, CorrectionsError, JointCorrection
from rnea_ros.dynamics.regressor import link_regressor
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


def arm_motion(seconds: float, amplitude: float, rng: np.random.Generator):
    """q, q̇, q̈ of the arm: each joint a sum of sines with its own frequencies."""
    t = np.arange(0.0, seconds, 0.002)[:, None]
    frequencies = rng.uniform(0.2, 1.5, (3, ARM.nv))
    phases = rng.uniform(0, 2 * np.pi, (3, ARM.nv))
    q = np.full((len(t), ARM.nv), 0.3)
    qd, qdd = np.zeros_like(q), np.zeros_like(q)
    for f, p in zip(frequencies, phases, strict=True):
        w = 2 * np.pi * f
        q += amplitude * np.sin(w * t + p)
        qd += amplitude * w * np.cos(w * t + p)
        qdd -= amplitude * w * w * np.sin(w * t + p)
    q[:, -1] = 0.02  # the gripper stays half open
    qd[:, -1] = qdd[:, -1] = 0.0
    return q, qd, qdd


def test_a_payload_is_found_with_the_joint_terms_and_written_as_a_rigid_body():
    from rnea_ros.dynamics.payload import Inertial, consistency_problems

    rng = np.random.default_rng(7)
    q, qd, qdd = arm_motion(30.0, 0.4, rng)
    payload = Inertial(1.5, np.array([0.01, -0.02, 0.06]), np.diag([0.004, 0.005, 0.003]))
    joints = Corrections({"joint2": JointCorrection(3.0, 1.5, 0.3), "joint6": JointCorrection(0.2, 0.15, 0.02)})
    truth = ARM.with_payload("tool", payload).inverse_dynamics(q, qd, qdd)
    measured = truth + joints.torques(ARM.joint_names, qd, qdd) + rng.normal(0, 0.02, q.shape)
    identification = Identification(ARM.joint_names, payload_link="tool")
    for rows in np.array_split(np.arange(len(q)), 5):
        model = ARM.inverse_dynamics(q[rows], qd[rows], qdd[rows])
        Y = link_regressor(ARM, "tool", q[rows], qd[rows], qdd[rows])
        identification.add(measured[rows], model, qd[rows], qdd[rows], Y)
    found = identification.payload()
    print(found.note, {k: e.value for k, e in found.estimates.items()})
    assert found.inertial is not None and consistency_problems(found.inertial) == []
    assert found.inertial.mass == pytest.approx(1.5, rel=0.01)
    np.testing.assert_allclose(found.inertial.com, payload.com, atol=2e-3)
    results = {r.name: r for r in identification.results()}
    assert results["joint2"].estimates["viscous"].value == pytest.approx(3.0, rel=0.02)
    assert results["joint6"].estimates["armature"].value == pytest.approx(0.02, rel=0.05)
    written = Corrections.from_dict(identification.corrections().to_dict())  # through the file form
    assert written.payload.link == "tool" and written.payload.inertial.mass == pytest.approx(1.5, rel=0.01)


def test_a_payload_that_does_not_move_the_joints_is_not_reported():
    rng = np.random.default_rng(8)
    q, qd, qdd = arm_motion(5.0, 0.3, rng)
    model = ARM.inverse_dynamics(q, qd, qdd)
    identification = Identification(ARM.joint_names, payload_link="world")  # the root: fixed to the world
    identification.add(model + rng.normal(0, 0.02, q.shape), model, qd, qdd, np.zeros((*q.shape, 10)))
    found = identification.payload()
    assert found.inertial is None and "not identifiable" in found.note
    assert all(e.value is None for e in found.estimates.values())
    assert identification.corrections().payload is None
    with pytest.raises(ValueError, match="regressor"):
        identification.add(model, model, qd, qdd)


def test_payload_corrections_are_checked():
    good = {
        "version": 2,
        "joints": {},
        "payload": {
            "link": "tool",
            "mass": 1.5,
            "com": [0.0, 0.0, 0.05],
            "inertia": {"ixx": 0.002, "ixy": 0.0, "ixz": 0.0, "iyy": 0.002, "iyz": 0.0, "izz": 0.001},
        },
    }
    corrections = Corrections.from_dict(good)
    assert Corrections.from_dict(corrections.to_dict()).to_dict() == corrections.to_dict()
    corrections.check_joints(ARM.joint_names, ARM.link_names)
    for change, words in (
        ({"version": 1}, "needs version 2"),
        ({"version": 4}, "version"),
        ({"version": 3}, "end: true"),
        ({"payload": {**good["payload"], "mass": -1.0}}, "mass"),
        ({"payload": {**good["payload"], "inertia": {**good["payload"]["inertia"], "izz": 0.01}}}, "triangle"),
        ({"payload": {**good["payload"], "com": [0.0, 0.0]}}, "com"),
        ({"payload": {"link": "tool", "mass": 1.0}}, "exactly"),
        ({"extra": 1}, "unknown keys"),
    ):
        with pytest.raises(CorrectionsError, match=words):
            Corrections.from_dict({**good, **change})
    with pytest.raises(CorrectionsError, match="not a link"):
        Corrections.from_dict({**good, "payload": {**good["payload"], "link": "nowhere"}}).check_joints(
            ARM.joint_names, ARM.link_names
        )


def test_the_tanh_width_is_chosen_on_held_out_samples_and_the_friction_points_follow_the_curve(tmp_path):
    """Friction that saturates over 0.05 rad/s, written by hand: the width chosen per joint is
    the one it was made with, and the friction plot's points (bin means of the residual less
    everything but friction) lie on it."""
    from rnea_ros.analysis.plot import write_friction_plot

    rng = np.random.default_rng(5)
    t = np.arange(0, 30, 0.001)[:, None]
    qd = np.hstack([0.6 * np.sin(0.9 * t) * np.sin(0.13 * t), 0.4 * np.cos(1.7 * t)])
    qdd = np.gradient(qd, 0.001, axis=0)
    friction = np.array([2.0, 0.5]) * qd + np.array([1.5, 0.8]) * np.tanh(qd / 0.05)
    measured = friction + 0.05 * qdd + 0.3 + rng.normal(0, 0.005, qd.shape)
    identification = Identification(["a", "b"], None)  # None: chosen (rnea_analyze's default)
    for rows in np.array_split(np.arange(len(t)), 9):
        identification.add(measured[rows], np.zeros_like(qd[rows]), qd[rows], qdd[rows])
    results = identification.results()
    assert [r.coulomb_width for r in results] == [0.05, 0.05]
    assert results[0].estimates["coulomb"].value == pytest.approx(1.5, rel=0.02)
    for j, (velocity, points) in enumerate(identification.friction_points()):
        expected = [2.0, 0.5][j] * velocity + [1.5, 0.8][j] * np.tanh(velocity / 0.05)
        np.testing.assert_allclose(points, expected, atol=0.03)
    write_friction_plot(identification, tmp_path / "friction.png")
    assert (tmp_path / "friction.png").stat().st_size > 10_000


def test_a_friction_that_settles_in_10_ms_is_found_with_its_lead_and_one_that_does_not_without():
    """Joint a's friction, written by hand, follows q̇ + 0.01·q̈ (it settles within 10 ms, as
    MuJoCo's soft friction loss does); joint b's follows q̇ itself: each is found with its own lead,
    and a's armature is not bent by the friction it would otherwise have to explain."""
    rng = np.random.default_rng(7)
    t = np.arange(0, 30, 0.001)[:, None]
    qd = np.hstack([0.6 * np.sin(0.9 * t) * np.sin(0.13 * t), 0.4 * np.cos(1.7 * t) * np.sin(0.31 * t)])
    qdd = np.gradient(qd, 0.001, axis=0)
    lead = np.array([0.01, 0.0])
    friction = np.array([1.0, 0.6]) * qd + np.array([1.5, 0.8]) * np.tanh((qd + lead * qdd) / 0.02)
    measured = friction + np.array([0.1, 0.05]) * qdd + rng.normal(0, 0.005, qd.shape)
    identification = Identification(["a", "b"], None)
    for rows in np.array_split(np.arange(len(t)), 9):
        identification.add(measured[rows], np.zeros_like(qd[rows]), qd[rows], qdd[rows])
    a, b = identification.results()
    assert (a.coulomb_width, a.coulomb_lead) == (0.02, 0.01)
    assert (b.coulomb_width, b.coulomb_lead) == (0.02, 0.0)
    assert a.estimates["armature"].value == pytest.approx(0.1, rel=0.02)
    assert a.estimates["coulomb"].value == pytest.approx(1.5, rel=0.02)
    corrections = identification.corrections()
    assert corrections.joints["a"].coulomb_lead == 0.01 and corrections.joints["b"].coulomb_lead == 0.0
    assert "lead 0.01 s" in identification_table(identification)
