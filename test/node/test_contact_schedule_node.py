"""rnea_node over real DDS with a contact schedule: Solo12 by its gait parameters, then by a
planner's contact_schedule; the contact wrenches of each joint_states stamp follow the schedule
in force then, /diagnostics names it, and a schedule in the past is refused with its reason."""

from __future__ import annotations

import numpy as np
import pytest
import rclpy
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import RobotModel
from rnea_ros.testing.legged import SOLO_FEET, SOLO_URDF, solo_standing_pose
from rnea_ros.testing.ros_harness import Client, init_rclpy, running_node

pytestmark = pytest.mark.ros

SOLO = RobotModel.from_urdf(SOLO_URDF, floating_base=True)
STANCE = solo_standing_pose(SOLO.joint_names)
LONG = {"acceleration_timeout": 30.0, "wrench_timeout": 30.0, "base_timeout": 30.0, "state_timeout": 30.0}
# joint_states come at whole seconds (the harness's stamps): a 3 s trot puts, at t = 3k + 1, FL+HR
# down and FR+HL in the air, at 3k + 2 the other pair (at 3k, FL+HR land: their load still 0)
GAIT = {"gait_period": 3.0, "gait_duty": [0.6], "gait_phases": [0.0, 0.5, 0.5, 0.0]}


@pytest.fixture(scope="module", autouse=True)
def ros():
    init_rclpy()
    yield
    rclpy.try_shutdown()


class ScheduleClient(Client):
    def __init__(self, namespace: str) -> None:
        super().__init__(namespace, SOLO.joint_names)
        self.odometry = self.node.create_publisher(Odometry, "base_odometry", 10)
        self.schedule = self.node.create_publisher(JointTrajectory, "contact_schedule", 10)
        self.contacts: list[WrenchStamped] = []
        self.node.create_subscription(WrenchStamped, "estimated_contact_wrenches", self.contacts.append, 100)
        self.states: list[JointState] = []
        self.node.create_subscription(JointState, "contact_states", self.states.append, 100)

    def send_odometry(self) -> None:
        msg = Odometry()
        msg.header.frame_id, msg.child_frame_id = "odom", SOLO.base_link
        msg.pose.pose.position.z = 0.25
        msg.pose.pose.orientation.w = 1.0
        self.odometry.publish(msg)

    def loads(self, timeout: float = 5.0) -> dict[str, float] | None:
        """The force on each foot [N] the node answers the next joint_states with."""
        self.send_odometry()
        self.spin_for(0.05)
        stamp = self.send_state(STANCE, np.zeros(12)).header.stamp.sec
        if self.result_for(stamp, timeout) is None:
            return None
        mine = lambda: [c for c in self.contacts if c.header.stamp.sec == stamp]  # noqa: E731
        assert self.spin_until(lambda: len(mine()) == 4, 2.0)
        return {
            c.header.frame_id: np.linalg.norm([c.wrench.force.x, c.wrench.force.y, c.wrench.force.z]) for c in mine()
        }

    def send_schedule(self, stamp_sec: int, events) -> None:
        msg = JointTrajectory(joint_names=list(SOLO_FEET))
        msg.header.stamp.sec = stamp_sec
        for seconds, stance in events:
            msg.points.append(
                JointTrajectoryPoint(positions=list(map(float, stance)), time_from_start=Duration(sec=seconds))
            )
        self.schedule.publish(msg)


def test_the_contact_wrenches_follow_the_gait_then_a_planners_schedule_over_dds(tmp_path):
    parameters = {"robot_description": SOLO_URDF, "floating_base": True, "contact_links": SOLO_FEET, **GAIT, **LONG}
    with running_node(tmp_path, "trot", parameters, ScheduleClient) as (_, client):
        for _ in range(60):
            if client.loads(timeout=0.5) is not None:
                break
        else:
            raise AssertionError("rnea_node never answered")
        while client.stamp_sec % 3 != 0:  # the next state comes at 3k + 1
            client.loads()
        first, second = client.loads(), client.loads()
        assert first["FR_FOOT"] == first["HL_FOOT"] == 0.0 and min(first["FL_FOOT"], first["HR_FOOT"]) > 1.0, first
        assert second["FL_FOOT"] == second["HR_FOOT"] == 0.0 and min(second["FR_FOOT"], second["HL_FOOT"]) > 1.0
        mine = lambda: [m for m in client.states if m.header.stamp.sec == client.stamp_sec]  # noqa: E731
        assert client.spin_until(lambda: bool(mine()), 2.0)
        states = mine()[0]
        assert list(states.name) == SOLO_FEET and list(states.position) == [0.0, 1.0, 1.0, 0.0]
        assert states.effort[0] == 0.0 and states.effort[1] == pytest.approx(second["FR_FOOT"])
        assert client.diagnostic_says("feet in contact")
        values = client.latest_diagnostic_values()
        assert values["contact schedule"] == "gait: period 3 s, duty 0.6, phases [0.0, 0.5, 0.5, 0.0]"
        # a planner, at 3k + 2 (FR+HL down): all four down from the next stamp on, then FL+HR from the one after
        assert client.stamp_sec % 3 == 2
        now = client.stamp_sec
        client.send_schedule(now, [(1, (1, 1, 1, 1)), (2, (1, 0, 0, 1))])
        assert client.diagnostic_says("contact schedule") and client.spin_until(
            lambda: client.latest_diagnostic_values()["contact schedule"].startswith("events: 2"), 10.0
        )
        assert client.stamp_sec == now  # no state sent since: the next is the first event's
        # now + 1: all four down from then on, FL+HR landing at that instant (their load ramps up from 0)
        loads = client.loads()
        assert loads["FL_FOOT"] == loads["HR_FOOT"] == 0.0 and min(loads["FR_FOOT"], loads["HL_FOOT"]) > 1.0, loads
        loads = client.loads()  # now + 2: FR+HL lifted off
        assert loads["FR_FOOT"] == loads["HL_FOOT"] == 0.0 and min(loads["FL_FOOT"], loads["HR_FOOT"]) > 1.0, loads
        client.send_schedule(1, [(0, (1, 1, 1, 1))])  # long past
        assert client.diagnostic_says("rejected: schedule_past")
        assert client.latest_diagnostic_values()["contact schedule"].startswith("events: 2")  # the last valid kept
