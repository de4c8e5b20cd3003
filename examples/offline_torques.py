"""Library use without ROS: torques of the example arm along a trajectory, one batch call each.

python examples/offline_torques.py
"""

from __future__ import annotations

import time

import numpy as np

from rnea_ros import RobotModel
from rnea_ros.demo.example_robot import example_arm_urdf, smooth_trajectory


def main() -> None:
    model = RobotModel.from_urdf(example_arm_urdf())
    t = np.linspace(0.0, 2.0, 2001)
    q, qd, qdd = smooth_trajectory(model.nv, t)

    start = time.perf_counter()
    tau = model.inverse_dynamics(q, qd, qdd)
    gravity = model.gravity_torques(q)
    elapsed = time.perf_counter() - start

    print(f"the example arm, {model.nv} joints, {len(t)} states of a 2 s trajectory")
    print("t [s]  " + " ".join(f"{name:>17}" for name in model.joint_names))
    for k in range(0, len(t), 250):
        cells = " ".join(f"{tau[k, j]:8.3f}/{gravity[k, j]:8.3f}" for j in range(model.nv))
        print(f"{t[k]:5.2f}  {cells}")
    print("cells: feed-forward τ / gravity g(q), N·m (N for the finger)")
    print(f"{2 * len(t)} inverse-dynamics evaluations in {elapsed * 1e3:.1f} ms (first batch call: loads the kernel)")


if __name__ == "__main__":
    main()
