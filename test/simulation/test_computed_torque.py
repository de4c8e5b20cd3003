"""Computed torque in the closed loop (DDS, slow, lockstep): the example arm with its 2 kg payload,
against PD + inverse dynamics at equal bandwidth (torque gains M_ii(q_home) ω², 2 ω M_ii(q_home));
the runs are ``rnea_ros/testing/computed_torque_loop.py``'s, the figures docs/closed-loop.md's
("Computed torque", written by ``benchmarks/computed_torque.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.testing import computed_torque_loop as loop
from rnea_ros.testing.ros_harness import ROS_ENV, rclpy_running

pytestmark = [pytest.mark.ros, pytest.mark.slow]


@pytest.fixture(scope="module", autouse=True)
def ros():
    yield from rclpy_running()


BANDWIDTHS = [20.0, 10.0]  # rad/s: at 10 computed torque trailed before it took the 1 ms step in (0.0154° vs 0.0132°)


def worst_joints(tmp_path, payload_scale: float, bandwidth: float) -> dict[str, float]:
    worst = {}
    for law in loop.LAWS:
        rms = loop.tracking(tmp_path, law, ROS_ENV, payload_scale, bandwidth)
        print(f"{law}, payload ×{payload_scale:g}, {bandwidth:g} rad/s: RMS per joint [°] {np.round(rms, 4).tolist()}")
        worst[law] = float(rms.max())
    return worst


@pytest.mark.parametrize("bandwidth", BANDWIDTHS)
def test_computed_torque_tracks_the_fast_multisine_at_least_as_well_as_pd_plus_inverse_dynamics(tmp_path, bandwidth):
    worst = worst_joints(tmp_path, 1.0, bandwidth)
    assert worst["computed_torque"] < 0.05  # degrees
    assert worst["computed_torque"] <= worst["inverse_dynamics"]
    # the same loop in one process (the ablations' harness, test_computed_torque_in_process.py) tracks alike
    in_process = loop.tracking_in_process("computed_torque", bandwidth, tmp_path).max()
    assert in_process == pytest.approx(worst["computed_torque"], rel=0.05)


@pytest.mark.parametrize("bandwidth", BANDWIDTHS)
def test_with_the_payload_20_percent_wrong_computed_torque_stays_within_3x_of_pd_plus_inverse_dynamics(
    tmp_path, bandwidth
):
    worst = worst_joints(tmp_path, 1.2, bandwidth)
    assert worst["computed_torque"] <= 3.0 * worst["inverse_dynamics"]


def test_a_step_on_joint2_is_the_same_stretched_and_folded_with_computed_torque_only(tmp_path):
    """0.1 rad at ω_n = 10 rad/s: computed torque's response is the same in both poses (within 5 % of
    the step, no command clipped); PD + inverse dynamics' differ (its gains fit one inertia)."""
    difference = {}
    for law in loop.LAWS:
        responses = {pose: loop.step_response(tmp_path, law, pose, ROS_ENV) for pose in loop.POSES}
        for pose, response in responses.items():
            print(
                f"{law} {pose}: rise 10-90 % {response.rise_time():.3f} s, overshoot {response.overshoot:.4f}, "
                f"largest |effort| / limit {response.largest_effort.max():.2f}"
            )
            assert response.largest_effort.max() < 1.0, f"{law} {pose}: a command was clipped"
        difference[law] = loop.response_difference(responses["stretched"], responses["folded"])
        print(f"{law}: stretched and folded differ by {difference[law]:.2e} of the step")
    assert difference["computed_torque"] <= 0.05
    assert difference["inverse_dynamics"] > 0.05
