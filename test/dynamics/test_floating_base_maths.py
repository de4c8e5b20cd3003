"""Floating-base maths against independent references: Pinocchio's forward kinematics for the
rotation of a link in the base, closed forms for the IMU, the base acceleration and the contacts."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from rnea_ros import RobotModel
from rnea_ros.dynamics.contacts import ContactLinks
from rnea_ros.dynamics.floating_base import ImuReading, base_acceleration, base_state_from_imu
from rnea_ros.dynamics.rotations import quaternion_matrix
from rnea_ros.dynamics.urdf import rpy_to_rotation
from rnea_ros.testing.reference import robot_urdf

TALOS = robot_urdf("talos_data/robots/talos_reduced.urdf", strip_mimic=True)


def test_link_rotation_in_base_matches_pinocchio_forward_kinematics():
    model = RobotModel.from_urdf(TALOS, floating_base=True)
    pin_model = pin.buildModelFromXML(TALOS, pin.JointModelFreeFlyer())
    data = pin_model.createData()
    rng = np.random.default_rng(3)
    q = model.neutral_configuration()
    q[7:] = rng.uniform(-0.5, 0.5, model.nv - 6)
    qd = np.zeros(model.nv)
    qd[6:] = rng.normal(size=model.nv - 6)
    pin_q, pin_v = pin.neutral(pin_model), np.zeros(pin_model.nv)
    for k, name in enumerate(model.joint_names):
        joint = pin_model.joints[pin_model.getJointId(name)]
        pin_q[joint.idx_q], pin_v[joint.idx_v] = q[7 + k], qd[6 + k]
    pin.forwardKinematics(pin_model, data, pin_q, pin_v)
    pin.updateFramePlacements(pin_model, data)
    for link in ("imu_link", "torso_2_link", "gripper_left_base_link", "left_sole_link"):
        frame = pin_model.getFrameId(link)
        R, omega = model.link_rotation_in_base(link, q, qd)
        np.testing.assert_allclose(R, data.oMf[frame].rotation, atol=1e-12)
        # the base is still (v_base = 0): ω of the link in the world = ω relative to the base
        omega_pin = pin.getFrameVelocity(pin_model, data, frame, pin.LOCAL_WORLD_ALIGNED).angular
        np.testing.assert_allclose(omega, omega_pin, atol=1e-12)


def test_imu_on_the_base_gives_its_orientation_and_rate():
    R_world_imu = rpy_to_rotation([0.1, -0.2, 0.3])
    R_base_imu = rpy_to_rotation([np.pi, 0.0, 0.0])  # mounted upside down
    omega_imu = np.array([0.3, -0.1, 0.2])
    q, v = base_state_from_imu(ImuReading(R_world_imu, omega_imu, "imu", 0.0), R_base_imu, np.zeros(3))
    np.testing.assert_allclose(quaternion_matrix(q[3:]), R_world_imu @ R_base_imu.T, atol=1e-12)
    np.testing.assert_allclose(v, [0, 0, 0, 0.3, 0.1, -0.2], atol=1e-12)  # ω flipped in y and z


def test_base_acceleration_removes_the_transport_term():
    # A base turning at ω = ż with v = x (constant classical acceleration 0 would need v̇ = −ω × v)
    classical = np.zeros(6)
    twist = np.array([1.0, 0.0, 0.0, 0.0, 0.0, 2.0])
    np.testing.assert_allclose(base_acceleration(classical, twist), [0.0, -2.0, 0.0, 0.0, 0.0, 0.0])


def test_contact_distribution_is_the_minimum_norm_solution():
    urdf = robot_urdf("anymal_b_simple_description/robots/anymal.urdf")
    model = RobotModel.from_urdf(urdf, floating_base=True)
    contacts = ContactLinks(model, ["LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"])
    JT = contacts.jacobian_transpose(model.neutral_configuration())
    r = np.random.default_rng(1).normal(size=6)
    f = contacts.distribute(JT, r)
    np.testing.assert_allclose(JT[:6] @ f, r, atol=1e-9)
    np.testing.assert_allclose(f, np.linalg.pinv(JT[:6]) @ r, atol=1e-9)
