"""A legged robot trotting in rnea_sim (lockstep) on joint PD plus rnea_node's feed-forward, scored on
the simulator's record: stance feet's slip, swing feet's force (the node's contact_states and the
ground's), swing-foot tracking, the base against its reference, the applied torques' steps at
lift-off and touch-down. With ``gait``, the node's schedule is its gait parameters (the trajectory's
period, duty and phases; the trajectory's time 0 on a multiple of the period: the same clock);
without, every foot is a static contact (the control)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rnea_ros import RobotModel
from rnea_ros.motion.gait import GaitTrajectory
from rnea_ros.testing.closed_loop_runner import run_closed_loop
from rnea_ros.testing.legged import feet_poses, joint_gains, rotation_vectors

EVENT_WINDOW = 0.06  # s either side of a lift-off or touch-down: the ramps (0.05 s) and the impact
LOADED = 1.0  # N: a foot the ground pushes this hard is in contact
# what the trot is scored on: in place after its first cycle, and at full speed (0.1 m/s from 5 s)
SPANS = {"in place": (0.5, 3.0), "walking": (5.0, 10.0)}


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


def trot_parameters(robot: Legged, model: RobotModel, trot: GaitTrajectory, seconds: float, gait: bool):
    """(rnea_sim, rnea_node) parameters: lockstep, the node's QP onto the feet, its PD at ω."""
    kp, kd = joint_gains(model, trot.standing, robot.omega)
    sim = {
        "robot_description": robot.urdf, "realtime": False, "joints": list(model.joint_names),
        "initial_positions": trot.standing.tolist(), "duration": seconds, "floating_base": True,
        "contact_links": robot.feet, "contact_radius": robot.foot_radius, "friction": robot.friction,
        # beside two busy processes the node went silent after its first command for over 10 s, then
        # over 60 s (taking in the whole 15,000-point trajectory, it seems): lockstep waits longer
        "lockstep_timeout": 300.0,
    }  # fmt: skip
    node = {
        "robot_description": robot.urdf, "floating_base": True, "command_joints": list(model.joint_names),
        "contact_links": robot.feet, "contact_distribution": "qp", "contact_radius": [robot.foot_radius],
        "friction_coefficient": robot.friction, "kp": kp.tolist(), "kd": kd.tolist(),
    }  # fmt: skip
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
) -> dict[str, TrotScore]:
    """Trots ``seconds`` of trajectory time (needs rclpy initialised); a score per span (start, end)
    of ``spans``, by name; the base's reference anchored to where the base is at each span's start
    when it starts past 1 s (the drift within the span: the walk's start is open loop)."""
    model = RobotModel.from_urdf(robot.urdf, floating_base=True)
    sim, node = trot_parameters(robot, model, trot, seconds, gait)
    states: list[tuple[float, np.ndarray, np.ndarray]] = []

    def on_states(msg) -> None:
        states.append((msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9, np.array(msg.position), msg.effort))

    table = trot.tabulated(seconds + 6.0)
    run = run_closed_loop(
        folder, name, sim, node, table, list(model.joint_names), env, timeout=120.0 + 100.0 * seconds,
        align=trot.gait.period, watch={"contact_states": on_states},
    )  # fmt: skip
    if run.time[-1] < seconds - 0.01:
        raise RuntimeError(f"{name}: the trot stopped at {run.time[-1]:.3f} s\n{run.sim_log[-1500:]}")
    data = np.load(folder / f"{name}_record.npz")
    kept = data["stamp"] - run.t0 <= seconds + 1e-9
    base_p, base_q = data["base_position"][kept], data["base_orientation"][kept]
    return {
        span: score(f"{name}, {span}", trot, run, base_p, base_q, states, robot.foot_radius, model, *times)
        for span, times in spans.items()
    }


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
    name, trot: GaitTrajectory, run, base_p, base_q, states, radius: float, model, start: float, seconds: float
) -> TrotScore:
    """The trot's figures from ``start`` to ``seconds`` of trajectory time (see ``TrotScore``)."""
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
    height = radius - trot.spots[:, 2].mean()
    reference = np.stack([X, np.zeros_like(X), np.full_like(X, height)], axis=1)
    error = base_p - reference
    if start > 1.0:
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
        node_swing = float(forces[~gait.in_stance(stamps[seen])].max(initial=0.0))
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
