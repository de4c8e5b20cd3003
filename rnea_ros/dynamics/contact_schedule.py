"""Which contact links are in stance at a time: a contact schedule (no ROS).

A schedule names, at any time t [s, the joint_states stamps' clock], the links of ``contact_links``
in stance, when each stance foot last touched down and when it lifts off next, and the next event
(a time at which the stance set changes). Two kinds:

- ``PeriodicGait``: a gait as parameters, for robots without a planner: a period P, a duty d_k and a
  phase offset φ_k per link (fractions of the period); link k is in stance while
  frac(t/P − φ_k) < d_k (d_k = 1: always). Its cycle starts at t = 0 of the stamps' clock.
- ``EventSchedule``: a list of events (time, stance set), ahead of time, as a planner sends them
  (OCS2's mode schedule); before its first event, the stance set it was given as ``before``
  (``ScheduleKeeper`` gives it the one in force when it came).

``stance_weights`` turns a schedule into each link's share in the contact distribution: 0 in
swing, 1 in stance, and linear ramps: down to 0 over ``lift_off`` s before a lift-off, up from 0
over ``touch_down`` s after a touch-down (TSID's ``removeRigidContact(name, transition_duration)``;
``contact_distribution.ScheduledContacts`` reads them).

A schedule that cannot be walked is refused with ``ScheduleError`` (its ``reason`` a diagnostics
key): non-finite numbers (``non_finite``), links not in ``contact_links`` (``unknown_link``),
events not in strictly increasing time (``overlapping``), an event in the past (``past``, checked
against the time it is offered at), a gait's numbers out of range (``bad_gait``), and no support:
an empty stance set, or feet lifting off while no foot stays down across the lift-off (the load of
a foot that leaves must go to a foot already down: ``only_support``). ``ScheduleKeeper`` keeps the
last valid schedule when a new one is refused.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

LATE_TOLERANCE = 0.02  # s: an event this much older than the time it is offered at is not "in the past" yet
SAME_INSTANT = 1e-12  # fraction of a gait's period: two switches closer than this are one event


class ScheduleError(ValueError):
    """A schedule refused; ``reason`` is the diagnostics key it is counted under."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


class Event(NamedTuple):
    time: float  # s
    stance: frozenset[str]  # the links in stance from ``time`` on


class ContactSchedule:
    """The interface: ``links`` (contact_links, in order), ``stance_at``, ``switches`` and
    ``next_event``; ``check_at`` refuses what cannot be used from a given time on."""

    links: tuple[str, ...]

    def stance_at(self, t: float) -> tuple[bool, ...]:
        """Whether each link is in stance at t."""
        raise NotImplementedError

    def switches(self, k: int, t: float) -> tuple[float, float]:
        """For link k, in stance at t: (its last touch-down ≤ t, its next lift-off > t); −inf and
        inf when there is none."""
        raise NotImplementedError

    def next_event(self, t: float) -> Event | None:
        """The first event after t (None: the stance set never changes again)."""
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def check_at(self, now: float) -> None:
        """ScheduleError when the schedule cannot be used from ``now`` on (an event in the past)."""

    def stance_links(self, t: float) -> tuple[str, ...]:
        return tuple(link for link, down in zip(self.links, self.stance_at(t), strict=True) if down)


class AlwaysInStance(ContactSchedule):
    """Every link in stance at every time: the contact links without a gait."""

    def __init__(self, links: Sequence[str]) -> None:
        self.links = _checked_links(links)

    def stance_at(self, t: float) -> tuple[bool, ...]:
        return (True,) * len(self.links)

    def switches(self, k: int, t: float) -> tuple[float, float]:
        return -math.inf, math.inf

    def next_event(self, t: float) -> Event | None:
        return None

    def describe(self) -> str:
        return "all contact links in stance"


