"""rnea_node without ROS: what happens between its subscriptions and its publishers.

The node converts each message to arrays (``messages``) and hands them here; this class
merges them into the live model, decides when to compute, computes (``torques``) and keeps
the figures for /diagnostics. Every method that refuses an input raises
``InvalidMessageError(reason)``; the node counts it and logs it. Threads: joint_states
arrive on one thread, the other inputs on the executor's; the live model and the
settings are replaced whole (one assignment), never changed in place.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from rnea_ros.controller import diagnostics
from rnea_ros.controller.laws import LAWS
from rnea_ros.controller.report import CoreReport
from rnea_ros.controller.settings import Settings
from rnea_ros.controller.state import ConfigurationError, InvalidMessageError, LiveModel
from rnea_ros.controller.torques import Outputs, compile_kernels, compute_outputs
from rnea_ros.controller.trajectory_feedforward import FeedforwardTrajectory, StandingOn, with_efforts
from rnea_ros.dynamics.corrections import Corrections, CorrectionsError, load_corrections, with_corrections
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.motion.trajectory import Trajectory

if TYPE_CHECKING:
    from rnea_ros.controller.inputs import Input


NO_MOVABLE_JOINT = (
    "the robot has no movable joint (every joint is fixed): there is no effort to compute; "
    "give a description with revolute, continuous or prismatic joints"
)


def build_live_model(description: str, settings: Settings) -> LiveModel:
    """A model from a description, checked against the settings and proven to compute."""
    model = RobotModel.from_urdf(
        description, floating_base=settings.floating_base, gravity=settings.gravity, strict=settings.strict_inertia
    )
    if not model.joint_names:
        raise ValueError(NO_MOVABLE_JOINT)
    corrected = with_corrections(model, None, urdf_dynamics=settings.urdf_joint_dynamics)
    renamed = settings.joint_name_map()
    # the distribution the settings use proven now; the others after the first answer (run_distributions)
    used = (settings.contact_distribution,)
    live = LiveModel.build(corrected, settings.command_joints, settings.contact_links, description, renamed, used)
    compile_kernels()
    try:
        settings.check_gains(live.bound.command_names)
        live.settings_cache.command_law(settings)  # a law that cannot drive the model (computed torque, floating)
    except ValueError as error:
        raise ConfigurationError(str(error)) from error
    return live


WALL_CLOCK_YEAR_2001 = 1e9  # s since 1970: a clock that reads less is a simulation's (use_sim_time)


def future_stamp_detail(stamp: float, now: float) -> str:
    """Why a joint_states stamp is ahead of the node's clock, in the words of the likely mistake."""
    if now == 0.0:
        return (
            "header stamp is in the future: the node's clock reads 0, as with use_sim_time true and no /clock "
            "published yet (publish /clock: rnea_sim with publish_clock true, or ros2 bag play --clock; or set "
            "use_sim_time false)"
        )
    if now < WALL_CLOCK_YEAR_2001 <= stamp:
        return (
            f"header stamp is in the future: the node's clock reads {now:.1f} s, a simulation's /clock "
            "(use_sim_time true), while joint_states are stamped with wall-clock time (set use_sim_time false, "
            "or stamp them from /clock)"
        )
    return f"header stamp is {stamp - now:.3g} s in the future (clocks not synchronised?)"


