"""The identification terms (``dynamics.regressor``): each term's law is its value times its column,
and everything that lists the terms lists them all. (The link regressor against Pinocchio:
test_payload.py.)"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.dynamics import regressor
from rnea_ros.dynamics.corrections import SHAPE, Corrections, JointArrays, JointCorrection
from rnea_ros.dynamics.regressor import JOINT_TERMS, TERM_NAMES
from rnea_ros.testing.reference import ARM_URDF

ARM = RobotModel.from_urdf(ARM_URDF)


@pytest.mark.parametrize("shape", [(5,), (40, 3)])
def test_the_law_is_the_sum_of_each_terms_value_times_its_column(shape):
    rng = np.random.default_rng(0)
    qd, qdd = rng.normal(size=shape), rng.normal(size=shape) * 5
    width, lead = rng.uniform(0.005, 0.1, shape[-1]), rng.uniform(0.0, 0.02, shape[-1])
    for k, term in enumerate(JOINT_TERMS):  # one term at a time
        values = [np.zeros(shape[-1])] * len(JOINT_TERMS)
        values[k] = rng.normal(size=shape[-1])
        column = np.broadcast_to(term.column(qd, qdd, width, lead), shape)
        np.testing.assert_allclose(
            regressor.joint_torques(values, qd, qdd, width, lead),
            values[k] * column,
            rtol=1e-15,
            atol=0,
            err_msg=term.name,
        )
    values = [rng.normal(size=shape[-1]) for _ in JOINT_TERMS]
    columns = [np.broadcast_to(term.column(qd, qdd, width, lead), shape) for term in JOINT_TERMS]
    expected = sum(v * c for v, c in zip(values, columns, strict=True))
    np.testing.assert_allclose(regressor.joint_torques(values, qd, qdd, width, lead), expected, rtol=1e-14, atol=1e-14)


def test_the_corrections_fields_and_file_keys_are_the_terms():
    assert [f.name for f in dataclasses.fields(JointCorrection)] == [*TERM_NAMES, *SHAPE]
    assert [f.name for f in dataclasses.fields(JointArrays)] == [*TERM_NAMES, *SHAPE]
    every = {name: 0.5 for name in TERM_NAMES}
    corrections = Corrections.from_dict({"version": 3, "joints": {"joint2": every}, "end": True})
    assert Corrections.from_dict(corrections.to_dict()) == corrections
    arrays = corrections.for_joints(ARM.joint_names)
    assert all(getattr(arrays, name)[1] == 0.5 for name in TERM_NAMES)
    assert arrays.values == tuple(getattr(arrays, name) for name in TERM_NAMES)


def test_a_term_that_cannot_be_negative_is_refused_negative():
    for term in JOINT_TERMS:
        data = {"version": 1, "joints": {"joint1": {term.name: -1.0}}}
        if term.nonnegative:
            with pytest.raises(ValueError, match=term.name):
                Corrections.from_dict(data)
        else:
            assert getattr(Corrections.from_dict(data).joints["joint1"], term.name) == -1.0


def test_the_identifications_columns_hold_every_term_and_each_shape_once():
    qd, qdd = np.array([0.3, -0.2]), np.array([1.0, 2.0])
    shapes = [(0.01, 0.0), (0.05, 0.01), (0.2, 0.0)]
    X = regressor.joint_columns(qd, qdd, shapes)
    assert X.shape == (2, regressor.column_count(len(shapes))) == (2, len(JOINT_TERMS) + len(shapes) - 1)
    where = regressor.term_columns(len(shapes))
    for term in JOINT_TERMS:
        for k, (width, lead) in enumerate(shapes if term.shaped else shapes[:1]):
            expected = np.broadcast_to(term.column(qd, qdd, width, lead), qd.shape)
            np.testing.assert_array_equal(X[:, where[term.name][k]], expected)
    for k in range(len(shapes)):  # a shape's columns: one per term, that shape's
        chosen = regressor.chosen_columns(k, len(shapes))
        np.testing.assert_array_equal(X[:, chosen], regressor.joint_columns(qd, qdd, [shapes[k]]))
    assert regressor.friction_columns(len(shapes)) == {c for t in JOINT_TERMS if t.friction for c in where[t.name]}


def test_rnea_excites_every_joints_terms_in_its_own_block():
    rng = np.random.default_rng(1)
    qd, qdd = rng.normal(size=(6, 3)), rng.normal(size=(6, 3))
    own, T = regressor.own_regressor(qd, qdd), len(JOINT_TERMS)
    assert own.shape == (6, 3, 3 * T)
    for j in range(3):
        block = np.zeros((6, 3 * T), dtype=bool)
        block[:, T * j : T * j + T] = True
        np.testing.assert_array_equal(
            own[:, j][block].reshape(6, T), regressor.joint_columns(qd[:, j], qdd[:, j], [(0.01, 0.0)])
        )
        assert not own[:, j][~block].any()


def test_the_excitation_measure_of_each_term():
    qd = np.array([1.0, -1.0, 1.0, -1.0])  # RMS 1, mean 0
    qdd = np.full(4, 3.0)  # constant: no spread
    X = regressor.joint_columns(qd, qdd, [(0.01, 0.0)])
    measure = dict(zip(TERM_NAMES, regressor.excitation(X.T @ X, len(qd)), strict=True))
    assert measure["viscous"] == pytest.approx(1.0) and measure["coulomb"] == pytest.approx(1.0, rel=1e-6)
    assert measure["armature"] == pytest.approx(0.0, abs=1e-12) and measure["offset"] == 1.0


def test_the_link_regressor_refuses_what_it_cannot_use():
    q, qd = np.zeros((2, ARM.nq)), np.zeros((2, ARM.nv))
    with pytest.raises(ValueError, match="unknown link"):
        regressor.link_regressor(ARM, "nowhere", q, qd, qd)
    with pytest.raises(ValueError, match="batches"):
        regressor.link_regressor(ARM, "tool", q[0], qd[0], qd[0])
    assert not regressor.link_regressor(ARM, ARM.link_names[0], q, qd, qd).any()  # fixed to the world
    Y = regressor.links_regressor(ARM, ["link1", "tool"], q, qd, qd)
    np.testing.assert_array_equal(Y[..., 10:], regressor.link_regressor(ARM, "tool", q, qd, qd))
