"""Rotations as numpy 3×3 matrices and unit quaternions [x, y, z, w] (ROS's and Pinocchio's order)."""

from __future__ import annotations

import numpy as np

from rnea_ros.dynamics.spatial import quaternion_to_rotation


def quaternion_matrix(quaternion) -> np.ndarray:
    """3×3 rotation of a unit quaternion [x, y, z, w], with the kernel's own formula."""
    x, y, z, w = (float(c) for c in quaternion)
    return np.array(quaternion_to_rotation(x, y, z, w)).reshape(3, 3)


def matrix_quaternion(R: np.ndarray) -> np.ndarray:
    """Unit quaternion [x, y, z, w] of a rotation matrix (Shepperd's method)."""
    trace = R[0, 0] + R[1, 1] + R[2, 2]
    k = int(np.argmax([trace, R[0, 0], R[1, 1], R[2, 2]]))
    if k == 0:
        s = 2.0 * np.sqrt(1.0 + trace)
        q = [(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, s / 4]
    elif k == 1:
        s = 2.0 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = [s / 4, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s, (R[2, 1] - R[1, 2]) / s]
    elif k == 2:
        s = 2.0 * np.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = [(R[0, 1] + R[1, 0]) / s, s / 4, (R[1, 2] + R[2, 1]) / s, (R[0, 2] - R[2, 0]) / s]
    else:
        s = 2.0 * np.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = [(R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, s / 4, (R[1, 0] - R[0, 1]) / s]
    q = np.array(q)
    return q / np.linalg.norm(q)
