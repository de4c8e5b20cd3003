"""The two contact distributions behind one interface, without ROS: Solo12 standing on its feet.
Checked against Pinocchio: τ − Jᵀf must equal Pinocchio's inverse dynamics minus its own frame
Jacobians' transpose times the same f, and the base rows must vanish (the weight is carried)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from rnea_ros import RobotModel
from rnea_ros.dynamics.algorithms import ContactKernelArrays
from rnea_ros.dynamics.contact_distribution import KINDS, contact_distribution
from rnea_ros.dynamics.contact_forces import Contact, ContactConsistentTorques, QPConstants, QPWork, StateBuffers
from rnea_ros.dynamics.contact_options import CONTACT_QP_BOUNDS, ContactQPOptions
from rnea_ros.testing.legged import SOLO_FEET, SOLO_URDF, solo_standing_pose

SOLO = RobotModel.from_urdf(SOLO_URDF, floating_base=True)


def pinocchio_torques_minus_contacts(q_base, q, f) -> np.ndarray:
    """Pinocchio at rest (the robot's own convention: base pose, then joints by name) minus J_cᵀ f."""
    model = pin.buildModelFromXML(SOLO_URDF, pin.JointModelFreeFlyer())
    data = model.createData()
    q_pin = pin.neutral(model)
    q_pin[:7] = q_base
    for name, value in zip(SOLO.joint_names, q, strict=True):
        q_pin[model.joints[model.getJointId(name)].idx_q] = value
    tau = pin.rnea(model, data, q_pin, np.zeros(model.nv), np.zeros(model.nv))
    pin.computeJointJacobians(model, data, q_pin)
    pin.updateFramePlacements(model, data)
    for k, foot in enumerate(SOLO_FEET):
        J = pin.getFrameJacobian(model, data, model.getFrameId(foot), pin.LOCAL)  # link frame, about its origin
        tau = tau - J.T @ f[6 * k : 6 * k + 6]
    # back to this model's joint order
    rows = [model.joints[model.getJointId(name)].idx_v for name in SOLO.joint_names]
    return np.concatenate([tau[:6], tau[rows]])


@pytest.mark.parametrize("kind", KINDS)
def test_both_distributions_carry_the_weight_and_agree_with_pinocchio(kind):
    q_base = np.array([0.0, 0.0, 0.25, 0.0, 0.0, 0.0, 1.0])
    q = solo_standing_pose(SOLO.joint_names)
    zero_base, zero = np.zeros(6), np.zeros(len(q))
    options = ContactQPOptions(friction_coefficient=0.6)
    distribute = contact_distribution(kind, SOLO, [Contact(foot) for foot in SOLO_FEET], options)
    tau, gravity, f = distribute(q_base, zero_base, zero_base, q, zero, zero)
    np.testing.assert_allclose(tau[:6], 0.0, atol=1e-6)  # the feet carry the base
    np.testing.assert_allclose(tau, pinocchio_torques_minus_contacts(q_base, q, f), atol=1e-8)
    np.testing.assert_allclose(gravity, tau, atol=1e-8)  # at rest, τ is the gravity torques
    if kind == "qp":  # point feet: forces only
        np.testing.assert_allclose(f.reshape(4, 6)[:, 3:], 0.0, atol=1e-12)


def test_the_qp_kernel_takes_named_structures():
    distribute = contact_distribution("qp", SOLO, [Contact(foot) for foot in SOLO_FEET])
    assert isinstance(distribute, ContactConsistentTorques)
    dynamics, state, constants, work = distribute._constants
    assert isinstance(dynamics, ContactKernelArrays) and isinstance(state, StateBuffers)
    assert isinstance(constants, QPConstants) and isinstance(work, QPWork)


def test_an_unknown_distribution_is_refused():
    with pytest.raises(ValueError, match="minimum_norm"):
        contact_distribution("fastest", SOLO, [Contact(SOLO_FEET[0])])


def test_the_compiled_minimum_norm_is_numpys_along_random_states_and_so_is_its_fallback():
    """MinimumNormTorques' one kernel call against the general pieces (the model's contact terms and
    ``ContactLinks.distribute``'s least-norm solve by numpy), at random states; and its numpy
    fallback (for an A Aᵀ the kernel finds singular) on the state it last computed."""
    from rnea_ros.dynamics.contact_distribution import SINGULAR, MinimumNormTorques
    from rnea_ros.dynamics.contacts import ContactLinks

    distribute = MinimumNormTorques(SOLO, list(SOLO_FEET))
    links = ContactLinks(SOLO, list(SOLO_FEET))
    rng = np.random.default_rng(7)
    for _ in range(20):
        q_base = np.r_[rng.normal(0, 0.1, 3), pin.Quaternion(pin.exp3(rng.normal(0, 0.3, 3))).coeffs()]
        q = solo_standing_pose(SOLO.joint_names) + rng.normal(0, 0.2, 12)
        v, a = rng.normal(0, 1.0, 18), rng.normal(0, 2.0, 18)
        tau, gravity, f = distribute(q_base, v[:6], a[:6], q, v[6:], a[6:])
        ref_tau, ref_g, JT = SOLO.with_contact_terms(np.r_[q_base, q], v, a, None, list(SOLO_FEET))
        ref_f = links.distribute(JT, ref_tau[:6])
        scale = 1.0 + np.abs(ref_tau).max()
        np.testing.assert_allclose(f, ref_f, atol=1e-9 * scale)
        np.testing.assert_allclose(tau, ref_tau - JT @ ref_f, atol=1e-9 * scale)
        np.testing.assert_allclose(gravity, ref_g - JT @ links.distribute(JT, ref_g[:6]), atol=1e-9 * scale)
        fallback = distribute._finish(SINGULAR, np.empty((2, 18)), np.empty(24))
        for ours, numpys in zip((tau, gravity, f), fallback, strict=True):
            np.testing.assert_allclose(ours, numpys, atol=1e-9 * scale)


def test_the_qp_options_are_defined_once_with_the_nodes_defaults_and_bounds():
    options = ContactQPOptions()
    assert (options.friction_margin, options.sole_margin) == (0.9, 0.8)
    assert (options.tangential_weight, options.moment_length) == (10.0, 0.05)
    for name, (low, high) in CONTACT_QP_BOUNDS.items():
        ContactQPOptions(**{name: low})
        ContactQPOptions(**{name: high})
        for outside in (low - 1e-6 * max(1.0, abs(low)), high * 1.000001, float("nan")):
            with pytest.raises(ValueError, match=name):
                ContactQPOptions(**{name: outside})


def test_each_distribution_writes_its_own_data_never_the_models():
    """Two distributions of one model (the node's two threads) share no work array."""
    first = contact_distribution("qp", SOLO, [Contact(foot) for foot in SOLO_FEET])
    second = contact_distribution("minimum_norm", SOLO, [Contact(foot) for foot in SOLO_FEET])
    assert first._constants[0].work is not second._constants[0].work
    assert SOLO.thread_data().work is not first._constants[0].work
