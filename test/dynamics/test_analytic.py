"""Closed-form cases, independent of any library."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros import RobotModel

G = 9.81


def _link(name, mass, com_x, iyy):
    return (
        f'<link name="{name}"><inertial><origin xyz="{com_x} 0 0"/><mass value="{mass}"/>'
        f'<inertia ixx="{iyy / 2}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{iyy}"/></inertial></link>'
    )


def _revolute_y(name, parent, child, x):
    return (
        f'<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
        f'<origin xyz="{x} 0 0"/><axis xyz="0 1 0"/></joint>'
    )


def test_pendulum():
    """Mass m with COM at l from a y-axis hinge, horizontal at q = 0: τ = (I_c + m l²) q̈ − m g l cos q."""
    m, l, I_c = 2.0, 0.5, 0.01
    urdf = f'<robot name="p"><link name="base"/>{_link("bob", m, l, I_c)}{_revolute_y("hinge", "base", "bob", 0)}'
    urdf += "</robot>"
    model = RobotModel.from_urdf(urdf)
    for q, qd, qdd in [(0.0, 0.0, 0.0), (0.7, 1.3, -2.0), (-2.5, -4.0, 3.0)]:
        expected = (I_c + m * l * l) * qdd - m * G * l * np.cos(q)
        assert model.inverse_dynamics([q], [qd], [qdd]) == pytest.approx([expected], rel=1e-12)
        assert model.gravity_torques([q]) == pytest.approx([-m * G * l * np.cos(q)], rel=1e-12)


def test_prismatic_lift():
    """A vertical slider carrying mass m: τ = m (q̈ + g)."""
    urdf = (
        '<robot name="lift"><link name="base"/>'
        '<link name="carriage"><inertial><mass value="3"/>'
        '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>'
        '<joint name="z" type="prismatic"><parent link="base"/><child link="carriage"/>'
        '<axis xyz="0 0 2"/></joint></robot>'
    )
    model = RobotModel.from_urdf(urdf)
    assert model.inverse_dynamics([0.3], [1.0], [0.5]) == pytest.approx([3 * (0.5 + G)], rel=1e-12)


def test_static_two_link_arm_holding_a_load():
    """Horizontal two-link arm (links along x, hinges about y) with a weight M at the tip frame.

    τ1 = −g (m1 l1/2 + m2 (l1 + l2/2) + M (l1 + l2)),  τ2 = −g (m2 l2/2 + M l2).
    """
    m1, m2, l1, l2, M = 3.0, 2.0, 0.4, 0.3, 1.5
    urdf = (
        '<robot name="arm"><link name="base"/>'
        + _link("upper", m1, l1 / 2, 0.02)
        + _link("fore", m2, l2 / 2, 0.01)
        + '<link name="tip"/>'
        + _revolute_y("shoulder", "base", "upper", 0)
        + _revolute_y("elbow", "upper", "fore", l1)
        + '<joint name="tip_joint" type="fixed"><parent link="fore"/><child link="tip"/>'
        + f'<origin xyz="{l2} 0 0"/></joint>'
        + "</robot>"
    )
    model = RobotModel.from_urdf(urdf)
    load = {"tip": [0.0, 0.0, -M * G, 0.0, 0.0, 0.0]}  # the load's weight, applied on the robot
    tau = model.inverse_dynamics([0.0, 0.0], [0.0, 0.0], [0.0, 0.0], wrenches=load)
    expected = [-G * (m1 * l1 / 2 + m2 * (l1 + l2 / 2) + M * (l1 + l2)), -G * (m2 * l2 / 2 + M * l2)]
    assert tau == pytest.approx(expected, rel=1e-12)
    # A pure torque about y on the tip is carried one-for-one by both hinges, with opposite sign.
    tau_torque = model.inverse_dynamics([0.0, 0.0], [0.0, 0.0], [0.0, 0.0], {"tip": [0, 0, 0, 0, 5.0, 0]})
    assert tau_torque - model.gravity_torques([0.0, 0.0]) == pytest.approx([-5.0, -5.0], rel=1e-12)


def test_free_floating_body_needs_m_times_a():
    """A free body: the base wrench is [m (a − g) + ω × m v ...]; at rest it is m (a − g) in the body frame."""
    urdf = (
        '<robot name="brick"><link name="brick"><inertial><mass value="2"/>'
        '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.3"/></inertial></link></robot>'
    )
    model = RobotModel.from_urdf(urdf, floating_base=True)
    q = np.array([1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0])
    qdd = np.array([0.5, 0.0, 1.0, 0.0, 0.0, 2.0])
    tau = model.inverse_dynamics(q, np.zeros(6), qdd)
    assert tau == pytest.approx([1.0, 0.0, 2 * (1.0 + G), 0.0, 0.0, 0.6], rel=1e-12)