class PeriodicGait(ContactSchedule):
    """A periodic gait (see the module docstring): ``period`` [s], ``duty`` (one for every link or
    one per link) and ``phases`` (one per link), fractions of the period."""

    def __init__(self, links: Sequence[str], period: float, duty: Sequence[float], phases: Sequence[float]) -> None:
        self.links = _checked_links(links)
        n = len(self.links)
        duty, phases = [float(d) for d in duty], [float(p) for p in phases]
        if not all(math.isfinite(x) for x in [float(period), *duty, *phases]):
            raise ScheduleError(
                "non_finite", f"gait: period, duty and phases must be finite, got {period}, {duty}, {phases}"
            )
        if len(duty) == 1:
            duty = duty * n
        if len(duty) != n or len(phases) != n:
            raise ScheduleError(
                "bad_gait", f"gait: one duty (or one per link) and one phase per link of {list(self.links)}, "
                f"got {len(duty)} and {len(phases)}"
            )  # fmt: skip
        if not period > 0.0:
            raise ScheduleError("bad_gait", f"gait: the period must be > 0 s, got {period}")
        if not all(0.0 < d <= 1.0 for d in duty):
            raise ScheduleError("bad_gait", f"gait: each duty must be in (0, 1], got {duty}")
        if not all(0.0 <= p < 1.0 for p in phases):
            raise ScheduleError("bad_gait", f"gait: each phase must be in [0, 1), got {phases}")
        self.period, self.duty, self.phases = float(period), tuple(duty), tuple(phases)
        self._check_support()

    def _position(self, k: int, t: float) -> float:
        """Where link k is in its own cycle at t, as a fraction in [0, 1) (0: touch-down)."""
        return (t / self.period - self.phases[k]) % 1.0

    def stance_at(self, t: float) -> tuple[bool, ...]:
        return tuple(self.duty[k] >= 1.0 or self._position(k, t) < self.duty[k] for k in range(len(self.links)))

    def switches(self, k: int, t: float) -> tuple[float, float]:
        if self.duty[k] >= 1.0:
            return -math.inf, math.inf
        touch_down = t - self._position(k, t) * self.period
        return touch_down, touch_down + self.duty[k] * self.period

    def next_event(self, t: float) -> Event | None:
        times = []
        for k in range(len(self.links)):
            if self.duty[k] < 1.0:
                u = self._position(k, t)
                times.append(t + ((self.duty[k] if u < self.duty[k] else 1.0) - u) * self.period)
        if not times:
            return None
        time = min(times)
        return Event(time, frozenset(self.stance_links(time + SAME_INSTANT * self.period)))

    def describe(self) -> str:
        duty = self.duty[0] if len(set(self.duty)) == 1 else list(self.duty)
        return f"gait: period {self.period:g} s, duty {duty}, phases {list(self.phases)}"

    def _check_support(self) -> None:
        """The stance sets between the cycle's switches, each against the one before it."""
        points = sorted({p % 1.0 for k in range(len(self.links)) if self.duty[k] < 1.0
                         for p in (self.phases[k], self.phases[k] + self.duty[k])})  # fmt: skip
        merged = [p for i, p in enumerate(points) if i == 0 or p - points[i - 1] > SAME_INSTANT]
        if len(merged) > 1 and 1.0 - merged[-1] + merged[0] <= SAME_INSTANT:
            merged.pop()
        if not merged:
            return
        cycle = [*merged, merged[0] + 1.0]
        spans = [(a + b) / 2 * self.period for a, b in itertools.pairwise(cycle)]  # between switches
        sets = [frozenset(self.stance_links(t)) for t in spans]
        for j, switch in enumerate(merged):
            _check_handover(sets[j - 1], sets[j], switch * self.period)


