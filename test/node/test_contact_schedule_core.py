"""rnea_node's contact schedule without ROS: Solo12 trotting by its gait parameters, through the
node's core as the node calls it; at each joint_states stamp the feet the gait has in stance then
carry the base, swing feet nothing; /diagnostics names the schedule, the feet in contact and the
next event; a gait that cannot be walked is refused with the reason, the last valid one kept."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rnea_ros.controller.core import RneaCore, build_live_model
from rnea_ros.controller.inputs import BY_TOPIC
from rnea_ros.controller.settings import Settings, settings_from
from rnea_ros.controller.state import ContactScheduleReading, InvalidMessageError, OdometryReading
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
        OdometryReading(np.array([0.0, 0.0, 0.25, 0.0, 0.0, 0.0, 1.0]), np.zeros(6), core.live.bound.model.base_link),
    )
    return core


def at(core: RneaCore, stamp: float):
    names = core.live.bound.model.joint_names
    return core.joint_states(names, solo_standing_pose(names), np.zeros(12), True, stamp, lambda: 0.0)


@pytest.mark.parametrize("distribution", ["minimum_norm", "qp"])
def test_at_each_stamp_the_feet_the_gait_has_down_carry_the_base_and_swing_feet_nothing(distribution):
    core = trotting(distribution)
    # 1.1 s: FL+HR down (0.1 s into their 0.3 s stance), FR+HL in the air
    out = at(core, 1.1)
    assert out.stance.tolist() == [1.0, 0.0, 0.0, 1.0]  # contact_states' positions
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
    assert out.stance == pytest.approx([0.6, 0.4, 0.4, 0.6])
    loads = {link: np.linalg.norm(w[:3]) for link, w in out.contact_wrenches.items()}
    assert all(load > 0.5 for load in loads.values()), loads
    assert np.linalg.norm(out.base_residual) < 1e-6
    values = core.reporter.report().values
    assert values["contact schedule"] == "gait: period 0.5 s, duty 0.6, phases [0.0, 0.5, 0.5, 0.0]"
    assert values["feet in contact"] == "FL_FOOT, FR_FOOT, HL_FOOT, HR_FOOT"
    assert values["next contact event"] == "1.800 s: FR_FOOT, HL_FOOT"  # FL+HR lift off


def test_without_a_gait_every_contact_link_carries_as_before():
    core = trotting("minimum_norm", gait_period=0.0)
    out = at(core, 1.1)
    assert all(np.linalg.norm(w[:3]) > 0.5 for w in out.contact_wrenches.values())
    assert out.stance is None  # contact_states: all in stance
    assert core.reporter.report().values["contact schedule"] == "none: every contact link in stance"


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


FL_HR, FR_HL, ALL = (1, 0, 0, 1), (0, 1, 1, 0), (1, 1, 1, 1)


def planned(core: RneaCore, events, stamp: float = 0.0, names=FEET) -> None:
    """A planner's contact_schedule: (time from ``stamp``, stance per link) per event."""
    times = np.array([t for t, _ in events], dtype=float)
    stance = np.array([row for _, row in events], dtype=bool).reshape(len(events), len(names))
    core.receive(BY_TOPIC["contact_schedule"], ContactScheduleReading(list(names), stamp, times, stance))


