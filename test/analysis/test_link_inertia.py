"""The log-Cholesky parametrisation, the consistent estimate and the corrected URDF (no ROS)."""

from __future__ import annotations

import numpy as np
from lxml import etree

from rnea_ros import RobotModel
from rnea_ros.analysis.link_inertia import (
    consistent_estimate,
    corrected_urdf,
    from_log_cholesky,
    pseudo_inertia,
    to_log_cholesky,
    urdf_link_inertials,
)
from rnea_ros.dynamics.payload import Inertial, consistency_problems
from rnea_ros.testing.reference import ARM_URDF


def test_any_ten_numbers_are_a_rigid_body_and_a_rigid_body_comes_back():
    rng = np.random.default_rng(0)
    for _ in range(500):
        pi = from_log_cholesky(rng.normal(size=10))
        assert consistency_problems(Inertial.from_parameters(pi)) == []
        assert np.linalg.eigvalsh(pseudo_inertia(pi))[0] > 0.0
        np.testing.assert_allclose(from_log_cholesky(to_log_cholesky(pi)), pi, rtol=1e-7, atol=1e-10)


def test_a_rod_point_masses_pseudo_inertia_is_its_second_moment():
    # two 1 kg points at x = ±0.5 m: J = Σ m [p 1][p 1]ᵀ (Wensing et al. 2017), written out by hand
    rod = Inertial(2.0, np.zeros(3), np.diag([0.0, 0.5, 0.5]))
    np.testing.assert_allclose(pseudo_inertia(rod.parameters()), np.diag([0.5, 0.0, 0.0, 2.0]), atol=1e-15)


def test_the_estimate_is_the_least_squares_one_when_that_is_a_body_and_a_body_when_it_is_not():
    prior = Inertial(1.0, np.array([0.1, 0.0, 0.0]), np.diag([0.01, 0.02, 0.02])).parameters()
    target = Inertial(1.3, np.array([0.12, 0.01, 0.0]), np.diag([0.012, 0.02, 0.025])).parameters()
    units = np.array([1.0, *[0.1] * 3, *[0.01] * 6])  # kg, kg·m, kg·m² of a 1 kg link 0.1 m long
    A = np.diag(1e4 * np.linspace(1.0, 3.0, 10) / units**2)  # a quadratic that determines every parameter
    x, _ = consistent_estimate(A, A @ (target - prior), [prior])
    np.testing.assert_allclose(prior + x, target, rtol=1e-6, atol=1e-9)
    impossible = target.copy()
    impossible[0] = -0.5  # a negative mass: the estimate stays a body, the nearest the cost allows
    x, _ = consistent_estimate(A, A @ (impossible - prior), [prior])
    assert consistency_problems(Inertial.from_parameters(prior + x)) == []


def test_only_the_identified_links_inertials_change():
    model = RobotModel.from_urdf(ARM_URDF)
    links = urdf_link_inertials(model, ARM_URDF)
    assert list(links)[:3] == ["link1", "link2", "link3"] and "tool" not in links  # tool is fixed to link7
    new = Inertial(3.0, np.array([0.01, -0.02, 0.1]), np.diag([0.03, 0.02, 0.01]))
    written = corrected_urdf(ARM_URDF, {"link2": new})
    again = urdf_link_inertials(RobotModel.from_urdf(written), written)["link2"]
    assert again.mass == 3.0
    np.testing.assert_allclose(again.com, new.com)
    np.testing.assert_allclose(again.inertia, new.inertia)
    before, after = etree.fromstring(ARM_URDF.encode()), etree.fromstring(written.encode())
    for element in before.iter("inertial"):
        element.getparent().remove(element)
    for element in after.iter("inertial"):
        element.getparent().remove(element)
    assert etree.tostring(before) == etree.tostring(after)


def test_what_the_data_do_not_determine_does_not_follow_the_last_digits_of_the_torques():
    # two links and a joint's armature whose columns move the torques only together (a null
    # direction of the normal equations), and a mass the least-squares fit makes negative (the
    # bound active): before the null directions were held at the prior, torques scaled by 1 + 1e-12
    # noise moved the armature from -0.58 to -0.69 (the bound slid along the null direction)
    rng = np.random.default_rng(0)
    priors = [
        Inertial(2.0, np.array([0.0, 0.0, 0.1]), np.diag([0.02, 0.02, 0.01])).parameters(),
        Inertial(1.0, np.array([0.05, 0.0, 0.0]), np.diag([0.005, 0.01, 0.01])).parameters(),
    ]
    units = np.concatenate([p[0] * np.array([1.0, *[0.1] * 3, *[0.01] * 6]) for p in priors] + [np.ones(2)])
    Y = rng.normal(size=(2000, 22)) / units
    Y[:, 19] = Y[:, 9] * units[9] / units[19]  # link2's izz moves the torques only as link1's does
    Y[:, 20] = Y[:, 9] * units[9]  # and so does the joint's armature
    target = np.r_[np.concatenate(priors) * rng.uniform(0.7, 1.3, 20), 0.1, 0.5]
    target[10] = -0.2  # link2's mass: not a body
    torques = Y @ (target - np.r_[np.concatenate(priors), 0.0, 0.0])
    A = Y.T @ Y * 1e6
    estimates = []
    for eps in (0.0, 1e-12, 2e-12, 3e-12, 1e-9):
        b = Y.T @ (torques * (1 + eps * rng.normal(size=len(torques)))) * 1e6
        x, _ = consistent_estimate(A, b, priors)
        for l, prior in enumerate(priors):
            assert consistency_problems(Inertial.from_parameters(prior + x[10 * l : 10 * l + 10])) == []
        estimates.append(x)
    np.testing.assert_allclose(estimates[1:], [estimates[0]] * 4, rtol=0, atol=1e-6)
