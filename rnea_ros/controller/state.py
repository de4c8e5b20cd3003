"""What the node knows at one instant, for one robot model: plain Python on arrays, no rclpy.

``BoundModel`` is what is fixed for one robot model (immutable: the model with its corrections,
the name lookup, the command order and limits, the contact links); ``LiveModel`` is one
``BoundModel`` with the latest inputs merged per joint and which of them are fresh. The node swaps
the LiveModel whole when a description or the corrections change, so that no output is ever
computed from a mix of two models. Every check that rejects an input raises ``InvalidMessageError(reason)``; the
node counts the reason in its diagnostics.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from rnea_ros.controller.law import CommandLaw
from rnea_ros.controller.laws import LAWS
from rnea_ros.controller.settings import ContactQP, Settings
from rnea_ros.dynamics import algorithms
from rnea_ros.dynamics.contact_distribution import KINDS, ContactDistribution, contact_distribution
from rnea_ros.dynamics.contact_forces import Contact
from rnea_ros.dynamics.contact_schedule import (
    AlwaysInStance,
    ContactSchedule,
    EventSchedule,
    ScheduleError,
    stance_weights,
)
from rnea_ros.dynamics.contacts import ContactLinks
from rnea_ros.dynamics.corrections import CorrectedModel, Corrections, with_corrections
from rnea_ros.dynamics.floating_base import BASE_DOFS, BaseState, ImuReading, base_state_from_imu
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.dynamics.scheduled_contacts import ScheduledContacts

MAX_CACHED_NAME_LISTS = 64
# Only name lists a publisher of this robot could send are cached, so that a flood of huge
# distinct lists cannot hold memory (63 lists of 100,008 long names held 1 GiB).
MAX_CACHED_NAME_CHARACTERS = 64 * 1024


class InvalidMessageError(ValueError):
    """An input that cannot be used; ``reason`` is the diagnostics key it is counted under."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


class ConfigurationError(ValueError):
    """``command_joints`` or ``contact_links`` name a joint or link the robot model lacks."""


MAX_REPORTED_NAMES = 20


class NameMatch(NamedTuple):
    message_rows: np.ndarray  # rows of the message whose names the model knows ...
    model_rows: np.ndarray  # ... and the model rows they go to
    full: np.ndarray | None  # when the message names every model joint: its row for each model joint
    unknown: tuple[str, ...] = ()  # names the model does not know (the first few, for the log)


class NameMatcher:
    """Maps a message's joint names to model rows; the mapping of each distinct name list is cached.

    Publishers send the same name list every time, so the hot path does one dictionary
    lookup on the tuple of names.
    """

    def __init__(self, index: Mapping[str, int], renamed: Mapping[str, str] | None = None) -> None:
        self.index = dict(index)
        self.renamed = dict(renamed or {})  # joint_names: driver name -> model name
        self._cache: dict[tuple[str, ...], NameMatch] = {}

    def model_name(self, name: str) -> str:
        """The model's name of a joint named ``name`` (a driver's name in joint_names, or the model's own)."""
        return self.renamed.get(name, name)

    def match(self, names: Sequence[str]) -> NameMatch:
        key = tuple(names)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        model_names = tuple(map(self.model_name, key)) if self.renamed else key
        if len(set(model_names)) != len(model_names):
            mapped = " (after joint_names' mapping)" if model_names != key else ""
            raise InvalidMessageError("duplicate_names", f"message has duplicate joint names{mapped}")
        pairs = [(k, self.index[name]) for k, name in enumerate(model_names) if name in self.index]
        message_rows = np.array([k for k, _ in pairs], dtype=np.intp)
        model_rows = np.array([j for _, j in pairs], dtype=np.intp)
        full = None
        if len(pairs) == len(self.index):
            full = np.empty(len(pairs), dtype=np.intp)
            full[model_rows] = message_rows
        unknown = tuple(name[:100] for name, known in zip(key, model_names, strict=True) if known not in self.index)
        unknown = unknown[:MAX_REPORTED_NAMES]
        match = NameMatch(message_rows, model_rows, full, unknown)
        if len(key) > 4 * len(self.index) + 16 or sum(map(len, key)) > MAX_CACHED_NAME_CHARACTERS:
            return match  # matched, not kept
        if len(self._cache) >= MAX_CACHED_NAME_LISTS:  # hostile publishers must not grow memory
            self._cache.clear()
        self._cache[key] = match
        return match


