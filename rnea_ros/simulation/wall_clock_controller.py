"""rnea_sim's joint_trajectory_controller stand-in on a wall clock (``controller_clock: wall``; no ROS).

With ``controller_clock: step`` the stand-in runs inside each physics step, so the physics waits for
it and a starved controller cannot show. Here it runs on its own thread at ``rate``, as
ros2_control_node's loop does: each update reads the newest state the physics published, its
command stays in force until the next update (a late update leaves the last one acting on the robot
for as many steps as it is late), and a loop that misses its period is counted as ros2_control_node
(jazzy) counts it: ``next += period``; when ``next`` is already past, one overrun, missed cycles
``ceil(late / period) + 1`` (the figure its "Overrun detected!" warning prints), and the next update
waits for the next period boundary.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass

import numpy as np

from rnea_ros.plumbing.threads import stop_thread
from rnea_ros.simulation.jtc_stand_in import JtcStandIn


@dataclass(frozen=True)
class StateSnapshot:
    """The robot's state after a physics step, as the stand-in reads a robot (``time``, ``positions()``,
    ``velocities()``): the physics thread replaces it whole, the controller's thread reads it."""

    time: float
    q: np.ndarray
    qd: np.ndarray

    def positions(self) -> np.ndarray:
        return self.q

    def velocities(self) -> np.ndarray:
        return self.qd


class WallClockController:
    """Runs ``stand_in`` every ``1 / rate`` s of wall time on its own thread (``start``, ``stop``);
    ``controller_delay`` [s] is added to every update (tests: a starved controller)."""

    def __init__(self, stand_in: JtcStandIn, rate: float, controller_delay: float, logger) -> None:
        self.stand_in, self.rate, self.delay, self.logger = stand_in, rate, controller_delay, logger
        self.period = 1.0 / rate
        self.command: np.ndarray | None = None  # the command in force (None: the brakes hold)
        self.updates = 0
        self.overruns = 0
        self.missed_cycles = 0
        self.longest_loop = 0.0  # s, the longest time between two updates' starts
        self._state: StateSnapshot | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="controller", daemon=True)

    def observe(self, robot) -> None:
        """The state after a physics step (the physics thread, after every step)."""
        self._state = StateSnapshot(robot.time, robot.positions(), robot.velocities())

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        stop_thread(self._stop, self._thread, timeout=5.0)

    def counts(self) -> dict[str, int | float]:
        return {
            "controller_updates": self.updates,
            "controller_overruns": self.overruns,
            "controller_missed_cycles": self.missed_cycles,
            "controller_longest_loop_ms": round(self.longest_loop * 1e3, 3),
        }

    def _run(self) -> None:
        next_update = time.monotonic()
        last_start = None
        updated = None  # the state of the last update
        while not self._stop.is_set():
            started = time.monotonic()
            if last_start is not None:
                self.longest_loop = max(self.longest_loop, started - last_start)
            last_start = started
            state = self._state
            if state is not None and state is not updated:
                self.command = self.stand_in.efforts(state)
                updated = state
                self.updates += 1
                if self.delay > 0.0:
                    time.sleep(self.delay)
            next_update = self._next_update(next_update)
            self._stop.wait(max(0.0, next_update - time.monotonic()))

    def _next_update(self, previous: float) -> float:
        """The next period boundary, counting an overrun when it is already past."""
        next_update = previous + self.period
        late = time.monotonic() - next_update
        if late <= 0.0:
            return next_update
        skipped = math.ceil(late / self.period)
        self.overruns += 1
        self.missed_cycles += skipped + 1
        self.logger.warning(
            f"controller overrun: missed its desired rate of {self.rate:.0f} Hz; the loop took "
            f"{(late + self.period) * 1e3:.3f} ms (missed cycles: {skipped + 1})",
            throttle_duration_sec=1.0,
        )
        return next_update + skipped * self.period
