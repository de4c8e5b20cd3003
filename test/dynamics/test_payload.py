"""A payload merged into a link, and the payload regressor, against Pinocchio on the URDF with the
payload written in as a fixed link (an independent model of the same robot)."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.dynamics.corrections import with_corrections
from rnea_ros.dynamics.payload import Inertial, consistency_problems
from rnea_ros.dynamics.regressor import link_regressor
from rnea_ros.testing.reference import (
    ARM_URDF,
    PAYLOAD,
    PinocchioReference,
    assert_close,
    random_state,
    urdf_with_payload,
)

ARM = RobotModel.from_urdf(ARM_URDF)


@pytest.mark.parametrize("link", ["tool", "link3", "tcp"])
def test_with_payload_equals_the_urdf_that_carries_it(link):
    rng = np.random.default_rng(1)
    reference = PinocchioReference(urdf_with_payload(link, PAYLOAD), ARM)
    model = ARM.with_payload(link, PAYLOAD)
    for _ in range(5):
        q, qd, qdd = random_state(model, rng)
        assert_close(model.inverse_dynamics(q, qd, qdd), reference.inverse_dynamics(q, qd, qdd))


@pytest.mark.parametrize("link", ["tool", "link5"])
def test_the_regressor_times_the_parameters_is_what_the_payload_adds(link):
    rng = np.random.default_rng(2)
    reference = PinocchioReference(urdf_with_payload(link, PAYLOAD), ARM)
    without = PinocchioReference(ARM_URDF, ARM)
    states = [random_state(ARM, rng) for _ in range(6)]
    q, qd, qdd = (np.array(column) for column in zip(*states, strict=True))
    Y = link_regressor(ARM, link, q, qd, qdd)
    added = Y @ PAYLOAD.parameters()
    for k in range(len(q)):
        expected = reference.inverse_dynamics(q[k], qd[k], qdd[k]) - without.inverse_dynamics(q[k], qd[k], qdd[k])
        assert_close(added[k], expected, rtol=1e-8)


def test_parameters_round_trip_and_consistency():
    back = Inertial.from_parameters(PAYLOAD.parameters())
    assert back.mass == pytest.approx(1.5)
    np.testing.assert_allclose(back.com, PAYLOAD.com, atol=1e-12)
    np.testing.assert_allclose(back.inertia, PAYLOAD.inertia, atol=1e-12)
    assert consistency_problems(PAYLOAD) == []
    assert consistency_problems(Inertial(1.0, np.zeros(3), np.zeros((3, 3)))) == []  # a point mass
    assert "mass" in consistency_problems(Inertial(-1.0, np.zeros(3), np.eye(3)))[0]
    assert "semi-definite" in consistency_problems(Inertial(1.0, np.zeros(3), np.diag([1.0, 1.0, -0.1])))[0]
    assert "triangle" in consistency_problems(Inertial(1.0, np.zeros(3), np.diag([0.1, 0.1, 1.0])))[0]


def test_a_payload_on_an_unknown_link_is_refused():
    with pytest.raises(ValueError, match="unknown link"):
        ARM.with_payload("no_such_link", PAYLOAD)
    with pytest.raises(ValueError, match="fixed to the world"):
        ARM.with_payload(ARM.link_names[0], PAYLOAD)


def test_with_corrections_is_pinocchio_with_the_payload_plus_the_joint_terms_written_out():
    """``RobotModel.with_corrections`` (what rnea_node and rnea_analyze both apply) against Pinocchio
    on the URDF that carries the payload, plus friction, armature and offset written out here."""
    from rnea_ros.dynamics.corrections import Corrections, JointCorrection, Payload

    joint3 = JointCorrection(viscous=1.5, coulomb=0.8, armature=0.2, offset=-0.3, coulomb_width=0.02)
    corrections = Corrections({"joint3": joint3}, Payload("tool", PAYLOAD))
    corrected = with_corrections(ARM, corrections, urdf_dynamics=False)
    reference = PinocchioReference(urdf_with_payload("tool", PAYLOAD), ARM)
    j = ARM.joint_names.index("joint3")
    rng = np.random.default_rng(4)
    for _ in range(5):
        q, qd, qdd = random_state(ARM, rng)
        expected = reference.inverse_dynamics(q, qd, qdd)
        expected[j] += 1.5 * qd[j] + 0.8 * np.tanh(qd[j] / 0.02) + 0.2 * qdd[j] - 0.3
        assert_close(corrected.inverse_dynamics(q, qd, qdd), expected)
    assert with_corrections(ARM, None).model is ARM
    # the URDF's own <dynamics damping="0.5" friction="0.1"> on joint1, on top
    q, qd, qdd = random_state(ARM, rng)
    with_urdf = with_corrections(ARM, corrections, urdf_dynamics=True).inverse_dynamics(q, qd, qdd)
    difference = with_urdf - corrected.inverse_dynamics(q, qd, qdd)
    expected = np.zeros(ARM.nv)
    expected[ARM.joint_names.index("joint1")] = 0.5 * qd[0] + 0.1 * np.tanh(qd[0] / 0.01)
    assert_close(difference, expected)
