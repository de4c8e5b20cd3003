"""rnea_node's first answer as a subscriber sees it (issue 45): the node started as the docs start it
(`rnea_node --ros-args --params-file`, Go2 with four foot contacts) while a subscriber of
gravity_torques and a driver of joint_states and base_odometry already run (rnea_ros.testing.start_up,
which benchmarks/start_up.py times).

What it shows: the node subscribes before it builds its model, so discovery of its joint_states
subscription can run while the model builds (before, it subscribed once its model was built). Whether
the driver's match comes before the build ends is a matter of DDS discovery and the machine's load
(quiet, it came 1.4 s after); benchmarks/start_up.py measures it. The first joint_states taken is
answered at once, and the benchmark's events are consistent (each after the spawn, the answer after
the match and after the state it answers). What it does not: the figure itself (≤ 1 s warm is a
matter of the machine's load: benchmarks/start_up.py measures it quiet and beside two busy
processes)."""

from __future__ import annotations

import os

import pytest

from rnea_ros import RobotModel
from rnea_ros.testing.reference import robot_urdf
from rnea_ros.testing.ros_harness import ROS_ENV
from rnea_ros.testing.start_up import FEET, first_answer

# slow: three processes of 1-3 s of CPU each (the node, the subscriber, the driver) and Go2's model here
pytestmark = [pytest.mark.ros, pytest.mark.slow]

# s of the node's CPU from the first joint_states it takes to its first publish (measured: <= 0.01; from
# the model built to the first publish, 0.02-0.13 s: the executor spins while discovery goes on)
FIRST_ANSWER_CPU = 0.1


def test_the_first_answer_waits_for_no_discovery_after_the_build(tmp_path):
    urdf = robot_urdf("go2_description/urdf/go2.urdf")
    model = RobotModel.from_urdf(urdf, floating_base=True)
    env = {**os.environ, **ROS_ENV, "RNEA_START_TRACE": "1"}
    start = first_answer(tmp_path, urdf, model.joint_names, model.base_link, env, contact_links=FEET, timeout=300)
    assert start.first is not None, start.output
    assert start.model_loaded is not None, start.output
    # the benchmark's own events, consistent
    assert 0 < start.listener_matched <= start.first, start
    assert 0 < start.answered <= start.first, start
    assert start.cpu is not None and 0 < start.cpu, start
    assert 0 < start.driver_matched <= start.first, start
    phases = start.phases
    assert phases["subscribed"][0] < phases["model built"][0] <= phases["first publish"][0], phases
    assert phases["model built"][0] <= phases["first joint_states"][0] <= phases["first publish"][0], phases
    assert phases["first publish"][1] - phases["first joint_states"][1] < FIRST_ANSWER_CPU, phases