class EventSchedule(ContactSchedule):
    """Events (time, stance set) in strictly increasing time, as a planner sends them; ``before``:
    the stance set before the first event (default: every link)."""

    def __init__(
        self, links: Sequence[str], events: Sequence[tuple[float, Sequence[str]]], before: Sequence[str] | None = None
    ) -> None:
        self.links = _checked_links(links)
        known = frozenset(self.links)
        if not events:
            raise ScheduleError("no_events", "a contact schedule needs at least one event")
        checked = []
        for time, stance in events:
            time, stance = float(time), frozenset(stance)
            if not math.isfinite(time):
                raise ScheduleError("non_finite", f"event time {time} is not finite")
            unknown = sorted(stance - known)
            if unknown:
                raise ScheduleError(
                    "unknown_link", f"event at {time:.6f} s names {unknown}, not in contact_links {list(self.links)}"
                )
            if checked and not time > checked[-1].time:
                raise ScheduleError(
                    "overlapping", f"events at {checked[-1].time:.6f} s and {time:.6f} s: times must strictly increase"
                )
            checked.append(Event(time, stance))
        self.before = known if before is None else frozenset(before)
        if self.before - known:
            raise ScheduleError("unknown_link", f"stance {sorted(self.before - known)} is not in contact_links")
        self.events = tuple(checked)
        self._times = [e.time for e in self.events]
        previous = self.before
        for event in self.events:
            _check_handover(previous, event.stance, event.time)
            previous = event.stance

    def _index(self, t: float) -> int:
        """The index of the event in force at t (−1: before the first)."""
        return bisect.bisect_right(self._times, t) - 1

    def _stance(self, i: int) -> frozenset[str]:
        return self.before if i < 0 else self.events[i].stance

    def stance_at(self, t: float) -> tuple[bool, ...]:
        stance = self._stance(self._index(t))
        return tuple(link in stance for link in self.links)

    def switches(self, k: int, t: float) -> tuple[float, float]:
        link, i = self.links[k], self._index(t)
        on = i
        while on >= 0 and link in self._stance(on - 1):
            on -= 1
        off = i + 1
        while off < len(self.events) and link in self.events[off].stance:
            off += 1
        last = self.events[on].time if on >= 0 else -math.inf
        return last, (self.events[off].time if off < len(self.events) else math.inf)

    def next_event(self, t: float) -> Event | None:
        i = self._index(t) + 1
        return self.events[i] if i < len(self.events) else None

    def describe(self) -> str:
        first, last = self.events[0].time, self.events[-1].time
        return f"events: {len(self.events)} from {first:.3f} s to {last:.3f} s"

    def check_at(self, now: float) -> None:
        if self.events[0].time < now - LATE_TOLERANCE:
            raise ScheduleError(
                "past", f"the first event, at {self.events[0].time:.6f} s, is {now - self.events[0].time:.3f} s old"
            )


def _checked_links(links: Sequence[str]) -> tuple[str, ...]:
    links = tuple(links)
    if not links or len(set(links)) != len(links):
        raise ScheduleError("bad_links", f"a schedule needs distinct contact links, got {list(links)}")
    return links


def _check_handover(before: frozenset[str], after: frozenset[str], time: float) -> None:
    """No support after a switch, or feet leaving while no foot stays down across it."""
    if not after:
        raise ScheduleError("only_support", f"no link in stance from {time:.6f} s on")
    leaving = before - after
    if leaving and not before & after:
        raise ScheduleError(
            "only_support",
            f"{sorted(leaving)} lift off at {time:.6f} s while they are the only support (no foot stays down "
            f"across the lift-off: {sorted(after)} land at that instant)",
        )


def stance_weights(schedule: ContactSchedule, t: float, lift_off: float, touch_down: float) -> np.ndarray:
    """Each link's share at t in [0, 1]: 0 in swing; in stance min(1, (t_off − t)/lift_off,
    (t − t_on)/touch_down), a ramp of zero length being no ramp."""
    weights = np.zeros(len(schedule.links))
    for k, down in enumerate(schedule.stance_at(t)):
        if down:
            on, off = schedule.switches(k, t)
            w = 1.0
            if lift_off > 0.0:
                w = min(w, (off - t) / lift_off)
            if touch_down > 0.0:
                w = min(w, (t - on) / touch_down)
            weights[k] = w
    return weights


class ScheduleKeeper:
    """The schedule in force: a new one replaces it when valid at the time it is offered, and is
    refused with the reason otherwise (the last valid one is kept)."""

    def __init__(self, schedule: ContactSchedule) -> None:
        self.schedule = schedule
        self.refused: dict[str, int] = {}  # reason -> count
        self.last_refusal = ""

    def offer(self, make, now: float) -> str | None:
        """``make(before)`` builds the new schedule (``before``: the stance in force at ``now``); None
        when it is in force, else the refusal's message."""
        try:
            schedule = make(frozenset(self.schedule.stance_links(now)))
            schedule.check_at(now)
        except ScheduleError as error:
            self.refused[error.reason] = self.refused.get(error.reason, 0) + 1
            self.last_refusal = str(error)
            return self.last_refusal
        self.schedule = schedule
        return None
