"""A live parameter change as one transaction, no ROS: every new value checked before anything is
applied, then applied whole, or refused with the reason and nothing changed. The node answers rclpy's
parameter callback with it (``node.node``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial

from rnea_ros.controller.core import RneaCore
from rnea_ros.controller.loader import ModelLoader
from rnea_ros.controller.settings import settings_from
from rnea_ros.controller.state import BoundModel
from rnea_ros.dynamics.corrections import CorrectionsError, load_corrections

KEPT = " (previous corrections kept)"


@dataclass(frozen=True)
class ParameterChange:
    """The answer to a set of new values: refused with ``reason``, or accepted (``reason`` None) with
    ``bound``, the model the node runs on from now (None while it has none)."""

    reason: str | None = None
    bound: BoundModel | None = None

    @property
    def accepted(self) -> bool:
        return self.reason is None


def change_parameters(core: RneaCore, loader: ModelLoader, values: Mapping[str, object]) -> ParameterChange:
    """``values`` (name → new value) applied whole to ``core``, or refused with the reason; a new
    description or gravity is built in turn with ``loader`` (one build at a time) and loaded before
    the answer."""
    try:
        settings = settings_from(values, core.settings)
    except ValueError as error:
        return ParameterChange(str(error))
    if "robot_description" in values and not settings.robot_description:
        return ParameterChange("robot_description cannot be emptied at run time")
    corrections = core.corrections
    if "corrections_file" in values:
        try:
            corrections = load_corrections(settings.corrections_file) if settings.corrections_file else None
        except CorrectionsError as error:
            return ParameterChange(f"{error}{KEPT}")
    if "robot_description" in values or "gravity" in values:
        supersede = "robot_description" in values
        try:
            loader.load_now(partial(core.rebuild, settings, corrections, supersede), supersede)
        except Exception as error:
            return ParameterChange(f"the model cannot be built: {str(error)[:300]}")
        return _accepted(core)
    live = core.live
    if live is not None:
        try:
            settings.check_gains(live.bound.command_names)
        except ValueError as error:
            return ParameterChange(str(error))
        if corrections is not core.corrections:
            try:
                live = live.rebound(live.bound.with_corrections(corrections))
            except CorrectionsError as error:
                return ParameterChange(f"{error}{KEPT}")
    core.take(settings, corrections, live)
    return _accepted(core)


def _accepted(core: RneaCore) -> ParameterChange:
    live = core.live
    return ParameterChange(bound=live.bound if live is not None else None)
