"""A legged robot trotting in rnea_sim (lockstep) on joint PD plus rnea_node's feed-forward, scored on
the simulator's record: stance feet's slip, swing feet's force (the node's contact_states and the
ground's), swing-foot tracking, the base against its reference, the applied torques' steps at
lift-off and touch-down. With ``gait``, the node's schedule is its gait parameters (the trajectory's
period, duty and phases; the trajectory's time 0 on a multiple of the period: the same clock);
without, every foot is a static contact (the control).

The planner (``BaseFeedback``, in this process, on an executor of its own) closes the loop on the
floating base, as a whole-body controller's base task does: for each of the simulator's
base_odometry, a desired base acceleration on rnea_node's ``desired_base_acceleration``
(geometry_msgs/AccelStamped, root frame, classical), the reference's feed-forward plus a PD on the
base's pose and twist error (reference level, facing +x):

    a = Ẍ_ref + Kp (p_ref − p) + Kd (v_ref − v),    α = −Kp_r log(R) − Kd_r ω,

Kp = ω_b², Kd = 2 ω_b (critically damped at ω_b; the rotation at its own ω_r). The node turns it into
contact forces (the base rows of the inverse dynamics, distributed on the stance feet), which the
joint PD lets through in part: the stance legs deflect, and the swing feet land where the base was
pushed, so a position error is taken out step by step. The node takes the newest acceleration while
fresh (``acceleration_timeout``, receive time): lockstep is then not exactly repeatable (the
acceleration in use is a state's one or a few steps back)."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from geometry_msgs.msg import AccelStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState

from rnea_ros import RobotModel
from rnea_ros.motion.gait import Gait, GaitTrajectory
from rnea_ros.plumbing.fixed_cdr import OdometryValues, read_odometry
from rnea_ros.plumbing.scheduling import use_fifo_scheduling, use_ordinary_scheduling
from rnea_ros.plumbing.subscription import DedicatedSubscription
from rnea_ros.testing.closed_loop_runner import run_closed_loop
from rnea_ros.testing.legged import SupportLineSway, base_acceleration, feet_poses, joint_gains, rotation_vectors

EVENT_WINDOW = 0.06  # s either side of a lift-off or touch-down: the ramps (0.05 s) and the impact
LOADED = 1.0  # N: a foot the ground pushes this hard is in contact
# what the trot is scored on: in place after its first cycle, and at full speed (0.1 m/s from 5 s)
SPANS = {"in place": (0.5, 3.0), "walking": (5.0, 10.0)}
# the planner's base feedback (BaseFeedback) [rad/s]: 3 Hz, above what the stance legs' joint PD alone
# holds the base at (its Cartesian stiffness on the robot's mass: Solo12 1.0-1.8 Hz on a diagonal
# pair, Go2 0.6-1.8 Hz) and below the joints' own 6.4 Hz (40 rad/s); 5 Hz made Solo12 rock ±4.8°
BASE_OMEGA = 2 * np.pi * 3.0
# Go2's: its rotation at 4 Hz (at 3 Hz it rolled 6.0-6.2° to one side walking, its swing feet 8.6-8.9 mm
# RMS off their curve; at 4 Hz 1.5° and 3.5 mm)
GO2_BASE_OMEGA = (BASE_OMEGA, 2 * np.pi * 4.0)
# [s] the planner's period with motor_pd (250 Hz, as a whole-body planner runs; at every 1 ms state its
# Python callback took CPU the node needed on the wall clock); with the node's PD: every state
PLANNER_PERIOD = 0.004
# [s] on the wall clock, the backlog rnea_sim makes up by stepping faster than real time (its
# realtime_catch_up; further behind, its clock slips): without it a simulator that fell 2-4 s behind
# while the node loaded its model (the brakes on) stepped flat out into the trot, faster than real
# time, and the node answered a smaller share of its states
CATCH_UP = 0.002
# On the wall clock, SCHED_FIFO priorities, as a legged robot's computer runs its loops ahead of every
# ordinary process: the robot (its drivers and ros2_control's loop, at 50 there) first, then the planner
# (legged_control runs its MPC thread at a real-time priority of its own) and the whole-body controller
# (rnea_node). The planner above the node: its answers are few (250 Hz) and cheap, and starved for 0.1 s
# the base is lost, while the node answers the newest state and only answers fewer. Beside other work
# on 2 cores (2026-11-29, load 6-12) the node was starved for 50-160 ms at times and the robot
# stumbled. With the simulator and the node alone on SCHED_FIFO, Go2 fell over (the planner's process
# got 0.06-0.12 of a core); with the planner's thread on it too (30), its answers still had gaps of
# 89-221 ms (it waited for the GIL, held by its process's ordinary threads waiting for a core); with its
# whole process at 30, below the node, gaps of 0.17-0.85 s: the node took what the simulator left.
SIM_PRIORITY, NODE_PRIORITY, PLANNER_PRIORITY = 50, 40, 45
# [s] rnea_node's reference_lead on the wall clock: the commands' age at arrival without a lead, p50
# (rnea_sim's counts, 2026-11-28 22:05 UTC: 2.0 ms for Solo12 and Go2, states every 1 and every 2 ms)
WALL_CLOCK_LEAD = 0.002


@dataclass(frozen=True)
class Legged:
    """A robot for the trot: its URDF, feet, foot radius, ground friction and joint gains' ω [rad/s]."""

    urdf: str
    feet: list[str]
    foot_radius: float
    friction: float = 0.8
    omega: float = 40.0


