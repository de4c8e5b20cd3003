"""rnea_sim's pacing of its physics by the wall clock (no ROS): step k is due at start + k·dt; a
loop ahead of it sleeps (real time, and lockstep: never faster than real time). A loop behind it,
starved of CPU, makes it up by stepping without sleeping, at most ``catch_up`` [s] of it: further
behind, the clock slips (the start moves on by the excess) and the physics goes on at real time
from there, as a simulator whose real-time factor drops below 1. Without that limit, a run that fell
seconds behind (a loaded machine, a controller loading its model beside it) stepped flat out until
it caught up: faster than real time for seconds, its controller's answers then older in simulated
time than the controller ever made them. Counted from the brakes' release: the real-time factor
(simulated time over wall time), the largest backlog and the time slipped."""

from __future__ import annotations

import math
import time


class WallClockPacing:
    """Sleeps until each step is due (``after_step``); ``catch_up`` [s]: the backlog made up by
    stepping faster than real time (``math.inf``: all of it)."""

    def __init__(self, dt: float, catch_up: float = math.inf) -> None:
        self.dt, self.catch_up = dt, catch_up
        self.start = time.monotonic()
        self.slipped = 0.0  # s of wall time the clock slipped by (backlogs beyond catch_up)
        self.slips = 0
        self.largest_backlog = 0.0  # s, since the release
        self._released: tuple[int, float] | None = None  # (steps, wall time) at the brakes' release

    def release(self, steps: int) -> None:
        """The brakes let go after ``steps`` steps: the counts start here."""
        if self._released is None:
            self._released = (steps, time.monotonic())

    def after_step(self, steps: int) -> None:
        """``steps`` steps done: sleeps until the next is due, or slips a backlog beyond catch_up."""
        now = time.monotonic()
        delay = self.start + steps * self.dt - now
        if delay > 0.0:
            time.sleep(delay)
            return
        backlog = -delay
        if self._released is not None:
            self.largest_backlog = max(self.largest_backlog, backlog)
        if backlog > self.catch_up:
            self.start += backlog - self.catch_up
            self.slipped += backlog - self.catch_up
            self.slips += 1

    def counts(self, steps: int) -> dict[str, float]:
        """Since the release: simulated over wall time, the largest backlog [ms], the time slipped [s]."""
        if self._released is None:
            return {}
        first, wall = self._released
        elapsed = time.monotonic() - wall
        factor = (steps - first) * self.dt / elapsed if elapsed > 0.0 else 1.0
        return {
            "real_time_factor": round(factor, 4),
            "largest_backlog_ms": round(self.largest_backlog * 1e3, 3),
            "wall_clock_slipped_s": round(self.slipped, 4),
        }
