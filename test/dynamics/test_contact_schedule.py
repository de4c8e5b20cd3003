"""The contact schedule: which contact links are in stance at a time, from a periodic gait or a
planner's events; each hostile schedule refused with its reason, the last valid one kept."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rnea_ros.dynamics.contact_schedule import (
    AlwaysInStance,
    EventSchedule,
    PeriodicGait,
    ScheduleError,
    ScheduleKeeper,
    stance_weights,
)

FEET = ("FL", "FR", "HL", "HR")
TROT_PHASES = (0.0, 0.5, 0.5, 0.0)  # diagonal pairs FL+HR, FR+HL


def trot(duty: float = 0.6, period: float = 0.5) -> PeriodicGait:
    return PeriodicGait(FEET, period, [duty], TROT_PHASES)


def test_a_trot_puts_diagonal_pairs_down_in_turn():
    gait = trot()  # stance 0.3 s of 0.5; FL+HR from 0, FR+HL from 0.25: all four down in [0, 0.05) and [0.25, 0.3)
    assert gait.stance_links(0.01) == FEET
    assert gait.stance_links(0.1) == ("FL", "HR")
    assert gait.stance_links(0.27) == FEET
    assert gait.stance_links(0.4) == ("FR", "HL")
    assert gait.stance_links(100.1) == ("FL", "HR")  # periodic
    event = gait.next_event(0.1)
    assert event.time == pytest.approx(0.25) and event.stance == frozenset(FEET)
    assert gait.next_event(0.27).stance == frozenset({"FR", "HL"})
    assert gait.switches(0, 0.1) == pytest.approx((0.0, 0.3))
    assert gait.switches(1, 0.4) == pytest.approx((0.25, 0.55))


def test_the_weights_ramp_down_before_lift_off_and_up_after_touch_down():
    gait = trot()
    w = lambda t: stance_weights(gait, t, 0.05, 0.04)  # noqa: E731
    assert w(0.1).tolist() == [1.0, 0.0, 0.0, 1.0]
    assert w(0.27) == pytest.approx([0.6, 0.5, 0.5, 0.6])  # FL+HR 0.03 s before lift-off, FR+HL 0.02 s after landing
    assert w(0.3 + 1e-9).tolist()[0] == 0.0  # lifted off
    assert w(0.29999) == pytest.approx([0.0002, 1.0, 1.0, 0.0002], abs=1e-9)
    assert stance_weights(gait, 0.27, 0.0, 0.0).tolist() == [1.0, 1.0, 1.0, 1.0]  # no ramps: steps


def test_a_planners_events_give_the_stance_and_the_switches():
    schedule = EventSchedule(FEET, [(1.0, FEET), (1.2, ("FL", "HR")), (1.5, FEET), (1.6, ("FR", "HL"))], before=FEET)
    assert schedule.stance_links(0.5) == FEET
    assert schedule.stance_links(1.3) == ("FL", "HR")
    assert schedule.stance_links(1.55) == FEET
    assert schedule.stance_links(9.0) == ("FR", "HL")
    assert schedule.switches(0, 1.3) == (-math.inf, 1.6)  # FL down from before the first event until 1.6
    assert schedule.switches(1, 1.55) == (1.5, math.inf)
    assert schedule.next_event(1.3) == (1.5, frozenset(FEET))
    assert schedule.next_event(1.7) is None
    assert stance_weights(schedule, 1.57, 0.05, 0.05) == pytest.approx([0.6, 1.0, 1.0, 0.6])
    assert AlwaysInStance(FEET).stance_links(3.0) == FEET and AlwaysInStance(FEET).next_event(3.0) is None


HOSTILE = {
    "past": (lambda before: EventSchedule(FEET, [(9.0, FEET), (9.5, ("FL", "HR"))], before), "past"),
    "nan time": (lambda before: EventSchedule(FEET, [(10.0, FEET), (math.nan, ("FL", "HR"))], before), "non_finite"),
    "nan period": (lambda before: PeriodicGait(FEET, math.nan, [0.6], TROT_PHASES), "non_finite"),
    "nan phase": (lambda before: PeriodicGait(FEET, 0.5, [0.6], (0.0, math.nan, 0.5, 0.0)), "non_finite"),
    "unknown link": (lambda before: EventSchedule(FEET, [(10.0, ("FL", "RF_FOOT"))], before), "unknown_link"),
    "same time": (lambda before: EventSchedule(FEET, [(10.0, FEET), (10.0, ("FL", "HR"))], before), "overlapping"),
    "out of order": (
        lambda before: EventSchedule(FEET, [(10.0, FEET), (10.5, ("FL", "HR")), (10.2, FEET)], before),
        "overlapping",
    ),
    "the last foot released": (
        lambda before: EventSchedule(FEET, [(10.0, ("FL",)), (10.2, ())], before),
        "only_support",
    ),
    "released as the other lands": (
        lambda before: EventSchedule(FEET, [(10.0, ("FL",)), (10.2, ("HR",))], before),
        "only_support",
    ),
    "a trot with no four-foot stance": (lambda before: trot(duty=0.5), "only_support"),
    "a gait with a flight phase": (lambda before: trot(duty=0.4), "only_support"),
    "duty beyond 1": (lambda before: PeriodicGait(FEET, 0.5, [1.2], TROT_PHASES), "bad_gait"),
    "phases too few": (lambda before: PeriodicGait(FEET, 0.5, [0.6], (0.0, 0.5)), "bad_gait"),
}


@pytest.mark.parametrize("case", HOSTILE, ids=list(HOSTILE))
def test_a_hostile_schedule_is_refused_with_its_reason_and_the_last_valid_one_kept(case):
    make, reason = HOSTILE[case]
    keeper = ScheduleKeeper(AlwaysInStance(FEET))
    assert keeper.offer(lambda before: trot(), 10.0) is None
    kept = keeper.schedule
    message = keeper.offer(make, 10.0)
    assert message and keeper.refused == {reason: 1}, (message, keeper.refused)
    assert keeper.schedule is kept and keeper.last_refusal == message
    with pytest.raises(ScheduleError) as raised:
        schedule = make(frozenset(FEET))
        schedule.check_at(10.0)
    assert raised.value.reason == reason


def test_a_valid_planners_schedule_replaces_the_gait_and_starts_from_the_stance_in_force():
    keeper = ScheduleKeeper(trot())
    now = 10.1  # FL+HR down
    assert keeper.offer(lambda before: EventSchedule(FEET, [(now + 0.1, FEET)], before), now) is None
    assert keeper.schedule.stance_links(now + 0.05) == ("FL", "HR")
    assert keeper.schedule.stance_links(now + 0.15) == FEET
    assert keeper.offer(lambda before: EventSchedule(FEET, [(now - 0.01, FEET)], before), now) is None  # late by 10 ms


def test_the_weights_are_continuous_along_a_trot():
    gait = trot()
    times = np.arange(0.0, 2.0, 1e-4)
    weights = np.array([stance_weights(gait, t, 0.05, 0.05) for t in times])
    assert np.abs(np.diff(weights, axis=0)).max() <= 1e-4 / 0.05 + 1e-9  # the ramp's slope, no step
    assert (weights.sum(axis=1) > 0.0).all()