@dataclass
class TrotScore:
    """What the simulator's record says of one trot (lengths in m, angles in rad, forces in N)."""

    name: str
    slip: np.ndarray  # per stance (foot by foot): how far its contact point slid while loaded (LOADED), horizontally
    swing_force_node: float  # the largest force the node gave a swing foot (contact_states), NaN if none seen
    swing_force_ground: float  # the ground's largest normal force on a swing foot, EVENT_WINDOW from its ends
    swing_rms: float  # swing feet's position error in the base frame, RMS of its norm
    base_position_error: float  # the largest distance of the base from its reference
    base_orientation_error: float  # the largest rotation of the base from level, facing +x
    step_at_events: float  # the largest applied-torque step between two states within EVENT_WINDOW of a switch
    step_elsewhere: float  # the same, everywhere else
    load_change: float  # the largest change of a leg's mean joint torque between mid-stance and mid-swing
    contact_states: int  # contact_states messages seen in the scored span
    seconds: float  # trajectory time scored

    def line(self) -> str:
        return (
            f"{self.name}: slip per stance max {self.slip.max() * 1e3:.2f} mm (p50 {np.median(self.slip) * 1e3:.2f}, "
            f"{len(self.slip)} stances); swing force node {self.swing_force_node:.3g} N "
            f"({self.contact_states} contact_states), ground {self.swing_force_ground:.3g} N; swing RMS "
            f"{self.swing_rms * 1e3:.2f} mm; base {self.base_position_error * 1e2:.2f} cm, "
            f"{np.degrees(self.base_orientation_error):.2f}°; torque step at switches "
            f"{self.step_at_events:.3f} N·m (elsewhere {self.step_elsewhere:.3f}; stance-swing load change "
            f"{self.load_change:.3f})"
        )


