"""Identification of friction, armature and offset on MuJoCo's robot with what the URDF leaves
out (joint damping, friction loss and rotor inertia set in the simulator, never in the URDF),
and what it must refuse to report. MuJoCo is imported inside the tests, which run after the
session's DDS tests (see rnea_ros/simulation/sim_node.py on load order)."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.analysis.identify import Identification
from rnea_ros.demo.trajectories import MultiSine
from rnea_ros.testing.reference import ARM_URDF

ARM = RobotModel.from_urdf(ARM_URDF)
START = np.array([0.0, 1.0, 0.0, -1.5, 0.0, 1.5, 0.0, 0.02])
KP = np.array([600.0, 900.0, 250.0, 150.0, 12.0, 15.0, 1.0, 40.0])
KD = np.array([60.0, 90.0, 25.0, 15.0, 1.2, 1.5, 0.1, 4.0])
TRUTH = {  # per arm joint: damping [N·m·s/rad], friction loss [N·m], armature [kg·m²]
    "damping": np.array([2.0, 3.0, 1.5, 1.0, 0.3, 0.2, 0.1]),
    "frictionloss": np.array([1.0, 1.5, 0.8, 0.6, 0.2, 0.15, 0.1]),
    "armature": np.array([0.2, 0.3, 0.1, 0.1, 0.02, 0.02, 0.01]),
}


def simulate(trajectory: MultiSine, seconds: float) -> tuple[np.ndarray, ...]:
    """(q, qd, qdd, applied τ) per step of the arm tracking ``trajectory`` (PD + inverse dynamics)."""
    from rnea_ros.simulation.physics import SimOptions, SimRobot

    sim = SimRobot(ARM_URDF, SimOptions(keep_urdf_damping=False))
    for key, values in TRUTH.items():
        getattr(sim.model, f"dof_{key}")[:7] = values
    sim.set_positions(dict(zip(ARM.joint_names, START, strict=True)))
    rows = []
    for k in range(int(seconds * 1000)):
        q, qd = sim.positions()[:8], sim.velocities()[:8]
        qr, qdr, qddr = trajectory.at(k * 1e-3)
        sim.step(KP * (qr - q) + KD * (qdr - qd) + ARM.inverse_dynamics(qr, qdr, qddr))
        rows.append((q, qd, sim.data.qacc[:8].copy(), sim.applied[:8].copy()))
    return tuple(np.array(column) for column in zip(*rows, strict=True))


def identify(trajectory: MultiSine, seconds: float) -> Identification:
    q, qd, qdd, applied = simulate(trajectory, seconds)
    identification = Identification(ARM.joint_names)
    identification.add(applied, ARM.inverse_dynamics(q, qd, qdd), qd, qdd)
    return identification


def test_friction_and_armature_are_found_within_ten_percent():
    amplitudes = np.zeros((8, 3))
    amplitudes[:7] = [0.15, 0.08, 0.05]  # every joint within its limits (joint2 up to 1.56 of 1.8 rad)
    exciting = MultiSine(START, amplitudes, np.array([0.3, 0.7, 1.3]))
    results = identify(exciting, 12.0).results()
    for j, result in enumerate(results[:7]):
        found = {k: e.value for k, e in result.estimates.items()}
        print(result.name, {k: None if v is None else round(v, 4) for k, v in found.items()})
        assert found["viscous"] == pytest.approx(TRUTH["damping"][j], rel=0.1)
        assert found["coulomb"] == pytest.approx(TRUTH["frictionloss"][j], rel=0.1)
        assert found["armature"] == pytest.approx(TRUTH["armature"][j], rel=0.1)
        assert result.residual_rms_after < result.residual_rms_before / 3


def test_a_joint_that_does_not_move_is_not_identifiable():
    amplitudes = np.zeros((8, 3))
    amplitudes[:6] = [0.25, 0.15, 0.1]  # joint7 and the gripper stay still
    identification = identify(MultiSine(START, amplitudes, np.array([0.3, 0.7, 1.3])), 3.0)
    results = {r.name: r for r in identification.results()}
    for name in ("joint7", "finger_left_joint"):
        for parameter in ("viscous", "coulomb", "armature"):
            estimate = results[name].estimates[parameter]
            assert estimate.value is None and "not excited" in estimate.why, (name, parameter, estimate)
    written = identification.corrections().joints.get("joint7")  # what was not identified is left out (zero)
    assert written is None or (written.viscous, written.coulomb, written.armature) == (0.0, 0.0, 0.0)
    assert results["joint1"].estimates["viscous"].value is not None
