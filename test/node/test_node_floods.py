"""rnea_node over DDS against what an attacker or an unlucky user sends in bulk: a valid
description followed by a broken one while the first builds, a flood of huge distinct
joint-name lists, a flood of large valid descriptions under a 1 kHz joint_states stream."""

from __future__ import annotations

import numpy as np
import pytest
import rclpy
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from rnea_ros import RobotModel
from rnea_ros.testing.reference import ARM_URDF, HEAVY_ARM_URDF
from rnea_ros.testing.ros_harness import Client, init_rclpy, running_node
from rnea_ros.testing.soak import padded_description, rss_bytes, run_soak

pytestmark = pytest.mark.ros

ARM = RobotModel.from_urdf(ARM_URDF)
HEAVY = RobotModel.from_urdf(HEAVY_ARM_URDF)
BROKEN = "<robot name='broken'><link name='a'/><joint name='j' type='revolute'><parent link='a'/></joint>"


@pytest.fixture(scope="module", autouse=True)
def ros():
    init_rclpy()
    yield
    rclpy.try_shutdown()


def test_a_broken_description_does_not_cancel_the_valid_one_building_before_it(tmp_path):
    slow_to_build = padded_description(HEAVY_ARM_URDF)  # ~1.5 s to build: C arrives while it builds
    with running_node(tmp_path, "b_then_c", {}, lambda ns: Client(ns, ARM.joint_names)) as (process, client):
        client.description.publish(String(data=ARM_URDF))
        client.wait_until_serving()
        q = np.full(ARM.nv, 0.4)
        client.description.publish(String(data=slow_to_build))
        client.spin_for(0.3)
        client.description.publish(String(data=BROKEN))
        assert client.spin_until(lambda: _close(client.efforts_at(q), HEAVY.gravity_torques(q)), 15.0), (
            process.output()[-2000:]
        )
        client.spin_for(1.0)  # and it stays: nothing newer and valid came
        assert _close(client.efforts_at(q, attempts=3), HEAVY.gravity_torques(q))
        assert client.spin_until(lambda: "robot_description refused" in process.output(), 10.0), process.output()[
            -2000:
        ]


@pytest.mark.slow
def test_huge_distinct_name_lists_do_not_hold_memory(tmp_path):
    with running_node(tmp_path, "names", {}, lambda ns: Client(ns, ARM.joint_names)) as (process, client):
        client.description.publish(String(data=ARM_URDF))
        client.wait_until_serving()
        flood = client.node.create_publisher(JointState, "joint_states", 100)
        client.spin_for(1.0)
        before = rss_bytes(process.process.pid)
        count, names_per_message = 40, 100_008
        for k in range(count):  # 10 MB each: every message a new list of long names
            names = [f"{k:04d}-{i:08d}-" + "n" * 86 for i in range(names_per_message)]
            client.spin_until(lambda: False, 0.01)
            flood.publish(JointState(name=names, position=[0.0] * names_per_message))
        client.spin_for(3.0)
        q = np.full(ARM.nv, 0.2)
        assert _close(client.efforts_at(q, attempts=5), ARM.gravity_torques(q))
        growth = (rss_bytes(process.process.pid) - before) / 2**20
        print(f"{count} messages of {names_per_message} names of 100 characters: RSS {growth:+.1f} MiB")
        # 40 × 10 MB went through the node; the name cache keeps none of them (DDS keeps its buffers)
        assert growth < 150.0, growth


@pytest.mark.slow
def test_a_flood_of_large_descriptions_delays_joint_states_within_the_documented_bound():
    result = run_soak(seconds=15.0, rate=1000.0, swap_period=1000.0, flood=30)
    print(result)
    assert result["node_alive_at_end"] and not result["traceback_in_log"], result
    assert result["torn_outputs"] == 0 and result["non_finite_outputs"] == 0, result
    # lost while builds hold the interpreter (the node keeps the newest state, by design): 4 % quiet,
    # 17 % and 40 % in CI runs beside other work; the bound that matters to a driver is the latency below
    assert result["dropped"] <= 0.60 * result["joint_states_sent"], result
    assert result["latency_max_us"] < 1_000_000, result  # README, Reliability: measured max 0.14 s
    assert result["rss_peak_growth_mb"] < 200.0, result


def _close(effort, expected) -> bool:
    return effort is not None and np.allclose(effort, expected, rtol=1e-12, atol=1e-12)
