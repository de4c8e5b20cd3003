"""rnea_node under hostile input over real DDS: random and adversarial messages on every
subscription while valid joint_states keep coming, bad descriptions during load, and a
20 s version of the soak test (benchmarks/soak.py)."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

import numpy as np
import pytest
import rclpy
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import RobotModel
from rnea_ros.testing.reference import ARM_URDF, HEAVY_ARM_URDF
from rnea_ros.testing.ros_harness import Client, init_rclpy, running_node
from rnea_ros.testing.soak import run_soak

pytestmark = pytest.mark.ros

MODELS = [RobotModel.from_urdf(ARM_URDF), RobotModel.from_urdf(HEAVY_ARM_URDF)]
ARM = MODELS[0]
WEIRD = [math.nan, math.inf, -math.inf, 1e308, -1e-308, 0.0]


@pytest.fixture(scope="module", autouse=True)
def ros():
    init_rclpy()
    yield
    rclpy.try_shutdown()


def random_joint_state(rng: np.random.Generator) -> JointState:
    names = list(rng.choice([*ARM.joint_names, "ghost", ""], size=rng.integers(0, 12)))
    n = len(names) + int(rng.choice([0, 0, -1, 1, 5000]))
    values = [float(rng.choice(WEIRD)) if rng.random() < 0.3 else float(rng.normal()) for _ in range(max(n, 0))]
    msg = JointState(name=names, position=values, velocity=values[: int(rng.integers(0, len(values) + 1))])
    msg.header.stamp.sec = int(rng.choice([0, 1, 2**31 - 1, int(time.time()) + 3600, int(time.time()) - 3600]))
    return msg


def random_trajectory(rng: np.random.Generator) -> JointTrajectory:
    names = list(rng.choice([*ARM.joint_names, "ghost"], size=rng.integers(0, 10)))
    length = len(names) + int(rng.choice([0, 1, -1])) if names else 0
    values = [float(rng.choice(WEIRD)) if rng.random() < 0.2 else float(rng.normal()) for _ in range(max(length, 0))]
    points = [JointTrajectoryPoint(accelerations=values, positions=values)] * int(rng.integers(0, 3))
    return JointTrajectory(joint_names=names, points=points)


def random_wrench(rng: np.random.Generator) -> WrenchStamped:
    msg = WrenchStamped()
    msg.header.frame_id = str(rng.choice([*ARM.link_names, "nowhere", ""]))
    f, t = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z, t.x, t.y, t.z = (float(rng.choice(WEIRD)) if rng.random() < 0.2 else rng.normal() for _ in range(6))
    return msg


def random_description(rng: np.random.Generator) -> str:
    cut = int(rng.integers(0, len(ARM_URDF)))
    return str(rng.choice([ARM_URDF[:cut], "<robot/>", "", "\x00", HEAVY_ARM_URDF[cut:], "not xml at all"]))


def gravity_of_a_model(msg: JointState) -> bool:
    """Gravity torques depend on q alone: they must be g(q) of one of the two models, never a mix."""
    q = np.array(msg.position)
    return any(
        len(q) == model.nq and np.allclose(msg.effort, model.gravity_torques(q), rtol=1e-12, atol=1e-12)
        for model in MODELS
    )


def certain_rejections(client: Client, bad_states) -> dict[str, Callable[[], None]]:
    nowhere = WrenchStamped()
    nowhere.header.frame_id = "nowhere"
    return {
        "wrong_length": lambda: bad_states.publish(JointState(name=ARM.joint_names, position=[0.0])),
        "non_finite": lambda: bad_states.publish(JointState(name=ARM.joint_names, position=[math.nan] * ARM.nv)),
        "unknown_wrench_frame": lambda: client.wrench.publish(nowhere),
        "bad_robot_description": lambda: client.description.publish(String(data="not xml at all")),
    }


@pytest.mark.slow
def test_fuzzing_every_subscription_under_load(tmp_path):
    parameters = {"acceleration_timeout": 0.05, "wrench_timeout": 0.05}
    with running_node(tmp_path, "fuzzed", parameters, lambda ns: Client(ns, ARM.joint_names)) as (process, client):
        pub_bad_states = client.node.create_publisher(JointState, "joint_states", 100)
        client.description.publish(String(data=ARM_URDF))
        client.wait_until_serving()
        rng = np.random.default_rng(2026)
        stop = threading.Event()

        def valid_load() -> None:  # 200 Hz of good joint_states from a second publisher
            while not stop.is_set():
                msg = JointState(name=ARM.joint_names, position=list(rng.normal(size=ARM.nv)))
                msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(time.time_ns(), 1_000_000_000)
                client.joint_states.publish(msg)
                time.sleep(0.005)

        loader = threading.Thread(target=valid_load, daemon=True)
        loader.start()
        sent = 0
        # 6 s and 600 messages at least (a loaded machine sends fewer in 6 s), 60 s at most
        started = time.monotonic()
        while (time.monotonic() < started + 6.0 or sent < 600) and time.monotonic() < started + 60.0:
            kind = rng.integers(0, 10)
            if kind < 5:
                pub_bad_states.publish(random_joint_state(rng))
            elif kind < 7:
                client.desired.publish(random_trajectory(rng))
            elif kind < 9:
                client.wrench.publish(random_wrench(rng))
            else:
                client.description.publish(String(data=random_description(rng) if rng.random() < 0.7 else ARM_URDF))
            sent += 1
            client.spin_until(lambda: False, 0.002)
        stop.set()
        loader.join(timeout=2)
        # one message of each kind the mix sends, for certain: on a loaded machine the node can miss the
        # few random ones of a kind (a CI run counted no unknown_wrench_frame)
        for reason, send in certain_rejections(client, pub_bad_states).items():
            send()
            assert client.diagnostic_says(f"rejected: {reason}", 10.0), reason
        client.description.publish(String(data=ARM_URDF))
        client.spin_for(1.5)

        assert sent > 500
        assert process.process.poll() is None, process.output()
        assert len(client.efforts) > 100  # the valid load kept being served
        for msg in client.efforts:
            assert np.all(np.isfinite(msg.effort)) and len(msg.effort) == ARM.nv
        for msg in client.gravity:
            assert gravity_of_a_model(msg)
        values = client.latest_diagnostic_values()
        for reason in ("wrong_length", "non_finite", "unknown_wrench_frame", "bad_robot_description"):
            assert int(values.get(f"rejected: {reason}", 0)) > 0, (reason, values)
        q = np.full(ARM.nv, 0.3)
        assert client.spin_until(lambda: _close(client.efforts_at(q), ARM.gravity_torques(q)), 10.0)
        assert "Traceback" not in process.output()


@pytest.mark.slow
def test_quick_soak_with_description_swaps():
    result = run_soak(seconds=20.0, rate=1000.0, swap_period=2.0)
    assert result["node_alive_at_end"] and not result["traceback_in_log"], result
    assert result["torn_outputs"] == 0 and result["non_finite_outputs"] == 0, result
    assert result["description_swaps"] >= 8, result
    assert result["rejected"].get("bad_robot_description", 0) >= 2, result
    # a systematic loss, not the machine's load: beside two busy processes 7 % went unanswered at 1 kHz
    # (benchmarks/soak.py measures the rate answered, quiet and busy); 25 %: a CI run's suite beside
    # other work loads the machine more than two busy processes do
    assert result["dropped"] <= 0.25 * result["joint_states_sent"], result
    assert result["rss_growth_mb"] < 5.0, result


def _close(effort, expected) -> bool:
    return effort is not None and np.allclose(effort, expected, rtol=1e-12, atol=1e-12)
