"""What ``RneaCore`` tells /diagnostics and the console: the report's level, message and values,
and why joint_states never give a complete state (with the closest names)."""

from __future__ import annotations

import difflib
import math
import time
from collections.abc import Sequence
from typing import Protocol

from rnea_ros.controller import diagnostics
from rnea_ros.controller.settings import Settings
from rnea_ros.controller.state import LiveModel


class ReportedCore(Protocol):
    """The figures the report reads (``RneaCore`` holds them)."""

    settings: Settings
    live: LiveModel | None
    model_status: str
    inputs: diagnostics.InputStats
    rejections: diagnostics.Rejections
    compute_times: diagnostics.ComputeTimes
    trajectory_times: diagnostics.ComputeTimes
    collector_pauses: diagnostics.CollectorPauses
    trajectories: int
    published: int
    clipped: int
    held_states: int
    empty_velocity_seen: bool
    waiting_for: list[str]
    residual_norm: float | None


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


def _map_hint(received: str, missing: str) -> str:
    """The joint_names parameter, when the driver's names are not the URDF's."""
    return (
        f"; if the driver's names are not the URDF's, map them with the joint_names parameter: "
        f"['{received}:={missing}', ...] (driver name:=URDF name)"
    )


CONTACT_RESIDUAL_WARN = 0.01  # N and N·m: a base residual the contacts leave above this is reported


class CoreReport:
    """What ``RneaCore`` (``core``, which holds the figures read here) tells /diagnostics and the
    console; what was reported already is counted here."""

    def __init__(self, core: ReportedCore) -> None:
        self.core = core
        self._clipped_reported = 0  # clipped commands reported so far
        self._held_reported = 0  # states with the desired point held, reported so far

    # --- what the console says ------------------------------------------------------------------
    def coverage_problem(self) -> str | None:
        """Why joint_states never give a complete state: the missing joints, the unknown names
        received, and the closest model name for each (a typo such as joint_2 for joint2, a prefix)."""
        live = self.core.live
        if live is None or not self.core.waiting_for:
            return None
        missing = self.core.waiting_for[:10]
        if len(self.core.waiting_for) == live.n and live.unknown_names:
            text = f"joint_states name none of the model's {live.n} joints (e.g. {missing[:3]})"
        else:
            text = f"joint_states never cover the model: no recent value for {missing}"
        if live.unknown_names:
            text += f"; names received that the model does not know: {list(live.unknown_names[:10])}"
            hint = _affix_hint(live.unknown_names, live.bound.model.joint_names)
            if hint:
                text += f" ({hint})"
            else:
                hints = {}
                for name in live.unknown_names:
                    close = difflib.get_close_matches(name, live.bound.model.joint_names, n=1, cutoff=0.6)
                    if close:
                        hints[name] = close[0]
                if hints:
                    pairs = list(hints.items())[:5]
                    text += " (did you mean " + ", ".join(f"'{b}' for '{a}'" for a, b in pairs) + "?)"
            text += _map_hint(live.unknown_names[0], missing[0])
        return text

    # --- diagnostics ---------------------------------------------------------------------------
    def report(self, publisher_note: str | None = None) -> diagnostics.Report:
        """Level, message and values for /diagnostics; ``publisher_note`` says why joint_states may
        not arrive (the node asks the graph)."""
        live, settings = self.core.live, self.core.settings
        level = diagnostics.OK if live is not None else diagnostics.ERROR
        notes = [self.core.model_status]
        values = {"model joints": str(live.n if live else 0), "published": str(self.core.published)}
        values.update(self.core.inputs.report())
        values.update(self.core.compute_times.values())
        values.update(self.core.collector_pauses.values())
        if self.core.trajectories:
            values["trajectories answered"] = str(self.core.trajectories)
            answer = {
                k.replace("compute time", "trajectory answer"): v
                for k, v in self.core.trajectory_times.values().items()
            }
            values.update(answer)
        if live is not None:
            if live.bound.model.warnings:
                level = diagnostics.WARN
                notes.append(
                    f"{len(live.bound.model.warnings)} model warnings (non-physical inertia, broken mimic, effort "
                    f"limit ignored), e.g. {live.bound.model.warnings[0]}"
                )
                values["model warnings"] = " | ".join(live.bound.model.warnings[:20])
            if publisher_note:
                level = diagnostics.WARN
                notes.append(publisher_note)
            level = max(level, self._input_notes(live, settings, notes, values))
        values["clipped commands"] = str(self.core.clipped)
        if self.core.clipped > self._clipped_reported:
            level = max(level, diagnostics.WARN)
            notes.append(
                f"{self.core.clipped - self._clipped_reported} effort_commands values clipped to the URDF's "
                "effort limits"
            )
            self._clipped_reported = self.core.clipped
        values["states with the desired point held"] = str(self.core.held_states)
        if self.unreported_held:
            level = max(level, diagnostics.WARN)
            notes.append(self.held_note())
            self._held_reported = self.core.held_states
        new_rejections = self.core.rejections.new()
        if new_rejections:
            level = max(level, diagnostics.WARN)
            notes.append("rejected: " + ", ".join(f"{n} {reason}" for reason, n in sorted(new_rejections.items())))
        values.update({f"rejected: {reason}": str(n) for reason, n in sorted(self.core.rejections.totals().items())})
        return diagnostics.Report(level, "; ".join(notes), values)

    @property
    def unreported_held(self) -> int:
        """States held (see ``held_note``) since the last report."""
        return self.core.held_states - self._held_reported

    def held_note(self) -> str:
        return (
            f"{self.unreported_held} states with the desired_accelerations point stale (older than "
            "acceleration_timeout): its positions held at rest by the feedback"
        )

    def _input_notes(self, live: LiveModel, settings: Settings, notes: list[str], values: dict[str, str]) -> int:
        level = diagnostics.OK
        now = time.monotonic()
        if self.core.empty_velocity_seen:
            level = diagnostics.WARN
            notes.append("joint_states without velocity: zero velocity used")
        if self.core.waiting_for:
            level = diagnostics.WARN
            notes.append(
                self.coverage_problem() or f"no torques: stale or missing joint_states for {self.core.waiting_for[:10]}"
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
        if self.core.residual_norm is not None:
            values["base wrench residual norm"] = f"{self.core.residual_norm:.3f}"
            if self.core.residual_norm > CONTACT_RESIDUAL_WARN and live.bound.contacts is not None:
                level = diagnostics.WARN
                notes.append(
                    "the contact forces cannot produce this motion: base wrench residual "
                    f"{self.core.residual_norm:.3g} left on base_wrench_residual (tipping, an impossible base "
                    "acceleration, or too little friction?)"
                )
        if live.bound.contacts is not None:
            values["contact links"] = ", ".join(live.bound.contacts.links)
            values.update(schedule_values(live, settings))
        return level


def schedule_values(live: LiveModel, settings: Settings) -> dict[str, str]:
    """The contact schedule in force, the feet in contact and the next event, at the newest joint_states stamp."""
    schedule = live.planned or live.settings_cache.contact_schedule(settings)
    if schedule is None:
        return {
            "contact schedule": "none: every contact link in stance",
            "feet in contact": ", ".join(live.bound.contact_links),
        }
    stamp = live.newest_stamp if math.isfinite(live.newest_stamp) else 0.0
    event = schedule.next_event(stamp)
    upcoming = "none" if event is None else f"{event.time:.3f} s: {', '.join(sorted(event.stance))}"
    return {
        "contact schedule": schedule.describe(),
        "feet in contact": ", ".join(schedule.stance_links(stamp)) or "none",
        "next contact event": upcoming,
    }
