"""The node's two threads on one live model, without ROS: the joint_states path (the executor of
joint_states: inverse dynamics, gravity torques and the contact QP) and the trajectory feed-forward
(the executor's: a floating base's points one by one) run at the same time, as in rnea_node, and
give the single-threaded results bit for bit. The kernels release the GIL, so the two threads
really compute at once: it holds only because each thread writes its own ``ModelData``."""

from __future__ import annotations

import threading

import numpy as np

from rnea_ros.controller.core import RneaCore, build_live_model
from rnea_ros.controller.inputs import BY_TOPIC
from rnea_ros.controller.settings import Settings
from rnea_ros.controller.state import OdometryReading
from rnea_ros.motion.trajectory import Trajectory
from rnea_ros.testing.reference import robot_urdf

SOLO = robot_urdf("solo_description/robots/solo12.urdf")
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
STANCE = np.tile([0.0, 0.8, -1.6], 4)
SETTINGS = Settings(
    floating_base=True,
    contact_links=FEET,
    contact_distribution="qp",
    friction_coefficient=0.6,
    future_stamp_tolerance=3600.0,
    trajectory_resampling=0.01,
)
JOINT_STATES = 3000
TRAJECTORIES = 30
STAMP = 1.0  # joint_states stamps stay within base_timeout of the odometry's: fresh whatever the wall clock


def loaded_core() -> RneaCore:
    core = RneaCore(SETTINGS)
    core.load(build_live_model(SOLO, SETTINGS))
    core.receive(
        BY_TOPIC["base_odometry"],
        OdometryReading(
            np.array([0.0, 0.0, 0.25, 0.0, 0.0, 0.0, 1.0]), np.zeros(6), core.live.bound.model.base_link, STAMP
        ),
    )
    return core


def joint_states_run(core: RneaCore, states: np.ndarray) -> list[np.ndarray]:
    """The joint_states path over ``states`` (rows: q then q̇): everything it publishes, per message."""
    names, n = core.live.bound.model.joint_names, len(STANCE)
    results = []
    for k, state in enumerate(states):
        out = core.joint_states(names, state[:n], state[n:], True, STAMP + 1e-6 * k, lambda: 0.0)
        results.append(np.concatenate([out.tau, out.gravity, out.commands, out.base_residual, out.wrenches]))
    return results


def trajectories_run(core: RneaCore, trajectories: list[Trajectory]) -> list[np.ndarray]:
    return [core.trajectory(trajectory).efforts for trajectory in trajectories]


def inputs(rng: np.random.Generator) -> tuple[np.ndarray, list[Trajectory]]:
    states = np.hstack([STANCE + rng.normal(0, 0.05, (JOINT_STATES, 12)), rng.normal(0, 0.5, (JOINT_STATES, 12))])
    names = loaded_core().live.bound.model.joint_names
    trajectories = []
    for _ in range(TRAJECTORIES):
        times = np.array([0.0, 0.25, 0.5])
        q = STANCE + rng.normal(0, 0.05, (3, 12))
        trajectories.append(Trajectory(list(names), times, q, np.zeros((3, 12))))
    return states, trajectories


def test_joint_states_and_trajectories_from_two_threads_give_the_single_threaded_results_bit_for_bit():
    states, trajectories = inputs(np.random.default_rng(3))
    alone = loaded_core()
    expected_states = joint_states_run(alone, states)
    expected_efforts = trajectories_run(alone, trajectories)

    core = loaded_core()
    results: dict[str, list[np.ndarray]] = {}
    start = threading.Barrier(2)

    def run(name, function, work) -> None:
        start.wait()
        results[name] = function(core, work)

    threads = [
        threading.Thread(target=run, args=("joint_states", joint_states_run, states)),
        threading.Thread(target=run, args=("trajectories", trajectories_run, trajectories)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(600)
    assert set(results) == {"joint_states", "trajectories"}
    assert differing(results["joint_states"], expected_states) == []
    assert differing(results["trajectories"], expected_efforts) == []


def differing(results: list[np.ndarray], expected: list[np.ndarray]) -> list[int]:
    """Which results are not bit for bit the expected ones."""
    assert len(results) == len(expected)
    return [k for k, (a, b) in enumerate(zip(results, expected, strict=True)) if a.tobytes() != b.tobytes()]
