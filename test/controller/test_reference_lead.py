"""``reference_lead`` (issue 48, the trot on the wall clock): a state's answer takes the references of
its stamp plus the lead, the time its command will be applied (as joint_trajectory_controller
samples at t + dt): the desired trajectory's point and the contact schedule's stance weights; and
joint_commands are stamped with that time. No ROS node."""

from __future__ import annotations

import numpy as np
import pytest
from std_msgs.msg import Header

from rnea_ros import RobotModel
from rnea_ros.controller.core import RneaCore, build_live_model
from rnea_ros.controller.inputs import BY_TOPIC
from rnea_ros.controller.settings import Settings
from rnea_ros.controller.state import DesiredPoints, LiveModel, OdometryReading
from rnea_ros.node.outputs import led
from rnea_ros.testing.legged import solo_standing_pose
from rnea_ros.testing.reference import ARM_URDF, robot_urdf

ARM = RobotModel.from_urdf(ARM_URDF)
SOLO = robot_urdf("solo_description/robots/solo12.urdf")
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")

pytestmark = pytest.mark.ros  # std_msgs' Header and the node's outputs module


@pytest.mark.parametrize(("lead", "row"), [(0.0, 1), (0.001, 2), (0.002, 3), (0.0025, 3), (0.01, 4)])
def test_the_desired_point_is_the_one_of_the_stamp_plus_the_lead(lead, row):
    live = LiveModel.build(ARM)
    names = ARM.joint_names
    times = 100.0 + 0.001 * np.arange(5)
    qdd = np.outer(np.arange(5.0) + 1.0, np.ones(ARM.nv))  # point k: every joint at k + 1 rad/s²
    live.set_desired(DesiredPoints(names, qdd, qdd / 10, qdd / 100, times), now=5.0)
    live.merge_joint_states(names, np.zeros(ARM.nv), np.zeros(ARM.nv), stamp=100.001, state_timeout=0.1)
    inputs = live.inputs_now(5.0, Settings(acceleration_timeout=1.0, reference_lead=lead))
    assert inputs.qdd[0] == row + 1.0  # the last point at or before 100.001 + lead (the last after the end)
    assert inputs.q_desired[0] == (row + 1.0) / 10 and inputs.qd_desired[0] == (row + 1.0) / 100
    assert inputs.reference_lead == lead


def solo_trotting(lead: float) -> RneaCore:
    settings = Settings(
        floating_base=True, contact_links=FEET, contact_distribution="minimum_norm", future_stamp_tolerance=3600.0,
        base_timeout=3600.0, gait_period=0.5, gait_duty=(0.6,), gait_phases=(0.0, 0.5, 0.5, 0.0),
        lift_off_transition=0.05, touch_down_transition=0.05, reference_lead=lead,
    )  # fmt: skip
    core = RneaCore(settings)
    core.load(build_live_model(SOLO, settings))
    base = OdometryReading(np.array([0.0, 0.0, 0.25, 0.0, 0.0, 0.0, 1.0]), np.zeros(6), core.live.bound.model.base_link)
    core.receive(BY_TOPIC["base_odometry"], base)
    return core


@pytest.mark.parametrize(
    ("stamp", "lead", "stance"),
    [
        # FL+HR touch down at 1.5 and lift off at 1.8, FR+HL land at 1.75; the ramps are 0.05 s long
        (1.79, 0.0, [0.2, 0.8, 0.8, 0.2]),  # FL+HR 0.01 s before lift-off, FR+HL 0.04 s after landing
        (1.79, 0.02, [0.0, 1.0, 1.0, 0.0]),  # at 1.81: FL+HR lifted off, FR+HL fully loaded
        (1.74, 0.02, [0.8, 0.2, 0.2, 0.8]),  # at 1.76: 0.04 s before lift-off, 0.01 s after landing
    ],
)
def test_the_stance_weights_are_those_of_the_stamp_plus_the_lead(stamp, lead, stance):
    core = solo_trotting(lead)
    names = core.live.bound.model.joint_names
    out = core.joint_states(names, solo_standing_pose(names), np.zeros(12), True, stamp, lambda: 0.0)
    assert out.stance == pytest.approx(stance, abs=1e-9)


def test_joint_commands_are_stamped_with_the_time_their_reference_is_for():
    header = Header(frame_id="base")
    header.stamp.sec, header.stamp.nanosec = 12, 999_000_000
    later = led(header, 0.0025)
    assert (later.stamp.sec, later.stamp.nanosec, later.frame_id) == (13, 1_500_000, "base")
    assert (header.stamp.sec, header.stamp.nanosec) == (12, 999_000_000)  # the state's own header untouched
