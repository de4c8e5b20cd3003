"""The closed loop's trajectory clock: trajectory time 0 is the state the brakes released."""

from __future__ import annotations

import numpy as np

from rnea_ros.demo.closed_loop import BrakeRelease


def test_the_release_is_the_last_held_state_once_the_robot_moves():
    release = BrakeRelease()
    held = np.array([0.0, 1.0, -1.5])
    assert [release.update(1.000 + 0.001 * k, held.copy()) for k in range(5)] == [None] * 5
    assert release.update(1.005, held + np.array([0.0, 1e-12, 0.0])) == 1.004
    assert release.update(1.006, held) == 1.004  # found once


def test_a_robot_already_moving_starts_at_the_first_state_seen():
    release = BrakeRelease()
    assert release.update(2.0, np.array([0.1, 0.2])) is None
    assert release.update(2.001, np.array([0.1001, 0.2])) == 2.0