# joint_states stamps and point times may differ by float rounding: well below any control period
POINT_TIME_TOLERANCE = 1e-4  # s


# What each input's reader (``inputs.INPUTS``) makes of a message, in the message's own terms; its
# setter below checks it against the model and merges it.
class DesiredPoints(NamedTuple):
    """desired_accelerations in the message's joint order: 1-D for one point meaning "now" (``times``
    None), 2-D with one row per point at ``times`` [s]; q and qd None unless every point has both."""

    names: Sequence[str]
    qdd: np.ndarray
    q: np.ndarray | None = None
    qd: np.ndarray | None = None
    times: np.ndarray | None = None


class WrenchReading(NamedTuple):
    link: str  # header.frame_id
    wrench: np.ndarray  # [f, m] applied on the robot, in and about the link's frame
    stamp: float = 0.0


class OdometryReading(NamedTuple):
    q_base: np.ndarray  # [x, y, z, qx, qy, qz, qw] of the root link in the world
    twist: np.ndarray  # [v, ω] in child_frame
    child_frame: str
    stamp: float = 0.0


class ImuMessage(NamedTuple):
    link: str  # header.frame_id
    R_world_imu: np.ndarray
    omega_imu: np.ndarray  # in the IMU frame
    stamp: float = 0.0


class BaseAccelerationReading(NamedTuple):
    frame: str
    classical: np.ndarray  # [a, α] of the root link, in its frame


class ContactScheduleReading(NamedTuple):
    """contact_schedule: the links named, the header stamp [s] (0: now), each event's time from it [s]
    and stance states (events × links, True: in stance from then on)."""

    names: list[str]
    stamp: float
    times: np.ndarray
    stance: np.ndarray


@dataclass(frozen=True)
class Desired:
    """The latest desired_accelerations, in model order: one row per point (q, qd: None without a
    state; NaN: not named); ``times`` [s] of the points, None for one point meaning "now"."""

    qdd: np.ndarray
    q: np.ndarray | None
    qd: np.ndarray | None
    received: float  # time.monotonic()
    times: np.ndarray | None = None

    def row_at(self, stamp: float) -> int:
        """The point in force at a joint_states stamp: the last one whose time has come (the first
        before the trajectory starts, the last after it ends)."""
        if self.times is None:
            return 0
        k = int(np.searchsorted(self.times, stamp + POINT_TIME_TOLERANCE, side="right")) - 1
        return min(max(k, 0), len(self.times) - 1)


@dataclass(frozen=True, kw_only=True)
class Inputs:
    """What one computation uses: the joints' q, q̇, q̈, the fresh wrenches and, on a floating
    base, the base state and acceleration (None: no fresh base state, nothing to compute)."""

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    wrenches: dict[str, np.ndarray] | None
    base: BaseState | None = None
    base_acceleration: np.ndarray | None = None  # classical [a, α] in the base frame; None: zero
    # For the feedback of effort_commands: the measured joint state, and the fresh desired one
    # (None without one; NaN for joints the desired point does not name).
    q_measured: np.ndarray | None = None
    qd_measured: np.ndarray | None = None
    q_desired: np.ndarray | None = None
    qd_desired: np.ndarray | None = None
    held: bool = False  # the desired point is stale: its positions held at rest (with feedback)
    # What the settings make of the model, looked up once here so that the computation asks nothing back:
    gains: tuple[np.ndarray, np.ndarray] | None = None  # kp, kd in model order (None: no feedback)
    distribution: ContactDistribution | None = None  # onto the contact links (None: no contacts)
    reference_lead: float = 0.0  # s: the references were sampled this far after the joint_states stamp


