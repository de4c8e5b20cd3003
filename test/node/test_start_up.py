"""rnea_node's first answer as a subscriber sees it (issue 45): the node started as the docs start it
(`rnea_node --ros-args --params-file`, Go2 with four foot contacts) while a subscriber of
gravity_torques and a driver of joint_states and base_odometry already run (rnea_ros.testing.start_up,
which benchmarks/start_up.py times).

What it shows: the node subscribes before it builds its model, so discovery of its joint_states
subscription runs while the model builds; the first joint_states taken is answered at once, and the
benchmark's events are consistent (each after the spawn, the answer after the match and after the state
it answers). And that the subscriber and the driver match the node's endpoints as the node makes them,
not seconds later: Fast DDS 2.14 drops the answers to a new participant's first announcement that come
back before it reads its sockets, and the node then waited for the others' next periodic announcement
(up to 3 s; 1.8-2.8 s in 3 of 4 starts measured quiet, none beside the node's profile:
rnea_ros/node/fastdds_start.xml). That part is a race, so it is counted over starts: most must match
within MATCH_DELAY. What it does not: the figure itself (benchmarks/start_up.py measures it quiet and
beside two busy processes)."""

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
# s from the node's subscriptions made to both other processes matched (measured with the profile: at
# most 0.06 s, load 8; without it, 1.8-2.8 s in most starts: the others' next announcement)
MATCH_DELAY = 0.5
# the model's build (Go2, its kernels from numba's cache) against the node's imports, CPU (measured:
# 0.75-1.00 with numba's whole compiler set up before the loads, 0.30-0.47 with quick_cache_loads; load 5)
MODEL_TO_IMPORT_CPU = 0.6
STARTS = 3  # of which at least MATCHED_STARTS matched within MATCH_DELAY
MATCHED_STARTS = 2


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
    # the kernels load from numba's cache without numba's compiler set-up (quick_cache_loads)
    model_cpu = phases["model built"][1] - phases["subscribed"][1]
    import_cpu = phases["imported"][1] - phases["python"][1]
    assert model_cpu < MODEL_TO_IMPORT_CPU * import_cpu, phases


def test_the_others_match_the_node_as_it_subscribes_not_an_announcement_later(tmp_path):
    urdf = robot_urdf("go2_description/urdf/go2.urdf")
    model = RobotModel.from_urdf(urdf, floating_base=True)
    env = {**os.environ, **ROS_ENV, "RNEA_START_TRACE": "1"}
    env.pop("FASTRTPS_DEFAULT_PROFILES_FILE", None)  # the node's own profile, as a user without one gets it
    delays = []
    for k in range(STARTS):
        folder = tmp_path / str(k)
        folder.mkdir()
        start = first_answer(folder, urdf, model.joint_names, model.base_link, env, contact_links=FEET)
        assert start.first is not None, start.output
        subscribed = start.phases["subscribed"][0]
        delays.append(max(start.driver_matched, start.listener_matched) - subscribed)
    assert sum(delay < MATCH_DELAY for delay in delays) >= MATCHED_STARTS, delays
