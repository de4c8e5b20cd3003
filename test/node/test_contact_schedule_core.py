"""rnea_node's contact schedule without ROS: Solo12 trotting by its gait parameters, through the
node's core as the node calls it; at each joint_states stamp the feet the gait has in stance then
carry the base, swing feet nothing; /diagnostics names the schedule, the feet in contact and the
next event; a gait that cannot be walked is refused with the reason, the last valid one kept."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rnea_ros.node.core import RneaCore, build_live_model
from rnea_ros.node.inputs import BY_TOPIC
from rnea_ros.node.settings import Settings, settings_from
from rnea_ros.node.state import OdometryReading
from rnea_ros.testing.legged import solo_standing_pose
from rnea_ros.testing.reference import robot_urdf

SOLO = robot_urdf("solo_description/robots/solo12.urdf")
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
TROT = {"gait_period": 0.5, "gait_duty": (0.6,), "gait_phases": (0.0, 0.5, 0.5, 0.0)}


def trotting(distribution: str, **changes) -> RneaCore:
    settings = Settings(
        floating_base=True,
        contact_links=FEET,
        contact_distribution=distribution,
        future_stamp_tolerance=3600.0,
        base_timeout=3600.0,
        **{**TROT, **changes},
    )
    core = RneaCore(settings)
    core.load(build_live_model(SOLO, settings))
    core.receive(
        BY_TOPIC["base_odometry"],
        OdometryReading(np.array([0.0, 0.0, 0.25, 0.0, 0.0, 0.0, 1.0]), np.zeros(6), core.live.model.base_link),
    )
    return core


def at(core: RneaCore, stamp: float):
    names = core.live.model.joint_names
    return core.joint_states(names, solo_standing_pose(names), np.zeros(12), True, stamp, lambda: 0.0)


@pytest.mark.parametrize("distribution", ["minimum_norm", "qp"])
def test_at_each_stamp_the_feet_the_gait_has_down_carry_the_base_and_swing_feet_nothing(distribution):
    core = trotting(distribution)
    # 1.1 s: FL+HR down (0.1 s into their 0.3 s stance), FR+HL in the air
    out = at(core, 1.1)
    wrenches = out.contact_wrenches
    assert np.all(wrenches["FR_FOOT"] == 0.0) and np.all(wrenches["HL_FOOT"] == 0.0)
    assert wrenches["FL_FOOT"][:3] @ wrenches["FL_FOOT"][:3] > 1.0 and wrenches["HR_FOOT"][2] != 0.0
    # two point feet on a diagonal hold the base: its centre of mass is above the diagonal (the SRDF
    # pose; in another, the qp's residual is the tipping the gait's base motion must avoid)
    assert np.linalg.norm(out.base_residual) < 1e-6
    # 1.4 s: the other pair
    out = at(core, 1.4)
    assert np.all(out.contact_wrenches["FL_FOOT"] == 0.0) and np.all(out.contact_wrenches["HR_FOOT"] == 0.0)
    assert np.linalg.norm(out.base_residual) < 1e-6
    # 1.77 s: all four down, FL+HR 0.03 s before lift-off (weight 0.6), FR+HL 0.02 s after landing (0.4)
    out = at(core, 1.77)
    loads = {link: np.linalg.norm(w[:3]) for link, w in out.contact_wrenches.items()}
    assert all(load > 0.5 for load in loads.values()), loads
    assert np.linalg.norm(out.base_residual) < 1e-6
    values = core.report().values
    assert values["contact schedule"] == "gait: period 0.5 s, duty 0.6, phases [0.0, 0.5, 0.5, 0.0]"
    assert values["feet in contact"] == "FL_FOOT, FR_FOOT, HL_FOOT, HR_FOOT"
    assert values["next contact event"] == "1.800 s: FR_FOOT, HL_FOOT"  # FL+HR lift off


def test_without_a_gait_every_contact_link_carries_as_before():
    core = trotting("minimum_norm", gait_period=0.0)
    out = at(core, 1.1)
    assert all(np.linalg.norm(w[:3]) > 0.5 for w in out.contact_wrenches.values())
    assert core.report().values["contact schedule"] == "none: every contact link in stance"


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"gait_duty": [0.5]}, "only support"),  # the pairs would switch at one instant
        ({"gait_duty": [0.4]}, "no link in stance"),  # a flight phase
        ({"gait_phases": [0.0, 0.5, 0.5]}, "one phase per link"),
        ({"gait_period": math.nan}, "gait_period"),
        ({"gait_phases": [0.0, 0.5, math.nan, 0.0]}, "gait_phases"),
    ],
)
def test_a_gait_that_cannot_be_walked_is_refused_with_the_reason_and_the_last_valid_one_kept(change, says):
    core = trotting("qp")
    before = core.settings
    with pytest.raises(ValueError, match=says):
        settings_from(change, before)
    assert core.live.settings_cache.contact_schedule(core.settings).duty == (0.6, 0.6, 0.6, 0.6)
