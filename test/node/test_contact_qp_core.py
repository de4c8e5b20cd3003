"""rnea_node's contact distribution without ROS: Solo12 standing on its four feet, through the
node's core as the node calls it (odometry, base acceleration, joint_states), with
contact_distribution qp against minimum_norm."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.controller import diagnostics
from rnea_ros.controller.core import RneaCore, build_live_model
from rnea_ros.controller.inputs import BY_TOPIC
from rnea_ros.controller.settings import Settings
from rnea_ros.controller.state import BaseAccelerationReading, InvalidMessageError, OdometryReading
from rnea_ros.dynamics.rotations import quaternion_matrix
from rnea_ros.testing.reference import robot_urdf

SOLO = robot_urdf("solo_description/robots/solo12.urdf")
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
STANCE = np.tile([0.0, 0.8, -1.6], 4)
MU = 0.6


def standing(distribution: str, base_acceleration=None, pitch: float = 0.0, mu: float = MU, **settings):
    """Solo12 standing, its base pitched by ``pitch`` (a slope rising along world x is -pitch about y)."""
    settings = Settings(
        floating_base=True,
        contact_links=FEET,
        contact_distribution=distribution,
        friction_coefficient=mu,
        future_stamp_tolerance=3600.0,
        **settings,
    )
    core = RneaCore(settings)
    core.load(build_live_model(SOLO, settings))
    names = core.live.bound.model.joint_names
    quaternion = [0.0, math.sin(pitch / 2), 0.0, math.cos(pitch / 2)]
    core.receive(
        BY_TOPIC["base_odometry"],
        OdometryReading(np.array([0.0, 0.0, 0.25, *quaternion]), np.zeros(6), core.live.bound.model.base_link),
    )
    if base_acceleration is not None:
        core.receive(
            BY_TOPIC["desired_base_acceleration"],
            BaseAccelerationReading("", np.asarray(base_acceleration, dtype=float)),
        )
    outputs = core.joint_states(names, STANCE, np.zeros(12), True, 1.0, lambda: 0.0)
    return core, outputs


def test_qp_gives_point_feet_forces_only_inside_their_cones_and_holds_the_base():
    core, out = standing("qp", base_timeout=60.0)  # the report reads the wall clock: a loaded machine is slow
    report = core.reporter.report()
    assert np.linalg.norm(out.base_residual) < 1e-6
    total = np.zeros(3)
    for link, wrench in out.contact_wrenches.items():
        assert np.all(wrench[3:] == 0.0), link  # a point foot gives no torque
        q = np.r_[np.zeros(6), 1.0, STANCE]
        R = quaternion_matrix(q[3:7]) @ core.live.bound.model.link_rotation_in_base(link, q, np.zeros(18))[0]
        f = R @ wrench[:3]
        assert f[2] > 0 and math.hypot(f[0], f[1]) <= MU * f[2] + 1e-9, link
        total += f
    model = RobotModel.from_urdf(SOLO, floating_base=True)
    holding = model.gravity_torques(np.r_[0.0, 0.0, 0.25, 0.0, 0.0, 0.0, 1.0, STANCE])[:3]  # m g, upwards
    np.testing.assert_allclose(total, holding, atol=1e-6)
    assert report.level == diagnostics.OK, report.message


def test_minimum_norm_asks_point_feet_for_torques_the_qp_does_not():
    _, out = standing("minimum_norm")
    moments = max(np.linalg.norm(w[3:]) for w in out.contact_wrenches.values())
    assert moments > 1e-3
    print(f"minimum norm: largest moment asked of a point foot {moments:.3f} N·m; qp: 0")


def test_an_impossible_base_acceleration_leaves_a_residual_and_a_warning():
    """3 g sideways with μ = 0.6: the feet cannot push the base that hard."""
    core, out = standing("qp", base_acceleration=[30.0, 0.0, 0.0, 0.0, 0.0, 0.0], base_timeout=60.0)
    assert np.linalg.norm(out.base_residual) > 10.0
    report = core.reporter.report()
    assert report.level == diagnostics.WARN and "cannot produce this motion" in report.message
    assert float(report.values["base wrench residual norm"]) > 10.0


def world_forces(core, out, pitch: float) -> np.ndarray:
    q = np.r_[np.zeros(6), 1.0, STANCE]
    R_base = quaternion_matrix([0.0, math.sin(pitch / 2), 0.0, math.cos(pitch / 2)])
    return np.array(
        [
            R_base @ core.live.bound.model.link_rotation_in_base(link, q, np.zeros(18))[0] @ w[:3]
            for link, w in out.contact_wrenches.items()
        ]
    )


def test_contact_normals_put_the_friction_cones_about_the_slope():
    """On a 15° slope (μ = 0.33 > tan 15°) with the slope's normal as contact_normals every force is
    inside its cone about that normal, and together they carry the weight straight up."""
    slope = math.radians(15.0)
    normal = np.array([-math.sin(slope), 0.0, math.cos(slope)])
    core, out = standing("qp", pitch=-slope, mu=0.33, contact_normals=tuple(normal))
    assert np.linalg.norm(out.base_residual) < 1e-6
    for f in world_forces(core, out, -slope):
        along = f @ normal
        assert along > 0 and np.linalg.norm(f - along * normal) <= 0.33 * along + 1e-9
    weight = world_forces(core, out, -slope).sum(axis=0)
    assert weight[2] > 0 and abs(weight[0]) < 1e-6 and abs(weight[1]) < 1e-6


def test_per_link_sole_sizes_and_normals_and_their_refusals():
    settings = Settings(
        contact_links=("a", "b"), sole_size=(0.2, 0.1, 0.0, 0.0), contact_normals=(0.0, 0.0, 2.0, 0.0, 0.0, 0.0)
    )
    assert settings.contact_shapes() == [((0.1, 0.05), (0.0, 0.0, 1.0)), (None, None)]  # normalised
    one_for_all = Settings(contact_links=("a", "b"), sole_size=(0.2, 0.1), contact_normals=(0.0, 1.0, 1.0))
    half = math.sqrt(0.5)
    for shape, normal in one_for_all.contact_shapes():
        assert shape == (0.1, 0.05) and normal == pytest.approx((0.0, half, half), rel=1e-15)
    for huge_or_tiny in ((0.0, 1e308, 1e308), (0.0, 1e-8, 1e-8)):  # overflow and underflow on the way
        (_, normal), _ = Settings(contact_links=("a", "b"), contact_normals=huge_or_tiny).contact_shapes()
        assert normal == pytest.approx((0.0, half, half), rel=1e-15)
    for wrong, reason in (
        ({"sole_size": (0.2, 0.1, 0.3)}, "sole_size"),
        ({"sole_size": (0.2, -0.1)}, "sole_size"),
        ({"contact_normals": (0.0, 1.0)}, "contact_normals"),
        ({"contact_normals": (0.0, 0.0, math.nan)}, "contact_normals"),
        ({"contact_normals": (0.0, 5e-324, 0.0)}, "too small"),  # subnormal: no direction
        ({"contact_links": ("a", "a")}, "more than once"),
        ({"command_joints": ("joint1", "joint2", "joint1")}, "more than once"),
        ({"contact_radius": (0.02, 0.02, 0.02)}, "contact_radius"),
        ({"contact_radius": (-0.01,)}, "contact_radius"),
        ({"contact_radius": (math.nan,)}, "contact_radius"),
        ({"contact_radius": (2.0,)}, "contact_radius"),
        ({"contact_radius": (0.02,), "sole_size": (0.2, 0.1)}, "has a sole"),
    ):
        with pytest.raises(ValueError, match=reason):
            Settings(**{"contact_links": ("a", "b"), **wrong})
    assert Settings(contact_links=("a", "b"), contact_radius=(0.02, 0.0)).contact_radii() == [0.02, 0.0]
    assert Settings(contact_links=("a", "b"), contact_radius=(0.01,)).contact_radii() == [0.01, 0.01]


def test_outputs_that_overflow_are_refused_and_nothing_is_published():
    """Finite inputs whose torques overflow (checked by the QP's kernel itself, the node's hot path)."""
    core, out = standing("qp")
    assert out is not None and core.published == 1
    names = core.live.bound.model.joint_names
    for velocity in (1e200, 1e77):  # torques not finite; finite but beyond any robot's (~1e154·inertia)
        with pytest.raises(InvalidMessageError) as rejection:
            core.joint_states(names, STANCE, np.full(12, velocity), True, 2.0, lambda: 0.0)
        assert rejection.value.reason == "compute_error"
    assert core.published == 1
    assert core.joint_states(names, STANCE, np.zeros(12), True, 3.0, lambda: 0.0) is not None
