"""rnea_node without ROS: what happens between its subscriptions and its publishers.

The node converts each message to arrays (``messages``) and hands them here; this class
merges them into the live model, decides when to compute, computes (``torques``) and keeps
the figures for /diagnostics. Every method that refuses an input raises
``InvalidMessageError(reason)``; the node counts it and logs it. Threads: joint_states
arrive on one thread, the other inputs on the executor's; the live model and the
settings are replaced whole (one assignment), never changed in place.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import time
from collections.abc import Callable, Sequence

import numpy as np

from rnea_ros.dynamics.corrections import Corrections, CorrectionsError, load_corrections
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.node import diagnostics
from rnea_ros.node.settings import Settings
from rnea_ros.node.state import ConfigurationError, InvalidMessageError, LiveModel
from rnea_ros.node.torques import Outputs, compile_kernels, compute_outputs
from rnea_ros.node.trajectory_feedforward import FeedforwardTrajectory, StandingOn, with_efforts
from rnea_ros.trajectory import Trajectory


def build_live_model(description: str, settings: Settings) -> LiveModel:
    """A model from a description, checked against the settings and proven to compute."""
    model = RobotModel.from_urdf(
        description, floating_base=settings.floating_base, gravity=settings.gravity, strict=settings.strict_inertia
    )
    corrected = model.with_corrections(None, urdf_dynamics=settings.urdf_joint_dynamics)
    live = LiveModel.build(corrected, settings.command_joints, settings.contact_links, description)
    compile_kernels()
    try:
        settings.check_gains(len(live.command_order))
    except ValueError as error:
        raise ConfigurationError(str(error)) from error
    return live


def _affix_hint(received: Sequence[str], model_names: Sequence[str]) -> str | None:
    """When every unknown name is a model joint's name with one prefix or suffix added, or the
    model's names carry one that the received names lack (a namespaced description, a
    tf_prefix), says which."""
    for affix_of, kind in ((_prefix, "prefix"), (_suffix, "suffix")):
        added = {affix_of(r, m) for r in received for m in model_names} - {""}
        if len(added) == 1 and all(any(affix_of(r, m) for m in model_names) for r in received):
            return f"they carry the {kind} '{added.pop()}' that the model's joint names lack"
        lacking = {affix_of(m, r) for r in received for m in model_names} - {""}
        if len(lacking) == 1 and all(any(affix_of(m, r) for m in model_names) for r in received):
            return f"the model's joint names carry the {kind} '{lacking.pop()}' that these lack"
    return None


def _prefix(longer: str, shorter: str) -> str:
    return longer[: -len(shorter)] if len(longer) > len(shorter) and longer.endswith(shorter) else ""


def _suffix(longer: str, shorter: str) -> str:
    return longer[len(shorter) :] if len(longer) > len(shorter) and longer.startswith(shorter) else ""


CONTACT_RESIDUAL_WARN = 0.01  # N and N·m: a base residual the contacts leave above this is reported


class RneaCore:
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
        self._clipped_reported = 0
        self.held_states = 0  # states answered with a stale unstamped desired point held (feedback)
        self._held_reported = 0
        self.empty_velocity_seen = False
        self.waiting_for: list[str] = []
        self.residual_norm: float | None = None
        self._future_limit = -math.inf

    # --- robot model -------------------------------------------------------------------------
    def load(self, live: LiveModel) -> list[str]:
        """Swaps ``live`` in (with the corrections applied); returns what of the corrections it
        lacks (joints, the payload's link), which is ignored."""
        ignored = []
        corrections = self.corrections
        if corrections is not None:
            names = live.model.joint_names
            ignored = sorted(set(corrections.joints) - set(names))
            corrections = dataclasses.replace(
                corrections, joints={k: v for k, v in corrections.joints.items() if k in names}
            )
            if corrections.payload is not None and corrections.payload.link not in live.model.link_names:
                ignored.append(f"payload link '{corrections.payload.link}'")
                corrections = dataclasses.replace(corrections, payload=None)
            try:
                live = live.rebound(live.bound.with_corrections(corrections))
            except CorrectionsError as error:
                ignored.append(str(error))
                live = live.rebound(live.bound.with_corrections(dataclasses.replace(corrections, payload=None)))
        self._swap_in(live)
        return ignored

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

    def _swap_in(self, live: LiveModel) -> None:
        self.live = live
        base = f" on a floating base '{live.model.base_link}'" if live.floating else ""
        payload = ""
        if live.payload is not None:
            payload = f", with the corrections' payload ({live.payload_note})"
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
            self._future_limit = clock() + self.settings.future_stamp_tolerance
            if stamp > self._future_limit:
                raise InvalidMessageError("future_stamp", "header stamp is in the future (clocks not synchronised?)")
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

    def desired(
        self,
        names: Sequence[str],
        qdd: np.ndarray,
        q: np.ndarray | None,
        qd: np.ndarray | None,
        times: np.ndarray | None = None,
    ) -> None:
        if (live := self.live) is not None:
            live.set_desired(names, qdd, q, qd, time.monotonic(), times)

    def trajectory(self, trajectory: Trajectory) -> FeedforwardTrajectory | None:
        """A planner's trajectory with its efforts (None without a model); InvalidMessageError otherwise."""
        live = self.live
        if live is None:
            return None
        try:
            settings = self.settings
            standing = self._standing(live, settings) if live.floating and live.contacts is not None else None
            return with_efforts(live, trajectory, settings.trajectory_resampling, settings.command_source, standing)
        except ValueError as error:
            if isinstance(error, InvalidMessageError):
                raise
            raise InvalidMessageError("compute_error", f"the trajectory's efforts: {error}") from error

    @staticmethod
    def _standing(live: LiveModel, settings: Settings) -> StandingOn | None:
        """A floating base's state now and its contacts, for a trajectory (None: no fresh base state).
        The distribution is the trajectories' own: the joint_states thread warm-starts its own."""
        base = live.fresh_base(time.monotonic(), settings.base_timeout, live.q, live.qd)
        if base is None:
            return None
        points = tuple(half is None for half, _ in settings.contact_shapes())
        return StandingOn(base, live.contact_distribution(settings, "trajectories"), points)

    def wrench(self, link: str, wrench: np.ndarray, stamp: float = 0.0) -> None:
        if (live := self.live) is not None:
            live.set_wrench(link, wrench, time.monotonic(), stamp)

    def odometry(self, q_base: np.ndarray, twist: np.ndarray, child_frame: str, stamp: float = 0.0) -> None:
        if (live := self._floating()) is not None:
            live.set_odometry(q_base, twist, child_frame, time.monotonic(), stamp)

    def imu(self, link: str, R_world_imu: np.ndarray, omega_imu: np.ndarray, stamp: float = 0.0) -> None:
        if (live := self._floating()) is not None:
            live.set_imu(link, R_world_imu, omega_imu, time.monotonic(), stamp)

    def base_acceleration(self, frame: str, classical: np.ndarray) -> None:
        if (live := self._floating()) is not None:
            live.set_base_acceleration(frame, classical, time.monotonic())

    def _floating(self) -> LiveModel | None:
        """The live model when it has a floating base (base inputs are ignored otherwise)."""
        live = self.live
        return live if live is not None and live.floating else None

    # --- what the console says ------------------------------------------------------------------
    def coverage_problem(self) -> str | None:
        """Why joint_states never give a complete state: the missing joints, the unknown names
        received, and the closest model name for each (a typo such as joint_2 for joint2, a prefix)."""
        live = self.live
        if live is None or not self.waiting_for:
            return None
        missing = self.waiting_for[:10]
        if len(self.waiting_for) == live.n and live.unknown_names:
            text = f"joint_states name none of the model's {live.n} joints (e.g. {missing[:3]})"
        else:
            text = f"joint_states never cover the model: no recent value for {missing}"
        if live.unknown_names:
            text += f"; names received that the model does not know: {list(live.unknown_names[:10])}"
            hint = _affix_hint(live.unknown_names, live.model.joint_names)
            if hint:
                text += f" ({hint})"
            else:
                hints = {}
                for name in live.unknown_names:
                    close = difflib.get_close_matches(name, live.model.joint_names, n=1, cutoff=0.6)
                    if close:
                        hints[name] = close[0]
                if hints:
                    pairs = list(hints.items())[:5]
                    text += " (did you mean " + ", ".join(f"'{b}' for '{a}'" for a, b in pairs) + "?)"
        return text

    # --- diagnostics ---------------------------------------------------------------------------
    def report(self, publisher_note: str | None = None) -> diagnostics.Report:
        """Level, message and values for /diagnostics; ``publisher_note`` says why joint_states may
        not arrive (the node asks the graph)."""
        live, settings = self.live, self.settings
        level = diagnostics.OK if live is not None else diagnostics.ERROR
        notes = [self.model_status]
        values = {"model joints": str(live.n if live else 0), "published": str(self.published)}
        values.update(self.inputs.report())
        values.update(self.compute_times.values())
        values.update(self.collector_pauses.values())
        if self.trajectories:
            values["trajectories answered"] = str(self.trajectories)
            answer = {
                k.replace("compute time", "trajectory answer"): v for k, v in self.trajectory_times.values().items()
            }
            values.update(answer)
        if live is not None:
            if live.model.warnings:
                level = diagnostics.WARN
                notes.append(
                    f"{len(live.model.warnings)} model warnings (non-physical inertia, broken mimic, effort "
                    f"limit ignored), e.g. {live.model.warnings[0]}"
                )
                values["model warnings"] = " | ".join(live.model.warnings[:20])
            if publisher_note:
                level = diagnostics.WARN
                notes.append(publisher_note)
            level = max(level, self._input_notes(live, settings, notes, values))
        values["clipped commands"] = str(self.clipped)
        if self.clipped > self._clipped_reported:
            level = max(level, diagnostics.WARN)
            notes.append(
                f"{self.clipped - self._clipped_reported} effort_commands values clipped to the URDF's effort limits"
            )
            self._clipped_reported = self.clipped
        values["states with the desired point held"] = str(self.held_states)
        if self.unreported_held:
            level = max(level, diagnostics.WARN)
            notes.append(self.held_note())
            self._held_reported = self.held_states
        new_rejections = self.rejections.new()
        if new_rejections:
            level = max(level, diagnostics.WARN)
            notes.append("rejected: " + ", ".join(f"{n} {reason}" for reason, n in sorted(new_rejections.items())))
        values.update({f"rejected: {reason}": str(n) for reason, n in sorted(self.rejections.totals().items())})
        return diagnostics.Report(level, "; ".join(notes), values)

    @property
    def unreported_held(self) -> int:
        """States held (see ``held_note``) since the last report."""
        return self.held_states - self._held_reported

    def held_note(self) -> str:
        return (
            f"{self.unreported_held} states with the desired_accelerations point stale (older than "
            "acceleration_timeout): its positions held at rest by the feedback"
        )

    def _input_notes(self, live: LiveModel, settings: Settings, notes: list[str], values: dict[str, str]) -> int:
        level = diagnostics.OK
        now = time.monotonic()
        if self.empty_velocity_seen:
            level = diagnostics.WARN
            notes.append("joint_states without velocity: zero velocity used")
        if self.waiting_for:
            level = diagnostics.WARN
            notes.append(
                self.coverage_problem() or f"no torques: stale or missing joint_states for {self.waiting_for[:10]}"
            )
        if live.desired is not None and not live.desired_fresh(now, settings.acceleration_timeout):
            notes.append("desired_accelerations stale: zero accelerations used")
        for link, (_, received, stamp) in sorted(live.wrenches.items()):
            values[f"wrench '{link}' age [s]"] = f"{now - received:.3f}"
            if not live.fresh(stamp, received, now, settings.wrench_timeout):
                notes.append(f"wrench on '{link}' expired")
        if live.floating:
            level = max(level, self._base_notes(live, settings, now, notes, values))
        return level

    def _base_notes(self, live: LiveModel, settings: Settings, now: float, notes: list[str], values: dict) -> int:
        level = diagnostics.OK
        source = live.base_source(now, settings.base_timeout)
        values["base state source"] = source or "none"
        if source is None:
            level = diagnostics.WARN
            notes.append("no torques: no fresh base_odometry or imu (floating base)")
        elif source == "imu":
            notes.append("base from imu: base linear velocity taken as zero")
        accel = live.base_acceleration
        if accel is None or now - accel[1] > settings.acceleration_timeout:
            values["base acceleration"] = "zero (no fresh desired_base_acceleration)"
        if self.residual_norm is not None:
            values["base wrench residual norm"] = f"{self.residual_norm:.3f}"
            if self.residual_norm > CONTACT_RESIDUAL_WARN and live.contacts is not None:
                level = diagnostics.WARN
                notes.append(
                    f"the contact forces cannot produce this motion: base wrench residual {self.residual_norm:.3g} "
                    "left on base_wrench_residual (tipping, an impossible base acceleration, or too little friction?)"
                )
        if live.contacts is not None:
            values["contact links"] = ", ".join(live.contacts.links)
        return level
