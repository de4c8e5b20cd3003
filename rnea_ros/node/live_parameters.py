"""rnea_node's answer to a live parameter change: applied whole, or refused with the reason."""

from __future__ import annotations

from rcl_interfaces.msg import SetParametersResult

from rnea_ros.dynamics.corrections import Corrections, CorrectionsError, load_corrections
from rnea_ros.node.core import RneaCore, build_live_model
from rnea_ros.node.loader import ModelLoader
from rnea_ros.node.settings import Settings, settings_from
from rnea_ros.node.state import LiveModel
from rnea_ros.plumbing import ros_parameters


class LiveParameters:
    """The parameter half of ``RneaNode`` (its ``core`` and ``loader``)."""

    core: RneaCore
    loader: ModelLoader

    def _on_set_parameters(self, changed: list) -> SetParametersResult:
        """A live change is applied whole or refused with the reason; never accepted and ignored."""
        values = ros_parameters.changes(changed)
        try:
            settings = settings_from(values, self.core.settings)
        except ValueError as error:
            return SetParametersResult(successful=False, reason=str(error))
        if "robot_description" in values and not settings.robot_description:
            return SetParametersResult(successful=False, reason="robot_description cannot be emptied at run time")
        # everything checked before anything is applied: a set is applied whole or not at all
        new_corrections = None
        if "corrections_file" in values:
            try:
                new_corrections = (load_corrections(settings.corrections_file) if settings.corrections_file else None,)
            except CorrectionsError as error:
                return SetParametersResult(successful=False, reason=f"{error} (previous corrections kept)")
        if "robot_description" in values or "gravity" in values:
            return self._rebuild(settings, supersede="robot_description" in values, corrections=new_corrections)
        live = self.core.live
        if live is not None:
            try:
                settings.check_gains(live.command_names)
            except ValueError as error:
                return SetParametersResult(successful=False, reason=str(error))
        if new_corrections is not None:
            try:
                self.core.apply_corrections(new_corrections[0])
            except CorrectionsError as error:
                return SetParametersResult(successful=False, reason=f"{error} (previous corrections kept)")
        self.core.settings = settings
        return SetParametersResult(successful=True)

    def _rebuild(
        self, settings: Settings, supersede: bool, corrections: tuple[Corrections | None] | None = None
    ) -> SetParametersResult:
        """A new description or gravity, built in turn with the loader (one build at a time) and
        loaded before the answer, with ``(new corrections,)`` when the same set changes them. A new
        gravity rebuilds the newest model loaded; descriptions still waiting are then built with it."""

        def build() -> LiveModel | None:
            live = self.core.live
            description = settings.robot_description if supersede else (live.description if live else "")
            built = build_live_model(description, settings) if description else None
            self.core.settings = settings  # before the loader's next build, which reads it
            if corrections is not None:
                self.core.corrections = corrections[0]  # applied as the built model is loaded
            return built

        try:
            self.loader.load_now(build, supersede)
        except Exception as error:
            return SetParametersResult(successful=False, reason=f"the model cannot be built: {str(error)[:300]}")
        return SetParametersResult(successful=True)
