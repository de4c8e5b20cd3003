"""Garbage-collector pauses in rnea_node, with and without its objects frozen, in one run.

    python benchmarks/gc_pauses.py [--messages 20000]

A real rnea_node (the example arm, feedback on) in this process is handed deserialized
joint_states, and a 60-point desired_accelerations every 10 of them, as in the closed loop;
its outputs go through its real publishers. Twice: first with every object back in the
collector's reach (as before rnea_node froze them), then frozen as the node does after a model
load. Printed: one full collection's time before and after freezing (the pause the collector
makes whenever it decides to), and the collections the hot path itself set off: per generation,
with the longest pause, and the longest joint_states call.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import rclpy
import yaml
from builtin_interfaces.msg import Duration
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import RobotModel
from rnea_ros.node.gc_pauses import CollectionPauses, freeze_long_lived_objects
from rnea_ros.testing.reference import ARM_URDF

os.environ.setdefault("ROS_DOMAIN_ID", str(150 + os.getpid() % 50))
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")


def joint_states_bytes(names: list[str], first: int, count: int) -> list[bytes]:
    """Serialized joint_states number first, first + 1, ..., 1 ms apart, as the node's
    subscription receives them."""
    rng = np.random.default_rng(first)
    out = []
    for k in range(first, first + count):
        msg = JointState(name=names, position=rng.normal(0, 0.5, len(names)).tolist())
        msg.velocity = rng.normal(0, 0.5, len(names)).tolist()
        msg.header.stamp.sec, msg.header.stamp.nanosec = 1000 + k // 1000, (k % 1000) * 1_000_000
        out.append(serialize_message(msg))
    return out


def desired_bytes(names: list[str], k: int) -> bytes:
    """desired_accelerations stamped like joint_states k: 60 points 1 ms apart."""
    msg = JointTrajectory(joint_names=names)
    msg.header.stamp.sec, msg.header.stamp.nanosec = 1000 + k // 1000, (k % 1000) * 1_000_000
    for i in range(1, 61):
        zeros = [0.0] * len(names)
        point = JointTrajectoryPoint(positions=zeros, velocities=zeros, accelerations=zeros)
        point.time_from_start = Duration(sec=0, nanosec=i * 1_000_000)
        msg.points.append(point)
    return serialize_message(msg)


def run(node, names: list[str], first: int, count: int) -> tuple[CollectionPauses, float]:
    """Feeds the node joint_states first, ..., first + count - 1; the collections seen and the
    longest joint_states call [s]."""
    states = joint_states_bytes(names, first, count)
    trajectories = [desired_bytes(names, k) for k in range(first, first + count, 10)]
    node.collection_pauses.uninstall()  # the node's own, counting since its start
    pauses = CollectionPauses().install()
    longest = 0.0
    published = node.core.published
    try:
        for k, raw in enumerate(states):
            if k % 10 == 0:
                node._on_desired(deserialize_message(trajectories[k // 10], JointTrajectory))
            start = time.perf_counter()
            node._on_joint_states(deserialize_message(raw, JointState))
            longest = max(longest, time.perf_counter() - start)
    finally:
        pauses.uninstall()
    assert node.core.published - published == count, "every joint_states must be computed"
    return pauses, longest


def summary(pauses: CollectionPauses) -> str:
    return ";  ".join(f"{key.rsplit(' ', 1)[-1]}: {value}" for key, value in pauses.values().items())


def full_collection_seconds() -> float:
    start = time.perf_counter()
    gc.collect()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=20000)
    args = parser.parse_args()
    names = RobotModel.from_urdf(ARM_URDF).joint_names
    parameters = {"robot_description": ARM_URDF, "kp": [100.0] * len(names), "kd": [10.0] * len(names)}
    with tempfile.TemporaryDirectory() as folder:
        params = Path(folder) / "params.yaml"
        params.write_text(yaml.safe_dump({"/**": {"ros__parameters": parameters}}))
        rclpy.init(args=[sys.argv[0], "--ros-args", "--params-file", str(params)])
    from rnea_ros.node.node import RneaNode

    node = RneaNode()
    node.core.settings = replace(node.core.settings, future_stamp_tolerance=1e12)
    n = args.messages
    try:
        gc.unfreeze()
        print(f"objects the collector tracks: {len(gc.get_objects()):,}")
        in_reach = full_collection_seconds()
        print(f"one full collection: {in_reach * 1e3:.1f} ms before freezing")
        run(node, names, 0, 2000)  # the first calls fill caches
        thawed, longest_thawed = run(node, names, 2000, n)
        freeze_long_lived_objects()
        frozen_collection = full_collection_seconds()
        print(f"one full collection: {frozen_collection * 1e3:.3f} ms once frozen")
        frozen, longest_frozen = run(node, names, 2000 + n, n)
        print(f"{n} joint_states, objects in reach: {summary(thawed)};  longest call {longest_thawed * 1e3:.1f} ms")
        print(f"{n} joint_states, objects frozen:   {summary(frozen)};  longest call {longest_frozen * 1e3:.1f} ms")
        print(f"one full collection, frozen / in reach: {frozen_collection / in_reach:.5f}")
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
