"""The identified URDF on the robot, in real time: rnea_sim runs the true arm (with damping, friction
loss and armature no URDF holds), its joint_trajectory_controller stand-in tracks a fast multi-sine
with rnea_node's feed-forward, once from the URDF whose every link is 20–30 % and 1–3 cm off, once
from what `rnea_analyze --identify --inertia` made of 60 s of rnea_excite's excitation recorded on
that robot: corrected.urdf and corrections.yaml (``testing.real_time_arm``). With MuJoCo's default
(soft) joint friction, which settles within ~10 ms, and with rnea_sim's stiffened one."""

from __future__ import annotations

import numpy as np
import pytest
import rclpy

from rnea_ros.testing.real_time_arm import identify_wrong_arm, track_in_real_time
from rnea_ros.testing.ros_harness import ROS_ENV, init_rclpy

pytestmark = [pytest.mark.ros, pytest.mark.slow]


@pytest.fixture(scope="module", autouse=True)
def ros():
    init_rclpy()
    yield
    rclpy.try_shutdown()


@pytest.mark.parametrize("soft", [True, False], ids=["soft friction", "stiff friction"])
def test_the_corrected_urdf_tracks_three_times_better_in_real_time(tmp_path, soft):
    wrong_urdf, corrected_urdf, corrections = identify_wrong_arm(tmp_path, seed=1, soft_friction=soft)
    wrong = track_in_real_time(tmp_path, "rt_wrong_urdf", wrong_urdf, ROS_ENV, soft_friction=soft)
    corrected = track_in_real_time(tmp_path, "rt_corrected", corrected_urdf, ROS_ENV, str(corrections), soft)
    print("real time, RMS tracking error per joint [°]")
    print("  the wrong URDF:                   ", np.round(wrong, 4))
    print("  corrected.urdf + corrections.yaml:", np.round(corrected, 4), "ratio", np.round(wrong / corrected, 1))
    assert np.sqrt(np.mean(corrected**2)) * 3.0 < np.sqrt(np.mean(wrong**2))