def trot_parameters(
    robot: Legged,
    model: RobotModel,
    trot: GaitTrajectory,
    seconds: float,
    gait: bool,
    realtime: bool = False,
    publish_every: int = 1,
    motor_pd: bool = False,
    priorities: bool = True,
):
    """(rnea_sim, rnea_node) parameters: lockstep (or the wall clock), the node's QP onto the feet, its PD at ω;
    the simulator's states every ``publish_every`` 1 ms steps (the node's command held in between).
    ``motor_pd``: the PD in the simulator's motor drivers at every step (``controller: motor_pd``), on
    the node's joint_commands (its reference and its feed-forward, the node's own PD off). ``priorities``:
    on the wall clock, the simulator and the node on SCHED_FIFO (SIM_PRIORITY, NODE_PRIORITY)."""
    kp, kd = joint_gains(model, trot.standing, robot.omega)
    sim = {
        "robot_description": robot.urdf, "realtime": realtime, "joints": list(model.joint_names),
        "initial_positions": trot.standing.tolist(), "duration": seconds, "floating_base": True,
        "publish_every": publish_every,
        "contact_links": robot.feet, "contact_radius": robot.foot_radius, "friction": robot.friction,
        # beside two busy processes the node went silent after its first command for over 10 s, then
        # over 60 s (taking in the whole 15,000-point trajectory, it seems): lockstep waits longer
        "lockstep_timeout": 300.0,
    }  # fmt: skip
    if realtime:
        # on the wall clock the node may pause (taking in the whole trajectory, a loaded machine): the
        # last command holds, as a JointGroupEffortController's does, and the brakes hold the robot for
        # its first half second of commands (motor_pd: 100 commands; the node answers the newest state
        # only, every few ms on a loaded machine, and 500 held the robot into the trot's first 1.75 s)
        release = 100 if motor_pd else max(1, round(500 / publish_every))
        sim |= {"command_timeout": 0.0, "release_after_commands": release, "realtime_catch_up": CATCH_UP}
        if priorities:
            sim["thread_priority"] = SIM_PRIORITY
    node = {
        "robot_description": robot.urdf, "floating_base": True, "command_joints": list(model.joint_names),
        "contact_links": robot.feet, "contact_distribution": "qp", "contact_radius": [robot.foot_radius],
        "friction_coefficient": robot.friction, "kp": kp.tolist(), "kd": kd.tolist(),
    }  # fmt: skip
    if motor_pd:
        sim |= {
            "controller": "motor_pd",
            "commands_topic": "joint_commands",
            "pid_p": kp.tolist(),
            "pid_d": kd.tolist(),
        }
        del node["kp"], node["kd"]  # the node's feed-forward alone
        node["joint_states_depth"] = 1  # a late feed-forward is no use: the present state, never a backlog
    if realtime and priorities:
        node["thread_priority"] = NODE_PRIORITY
    if gait:
        g = trot.gait
        node |= {"gait_period": g.period, "gait_duty": [g.duty], "gait_phases": list(g.phases)}
    return sim, node


def run_trot(
    folder: Path,
    name: str,
    robot: Legged,
    trot: GaitTrajectory,
    seconds: float,
    gait: bool,
    env: dict,
    spans: dict[str, tuple[float, float]],
    base_omega: float | tuple[float, float] = 0.0,
    realtime: bool = False,
    sway: bool = False,
    publish_every: int = 1,
    motor_pd: bool = False,
    reference_lead: float = 0.0,
    priorities: bool = True,
) -> dict[str, TrotScore]:
    """Trots ``seconds`` of trajectory time (needs rclpy initialised); a score per span (start, end)
    of ``spans``, by name; without base feedback the base's reference is anchored to where the base
    is at each span's start when it starts past 1 s (the drift within the span; the walk's start is
    open loop), with it the base is scored against the reference itself. ``base_omega`` [rad/s]: the planner closes
    the loop on the base at that natural frequency (``BaseFeedback``; a pair: position, rotation); 0: no
    base feedback. ``realtime``: rnea_sim paced by the wall clock, the node's commands taken as they come.
    ``sway``: the planner's orientation reference is ``SupportLineSway``'s (else level). ``publish_every``:
    the simulator's states (and base_odometry, the record) every that many 1 ms steps. ``motor_pd``: the
    joints' PD closed in the simulator at every step (see ``trot_parameters``). ``reference_lead`` [s]: the
    node's (its references sampled that far after each state's stamp). ``priorities``: on the wall clock,
    the simulator, the node and the planner on SCHED_FIFO (SIM_PRIORITY, NODE_PRIORITY, PLANNER_PRIORITY)."""
    model = RobotModel.from_urdf(robot.urdf, floating_base=True)
    sim, node = trot_parameters(robot, model, trot, seconds, gait, realtime, publish_every, motor_pd, priorities)
    if reference_lead:
        node["reference_lead"] = reference_lead
    received: list[bytes] = []  # contact_states' CDR bytes, read after the run (this process holds the planner)

    table = trot.tabulated(seconds + 6.0)
    omegas = base_omega if isinstance(base_omega, tuple) else (base_omega, base_omega)
    planner = None
    if any(omegas):
        reference = SupportLineSway(model, trot, robot.foot_radius, seconds + 1.0) if sway else None
        priority = PLANNER_PRIORITY if realtime and priorities else 0
        planner = BaseFeedback(name, trot.gait, base_height(trot, robot), *omegas, reference, priority)
        planner.period = PLANNER_PERIOD if motor_pd else 0.0

    def progress(publisher) -> None:
        if planner is not None and planner.t0 is None:
            planner.t0 = publisher.t0

    try:
        run = run_closed_loop(
            folder, name, sim, node, table, list(model.joint_names), env, timeout=120.0 + 100.0 * seconds,
            align=trot.gait.period, watch={"contact_states": received.append}, progress=progress,
            follow="joint_commands" if motor_pd and realtime else "feedforward_efforts",
        )  # fmt: skip
    finally:
        if planner is not None:
            planner.close()
            np.save(folder / f"{name}_planner_stamps.npy", np.array(planner.stamps))
    if run.time[-1] < seconds - 0.01:
        raise RuntimeError(f"{name}: the trot stopped at {run.time[-1]:.3f} s\n{run.sim_log[-1500:]}")
    states = [_contact_state(data) for data in received]
    data = np.load(folder / f"{name}_record.npz")
    kept = data["stamp"] - run.t0 <= seconds + 1e-9
    base_p, base_q = data["base_position"][kept], data["base_orientation"][kept]
    scored = {}
    for span, (start, end) in spans.items():
        anchor = start > 1.0 and planner is None
        args = (trot, run, base_p, base_q, states, robot.foot_radius, model, start, end, anchor, reference_lead)
        scored[span] = score(f"{name}, {span}", *args)
    return scored