@dataclass(frozen=True, eq=False)
class BoundModel:
    """What is fixed for one robot model with one set of corrections; never changed: a new
    description, gravity or corrections file makes a new one (``build``, ``with_corrections``)."""

    corrected: CorrectedModel  # the description's model, the payload merged in, the joint terms
    description: str  # the text the model was built from (rebuilt on a gravity change)
    command_joints: tuple[str, ...]
    contact_links: tuple[str, ...]
    matcher: NameMatcher
    command_order: np.ndarray  # model row of each command joint
    command_limits: np.ndarray  # URDF <limit effort> in command order
    contacts: ContactLinks | None
    names: tuple[str, ...]  # each joint's name in the outputs: the driver's where joint_names maps it

    @classmethod
    def build(
        cls,
        corrected: CorrectedModel | RobotModel,
        command_joints: Sequence[str] = (),
        contact_links: Sequence[str] = (),
        description: str = "",
        renamed: Mapping[str, str] | None = None,
        proven_kinds: Sequence[str] = KINDS,
    ) -> BoundModel:
        """ConfigurationError when the joints or links are not the model's; ValueError when the
        model cannot give finite torques. ``renamed``: joint_names, {driver name: model name};
        ``proven_kinds``: the contact distributions run (and their kernels loaded) before it returns."""
        if isinstance(corrected, RobotModel):
            corrected = with_corrections(corrected, None)  # rigid bodies only: no joint terms
        model = corrected.model
        index = {name: k for k, name in enumerate(model.joint_names)}
        matcher = NameMatcher(index, _checked_renames(renamed or {}, model.joint_names))
        missing = [name for name in command_joints if matcher.model_name(name) not in index]
        if missing:
            raise ConfigurationError(f"command_joints names joints the robot model lacks: {missing}")
        commanded = [matcher.model_name(name) for name in command_joints] or model.joint_names
        command_order = np.array([index[name] for name in commanded], dtype=np.intp)
        driver_names = {model_name: driver for driver, model_name in matcher.renamed.items()}
        try:
            contacts = ContactLinks(model, list(contact_links)) if model.floating_base and contact_links else None
        except ValueError as error:
            raise ConfigurationError(str(error)) from error
        bound = cls(
            corrected,
            description,
            tuple(command_joints),
            tuple(contact_links),
            matcher,
            command_order,
            # "no limit" as the largest float, so that an infinite command is caught by the same
            # comparison as one over its limit
            np.minimum(model.effort_limits[command_order], np.finfo(np.float64).max),
            contacts,
            tuple(driver_names.get(name, name) for name in model.joint_names),
        )
        bound._prove_it_computes(proven_kinds)
        return bound

    def with_corrections(self, corrections: Corrections | None) -> BoundModel:
        """The same description with other corrections (CorrectionsError when they do not fit it)."""
        corrected = self.corrected.with_corrections(corrections)
        if corrected.model is self.corrected.model:
            return dataclasses.replace(self, corrected=corrected)
        return BoundModel.build(
            corrected, self.command_joints, self.contact_links, self.description, self.matcher.renamed
        )

    @property
    def model(self) -> RobotModel:
        return self.corrected.model

    @property
    def command_names(self) -> list[str]:
        """The command joints as the outputs name them (joint_names)."""
        return [self.names[j] for j in self.command_order]

    @property
    def payload_note(self) -> str:
        payload = self.corrected.payload
        if payload is None:
            return "none"
        return f"{payload.inertial.mass:.3f} kg on '{payload.link}'"

    def _prove_it_computes(self, kinds: Sequence[str]) -> None:
        """A model that cannot give finite torques at its neutral state must never go live
        (ValueError); with contacts, the distributions ``kinds`` run once (``run_distributions``)."""
        q0 = self.model.neutral_configuration()
        zero = np.zeros(self.model.nv)
        algorithms.inverse_dynamics(self.model, self.model.create_data(), q0, zero, zero)  # on the loader's thread
        self.run_distributions(kinds)

    def run_distributions(self, kinds: Sequence[str] = KINDS) -> None:
        """With contacts, each distribution of ``kinds`` run once at the neutral state, which compiles (or
        loads) its kernel (0.1 s each from the cache, Go2) and caches the contact Jacobian's unit wrenches;
        ValueError when one cannot compute."""
        if self.contacts is None:
            return
        q0, zero = self.model.neutral_configuration(), np.zeros(self.model.nv)
        for kind in kinds:
            distribute = contact_distribution(kind, self.model, [Contact(link) for link in self.contacts.links])
            distribute(q0[:7], zero[:6], zero[:6], q0[7:], zero[6:], zero[6:])


