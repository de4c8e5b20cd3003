"""The URDF's position limits as rnea_play reads them: revolute and prismatic joints' <limit lower
upper>; continuous joints and a <transmission>'s <joint> (a name, no joint) have none."""

from __future__ import annotations

from rnea_ros.demo.example_robot import example_arm_urdf
from rnea_ros.dynamics.urdf import parse_urdf

TRANSMISSION = """
  <transmission name="t6"><type>transmission_interface/SimpleTransmission</type>
    <joint name="joint6"><hardwareInterface>EffortJointInterface</hardwareInterface></joint>
    <actuator name="m6"><mechanicalReduction>100</mechanicalReduction></actuator>
  </transmission>
</robot>"""


def test_limits_as_written_and_transmissions_ignored():
    urdf = example_arm_urdf().replace("</robot>", TRANSMISSION)
    limits = parse_urdf(urdf).position_limits
    assert limits["joint6"] == (-0.1, 3.7)  # as written in rnea_ros/demo/robots/example_arm.urdf
    assert limits["finger_left_joint"] == (0.0, 0.04)


def test_a_continuous_joint_and_broken_limits_give_none():
    urdf = (
        example_arm_urdf()
        .replace('name="joint1" type="revolute"', 'name="joint1" type="continuous"')
        .replace('lower="-1.8"', 'lower="nan"')
    )
    limits = parse_urdf(urdf).position_limits
    assert "joint1" not in limits and "joint2" not in limits
