"""Recordings written for the tests and the benchmark of rnea_analyze: a simulated robot whose
"measured" efforts come from a model with known modifications, plus noise."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rnea_ros import RobotModel
from rnea_ros.demo.example_robot import example_arm_urdf, smooth_trajectory


@dataclass
class Simulation:
    names: list[str]
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    effort: np.ndarray


def simulate(
    true_urdf: str,
    seconds: float,
    rate: float = 1000.0,
    joints: list[str] | None = None,
    viscous: dict[str, float] | None = None,
    effort_noise: float = 0.02,
    position_noise: float = 1e-7,
    jitter: float = 0.0,
    seed: int = 0,
    wrenches: dict[str, np.ndarray] | None = None,
) -> Simulation:
    """The robot ``true_urdf`` following the smooth demo trajectory; efforts = ID + the URDF's joint
    damping and friction (as a real joint, or the simulator, has them) + viscous·q̇ + noise."""
    model = RobotModel.from_urdf(true_urdf)
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * rate)) / rate + 1_700_000_000.0
    if jitter:
        t = t + rng.uniform(-jitter, jitter, len(t)) / rate
    q, qd, qdd = smooth_trajectory(model.nv, t - t[0])
    effort = true_efforts(true_urdf, model, q, qd, qdd, wrenches)
    for name, (damping, friction) in model.joint_dynamics.items():  # written out: independent of the model's code
        j = model.joint_names.index(name)
        effort[:, j] += damping * qd[:, j] + friction * np.tanh(qd[:, j] / 0.01)
    for name, coefficient in (viscous or {}).items():
        j = model.joint_names.index(name)
        effort[:, j] += coefficient * qd[:, j]
    effort += rng.normal(scale=effort_noise, size=effort.shape)
    q = q + rng.normal(scale=position_noise, size=q.shape)
    keep = [model.joint_names.index(n) for n in (joints or model.joint_names)]
    names = [model.joint_names[j] for j in keep]
    return Simulation(names, t, q[:, keep], qd[:, keep], effort[:, keep])


def true_efforts(urdf: str, model: RobotModel, q, qd, qdd, wrenches=None) -> np.ndarray:
    """Pinocchio's efforts: an oracle independent of the code under test (ImportError without it)."""
    from rnea_ros.testing.reference import PinocchioReference

    reference = PinocchioReference(urdf, model)
    return np.array(
        [
            reference.inverse_dynamics(q[k], qd[k], qdd[k], {l: w[k] for l, w in (wrenches or {}).items()})
            for k in range(len(q))
        ]
    )


def heavier_link_urdf(factor: float = 1.2) -> str:
    """The example arm with link4's mass (the first 3.5 kg after link2, link3) scaled."""
    urdf = example_arm_urdf()
    marker = '<link name="link4">'
    start = urdf.index(marker)
    mass_at = urdf.index('<mass value="', start) + len('<mass value="')
    end = urdf.index('"', mass_at)
    return urdf[:mass_at] + f"{float(urdf[mass_at:end]) * factor:.6g}" + urdf[end:]


def write_bag(
    path: Path,
    sim: Simulation,
    description: str | None = None,
    storage: str = "sqlite3",
    split_joints: int | None = None,
    wrenches: dict[str, np.ndarray] | None = None,
) -> Path:
    """A rosbag2 of /joint_states (and /robot_description, wrench topics). ``split_joints``: two
    publishers, the first ``split_joints`` joints on one and the rest on the other."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    JointState, Header, Time = (
        store.types[k] for k in ("sensor_msgs/msg/JointState", "std_msgs/msg/Header", "builtin_interfaces/msg/Time")
    )
    String = store.types["std_msgs/msg/String"]
    plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
    groups = [slice(None)] if split_joints is None else [slice(0, split_joints), slice(split_joints, None)]
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        if description is not None:
            connection = writer.add_connection("/robot_description", String.__msgtype__, typestore=store)
            writer.write(
                connection, int(sim.t[0] * 1e9), store.serialize_cdr(String(data=description), String.__msgtype__)
            )
        states = writer.add_connection("/joint_states", JointState.__msgtype__, typestore=store)
        wrench_connection = None
        if wrenches:
            wrench_connection = writer.add_connection(
                "/tool_wrench", "geometry_msgs/msg/WrenchStamped", typestore=store
            )
        for k, t in enumerate(sim.t):
            ns = round(float(t) * 1e9)
            stamp = Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)
            for group in groups:
                msg = JointState(
                    header=Header(stamp=stamp, frame_id=""),
                    name=sim.names[group],
                    position=np.ascontiguousarray(sim.q[k, group]),
                    velocity=np.ascontiguousarray(sim.qd[k, group]),
                    effort=np.ascontiguousarray(sim.effort[k, group]),
                )
                writer.write(states, ns, store.serialize_cdr(msg, JointState.__msgtype__))
            for link, values in (wrenches or {}).items():
                W = store.types["geometry_msgs/msg/WrenchStamped"]
                V = store.types["geometry_msgs/msg/Vector3"]
                Wr = store.types["geometry_msgs/msg/Wrench"]
                w = values[k]
                msg = W(
                    header=Header(stamp=stamp, frame_id=link),
                    wrench=Wr(force=V(x=w[0], y=w[1], z=w[2]), torque=V(x=w[3], y=w[4], z=w[5])),
                )
                writer.write(wrench_connection, ns, store.serialize_cdr(msg, W.__msgtype__))
    return path


def write_csv(path: Path, sim: Simulation, with_velocity: bool = True) -> Path:
    header = ["time"]
    for name in sim.names:
        header += [f"{name}.position"] + ([f"{name}.velocity"] if with_velocity else []) + [f"{name}.effort"]
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        for k, t in enumerate(sim.t):
            row = [repr_float(t)]
            for j in range(len(sim.names)):
                row += (
                    [repr_float(sim.q[k, j])]
                    + ([repr_float(sim.qd[k, j])] if with_velocity else [])
                    + [repr_float(sim.effort[k, j])]
                )
            writer.writerow(row)
    return path


def repr_float(x) -> str:
    return repr(float(x))
