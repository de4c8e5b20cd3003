"""The core against Pinocchio on real robots: torques to 1e-9 of their scale, on random states."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from rnea_ros import RobotModel
from rnea_ros.testing.reference import EXAMPLE_ARM, PinocchioReference, assert_close, random_state, robot_urdf

ROBOTS = {
    # name: (URDF text, floating base)
    "example_arm": (EXAMPLE_ARM.read_text(), False),
    "example_arm_floating": (EXAMPLE_ARM.read_text(), True),
    "panda_mimic": (robot_urdf("panda_description/urdf/panda.urdf"), False),
    "ur5": (robot_urdf("ur_description/urdf/ur5_robot.urdf"), False),
    # Pinocchio cannot build these two with their mimic tags: compare the unconstrained robots.
    "talos_humanoid": (robot_urdf("talos_data/robots/talos_full_v2.urdf", strip_mimic=True), True),
    "romeo_humanoid": (robot_urdf("romeo_description/urdf/romeo.urdf", strip_mimic=True), True),
    "tiago_mobile_manipulator": (robot_urdf("tiago_description/robots/tiago.urdf"), False),
    "solo12_quadruped": (robot_urdf("solo_description/robots/solo12.urdf"), True),
    "anymal_kinova": (robot_urdf("anymal_b_simple_description/robots/anymal-kinova.urdf"), True),
}


@pytest.fixture(scope="module", params=sorted(ROBOTS))
def robot(request):
    urdf, floating = ROBOTS[request.param]
    model = RobotModel.from_urdf(urdf, floating_base=floating)
    return model, PinocchioReference(urdf, model)


def test_inverse_dynamics(robot):
    model, reference = robot
    rng = np.random.default_rng(7)
    for _ in range(20):
        q, qd, qdd = random_state(model, rng)
        assert_close(model.inverse_dynamics(q, qd, qdd), reference.inverse_dynamics(q, qd, qdd))


def test_gravity_and_nonlinear_effects(robot):
    model, reference = robot
    rng = np.random.default_rng(8)
    for _ in range(10):
        q, qd, _ = random_state(model, rng)
        assert_close(model.gravity_torques(q), reference.gravity_torques(q))
        assert_close(model.nonlinear_effects(q, qd), reference.nonlinear_effects(q, qd))


def test_wrenches_on_every_link(robot):
    """Wrenches on movable links and on links merged by fixed joints, one case per few links."""
    model, reference = robot
    rng = np.random.default_rng(9)
    links = [name for name in model.link_names if name in reference.frames]
    for _ in range(10):
        q, qd, qdd = random_state(model, rng)
        chosen = rng.choice(links, size=min(4, len(links)), replace=False)
        wrenches = {str(link): rng.normal(size=6) * 10 for link in chosen}
        assert_close(
            model.inverse_dynamics(q, qd, qdd, wrenches),
            reference.inverse_dynamics(q, qd, qdd, wrenches),
        )


def test_mimic_joints_are_coupled_not_independent():
    urdf = robot_urdf("panda_description/urdf/panda.urdf")
    model = RobotModel.from_urdf(urdf)
    assert "panda_finger_joint2" not in model.joint_names
    assert model.nv == 8


def test_humanoid_size():
    model = RobotModel.from_urdf(ROBOTS["talos_humanoid"][0], floating_base=True)
    assert model.nv - 6 >= 40


@pytest.mark.parametrize(
    "path, floating, links",
    [
        ("anymal_b_simple_description/robots/anymal.urdf", True, ["LF_FOOT", "RH_FOOT", "imu_link"]),
        ("talos_data/robots/talos_reduced.urdf", True, ["left_sole_link", "right_sole_link"]),
    ],
)
def test_wrench_jacobian_transpose_is_pinocchios_frame_jacobian(path, floating, links):
    """Column 6k+i: a unit wrench [f, τ] in link k's frame mapped to generalized forces, i.e. the
    transpose of Pinocchio's LOCAL frame Jacobian ([v; ω] rows) in our coordinate order."""
    urdf = robot_urdf(path, strip_mimic=True)
    model = RobotModel.from_urdf(urdf, floating_base=floating)
    reference = PinocchioReference(urdf, model)
    q, _, _ = random_state(model, np.random.default_rng(7))
    JT = model.wrench_jacobian_transpose(q, links)
    pin_q = reference.q(q)
    pin.computeJointJacobians(reference.model, reference.data, pin_q)
    pin.framesForwardKinematics(reference.model, reference.data, pin_q)
    for k, link in enumerate(links):
        J = pin.getFrameJacobian(
            reference.model, reference.data, reference.model.getFrameId(link), pin.ReferenceFrame.LOCAL
        )
        for i in range(6):
            assert_close(JT[:, 6 * k + i], reference.tau_to_ours(J.T[:, i]))


@pytest.mark.parametrize(
    "path, links, components",
    [
        ("solo_description/robots/solo12.urdf", ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"], (3, 3, 3, 3)),
        ("talos_data/robots/talos_reduced.urdf", ["left_sole_link", "right_sole_link"], (6, 6)),
        ("anymal_b_simple_description/robots/anymal.urdf", ["LF_FOOT", "RH_FOOT", "imu_link"], (3, 6, 3)),
    ],
)
@pytest.mark.slow  # the first case compiles the contact kernels in a fresh clone's cache: 11.1 s of CPU in a CI run
def test_with_contact_terms_is_pinocchios_rnea_gravity_and_frame_jacobian(path, links, components):
    """The node's one-call (τ, g, Jᵀ) at random states with a measured wrench: Pinocchio's rnea,
    generalized gravity and LOCAL frame Jacobians (their first ``components`` columns per link)."""
    urdf = robot_urdf(path, strip_mimic=True)
    model = RobotModel.from_urdf(urdf, floating_base=True)
    reference = PinocchioReference(urdf, model)
    rng = np.random.default_rng(11)
    for _ in range(3):
        q, qd, qdd = random_state(model, rng)
        wrenches = {links[0]: rng.normal(0, 5.0, 6)}
        tau, g, JT = model.with_contact_terms(q, qd, qdd, wrenches, links, components)
        assert_close(tau, reference.inverse_dynamics(q, qd, qdd, wrenches))
        assert_close(g, reference.gravity_torques(q))
        pin_q = reference.q(q)
        pin.computeJointJacobians(reference.model, reference.data, pin_q)
        pin.framesForwardKinematics(reference.model, reference.data, pin_q)
        column = 0
        for link, count in zip(links, components, strict=True):
            frame = reference.model.getFrameId(link)
            J = pin.getFrameJacobian(reference.model, reference.data, frame, pin.ReferenceFrame.LOCAL)
            for i in range(count):
                assert_close(JT[:, column], reference.tau_to_ours(J.T[:, i]))
                column += 1
        assert column == JT.shape[1]
