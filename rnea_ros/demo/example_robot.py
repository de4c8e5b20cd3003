"""The bundled example arm and a smooth trajectory for it, shared by the demo, examples and benchmarks."""

from __future__ import annotations

from importlib import resources

import numpy as np


def example_arm_urdf() -> str:
    """URDF text of the bundled 7-DoF arm (with a prismatic gripper finger and its mimic twin)."""
    return resources.files("rnea_ros.demo").joinpath("robots/example_arm.urdf").read_text()


def smooth_trajectory(nv: int, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """q_i(t) = a_i sin(ω_i t): positions, velocities and accelerations, shape (len(t), nv).

    The last joint moves 2 cm (the example arm's prismatic finger); the others up to 0.8 rad.
    """
    amplitude = np.linspace(0.8, 0.3, nv)
    amplitude[-1] = 0.02
    omega = np.linspace(1.0, 3.0, nv)
    phase = np.outer(t, omega)
    return amplitude * np.sin(phase), amplitude * omega * np.cos(phase), -amplitude * omega**2 * np.sin(phase)
