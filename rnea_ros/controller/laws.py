"""Every command law, by its ``command_source`` name: the parameter's choices are this table's keys."""

from __future__ import annotations

from rnea_ros.controller.computed_torque import ComputedTorque
from rnea_ros.controller.feedback_only import FeedbackOnly
from rnea_ros.controller.gravity import Gravity
from rnea_ros.controller.inverse_dynamics import InverseDynamics
from rnea_ros.controller.law import CommandLaw

LAWS: dict[str, type[CommandLaw]] = {law.name: law for law in (InverseDynamics, Gravity, FeedbackOnly, ComputedTorque)}
