"""The node's state for one robot model: the model, the latest inputs merged into it, the name
lookup and the reusable output messages, swapped whole when a new description is loaded so that
no output is ever computed from a mix of two models."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from rnea_ros.floating_base import BASE_DOFS, BaseState, ContactLinks, ImuReading
from rnea_ros.messages import NameMatcher
from rnea_ros.model import RobotModel


class ConfigurationError(ValueError):
    """``command_joints`` or ``contact_links`` name a joint or link the robot model lacks."""


class LiveModel:
    """One robot model with everything that must change together with it: the latest inputs
    merged per joint, the name lookup and the reusable output messages. Swapped whole on reload,
    so an output is never computed from a mix of two models."""

    def __init__(self, model: RobotModel, command_joints: list[str], contact_links: list[str]) -> None:
        self.model = model
        index = {name: k for k, name in enumerate(model.joint_names)}
        missing = [name for name in command_joints if name not in index]
        if missing:
            raise ConfigurationError(f"command_joints names joints the robot model lacks: {missing}")
        self.matcher = NameMatcher(index)
        self.links = frozenset(model.link_names)
        self.command_order = np.array([index[name] for name in command_joints or model.joint_names], dtype=np.intp)
        # q, qd, ... below are the joints' part; a floating base adds its own state in front.
        self.floating = model.floating_base
        self.n = n = model.nv - (BASE_DOFS if self.floating else 0)
        try:
            self.contacts = ContactLinks(model, contact_links) if self.floating and contact_links else None
        except ValueError as error:
            raise ConfigurationError(str(error)) from error
        self.odometry: BaseState | None = None
        self.imu: ImuReading | None = None
        self.base_acceleration: tuple[np.ndarray, float] | None = None  # (classical [a, α], received)
        self.q, self.qd = np.zeros(n), np.zeros(n)
        self.zeros = np.zeros(n)
        self.stamp = np.full(n, -math.inf)  # joint_states header stamp of each joint's value
        self.newest_stamp = -math.inf
        # Written by the executor thread, read by the joint_states thread: each is replaced
        # whole by one assignment (atomic), never changed in place.
        self.desired: Desired | None = None
        self.wrenches: dict[str, tuple[np.ndarray, float]] = {}  # link -> (wrench, receive time)
        self.efforts_msg = JointState(name=list(model.joint_names))
        self.gravity_msg = JointState(name=list(model.joint_names))
        self.commands_msg = Float64MultiArray()
        self.residual_msg = WrenchStamped()
        self.residual_msg.header.frame_id = model.base_link or ""
        # RobotModel has loaded its kernels; the contact Jacobian's unit wrenches are cached here,
        # before any message arrives.
        if self.contacts is not None:
            self.contacts.jacobian_transpose(model.neutral_configuration())

    def on_the_base_tree(self, link: str) -> bool:
        """Whether ``link`` moves with the floating base (every link but those fixed to a world link)."""
        return link in self.links and self.model.tree.link_frames[link].body >= 0

    def stale_joints(self, timeout: float) -> list[str]:
        return [self.model.joint_names[j] for j in np.flatnonzero(self.newest_stamp - self.stamp > timeout)]


@dataclass(frozen=True)
class Desired:
    """The latest desired_accelerations point, in model order (q, qd: None without a state; NaN: not named)."""

    qdd: np.ndarray
    q: np.ndarray | None
    qd: np.ndarray | None
    received: float  # time.monotonic()