def _checked_renames(renamed: Mapping[str, str], joint_names: Sequence[str]) -> Mapping[str, str]:
    """joint_names' map, once every name it maps onto is a joint of the model (ConfigurationError otherwise;
    a map written the wrong way round, URDF names on the left, is said to be reversed)."""
    wrong = {driver: name for driver, name in renamed.items() if name not in joint_names}
    if wrong and all(driver in joint_names for driver in wrong):
        fixed = [f"{name}:={driver}" for driver, name in list(renamed.items())[:4]]
        raise ConfigurationError(
            f"joint_names is written the wrong way round: {[f'{d}:={n}' for d, n in list(wrong.items())[:4]]} "
            "put the URDF's joint names on the left; each entry is 'driver_name:=urdf_name', "
            f"so write {fixed}{' ...' if len(renamed) > 4 else ''}"
        )
    for driver, name in renamed.items():
        if name not in joint_names:
            close = difflib.get_close_matches(name, joint_names, n=1, cutoff=0.6)
            hint = f" (did you mean '{close[0]}'?)" if close else f" (its joints: {list(joint_names)[:10]})"
            raise ConfigurationError(f"joint_names maps '{driver}' onto '{name}', which is no joint of the model{hint}")
    return renamed


class SettingsCache:
    """What the settings make of one ``BoundModel`` (gains in model order, contact distributions),
    built once per settings object: the settings are replaced whole, so identity is the usual test."""

    def __init__(self, bound: BoundModel) -> None:
        self.bound = bound
        self.n = bound.model.nv - (BASE_DOFS if bound.model.floating_base else 0)  # the joints
        self._gains: tuple[tuple, tuple[np.ndarray, np.ndarray]] | None = None  # ((kp, kd), arrays)
        self._law: tuple[Settings, tuple, CommandLaw] | None = None  # (settings, its law's values, the law)
        # by user: (the settings, what they ask for, the distribution), replaced whole
        self._contact_distributions: dict[str, tuple[Settings, ContactQP, ContactDistribution]] = {}
        self._scheduled: dict[str, tuple[Settings, ContactQP, ScheduledContacts]] = {}
        self._schedule: tuple[Settings, ContactSchedule | None] | None = None

    def contact_distribution(self, settings: Settings, user: str = "joint_states") -> ContactDistribution:
        """The contact distribution these settings ask for (built once per set of values), one per
        ``user``: each thread has its own (its work buffers and its warm start)."""
        cached = self._contact_distributions.get(user)
        if cached is not None and cached[0] is settings:  # the usual case: settings are replaced whole
            return cached[2]
        wanted = settings.contact_qp(self.bound.contacts.links)  # the live model's contact_links are the settings'
        distribution = cached[2] if cached is not None and cached[1] == wanted else None
        if distribution is None:
            distribution = contact_distribution(wanted.kind, self.bound.model, list(wanted.contacts), wanted.options)
        self._contact_distributions = {**self._contact_distributions, user: (settings, wanted, distribution)}
        return distribution

    def contact_schedule(self, settings: Settings) -> ContactSchedule | None:
        """The gait these settings give (None: every contact link always in stance), built once per settings."""
        cached = self._schedule
        if cached is None or cached[0] is not settings:
            cached = self._schedule = (settings, settings.contact_schedule())
        return cached[1]

    def schedule_in_force(self, planned: ContactSchedule | None) -> ContactSchedule:
        """A planner's schedule, else the gait of the last settings used, else every link in stance (any thread)."""
        if planned is not None:
            return planned
        cached = self._schedule
        gait = cached[1] if cached is not None else None
        return gait if gait is not None else AlwaysInStance(self.bound.contacts.links)

    def scheduled_distribution(
        self, settings: Settings, stamp: float, planned: ContactSchedule | None = None, user: str = "joint_states"
    ) -> ContactDistribution:
        """The contact distribution at a joint_states ``stamp``: onto the links the schedule (``planned``, a
        planner's, else the gait's) has in stance then, with their lift-off and touch-down ramps
        (``ScheduledContacts``); with neither, onto every contact link (``contact_distribution``)."""
        gait = self.contact_schedule(settings)
        schedule = planned if planned is not None else gait
        if schedule is None:
            return self.contact_distribution(settings, user)
        cached = self._scheduled.get(user)
        if cached is None or cached[0] is not settings:
            wanted = settings.contact_qp(self.bound.contacts.links)
            scheduled = cached[2] if cached is not None and cached[1] == wanted else None
            if scheduled is None:
                scheduled = ScheduledContacts(wanted.kind, self.bound.model, wanted.contacts, wanted.options)
            cached = (settings, wanted, scheduled)
            self._scheduled = {**self._scheduled, user: cached}
        weights = stance_weights(schedule, stamp, settings.lift_off_transition, settings.touch_down_transition)
        return cached[2].at(weights)

    def command_law(self, settings: Settings) -> CommandLaw:
        """The command law the settings name (``command_source``), built again only when it or its own
        parameters change: a law's state (an integral) lasts across other changes. Used on the
        joint_states thread only; ValueError when the law cannot drive this model."""
        cached = self._law
        if cached is not None and cached[0] is settings:  # the usual case: settings are replaced whole
            return cached[2]
        law_class = LAWS[settings.command_source]
        values = (law_class, law_class.parameters(settings))
        law = cached[2] if cached is not None and cached[1] == values else None
        if law is None:
            law = law_class(self.bound.corrected, self.bound.command_order, settings)
        self._law = (settings, values, law)
        return law

    def gains(self, settings: Settings) -> tuple[np.ndarray, np.ndarray]:
        """kp and kd in model order (given in command_joints order, or one value for all);
        joints outside command_joints get no feedback. Built once per pair of settings."""
        key = (settings.kp, settings.kd, settings.joint_gains)
        cached = self._gains
        if cached is not None and cached[0] == key:
            return cached[1]
        arrays = []
        for given in key[:2]:
            gains = np.zeros(self.n)
            if given:
                gains[self.bound.command_order] = given if len(given) > 1 else given[0]
            arrays.append(gains)
        for joint, kind, value in settings.joint_gains:  # command joints (Settings.check_gains)
            matcher = self.bound.matcher
            arrays["pd".index(kind)][matcher.index[matcher.model_name(joint)]] = value
        self._gains = (key, (arrays[0], arrays[1]))  # replaced whole: the joint_states thread reads it
        return arrays[0], arrays[1]


