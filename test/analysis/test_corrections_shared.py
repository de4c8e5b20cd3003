"""rnea_node and rnea_analyze apply a corrections file with the same code: on one recording, the
torques rnea_analyze writes equal those the node's core computes at the same states."""

from __future__ import annotations

import numpy as np
import yaml

from rnea_ros import RobotModel
from rnea_ros.analysis.cli import main
from rnea_ros.controller.core import RneaCore, build_live_model
from rnea_ros.controller.inputs import BY_TOPIC
from rnea_ros.controller.settings import Settings
from rnea_ros.controller.state import DesiredPoints
from rnea_ros.demo.example_robot import example_arm_urdf

URDF = example_arm_urdf()
CORRECTIONS = {
    "version": 2,
    "joints": {
        "joint2": {"viscous": 1.5, "coulomb": 0.8, "armature": 0.2, "offset": -0.3},
        "joint5": {"viscous": 0.4, "coulomb": 0.1, "coulomb_width": 0.05},
    },
    "payload": {
        "link": "tool",
        "mass": 1.5,
        "com": [0.01, -0.02, 0.06],
        "inertia": {"ixx": 0.004, "ixy": 0.0, "ixz": 0.0, "iyy": 0.005, "iyz": 0.0, "izz": 0.003},
    },
}


def quadratic_recording(names, seconds=1.0, rate=500.0):
    """q = a + b t + c t²: exact under rnea_analyze's local polynomial fit, so both see the same q̈."""
    rng = np.random.default_rng(3)
    t = np.arange(0.0, seconds, 1.0 / rate)
    a, b, c = (rng.uniform(-1, 1, len(names)) for _ in range(3))
    q = a + b * t[:, None] + c * t[:, None] ** 2
    qd = b + 2 * c * t[:, None]
    qdd = np.broadcast_to(2 * c, q.shape)
    return t, q, qd, qdd


def test_node_and_rnea_analyze_give_the_same_corrected_torques(tmp_path):
    names = list(RobotModel.from_urdf(URDF).joint_names)
    t, q, qd, qdd = quadratic_recording(names)
    columns = ["time"] + [f"{n}.{kind}" for n in names for kind in ("position", "velocity", "effort")]
    rows = np.column_stack([t] + [x[:, j] for j in range(len(names)) for x in (q, qd, np.zeros_like(q))])
    recording = tmp_path / "recording.csv"
    np.savetxt(recording, rows, delimiter=",", header=",".join(columns), comments="", fmt="%.17g")
    (tmp_path / "urdf.urdf").write_text(URDF)
    corrections = tmp_path / "corrections.yaml"
    corrections.write_text(yaml.safe_dump(CORRECTIONS))

    out = tmp_path / "out"
    argv = [str(recording), "--urdf", str(tmp_path / "urdf.urdf"), "--corrections", str(corrections)]
    assert main([*argv, "--out", str(out)]) == 0
    samples = np.loadtxt(out / "samples.csv", delimiter=",", skiprows=1)
    n = len(names)
    sample_t, analysed = samples[:, 0], samples[:, 1 + 2 * n : 1 + 3 * n]  # time, q, measured, tau, gravity

    settings = Settings(kp=(1.0,), kd=(0.1,))  # with feedback the node computes at the desired state
    core = RneaCore(settings)
    core.set_corrections(str(corrections))
    core.load(build_live_model(URDF, settings))
    assert core.live.bound.corrected.payload is not None
    rows = np.searchsorted(t, sample_t)
    assert len(rows) > 0.8 * len(t) and np.allclose(t[rows], sample_t)
    for k in rows[:: max(1, len(rows) // 40)]:
        core.receive(BY_TOPIC["desired_accelerations"], DesiredPoints(names, qdd[k], q[k], qd[k]))
        outputs = core.joint_states(names, q[k], qd[k], True, t[k], lambda now=t[k]: now)
        np.testing.assert_allclose(analysed[rows.tolist().index(k)], outputs.tau, atol=2e-6)  # CSV: 6 decimals
    uncorrected = RobotModel.from_urdf(URDF).inverse_dynamics(q[rows], qd[rows], qdd[rows])
    assert np.abs(analysed - uncorrected).max() > 0.5  # the corrections changed what both computed
