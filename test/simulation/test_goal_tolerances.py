"""The JTC stand-in's goal rules without ROS, against ros2_controllers' jazzy ``tolerances.hpp`` and
``validate_trajectory_msg`` as written there (read, not copied from this code)."""

from __future__ import annotations

import numpy as np

from rnea_ros.simulation.goal_tolerances import (
    GOAL_TOLERANCE_VIOLATED,
    PATH_TOLERANCE_VIOLATED,
    SUCCESSFUL,
    GoalMonitor,
    JointTolerance,
    default_tolerances,
    goal_refusal,
    goal_tolerances,
)

JOINTS = ["a", "b"]
DEFAULTS = default_tolerances(2, [0.1, 0.2], [0.01, 0.02], 0.05, 1.0)


def test_a_goals_tolerance_replaces_erases_or_keeps_the_default():
    path = [JointTolerance("b", 0.5, -1.0, 0.0)]  # position replaced, velocity erased, acceleration kept
    active, problem = goal_tolerances(DEFAULTS, path, [JointTolerance("a", -1.0, 0.3, 0.0)], 0.0, JOINTS)
    assert problem is None
    np.testing.assert_equal(active.path.position, [0.1, 0.5])
    np.testing.assert_equal(active.goal.position, [0.0, 0.02])
    np.testing.assert_equal(active.goal.velocity, [0.3, 0.05])
    assert active.goal_time == 1.0  # 0 in the goal: the default


def test_an_illegal_or_unknown_tolerance_falls_back_to_the_defaults():
    for path, goal_time in (([JointTolerance("c", 0.5, 0.0, 0.0)], 0.0), ([JointTolerance("a", -2.0, 0, 0)], 0.0)):
        active, problem = goal_tolerances(DEFAULTS, path, [], goal_time, JOINTS)
        assert active is DEFAULTS and problem
    active, problem = goal_tolerances(DEFAULTS, [], [], -3.0, JOINTS)
    assert active is DEFAULTS and "goal_time_tolerance" in problem


def test_the_monitor_ends_a_goal_as_the_jtcs_update_does():
    small, big = np.array([0.05, 0.0]), np.array([0.0, 0.3])
    assert GoalMonitor(DEFAULTS).check(True, -1.0, small, np.zeros(2)) is None
    assert GoalMonitor(DEFAULTS).check(True, -1.0, big, np.zeros(2)).error_code == PATH_TOLERANCE_VIOLATED
    monitor = GoalMonitor(DEFAULTS)
    monitor.check(True, -1.0, small, np.zeros(2))
    assert monitor.check(False, 0.5, small, np.zeros(2)) is None  # outside the goal, within goal_time
    late = monitor.check(False, 1.2, small, np.zeros(2))
    assert late.error_code == GOAL_TOLERANCE_VIOLATED
    assert late.error_string == "Aborted due to goal_time_tolerance exceeding by 1.200000 seconds"
    done = GoalMonitor(DEFAULTS).check(False, 0.0, np.array([0.005, 0.0]), np.array([0.0, 0.04]))
    assert done == (SUCCESSFUL, "Goal successfully reached!")


def test_the_jtcs_refusals():
    def refusal(names=JOINTS, times=(0.0, 1.0), lengths=None, last=(0.0, 0.0), allow=False, past=False):
        lengths = lengths or {"positions": [2, 2], "velocities": [0, 0]}
        return goal_refusal(list(names), np.array(times), lengths, list(last), JOINTS, allow, past)

    assert refusal() is None
    assert "don't match" in refusal(names=["a"])
    assert "doesn't match" in refusal(names=["a", "c"])
    assert "Empty" in refusal(times=())
    assert "not strictly increasing" in refusal(times=(0.0, 0.0))
    assert "not zero" in refusal(last=(0.0, 0.1)) and refusal(last=(0.0, 0.1), allow=True) is None
    assert "past" in refusal(past=True)
    assert "Mismatch" in refusal(lengths={"positions": [2, 1], "velocities": [0, 0]})