class BaseFeedback:
    """Publishes ``desired_base_acceleration`` in ``namespace`` for every base_odometry it reads: the
    gait's base reference (X(t), 0, ``height``, level) tracked at ``omega`` [rad/s], its rotation at
    ``omega_rotation``. Trajectory time is the odometry's stamp minus ``t0`` (set once known; before
    it, the start is the reference). ``priority`` (1-99): every thread of this process on SCHED_FIFO at it
    until ``close`` (refused: said, and the default scheduler kept)."""

    def __init__(
        self,
        namespace: str,
        gait: Gait,
        height: float,
        omega: float,
        omega_rotation: float,
        sway=None,
        priority: int = 0,
    ) -> None:
        self.gait, self.height, self.sway = gait, height, sway
        self.kp, self.kd = omega**2, 2.0 * omega
        self.kp_rotation, self.kd_rotation = omega_rotation**2, 2.0 * omega_rotation
        self.t0: float | None = None
        self.period = 0.0  # s: odometry newer than the last answered by less than this is skipped
        self.stamps: list[float] = []  # the states answered (their stamps): the gaps are the states skipped
        self.node = Node("base_planner", namespace=namespace)
        # created before rnea_node subscribes (a reader made after its writer is the safe order here)
        self.publisher = self.node.create_publisher(AccelStamped, "desired_base_acceleration", 10)
        # best effort: the newest pose is all this needs (a reliable reader made before its writer
        # sometimes received late here; see closed_loop_runner)
        # on a thread of its own, the odometry's stamp read from its bytes (CDR: the header's stamp
        # after the 4-byte encapsulation) and the message read only when answered: with an
        # executor every 1 kHz odometry cost this process ~0.15 ms, skipped or not, on 2 shared cores
        qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
        self.subscription = DedicatedSubscription(self.node, Odometry, "base_odometry", self._on_bytes, qos, raw=True)
        self.subscription.start()
        self.prioritised = False  # this process on SCHED_FIFO, put back by close
        if priority:
            refused = use_fifo_scheduling(priority)
            if refused:
                self.node.get_logger().warning(f"the planner's priority: {refused}")
            self.prioritised = refused is None

    def _on_bytes(self, data: bytes) -> None:
        sec, nanosec = struct.unpack_from("<iI" if data[1] == 1 else ">iI", data, 4)  # CDR little or big endian
        if self.stamps and sec + nanosec * 1e-9 - self.stamps[-1] < self.period - 1e-6:
            return
        values = read_odometry(data)
        if values is None:  # not little-endian CDR: never from rnea_sim on this machine
            raise ValueError("base_odometry: not a little-endian CDR Odometry")
        self._on_odometry(values)

    def _on_odometry(self, odometry: OdometryValues) -> None:
        stamp = odometry.stamp[0] + odometry.stamp[1] * 1e-9
        t = stamp - self.t0 if self.t0 is not None else -1.0
        pose, twist = np.array(odometry.pose), np.array(odometry.twist)
        gains = (self.kp, self.kd, self.kp_rotation, self.kd_rotation)
        sway = self.sway(t) if self.sway is not None else None
        a, alpha = base_acceleration(self.gait, self.height, gains, t, pose[:3], pose[3:], twist[:3], twist[3:], sway)
        out = AccelStamped()
        out.header.stamp.sec, out.header.stamp.nanosec = odometry.stamp
        out.header.frame_id = odometry.child_frame_id
        out.accel.linear.x, out.accel.linear.y, out.accel.linear.z = (float(k) for k in a)
        out.accel.angular.x, out.accel.angular.y, out.accel.angular.z = (float(k) for k in alpha)
        self.publisher.publish(out)
        self.stamps.append(stamp)

    def close(self) -> None:
        if self.prioritised:
            use_ordinary_scheduling()
        self.subscription.destroy()
        self.node.destroy_node()