class LiveModel:
    """One ``BoundModel`` and the latest inputs merged into it (see the module docstring)."""

    def __init__(self, bound: BoundModel) -> None:
        self.bound = bound
        model = bound.model
        # q, qd, ... below are the joints' part; a floating base adds its own state in front.
        self.floating = model.floating_base
        self.n = n = model.nv - (BASE_DOFS if self.floating else 0)
        self.links = frozenset(model.link_names)
        self.q, self.qd = np.zeros(n), np.zeros(n)
        self.zeros = np.zeros(n)
        self.stamp = np.full(n, -math.inf)  # joint_states header stamp of each joint's value
        self.newest_stamp = -math.inf
        self.unknown_names: tuple[str, ...] = ()  # the latest joint_states names the model does not know
        # Written by the executor thread, read by the joint_states thread: each is replaced
        # whole by one assignment (atomic), never changed in place.
        self.desired: Desired | None = None
        self.wrenches: dict[str, tuple[np.ndarray, float, float]] = {}  # link -> (wrench, received, stamp)
        self.odometry: BaseState | None = None
        self.imu: ImuReading | None = None
        self.base_acceleration: tuple[np.ndarray, float] | None = None  # (classical [a, α], received)
        self.planned: ContactSchedule | None = None  # a planner's contact_schedule (None: the gait parameters)
        self.settings_cache = SettingsCache(bound)  # what the settings make of this model
        # What the joint_states thread's computation writes (``torques``): its own, as each thread has one
        self.data = model.create_data()

    @classmethod
    def build(cls, model: RobotModel | CorrectedModel, *args: Sequence[str] | str, **kwargs) -> LiveModel:
        """A LiveModel on a new ``BoundModel`` (``BoundModel.build``'s arguments and errors)."""
        return cls(BoundModel.build(model, *args, **kwargs))

    def rebound(self, bound: BoundModel) -> LiveModel:
        """A new LiveModel on ``bound`` (the same joints) that keeps this one's inputs; this one is left as it is."""
        live = LiveModel(bound)
        live.q, live.qd, live.stamp = self.q.copy(), self.qd.copy(), self.stamp.copy()
        live.newest_stamp, live.unknown_names = self.newest_stamp, self.unknown_names
        live.desired, live.wrenches = self.desired, self.wrenches
        live.odometry, live.imu, live.base_acceleration = self.odometry, self.imu, self.base_acceleration
        live.planned = self.planned if bound.contact_links == self.bound.contact_links else None
        return live

    # --- joint_states ------------------------------------------------------------------------
    def merge_joint_states(
        self, names: Sequence[str], position: np.ndarray, velocity: np.ndarray, stamp: float, state_timeout: float
    ) -> bool:
        """Takes a message's values (its own order) in; True when every joint is fresh enough to compute."""
        match = self.bound.matcher.match(names)
        if match.unknown:
            self.unknown_names = match.unknown
        if len(match.model_rows) == 0:
            return False
        if match.full is not None:  # the usual case, one publisher for all joints: nothing to merge
            if stamp < self.newest_stamp:
                raise InvalidMessageError("out_of_order", "header stamp older than the last joint_states used")
            self.q, self.qd = position[match.full], velocity[match.full]
            self.stamp.fill(stamp)
            self.newest_stamp = stamp
            return True
        if np.any(stamp < self.stamp[match.model_rows]):
            raise InvalidMessageError("out_of_order", "header stamp older than the last joint_states used")
        self.q[match.model_rows] = position[match.message_rows]
        self.qd[match.model_rows] = velocity[match.message_rows]
        self.stamp[match.model_rows] = stamp
        self.newest_stamp = max(self.newest_stamp, stamp)
        return self.newest_stamp - self.stamp.min() <= state_timeout

    def stale_joints(self, timeout: float) -> list[str]:
        """Joints never received, or whose value is more than ``timeout`` older than the newest."""
        never = np.isneginf(self.stamp)
        old = ~never & (self.newest_stamp - np.where(never, 0.0, self.stamp) > timeout)
        return [self.bound.names[j] for j in np.flatnonzero(never | old)]

    # --- other inputs ------------------------------------------------------------------------
    def set_desired(self, points: DesiredPoints, now: float) -> None:
        """Desired points (the message's joint order; 1-D: one point, 2-D: one row per point at
        ``points.times``) in model order: unnamed joints get q̈ = 0 and no state."""
        match = self.bound.matcher.match(points.names)
        message_rows, model_rows = match.message_rows, match.model_rows
        qdd = np.atleast_2d(points.qdd)
        model_qdd = np.zeros((len(qdd), self.n))
        model_qdd[:, model_rows] = qdd[:, message_rows]
        model_q = model_qd = None
        if points.q is not None and points.qd is not None:
            q, qd = np.atleast_2d(points.q), np.atleast_2d(points.qd)
            model_q, model_qd = np.full((len(q), self.n), math.nan), np.full((len(qd), self.n), math.nan)
            model_q[:, model_rows], model_qd[:, model_rows] = q[:, message_rows], qd[:, message_rows]
        self.desired = Desired(model_qdd, model_q, model_qd, now, points.times)

    def set_wrench(self, reading: WrenchReading, now: float) -> None:
        link = reading.link
        if link not in self.links:
            raise InvalidMessageError(
                "unknown_wrench_frame", f"wrench in frame '{link}', which is no link of the robot"
            )
        self.wrenches = {**self.wrenches, link: (reading.wrench, now, reading.stamp)}

    def set_odometry(self, reading: OdometryReading, now: float) -> None:
        base_link = self.bound.model.base_link
        if reading.child_frame != base_link:
            raise InvalidMessageError(
                "wrong_child_frame",
                f"base_odometry child_frame_id is '{reading.child_frame}', but the twist must be in the "
                f"robot's root link '{base_link}'",
            )
        self.odometry = BaseState(reading.q_base, reading.twist, "base_odometry", now, reading.stamp)

    def set_imu(self, reading: ImuMessage, now: float) -> None:
        if not self.bound.model.carried_by_base(reading.link):
            raise InvalidMessageError("imu_frame", f"frame '{reading.link}' is not a link of the robot")
        self.imu = ImuReading(reading.R_world_imu, reading.omega_imu, reading.link, now, reading.stamp)

    def set_base_acceleration(self, reading: BaseAccelerationReading, now: float) -> None:
        base_link = self.bound.model.base_link
        if reading.frame not in ("", base_link):
            raise InvalidMessageError("wrong_frame", f"frame '{reading.frame}' is not the root link '{base_link}'")
        self.base_acceleration = (reading.classical, now)

    def set_contact_schedule(self, reading: ContactScheduleReading, now: float) -> None:
        """A planner's events replace the schedule in force (``planned_schedule``); no events: back to
        the gait parameters. Refused with the reason, the last valid schedule kept."""
        if self.bound.contacts is None:
            raise InvalidMessageError("schedule_no_contact_links", "contact_schedule: contact_links is empty")
        newest = self.newest_stamp if math.isfinite(self.newest_stamp) else 0.0
        in_force = self.settings_cache.schedule_in_force(self.planned)
        self.planned = (
            planned_schedule(reading, self.bound.contact_links, in_force, newest) if len(reading.times) else None
        )

    # --- what to compute with ----------------------------------------------------------------
    def inputs_now(self, now: float, settings: Settings) -> Inputs:
        """q, q̇, q̈ and wrenches to compute with: measured or desired state, fresh inputs only; the
        desired point and the contact schedule those of the newest stamp plus ``reference_lead``."""
        q, qd, qdd = self.q, self.qd, self.zeros
        q_desired = qd_desired = None
        desired = self.desired
        held = False
        reference_time = self.newest_stamp + settings.reference_lead
        if desired is not None:
            row = desired.row_at(reference_time)
            if self.desired_fresh(now, settings.acceleration_timeout):
                qdd = desired.qdd[row]
                if desired.q is not None:
                    q_desired, qd_desired = desired.q[row], desired.qd[row]
            elif settings.feedback and desired.q is not None:
                # as joint_trajectory_controller holds its last point: the positions stay the
                # target, at rest; dropping the feedback would let the robot fall. A stamped
                # trajectory's end is expected; a stream of points that stops is worth a warning.
                q_desired, held = desired.q[row], desired.times is None
                qd_desired = np.where(np.isnan(desired.qd[row]), math.nan, 0.0)
            # with feedback, the feed-forward is that of the desired state (PD plus feed-forward)
            if (settings.use_desired_state or settings.feedback) and q_desired is not None:
                q = np.where(np.isnan(q_desired), q, q_desired)
                qd = np.where(np.isnan(qd_desired), qd, qd_desired)
        wrenches = self.fresh_wrenches(now, settings.wrench_timeout)
        gains = self.settings_cache.gains(settings) if settings.torque_feedback else None
        base = base_acceleration = distribution = None
        if self.floating:
            base = self.fresh_base(now, settings.base_timeout, q, qd)
            base_acceleration = self._base_acceleration(now, settings.acceleration_timeout)
            if self.bound.contacts is not None:
                distribution = self.settings_cache.scheduled_distribution(settings, reference_time, self.planned)
        return Inputs(
            q=q,
            qd=qd,
            qdd=qdd,
            wrenches=wrenches,
            base=base,
            base_acceleration=base_acceleration,
            q_measured=self.q,
            qd_measured=self.qd,
            q_desired=q_desired,
            qd_desired=qd_desired,
            held=held,
            gains=gains,
            distribution=distribution,
            reference_lead=settings.reference_lead,
        )

    def desired_fresh(self, now: float, timeout: float) -> bool:
        """An unstamped desired point is fresh for ``timeout`` after it arrived; a stamped trajectory
        (sent ahead, as long as its planner likes) until ``timeout`` after its last point's time."""
        desired = self.desired
        if desired is None:
            return False
        if desired.times is None:
            return now - desired.received <= timeout
        return self.newest_stamp <= desired.times[-1] + timeout

    def fresh(self, stamp: float, received: float, now: float, timeout: float) -> bool:
        """Whether an input is fresh for the joint_states being computed: it arrived at most
        ``timeout`` ago, or it is stamped within ``timeout`` of their newest stamp (the clock of the
        data: a machine that stalls both, or a lockstep simulation, does not age it). A sensor that
        stops is stale either way; one stamped on another clock is judged by its arrival."""
        if now - received <= timeout:
            return True
        return stamp > 0.0 and self.newest_stamp > 0.0 and abs(self.newest_stamp - stamp) <= timeout

    def fresh_wrenches(self, now: float, timeout: float) -> dict[str, np.ndarray] | None:
        fresh = {
            link: w for link, (w, received, stamp) in self.wrenches.items() if self.fresh(stamp, received, now, timeout)
        }
        return fresh or None

    def base_source(self, now: float, timeout: float) -> str | None:
        """Odometry when fresh, else the IMU, else nothing to compute with."""
        for name, state in (("base_odometry", self.odometry), ("imu", self.imu)):
            if state is not None and self.fresh(state.stamp, state.received, now, timeout):
                return name
        return None

    def fresh_base(self, now: float, timeout: float, q_joints: np.ndarray, qd_joints: np.ndarray) -> BaseState | None:
        source = self.base_source(now, timeout)
        if source is None:
            return None
        if source == "base_odometry":
            return self.odometry
        # The IMU's link may sit behind joints: its rotation and rate relative to the base come
        # from the joint state this computation uses.
        reading = self.imu
        q, qd = self.bound.model.neutral_configuration(), np.zeros(self.bound.model.nv)
        q[7:], qd[BASE_DOFS:] = q_joints, qd_joints
        R_base_imu, omega_rel = self.bound.model.link_rotation_in_base(reading.link, q, qd)
        q_base, v_base = base_state_from_imu(reading, R_base_imu, omega_rel)
        return BaseState(q_base, v_base, "imu", reading.received, reading.stamp)

    def _base_acceleration(self, now: float, timeout: float) -> np.ndarray | None:
        """The fresh desired_base_acceleration (None: zero is used)."""
        accel = self.base_acceleration
        if accel is None or now - accel[1] > timeout:
            return None
        return accel[0]


def planned_schedule(
    reading: ContactScheduleReading, links: Sequence[str], in_force: ContactSchedule, newest: float
) -> EventSchedule:
    """A planner's events as the schedule from their first on (before it, the stance ``in_force`` had at
    the ``newest`` joint_states stamp, which a stamp of 0 means). InvalidMessageError
    (``schedule_<ScheduleError.reason>``) for events in the past (before ``newest``), unknown or missing
    links, overlapping events, no support."""
    start = reading.stamp if reading.stamp > 0.0 else newest
    try:
        unknown, missing = sorted(set(reading.names) - set(links)), sorted(set(links) - set(reading.names))
        if unknown or missing:
            raise ScheduleError(
                "unknown_link", f"names {reading.names}: unknown {unknown}, missing {missing} of contact_links"
            )
        events = [
            (start + t, [name for name, down in zip(reading.names, row, strict=True) if down])
            for t, row in zip(reading.times.tolist(), reading.stance, strict=True)
        ]
        schedule = EventSchedule(links, events, in_force.stance_links(newest))
        schedule.check_at(newest)
    except ScheduleError as error:
        raise InvalidMessageError(
            f"schedule_{error.reason}", f"contact_schedule refused, the last valid one kept: {error}"
        ) from error
    return schedule
