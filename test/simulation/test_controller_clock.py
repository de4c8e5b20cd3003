"""The joint_trajectory_controller stand-in on a wall clock (``controller_clock: wall``): the physics
goes on without it, a late update leaves its last command in force, and overruns are counted as
ros2_control_node counts them, at the end and on /diagnostics. A controller starved by an injected
delay (``controller_delay``) overruns at every update and tracks worse than one inside the step."""

from __future__ import annotations

import time

import numpy as np

from rnea_ros.simulation.wall_clock_controller import WallClockController


class CountingStandIn:
    """The stand-in's interface: the time of each state it was given."""

    def __init__(self) -> None:
        self.times: list[float] = []

    def efforts(self, state) -> np.ndarray:
        self.times.append(state.time)
        return np.full(2, state.time)


class SteppingRobot:
    """A robot whose time goes on by ``dt`` at each ``step`` (the physics thread's part)."""

    def __init__(self, dt: float) -> None:
        self.time, self.dt = 0.0, dt

    def step(self) -> None:
        self.time += self.dt

    def positions(self) -> np.ndarray:
        return np.zeros(2)

    def velocities(self) -> np.ndarray:
        return np.zeros(2)


class QuietLogger:
    def __init__(self) -> None:
        self.warnings: list[str] = []

    def warning(self, text: str, **_) -> None:
        self.warnings.append(text)


def run_physics(controller: WallClockController, robot: SteppingRobot, seconds: float) -> None:
    """Steps the robot at its rate for ``seconds`` of wall time, the controller beside it."""
    controller.observe(robot)
    controller.start()
    start = time.monotonic()
    steps = 0
    while time.monotonic() - start < seconds:
        robot.step()
        controller.observe(robot)
        steps += 1
        time.sleep(max(0.0, start + steps * robot.dt - time.monotonic()))
    controller.stop()


def test_a_controller_slower_than_its_period_overruns_at_every_update_and_the_physics_goes_on():
    stand_in, logger = CountingStandIn(), QuietLogger()
    controller = WallClockController(stand_in, rate=200.0, controller_delay=0.012, logger=logger)
    robot = SteppingRobot(dt=0.005)
    run_physics(controller, robot, seconds=1.0)
    assert robot.time >= 0.9  # the physics did not wait for the controller
    assert 40 <= controller.updates <= 90  # one update per 12 ms or so, not one per 5 ms step
    assert controller.overruns >= controller.updates - 2
    # each 12 ms update misses 3 periods of 5 ms, as ros2_control_node counts them (ceil(late / period) + 1)
    assert controller.missed_cycles >= 2.5 * controller.overruns
    assert controller.longest_loop >= 0.012
    assert logger.warnings and "missed its desired rate of 200 Hz" in logger.warnings[0]
    assert np.all(np.diff(stand_in.times) > 0.0)  # every update on a newer state
    assert controller.command is not None and controller.command[0] == stand_in.times[-1]  # the last one holds


def test_a_controller_within_its_period_updates_about_once_per_period():
    stand_in, logger = CountingStandIn(), QuietLogger()
    controller = WallClockController(stand_in, rate=100.0, controller_delay=0.0, logger=logger)
    run_physics(controller, SteppingRobot(dt=0.002), seconds=1.0)
    assert 80 <= controller.updates <= 102
    assert controller.overruns <= 10  # a loaded machine may stall it a few times
