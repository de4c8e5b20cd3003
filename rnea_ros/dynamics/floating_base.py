"""Floating-base state: the free flyer's q, q̇, q̈ from what sensors and planners give.

Conventions (Pinocchio's ``JointModelFreeFlyer``): q_base = [x, y, z, qx, qy, qz, qw] of the
root link in the world, v_base = [v, ω] in the root link frame, and q̈_base the time
derivative of v_base in that frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rnea_ros.dynamics.rotations import matrix_quaternion

BASE_DOFS = 6


@dataclass(frozen=True)
class ImuReading:
    """An IMU's orientation in the world and angular velocity in its own frame, on link ``link``."""

    R_world_imu: np.ndarray
    omega_imu: np.ndarray
    link: str
    received: float  # time.monotonic()
    stamp: float = 0.0  # header.stamp [s]; 0: none


@dataclass(frozen=True)
class BaseState:
    """q_base = [x, y, z, qx, qy, qz, qw] (world), v_base = [v, ω] (base frame), from one source."""

    q: np.ndarray
    v: np.ndarray
    source: str  # "base_odometry" or "imu"
    received: float  # time.monotonic()
    stamp: float = 0.0  # header.stamp [s]; 0: none


def base_state_from_imu(
    reading: ImuReading, R_base_imu: np.ndarray, omega_rel: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(q_base, v_base) from an IMU reading: R_world_base = R_world_imu R_base_imuᵀ and
    ω_base = R_base_imu ω_imu − ω_rel; position and linear velocity zero (an IMU measures neither).

    ``R_base_imu`` and ``omega_rel`` (the IMU link's rotation and angular velocity relative to the
    base) come from ``RobotModel.link_rotation_in_base`` at the joint state in use."""
    R_world_base = reading.R_world_imu @ R_base_imu.T
    omega_base = R_base_imu @ reading.omega_imu - omega_rel
    return np.concatenate([np.zeros(3), matrix_quaternion(R_world_base)]), np.concatenate([np.zeros(3), omega_base])


def base_acceleration(classical: np.ndarray, base_twist: np.ndarray) -> np.ndarray:
    """The free flyer's q̈ from [a, α] in the base frame (geometry_msgs/AccelStamped's content).

    ``a`` is the classical acceleration of the base origin (what a planner or an accelerometer
    without gravity gives); the kernel's base acceleration is the derivative of the body-frame
    velocity, which differs by ω × v."""
    v, omega = base_twist[:3], base_twist[3:]
    return np.concatenate([classical[:3] - np.cross(omega, v), classical[3:]])
