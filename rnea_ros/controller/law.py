"""The interface every command law has (``CommandLaw``), and what the laws share.

A law makes the source of ``effort_commands`` at one state, in model order; the node's torques
(``rnea_ros.controller.torques.effort_commands``) add the torque-space feedback (``kp``, ``kd``) to it,
put it in ``command_joints`` order, clip it to the URDF's effort limits and count the clips, the
same for every law. A law reads its own parameters from the settings (``params``: the generated
``Settings``, or any object with the same attributes) and is built once per bound model and set
of those parameters; it may keep a state (an integral) between the states it is asked for. A law
is the joint_states thread's: what it computes writes its own data (``data``, Pinocchio's Data).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Protocol

import numpy as np

from rnea_ros.dynamics.corrections import CorrectedModel


class LawInputs(Protocol):
    """What a law reads of one state (``rnea_ros.controller.state.Inputs`` has it), in model order."""

    q: np.ndarray  # the state the feed-forward τ was computed at: the desired one with feedback
    qdd: np.ndarray  # the desired accelerations (zero without a fresh desired point)
    wrenches: dict[str, np.ndarray] | None  # the fresh measured wrenches, by link
    q_measured: np.ndarray | None
    qd_measured: np.ndarray | None
    q_desired: np.ndarray | None  # None without a desired state; NaN for joints it does not name
    qd_desired: np.ndarray | None


class CommandLaw:
    """One command law: its name (its ``command_source`` value) and what it makes of a state."""

    name: ClassVar[str]  # command_source's value
    label: ClassVar[str]  # its words in /diagnostics' status name: "rnea_node: <label>"
    trajectory_efforts: ClassVar[str]  # what feedforward_trajectory's points carry: inverse_dynamics, gravity, none
    holds: ClassVar[bool] = False  # needs the holding torques at the measured state (``held``)

    def __init__(self, corrected: CorrectedModel, command_rows: np.ndarray, params: object) -> None:
        self.corrected = corrected
        self.model = corrected.model  # the payload merged in
        self.data = self.model.create_data()  # what its kernels write: a law is one thread's
        self.n = self.model.nv - (6 if self.model.floating_base else 0)  # the joints' rows

    @classmethod
    def parameters(cls, params: object) -> tuple:
        """The values of its own parameters: a law is built again only when they change."""
        return ()

    @classmethod
    def check(cls, params: object, command_joints: Sequence[str]) -> None:
        """ValueError when its parameters do not fit ``command_joints`` (an array of the wrong length)."""

    @classmethod
    def closes_loop(cls, params: object) -> bool:
        """Whether it needs the desired state itself (gains of its own): the node then keeps a desired
        point's positions and holds a stale one's, as with torque-space gains."""
        return False

    def source(self, inputs: LawInputs, tau: np.ndarray, held: np.ndarray, stamp: float) -> np.ndarray:
        """The source of effort_commands, model order (the joints' rows), before the torque-space
        feedback and the clipping: ``tau`` is the corrected feed-forward at ``inputs.q``, ``held``
        the holding torques (corrected; g(q) alone unless ``holds``), ``stamp`` the joint_states'."""
        raise NotImplementedError


def per_joint(values: Sequence[float], command_rows: np.ndarray, n: int) -> np.ndarray:
    """An array parameter given in command_joints order (or one value for all) in model order; the
    joints outside command_joints get 0 (no feedback)."""
    array = np.zeros(n)
    if values:
        array[command_rows] = values if len(values) > 1 else values[0]
    return array


def check_length(name: str, values: Sequence[float], command_joints: Sequence[str]) -> None:
    """ValueError unless ``values`` holds 0, 1 or one value per command joint."""
    if len(values) not in (0, 1, len(command_joints)):
        raise ValueError(f"{name} has {len(values)} values: give 1, or one per command joint ({len(command_joints)})")
