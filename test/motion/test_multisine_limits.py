"""rnea_play's multi-sine kept within the URDF's limits: every sampled state inside [lower, upper]
less the margin, the direction with room chosen, the amplitude cut only as far as needed."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.motion.multisine import multisine, within_limits

TIMES = np.linspace(0.0, 20.0, 20_001)


def excursion(trajectory) -> tuple[np.ndarray, np.ndarray]:
    q, _, _ = trajectory.at_times(TIMES)
    return q.min(axis=0), q.max(axis=0)


def test_a_joint_at_its_lower_limit_moves_up_instead():
    """The bundled arm's joint6: lower limit -0.1, starting at 0; the multi-sine went down past it."""
    start = np.zeros(3)
    asked = multisine(start, 0.3, [0.2, 0.5])  # joint 1 moves down
    lower, upper = np.array([-3.0, -0.1, -3.0]), np.array([3.0, 3.0, 3.0])
    kept, said = within_limits(asked, lower, upper, margin=0.02)
    low, high = excursion(kept)
    assert np.all(low >= lower + 0.02 - 1e-12) and np.all(high <= upper - 0.02 + 1e-12)
    assert list(said) == [1] and "the other way" in said[1]
    asked_low, _ = excursion(asked)
    assert high[1] == pytest.approx(-asked_low[1], rel=1e-9) and low[1] == pytest.approx(0.0, abs=1e-12)  # upwards
    np.testing.assert_array_equal(kept.amplitudes[[0, 2]], asked.amplitudes[[0, 2]])


def test_no_room_either_way_cuts_the_amplitude_to_the_room():
    start = np.array([0.0])
    asked = multisine(start, 1.0, [0.3])
    kept, said = within_limits(asked, np.array([-0.25]), np.array([0.25]), margin=0.05)
    low, high = excursion(kept)
    assert low[0] >= -0.2 - 1e-12 and high[0] <= 0.2 + 1e-12
    assert "20% of the amplitude" in said[0]


def test_a_joint_outside_its_limits_is_not_moved():
    kept, said = within_limits(multisine(np.array([1.0]), 0.2, [0.3]), np.array([-0.5]), np.array([0.5]))
    assert not kept.amplitudes.any() and "not moved" in said[0]


def test_within_limits_changes_nothing_with_room_or_without_limits():
    asked = multisine(np.zeros(4), 0.2, [0.2, 0.5])
    kept, said = within_limits(asked, np.full(4, -np.inf), np.full(4, np.inf))
    assert said == {}
    np.testing.assert_array_equal(kept.amplitudes, asked.amplitudes)
