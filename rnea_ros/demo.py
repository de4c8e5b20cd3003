"""Main job (library form): torques of the bundled example arm along a smooth trajectory.

Prints, for a few instants of a 2 s trajectory, the feed-forward torque
τ = ID(q, q̇, q̈) and the gravity torque g(q), both from one batch call each.
"""

from __future__ import annotations

import time
from importlib import resources

import numpy as np

from rnea_ros import RobotModel


def example_arm_urdf() -> str:
    return resources.files("rnea_ros").joinpath("robots/example_arm.urdf").read_text()


def smooth_trajectory(model: RobotModel, t: np.ndarray):
    """q_i(t) = a_i sin(ω_i t): positions, velocities and accelerations, shape (N, nv)."""
    amplitude = np.linspace(0.8, 0.3, model.nv)
    amplitude[-1] = 0.02  # the gripper finger, metres
    omega = np.linspace(1.0, 3.0, model.nv)
    phase = np.outer(t, omega)
    return amplitude * np.sin(phase), amplitude * omega * np.cos(phase), -amplitude * omega**2 * np.sin(phase)


def main() -> None:
    model = RobotModel.from_urdf(example_arm_urdf())
    t = np.linspace(0.0, 2.0, 2001)
    q, qd, qdd = smooth_trajectory(model, t)

    start = time.perf_counter()
    tau = model.inverse_dynamics(q, qd, qdd)
    gravity = model.gravity_torques(q)
    elapsed = time.perf_counter() - start

    print(f"rnea_ros demo: the example arm, {model.nv} joints, {len(t)} states of a 2 s trajectory")
    header = "t [s]  " + " ".join(f"{name:>17}" for name in model.joint_names)
    print(header)
    for k in range(0, len(t), 250):
        cells = " ".join(f"{tau[k, j]:8.3f}/{gravity[k, j]:8.3f}" for j in range(model.nv))
        print(f"{t[k]:5.2f}  {cells}")
    print("cells: feed-forward τ / gravity g(q), N·m (N for the finger)")
    print(f"batch of {2 * len(t)} inverse-dynamics evaluations took {elapsed * 1e3:.1f} ms (first call compiles)")


if __name__ == "__main__":
    main()
