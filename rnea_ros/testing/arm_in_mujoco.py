"""The example arm in MuJoCo with what no URDF holds (joint damping, friction loss and rotor
inertia set in the simulator only), tracking a trajectory: the identification tests' recordings.
MuJoCo is imported inside ``simulate`` (see rnea_ros/simulation/sim_node.py on load order)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rnea_ros import RobotModel
from rnea_ros.motion.multisine import MultiSine
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


def simulate(
    trajectory: MultiSine, seconds: float, controller: RobotModel = ARM, soft_friction: bool = False
) -> tuple[np.ndarray, ...]:
    """(q, q̇, q̈, applied τ) per 1 ms step of the true arm tracking ``trajectory`` with PD + the
    inverse dynamics of ``controller`` (what its user runs). ``soft_friction``: MuJoCo's default
    friction loss, which ramps up with velocity as a real joint's does, instead of the simulator's
    stiffened one."""
    from rnea_ros.simulation.physics import SimOptions, SimRobot

    sim = SimRobot(ARM_URDF, SimOptions(keep_urdf_damping=False, soft_friction=soft_friction))
    for key, values in TRUTH.items():
        getattr(sim.model, f"dof_{key}")[:7] = values
    sim.set_positions(dict(zip(ARM.joint_names, START, strict=True)))
    rows = []
    for k in range(int(seconds * 1000)):
        q, qd = sim.positions()[:8], sim.velocities()[:8]
        qr, qdr, qddr = trajectory.at(k * 1e-3)
        sim.step(KP * (qr - q) + KD * (qdr - qd) + controller.inverse_dynamics(qr, qdr, qddr))
        rows.append((q, qd, sim.data.qacc[:8].copy(), sim.applied[:8].copy()))
    return tuple(np.array(column) for column in zip(*rows, strict=True))


LOWER = np.array([-2.9, -1.8, -2.9, -3.0, -2.9, -0.1, -np.pi, 0.0])  # the URDF's limits (joint7 continuous)
UPPER = np.array([2.9, 1.8, 2.9, 0.0, 2.9, 3.7, np.pi, 0.04])


def exciting(seed: int, frequencies, scale: float = 0.6) -> MultiSine:
    """A three-frequency multi-sine on joints 1–7 (signs drawn by ``seed``) that keeps within the limits."""
    amplitudes = np.zeros((8, 3))
    amplitudes[:7] = [0.5, 0.3, 0.15]
    amplitudes[[1, 3, 5]] = [[0.25, 0.15, 0.08], [0.4, 0.2, 0.1], [0.5, 0.25, 0.1]]
    amplitudes[:7] *= np.random.default_rng(seed).choice([-1.0, 1.0], size=(7, 3))
    return MultiSine(START, scale * amplitudes, np.asarray(frequencies, dtype=float))


def gravity_errors(urdfs: dict[str, str], poses: np.ndarray) -> dict[str, np.ndarray]:
    """Per URDF, per joint gravity acts on: the largest error of its gravity torques against the
    true arm's over ``poses``, relative to the joint's largest true gravity torque (Pinocchio's)."""
    from rnea_ros.testing.reference import PinocchioReference

    def gravity(urdf: str) -> np.ndarray:
        reference = PinocchioReference(urdf, RobotModel.from_urdf(urdf))
        return np.array([reference.gravity_torques(pose) for pose in poses])

    true = gravity(ARM_URDF)
    scale = np.abs(true).max(axis=0)
    acting = scale > 1e-6  # joint1 turns about the vertical; joint7 carries nothing off its axis
    return {name: np.abs(gravity(urdf) - true).max(axis=0)[acting] / scale[acting] for name, urdf in urdfs.items()}


def record_wrong_arm(seed: int, folder: Path, seconds: float = 60.0, soft_friction: bool = False) -> tuple[Path, Path]:
    """What a user of a URDF with wrong inertias does first: rnea_excite's excitation (designed on
    that URDF) recorded on the true arm. Writes ``wrong.urdf`` (``testing.perturbed``, ``seed``)
    and ``excitation.csv`` (time, positions, velocities, efforts, as rnea_analyze reads them)."""
    from rnea_ros.analysis.excitation import design
    from rnea_ros.testing.perturbed import perturbed_urdf

    wrong_urdf = perturbed_urdf(ARM_URDF, seed=seed)
    wrong = RobotModel.from_urdf(wrong_urdf)
    excitation = design(wrong, wrong_urdf, START, moving=np.r_[np.ones(7, dtype=bool), False], iterations=200)
    q, qd, _, applied = simulate(excitation.trajectory, seconds, wrong, soft_friction)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "wrong.urdf").write_text(wrong_urdf)
    header = ["time"] + [f"{n}.{k}" for k in ("position", "velocity", "effort") for n in ARM.joint_names]
    rows = np.column_stack([np.arange(len(q)) * 1e-3, q, qd, applied])
    np.savetxt(folder / "excitation.csv", rows, delimiter=",", header=",".join(header), comments="", fmt="%.12g")
    return folder / "wrong.urdf", folder / "excitation.csv"


if __name__ == "__main__":  # python -m rnea_ros.testing.arm_in_mujoco SEED FOLDER [soft] (MuJoCo apart from DDS)
    import sys

    record_wrong_arm(int(sys.argv[1]), Path(sys.argv[2]), soft_friction=sys.argv[3:] == ["soft"])