def test_a_planners_schedule_replaces_the_gait_from_its_first_event_and_an_empty_one_gives_it_back():
    core = trotting("minimum_norm", gait_period=0.0)
    at(core, 1.0)
    planned(core, [(0.1, FL_HR), (0.3, ALL), (0.35, FR_HL)])  # stamp 0: from the newest joint_states stamp
    out = at(core, 1.05)  # before its first event: the stance in force when it came (all four)
    assert all(np.linalg.norm(w[:3]) > 0.5 for w in out.contact_wrenches.values())
    out = at(core, 1.2)
    assert np.all(out.contact_wrenches["FR_FOOT"] == 0.0) and np.all(out.contact_wrenches["HL_FOOT"] == 0.0)
    assert np.linalg.norm(out.base_residual) < 1e-6
    values = core.reporter.report().values
    assert values["contact schedule"] == "events: 3 from 1.100 s to 1.350 s"
    assert values["feet in contact"] == "FL_FOOT, HR_FOOT"
    assert values["next contact event"] == "1.300 s: FL_FOOT, FR_FOOT, HL_FOOT, HR_FOOT"
    out = at(core, 1.5)
    assert np.all(out.contact_wrenches["FL_FOOT"] == 0.0) and np.linalg.norm(out.contact_wrenches["FR_FOOT"]) > 0.5
    planned(core, [])
    assert core.live.planned is None
    assert all(np.linalg.norm(w[:3]) > 0.5 for w in at(core, 1.6).contact_wrenches.values())


PLANNED_HOSTILE = {
    "past": (dict(events=[(0.0, FL_HR)], stamp=0.5), "schedule_past"),
    "unknown link": (dict(events=[(0.1, (1, 1, 1, 1, 1))], names=(*FEET, "base_link")), "schedule_unknown_link"),
    "missing link": (dict(events=[(0.1, (1, 1, 1))], names=FEET[:3]), "schedule_unknown_link"),
    "overlapping": (dict(events=[(0.1, ALL), (0.1, FL_HR)]), "schedule_overlapping"),
    "out of order": (dict(events=[(0.2, ALL), (0.1, FL_HR)]), "schedule_overlapping"),
    "the only support released": (dict(events=[(0.1, (1, 0, 0, 0)), (0.2, (0, 0, 0, 0))]), "schedule_only_support"),
    "a pair swapped in one instant": (dict(events=[(0.1, FL_HR), (0.2, FR_HL)]), "schedule_only_support"),
}


@pytest.mark.parametrize("case", PLANNED_HOSTILE)
def test_a_hostile_planners_schedule_is_refused_with_its_reason_and_the_last_valid_one_kept(case):
    core = trotting("qp", gait_period=0.0)
    at(core, 1.0)
    planned(core, [(0.1, FL_HR), (0.3, ALL)])
    kept = core.live.planned
    arguments, reason = PLANNED_HOSTILE[case]
    with pytest.raises(InvalidMessageError) as refused:
        planned(core, **arguments)
    assert refused.value.reason == reason, str(refused.value)
    assert "the last valid one kept" in str(refused.value)
    assert core.live.planned is kept
    assert np.all(at(core, 1.2).contact_wrenches["FR_FOOT"] == 0.0)


@pytest.mark.ros
def test_the_contact_schedule_is_read_from_a_joint_trajectory():
    from builtin_interfaces.msg import Duration, Time
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from rnea_ros.node.messages import read_contact_schedule

    def message(*rows, names=FEET):
        msg = JointTrajectory(joint_names=list(names))
        msg.header.stamp = Time(sec=12, nanosec=500_000_000)
        for k, row in enumerate(rows):
            msg.points.append(
                JointTrajectoryPoint(positions=list(row), time_from_start=Duration(nanosec=k * 100_000_000))
            )
        return msg

    reading = read_contact_schedule(message(FL_HR, ALL))
    assert reading.names == list(FEET) and reading.stamp == 12.5
    assert reading.times.tolist() == [0.0, 0.1] and reading.stance.tolist() == [[True, False, False, True], [True] * 4]
    for rows, reason in [
        (((1, 0.5, 1, 1),), "contact_state"),
        (((1, math.nan, 1, 1),), "non_finite"),
        (((1, 1),), "wrong_length"),
    ]:
        with pytest.raises(InvalidMessageError) as refused:
            read_contact_schedule(message(*rows))
        assert refused.value.reason == reason
    with pytest.raises(InvalidMessageError, match="twice"):
        read_contact_schedule(message(ALL, names=("FL_FOOT",) * 4))