class RneaCore:
    """Inputs in, outputs out (see the module docstring); what it reports is its ``reporter``'s."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.live: LiveModel | None = None
        self.model_status = "waiting for robot_description"
        self.inputs = diagnostics.InputStats()
        self.rejections = diagnostics.Rejections()
        self.compute_times = diagnostics.ComputeTimes()
        self.trajectory_times = diagnostics.ComputeTimes()  # joint_trajectory arrival → its answer
        self.collector_pauses = diagnostics.CollectorPauses()  # started by the node: gc is process-wide
        self.trajectories = 0  # answered
        self.published = 0
        self.corrections: Corrections | None = None
        self.clipped = 0  # command values clipped to the URDF's effort limits
        self.held_states = 0  # states answered with a stale unstamped desired point held (feedback)
        self.empty_velocity_seen = False
        self.waiting_for: list[str] = []
        self.residual_norm: float | None = None
        self._future_limit = -math.inf
        self.reporter = CoreReport(self)  # /diagnostics and the console

    # --- robot model -------------------------------------------------------------------------
    def load(self, live: LiveModel) -> list[str]:
        """Swaps ``live`` in (with the corrections applied); returns why the corrections were
        refused, if they were: a file that does not fit the model (a joint or the payload's link it
        lacks) is refused whole, as when it is loaded after the model, and the model runs without it."""
        refused = []
        if self.corrections is not None:
            try:
                live = live.rebound(live.bound.with_corrections(self.corrections))
            except CorrectionsError as error:
                refused.append(str(error))
                self.corrections = None
        self._swap_in(live)
        return refused

    def set_corrections(self, path: str) -> None:
        """Loads a corrections file (empty path: none) and applies it to the live model; a file
        that cannot be used whole raises CorrectionsError and changes nothing."""
        self.apply_corrections(load_corrections(path) if path else None)

    def apply_corrections(self, corrections: Corrections | None) -> None:
        """``corrections`` on the live model; CorrectionsError (nothing changed) when they do not fit it."""
        live = self.live
        if live is not None:
            self._swap_in(live.rebound(live.bound.with_corrections(corrections)))
        self.corrections = corrections

    def take(self, settings: Settings, corrections: Corrections | None, live: LiveModel | None) -> None:
        """A live parameter change's outcome, checked whole (``live_parameters``): the corrections, the model
        with them (None: no model yet) and the settings, the settings last."""
        self.corrections = corrections
        if live is not None and live is not self.live:
            self._swap_in(live)
        self.settings = settings

    def rebuild(self, settings: Settings, corrections: Corrections | None, supersede: bool) -> LiveModel | None:
        """A new description or gravity, on the loader's turn (``ModelLoader.load_now``): the model built with
        ``settings`` from the new description (``supersede``), else from the newest one loaded; then the
        settings and corrections are taken in, before the loader loads the model (``load`` applies the
        corrections) and before its next build, which reads the settings."""
        live = self.live
        description = settings.robot_description if supersede else (live.bound.description if live else "")
        built = build_live_model(description, settings) if description else None
        self.settings, self.corrections = settings, corrections
        return built

    def _swap_in(self, live: LiveModel) -> None:
        self.live = live
        base = f" on a floating base '{live.bound.model.base_link}'" if live.floating else ""
        payload = ""
        if live.bound.corrected.payload is not None:
            payload = f", with the corrections' payload ({live.bound.payload_note})"
        self.model_status = f"model with {live.n} joints{base}{payload}"

    def refused(self, reason: str) -> None:
        """A description was refused: the status says so while there is no model."""
        if self.live is None:
            self.model_status = f"no model: robot_description refused: {reason}"

    # --- inputs --------------------------------------------------------------------------------
    def joint_states(
        self,
        names: Sequence[str],
        position: np.ndarray,
        velocity: np.ndarray,
        velocity_given: bool,
        stamp: float,
        clock: Callable[[], float],
    ) -> Outputs | None:
        """Merges a joint_states message; the outputs to publish once every joint is fresh.

        ``clock`` gives the node's time in seconds (read only when a stamp passes the last limit)."""
        live = self.live
        if live is None:
            return None
        if stamp > self._future_limit:
            now = clock()
            self._future_limit = now + self.settings.future_stamp_tolerance
            if stamp > self._future_limit:
                raise InvalidMessageError("future_stamp", future_stamp_detail(stamp, now))
        if not velocity_given:
            self.empty_velocity_seen = True
        if not live.merge_joint_states(names, position, velocity, stamp, self.settings.state_timeout):
            self.waiting_for = live.stale_joints(self.settings.state_timeout)
            return None
        self.waiting_for = []
        return self._compute(live)

    def _compute(self, live: LiveModel) -> Outputs | None:
        settings = self.settings  # one object for the whole computation (a live change swaps it)
        inputs = live.inputs_now(time.monotonic(), settings)
        start = time.perf_counter()
        try:
            outputs = compute_outputs(live, inputs, settings)
        except (ValueError, np.linalg.LinAlgError) as error:  # also outputs that overflow (finite inputs)
            raise InvalidMessageError("compute_error", f"inverse dynamics refused the inputs: {error}") from error
        if outputs is None:
            return None  # diagnostics say that no base state is fresh
        self.compute_times.add(time.perf_counter() - start)
        self.clipped += outputs.clipped
        self.held_states += inputs.held
        if outputs.base_residual is not None:
            self.residual_norm = float(np.linalg.norm(outputs.base_residual))
        self.published += 1
        return outputs

    def trajectory(self, trajectory: Trajectory) -> FeedforwardTrajectory | None:
        """A planner's trajectory with its efforts (None without a model); InvalidMessageError otherwise."""
        live = self.live
        if live is None:
            return None
        try:
            settings = self.settings
            standing = self._standing(live, settings) if live.floating and live.bound.contacts is not None else None
            efforts = LAWS[settings.command_source].trajectory_efforts  # the law itself is the joint_states thread's
            return with_efforts(live, trajectory, settings.trajectory_resampling, efforts, standing)
        except ValueError as error:
            if isinstance(error, InvalidMessageError):
                raise
            raise InvalidMessageError("compute_error", f"the trajectory's efforts: {error}") from error

    def measured_state(self, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray] | None:
        """The newest joint_states positions and velocities of ``names`` (a driver's names too); None
        without a model, or when one of them is unknown or was never received."""
        live = self.live
        if live is None:
            return None
        match = live.bound.matcher.match(names)
        if match.unknown or len(match.model_rows) != len(names) or np.isneginf(live.stamp[match.model_rows]).any():
            return None
        q, qd = live.q, live.qd  # one pair: the joint_states thread replaces both whole
        positions, velocities = np.empty(len(names)), np.empty(len(names))
        positions[match.message_rows], velocities[match.message_rows] = q[match.model_rows], qd[match.model_rows]
        return positions, velocities

    @staticmethod
    def _standing(live: LiveModel, settings: Settings) -> StandingOn | None:
        """A floating base's state now and its contacts, for a trajectory (None: no fresh base state).
        The distribution is the trajectories' own: the joint_states thread warm-starts its own."""
        base = live.fresh_base(time.monotonic(), settings.base_timeout, live.q, live.qd)
        if base is None:
            return None
        points = tuple(half is None for half, _ in settings.contact_shapes())
        return StandingOn(base, live.settings_cache.contact_distribution(settings, "trajectories"), points)

    def receive(self, row: Input, reading: object) -> None:
        """An input's reading (``inputs.INPUTS``) handed to its setter on the live model; ignored
        without a model, and a floating base's inputs without a floating base."""
        live = self.live
        if live is not None and (live.floating or not row.floating_only):
            row.setter(live, reading, time.monotonic())
