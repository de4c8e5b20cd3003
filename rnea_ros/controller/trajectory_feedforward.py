"""A planner's trajectory with every point's effort filled: the feed-forward handed to ros2_control's
joint_trajectory_controller with the trajectory (plain Python, no rclpy).

The JTC with an ``effort`` command interface adds each sampled point's ``effort`` to its PID
(ros2_controllers PR #1200); it interpolates efforts linearly between points. So the trajectory is
first resampled on the JTC's own spline (``dynamics.trajectory``: linear, cubic or quintic, as its
points allow) every ``spacing`` seconds, the original points kept; then one batch call gives the
corrected model's torque at every point's desired position, velocity and acceleration: the same
numbers ``feedforward_efforts`` gives at that state, the URDF's joint damping and friction and the
loaded corrections (friction, armature, a payload) included. External wrenches are not: a
measured force/torque wrench is not a planned quantity; a known payload belongs in the corrections.

A floating-base robot standing on its ``contact_links`` (a legged robot changing its posture):
the contacts are held where they are, so the base moves as the joints make it. Its velocity at
each point is the one that keeps every contact still, J_c,base v_base = −J_c,joints q̇ (least
squares: point feet give three rows each, soles six), its acceleration that velocity's derivative
along the resampled points, and its pose the one the node has now (odometry or IMU: the base's
orientation sets the gravity's direction; its position does not matter). Each point's efforts are
then the contact-consistent torques of ``contact_distribution``, as ``feedforward_efforts`` gives at
that state. Not modelled: the base's pose changing along the trajectory (a posture change that
tilts the base), contacts that are made or broken (stepping).

The answer is computed on one thread (``answer_threads``): the batch kernel on every core was 6x
slower at p50 and 3x at p99 beside other processes (benchmarks/trajectory_answer.py). An answer that
would leave after its trajectory's start stamp is re-stamped to now (``LateAnswers``): a JTC given a
start in the past samples its spline at now and jumps to that point at once. Its kernels write
the data of the executor's thread that answers (``RobotModel.thread_data``), never the joint_states
thread's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rnea_ros.controller.state import InvalidMessageError, LiveModel
from rnea_ros.dynamics import algorithms, jit
from rnea_ros.dynamics.contact_distribution import ContactDistribution
from rnea_ros.dynamics.floating_base import BASE_DOFS, BaseState
from rnea_ros.motion.trajectory import MAX_TRAJECTORY_POINTS, JointSpline, Trajectory, resampling_times

# A floating base's points are computed one by one (~50 µs each, in Python, on the executor's thread
# beside the joint_states thread): 20,000 points (200 s at the default resampling) take about a second.
MAX_STANDING_POINTS = 20_000
# Threads of the trajectory answer's batch kernel: 1 measured fastest quiet and beside busy processes
# (2 cores: 2.2/10.5 ms p50/p99 against 14.1/37.3 ms; beside two busy processes 2.4/73 against 74/204 ms).
ANSWER_THREADS = 1


def answer_threads() -> None:
    """The calling thread computes batches on ANSWER_THREADS threads. numba's setting is per thread,
    and answers run on whichever thread of the node's executor takes them: the node sets it before
    each answer (set once on the main thread, the executor's threads answered on every core). While
    ``jit`` defers (rnea_node on ahead-of-time kernels) batches run on the calling thread, numba not imported."""
    if jit.deferring():
        return
    import numba

    numba.set_num_threads(min(ANSWER_THREADS, numba.config.NUMBA_NUM_THREADS))


class LateAnswers:
    """Answers that would leave after their trajectory's start stamp: counted, and re-stamped to now.

    A JTC (ros2_controllers, Jazzy) given a trajectory whose start is in the past samples it at now:
    it skips the points already due and jumps to where the trajectory is now (one that ends in the past
    is rejected). Re-stamped, the motion starts whole from its first point, late by the node's delay.
    A stamp of zero (the JTC starts the trajectory when it receives it) is never late."""

    def __init__(self) -> None:
        self.count = 0
        self.latest_delay = 0.0  # s past the stamp, of the newest late answer
        self._reported = 0

    def stamp(self, stamp_ns: int, now_ns: int) -> int:
        """The answer's stamp [ns]: the trajectory's, or ``now_ns`` when that has passed (counted)."""
        if stamp_ns == 0 or stamp_ns >= now_ns:
            return stamp_ns
        self.count += 1
        self.latest_delay = (now_ns - stamp_ns) * 1e-9
        return now_ns

    def new(self) -> int:
        """Late answers since the last call (the /diagnostics report)."""
        new, self._reported = self.count - self._reported, self.count
        return new


@dataclass(frozen=True)
class StandingOn:
    """What a floating-base robot's trajectory needs: the base state now, the distribution onto its
    contact links and which of them are points (free to turn) rather than soles."""

    base: BaseState
    distribution: ContactDistribution
    points: tuple[bool, ...]


@dataclass(frozen=True)
class FeedforwardTrajectory:
    joint_names: list[str]
    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray
    efforts: np.ndarray


def with_efforts(
    live: LiveModel,
    trajectory: Trajectory,
    spacing: float,
    source: str = "inverse_dynamics",
    standing: StandingOn | None = None,
) -> FeedforwardTrajectory:
    """``trajectory`` resampled every ``spacing`` s (0: its own points only) with each point's
    feed-forward effort: the inverse dynamics, the gravity torques at its positions (``source``
    gravity: the payload included, and a corrections file's offsets) or zero (none);
    InvalidMessageError(reason) for what cannot be used whole. A floating base needs ``standing``
    (see the module docstring)."""
    if live.floating:
        if live.bound.contacts is None:
            raise InvalidMessageError(
                "floating_base", "a floating-base trajectory needs contact_links: what carries the base"
            )
        if standing is None:
            raise InvalidMessageError("no_base_state", "no fresh base_odometry or imu: the base's pose is unknown")
    names = list(trajectory.joint_names)  # the answer keeps them (the driver's, with joint_names)
    model_names = [live.bound.matcher.model_name(name) for name in names]
    if len(set(model_names)) != len(model_names):
        raise InvalidMessageError("duplicate_names", "the trajectory names a joint twice")
    unknown = [name for name, known in zip(names, model_names, strict=True) if known not in live.bound.matcher.index]
    if unknown:
        raise InvalidMessageError("unknown_joints", f"joints the model does not have: {unknown[:10]}")
    missing = [live.bound.names[j] for j, name in enumerate(live.bound.model.joint_names) if name not in model_names]
    if missing:
        raise InvalidMessageError(
            "missing_joints", f"the model's joints {missing[:10]} are not in the trajectory: their motion is unknown"
        )
    try:
        spline = JointSpline(trajectory.times, trajectory.positions, trajectory.velocities, trajectory.accelerations)
    except ValueError as error:
        raise InvalidMessageError("bad_trajectory", str(error)) from error
    times = (
        resampling_times(trajectory.times, spacing) if spacing > 0.0 and len(trajectory.times) > 1 else trajectory.times
    )
    most = MAX_STANDING_POINTS if live.floating else MAX_TRAJECTORY_POINTS
    if len(times) > most:
        raise InvalidMessageError("too_many_points", f"{len(times)} points after resampling, at most {most}")
    if len(times) == len(trajectory.times) and trajectory.accelerations is not None:
        # no point added and every point whole: the JTC's quintic passes through each point with its
        # own values, so sampling it there only adds rounding (1,000 points: ~1 ms on the relay's path)
        q, qd, qdd = trajectory.positions, trajectory.velocities, trajectory.accelerations
    else:
        q, qd, qdd = spline.sample(times)
    rows = [live.bound.matcher.index[name] for name in model_names]  # trajectory column → model joint
    order = np.argsort(rows)  # model order ← trajectory columns
    if live.floating and source != "none":
        tau, gravity = _standing_efforts(live, standing, times, q[:, order], qd[:, order], qdd[:, order])
        efforts_model = tau if source == "inverse_dynamics" else gravity + live.bound.corrected.offset
    elif source == "inverse_dynamics":
        data = live.bound.model.thread_data()
        efforts_model = live.bound.corrected.inverse_dynamics(q[:, order], qd[:, order], qdd[:, order], data=data)
    elif source == "gravity":
        gravity = algorithms.gravity_torques(live.bound.model, live.bound.model.thread_data(), q[:, order])
        efforts_model = gravity + live.bound.corrected.offset
    else:
        efforts_model = np.zeros_like(q)
    efforts = np.empty_like(efforts_model)
    efforts[:, order] = efforts_model
    if not np.isfinite(efforts).all():
        raise InvalidMessageError("compute_error", "the trajectory's efforts are not finite")
    return FeedforwardTrajectory(names, times, q, qd, qdd, efforts)


def _standing_efforts(
    live: LiveModel, standing: StandingOn, times: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(points, joints) contact-consistent joint torques along the joints' trajectory (model order),
    corrected, with the base moving as the contacts held still make it (the module docstring); and
    the contact-consistent gravity torques at each point."""
    rows = np.concatenate([6 * k + np.arange(3 if point else 6) for k, point in enumerate(standing.points)])
    q_base = standing.base.q
    v_base = np.array([_base_velocity(live, rows, q_base, q[k], qd[k]) for k in range(len(times))])
    qdd_base = np.gradient(v_base, times, axis=0) if len(times) > 1 else np.zeros_like(v_base)
    tau, gravity = np.empty_like(q), np.empty_like(q)
    for k in range(len(times)):
        torques, g, _ = standing.distribution(q_base, v_base[k], qdd_base[k], q[k], qd[k], qdd[k])
        tau[k] = live.bound.corrected.joint_torques(qd[k], qdd[k], torques[BASE_DOFS:])
        gravity[k] = g[BASE_DOFS:]
    return tau, gravity


def _base_velocity(live: LiveModel, rows: np.ndarray, q_base: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """The base twist (base frame) that keeps the contacts still: J_base v = −J_joints q̇ in least
    squares, J's ``rows`` the contact links' twists in their frames (a point's linear rows only)."""
    model, links = live.bound.model, live.bound.contacts.links
    J = algorithms.wrench_jacobian_transpose(model, model.thread_data(), np.concatenate([q_base, q]), links).T[rows]
    return -np.linalg.lstsq(J[:, :BASE_DOFS], J[:, BASE_DOFS:] @ qd, rcond=None)[0]
