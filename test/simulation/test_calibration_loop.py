"""The calibration loop, end to end over DDS: the simulated arm has joint friction and rotor
inertia that its URDF does not carry; a closed-loop run is recorded, identified, written as
corrections.yaml, loaded by rnea_node, and the same run tracks better. Lockstep."""

from __future__ import annotations

import numpy as np
import pytest
import rclpy
import yaml

from rnea_ros import RobotModel
from rnea_ros.analysis.differentiate import local_polynomial_derivatives
from rnea_ros.analysis.identify import Identification, identification_table
from rnea_ros.demo.closed_loop import run_closed_loop
from rnea_ros.demo.trajectories import MultiSine
from rnea_ros.testing.reference import ARM_URDF
from rnea_ros.testing.ros_harness import ROS_ENV, init_rclpy

pytestmark = pytest.mark.slow
ARM = RobotModel.from_urdf(ARM_URDF)
START = [0.0, 1.0, 0.0, -1.5, 0.0, 1.5, 0.0, 0.02]
KP = [600.0, 900.0, 250.0, 150.0, 12.0, 15.0, 1.0, 40.0]
KD = [60.0, 90.0, 25.0, 15.0, 1.2, 1.5, 0.1, 4.0]
HIDDEN = {  # per command joint (the gripper last): what only the simulator has
    "damping": [2.0, 3.0, 1.5, 1.0, 0.3, 0.2, 0.1, 0.0],
    "friction_loss": [1.0, 1.5, 0.8, 0.6, 0.2, 0.15, 0.1, 0.0],
    "armature": [0.2, 0.3, 0.1, 0.1, 0.02, 0.02, 0.01, 0.0],
}


@pytest.fixture(scope="module", autouse=True)
def ros():
    init_rclpy()
    yield
    rclpy.try_shutdown()


def exciting() -> MultiSine:
    amplitudes = np.zeros((8, 3))
    amplitudes[:7] = [0.15, 0.08, 0.05]  # within every joint's limits
    return MultiSine(np.array(START), amplitudes, np.array([0.3, 0.7, 1.3]))


def run(tmp_path, name: str, corrections_file: str = ""):
    sim = {
        "robot_description": ARM_URDF,
        "realtime": False,
        "initial_positions": START,
        "duration": 8.0,
        "keep_urdf_damping": False,
        **HIDDEN,
    }
    node = {"robot_description": ARM_URDF, "kp": KP, "kd": KD, "corrections_file": corrections_file}
    return run_closed_loop(tmp_path, name, sim, node, exciting(), ARM.joint_names, ROS_ENV)


def identify(recording) -> Identification:
    """What rnea_analyze --identify does, on the simulator's record: q̈ from the positions. The
    effort of each joint_states is the one applied during the step that led to it (the command
    of the state before): it is paired with that state."""
    started = np.flatnonzero(recording.time >= 0.0)[:-1]
    t, q = recording.time[started], recording.positions(ARM.joint_names)[started]
    qd = recording.qd[started][:, : ARM.nv]
    measured = recording.effort[started + 1][:, : ARM.nv]
    _, qdd = local_polynomial_derivatives(t, q, window=0.02, order=3)
    usable = np.isfinite(qdd).all(axis=1)
    identification = Identification(ARM.joint_names)
    model = ARM.inverse_dynamics(q[usable], qd[usable], qdd[usable])
    identification.add(measured[usable], model, qd[usable], qdd[usable])
    return identification


def test_identified_corrections_make_the_same_run_track_better(tmp_path):
    before = run(tmp_path, "calibrate_before")
    identification = identify(before)
    print(identification_table(identification))
    results = {r.name: r for r in identification.results()}
    for j, name in enumerate(ARM.joint_names[:7]):
        found = results[name].estimates
        for parameter, truth in (("viscous", "damping"), ("coulomb", "friction_loss"), ("armature", "armature")):
            # joint7, the smallest (0.1 N·m of friction): measured 9.9 % off on its viscous term, so 15 % here
            tolerance = 0.15 if name == "joint7" else 0.1
            assert found[parameter].value == pytest.approx(HIDDEN[truth][j], rel=tolerance), (name, parameter)
    corrections = tmp_path / "corrections.yaml"
    corrections.write_text(yaml.safe_dump(identification.corrections().to_dict()))
    after = run(tmp_path, "calibrate_after", str(corrections))
    rms = {}
    for label, recording in (("before", before), ("after", after)):
        error = recording.tracking_error(ARM.joint_names[:7])
        rms[label] = np.degrees(np.sqrt((error**2).mean(axis=0)))
        print(label, "RMS tracking error [deg]:", np.round(rms[label], 4))
    assert np.all(rms["after"] <= rms["before"] / 3)