def _contact_state(data: bytes) -> tuple[float, np.ndarray, np.ndarray]:
    """(stamp [s], stance weights, forces [N]) of a contact_states message's bytes."""
    msg = deserialize_message(data, JointState)
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9, np.array(msg.position), np.array(msg.effort)


def base_height(trot: GaitTrajectory, robot: Legged) -> float:
    """The base's reference height: standing on the feet's spheres (the feet's spots below it)."""
    return robot.foot_radius - float(trot.spots[:, 2].mean())


def _rotation(quaternion: np.ndarray) -> np.ndarray:
    """(N, 3, 3) world ← base from (N, 4) quaternions (x, y, z, w)."""
    x, y, z, w = quaternion.T
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], axis=1),
            np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], axis=1),
            np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], axis=1),
        ],
        axis=1,
    )


def _contact_points(R_world_base: np.ndarray, run, model, trot: GaitTrajectory, radius: float) -> np.ndarray:
    """(N, feet, 3): each spherical foot's point of contact that does not move while it rolls
    without sliding on level ground: its centre c + r (−φ_y, φ_x, 0), φ the rotation vector of the
    foot in the world from its orientation standing with the base level."""
    poses = feet_poses(model, run.contact_links)
    standing = poses(trot.standing[None])[0][0]
    R_feet = R_world_base[:, None] @ poses(run.positions(model.joint_names))[0]
    phi = rotation_vectors(R_feet @ np.swapaxes(standing, 1, 2))
    rolled = radius * np.stack([-phi[..., 1], phi[..., 0], np.zeros_like(phi[..., 0])], axis=-1)
    return run.contact_position + rolled


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) index pairs of the True runs of a 1-D mask."""
    edges = np.flatnonzero(np.diff(np.r_[0, mask.astype(int), 0]))
    return list(zip(edges[::2], edges[1::2], strict=True))


def score(
    name,
    trot: GaitTrajectory,
    run,
    base_p,
    base_q,
    states,
    radius: float,
    model,
    start: float,
    seconds: float,
    anchor: bool = False,
    lead: float = 0.0,
) -> TrotScore:
    """The trot's figures from ``start`` to ``seconds`` of trajectory time (see ``TrotScore``);
    ``anchor``: the base's position error counted from its value at ``start`` (the drift within the span);
    ``lead``: the node's reference_lead (its contact_states are the schedule's that far after their stamp)."""
    gait, t = trot.gait, run.time
    scored = (t >= start) & (t <= seconds)
    stance = gait.in_stance(t)
    R = _rotation(base_q)
    contact = _contact_points(R, run, model, trot, radius)
    loaded = run.contact_wrench[..., 2] > LOADED
    slips = []
    for k in range(len(trot.spots)):
        for a, b in _runs(stance[:, k]):
            if a > 0 and b < len(t) and t[a] >= start and t[b - 1] <= seconds:  # whole stances only
                xy = contact[a:b, k, :2][loaded[a:b, k]]
                slips.append(np.linalg.norm(xy - xy[0], axis=1).max() if len(xy) else np.inf)
    feet_base = np.einsum("nji,nkj->nki", R, contact - base_p[:, None, :])  # the points the trajectory moves
    wanted = trot.feet(t)[0]
    swing = ~stance & scored[:, None]
    swing_rms = float(np.sqrt((np.linalg.norm(feet_base - wanted, axis=2)[swing] ** 2).mean()))
    X = gait.base_x(t)[0]
    height = radius - trot.spots[:, 2].mean()  # base_height
    reference = np.stack([X, np.zeros_like(X), np.full_like(X, height)], axis=1)
    error = base_p - reference
    if anchor:
        error = error - error[np.argmax(t >= start)]
    base_error = np.linalg.norm(error, axis=1)[scored].max()
    angle = np.arccos(np.clip((np.trace(R, axis1=1, axis2=2) - 1) / 2, -1.0, 1.0))[scored].max()
    switches = _switch_times(gait, t[0], t[-1])
    near = np.abs(t[:, None] - switches).min(axis=1) <= EVENT_WINDOW
    steps = np.abs(np.diff(run.effort, axis=0)).max(axis=1)
    inside = scored[1:] & scored[:-1]
    since = _since_lift_off(gait, t)
    mid_swing = (since > EVENT_WINDOW) & (since < (1 - gait.duty) * gait.period - EVENT_WINDOW)
    normal = run.contact_wrench[..., 2]
    ground = float(normal[swing & mid_swing].max(initial=0.0))
    stamps = np.array([s[0] for s in states]) - run.t0 if states else np.zeros(0)
    seen = (stamps >= start) & (stamps <= seconds)
    node_swing = np.nan
    if seen.any():
        forces = np.array([s[2] for s in states])[seen]
        node_swing = float(forces[~gait.in_stance(stamps[seen] + lead)].max(initial=0.0))
    return TrotScore(
        name, np.array(slips), node_swing, ground, swing_rms, float(base_error), float(angle),
        float(steps[inside & near[1:]].max()), float(steps[inside & ~near[1:]].max()),
        _load_change(trot, run.effort[scored], t[scored]), int(seen.sum()),
        float(seconds - start),
    )  # fmt: skip


def _load_change(trot: GaitTrajectory, effort: np.ndarray, t: np.ndarray) -> float:
    """What a switch without ramps would step: per leg, its joints' mean torque over the middle
    third of its stances against that over the middle third of its swings, the largest change."""
    gait = trot.gait
    u = np.mod(t[:, None] / gait.period - np.asarray(gait.phases), 1.0)  # (N, feet): 0 at touch-down
    third = gait.duty / 3, (1 - gait.duty) / 3
    mid_stance = (u > third[0]) & (u < 2 * third[0])
    mid_swing = (u > gait.duty + third[1]) & (u < gait.duty + 2 * third[1])
    return float(
        max(
            np.abs(effort[mid_stance[:, k]][:, leg].mean(axis=0) - effort[mid_swing[:, k]][:, leg].mean(axis=0)).max()
            for k, leg in enumerate(trot.legs)
        )
    )


def _switch_times(gait, first: float, last: float) -> np.ndarray:
    cycles = np.arange(np.floor(first / gait.period) - 1, np.ceil(last / gait.period) + 1)
    return np.concatenate([(cycles + p + d) * gait.period for p in gait.phases for d in (0.0, gait.duty)])


def _since_lift_off(gait, t: np.ndarray) -> np.ndarray:
    """(N, feet): the time since each foot's last lift-off."""
    u = np.mod(t[:, None] / gait.period - np.asarray(gait.phases) - gait.duty, 1.0)
    return u * gait.period
