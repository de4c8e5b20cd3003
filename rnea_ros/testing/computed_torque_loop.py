"""Computed torque against PD + inverse dynamics, lockstep, on the example arm with its 2 kg payload
(issue 47): the runs of ``test/simulation/test_computed_torque.py`` and ``benchmarks/computed_torque.py``.

Both laws at equal bandwidth ω: computed torque with ``ct_kp`` = ω², ``ct_kd`` = 2 ω on every joint;
PD + inverse dynamics with torque gains M_ii(q_home) ω² and 2 ω M_ii(q_home) (the mass matrix of the
node's model, payload included, at the start pose). The node knows the payload from a corrections
file (as the demo's, or scaled: a payload the node gets wrong) and the URDF's joint damping
(``urdf_joint_dynamics``, which the simulator keeps). Needs rclpy initialised.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rnea_ros import RobotModel
from rnea_ros.analysis.gains import critically_damped_gains, mass_matrix
from rnea_ros.demo.closed_loop import Run
from rnea_ros.demo.demo import PAYLOAD, START
from rnea_ros.dynamics.corrections import Corrections, JointCorrection, Payload, save_corrections
from rnea_ros.dynamics.payload import Inertial
from rnea_ros.motion.multisine import fast_multisine
from rnea_ros.simulation.physics import Payload as SimPayload
from rnea_ros.simulation.physics import SimOptions, SimRobot
from rnea_ros.testing.closed_loop_runner import run_closed_loop
from rnea_ros.testing.lockstep_in_process import tracking_error
from rnea_ros.testing.reference import ARM_URDF

ARM = RobotModel.from_urdf(ARM_URDF)
MOVING = list(ARM.joint_names[:7])  # the gripper holds its opening
LAWS = ("inverse_dynamics", "computed_torque")  # PD + inverse dynamics, computed torque
TRACKING_BANDWIDTH = 20.0  # rad/s: the closed-loop figures' gains (~20-25 rad/s at START)
TRACKING_SECONDS = 4.0
STEP_BANDWIDTH = 10.0  # rad/s
STEP_JOINT = "joint2"
STEP = 0.1  # rad
STEP_AT = 0.3  # s of trajectory time
STEP_SECONDS = 1.8  # the step's response over 1.5 s
# joint2's inertia (payload included) 3.3 kg·m² stretched, 1.5 folded (2.9 at START); gravity on it 31-35 N·m
POSES = {
    "stretched": [0.0, 0.5, 0.0, -0.1, 0.0, 0.3, 0.0, 0.02],
    "folded": [0.0, 0.5, 0.0, -2.4, 0.0, 1.5, 0.0, 0.02],
}


def payload_inertial(scale: float = 1.0) -> Inertial:
    """The simulator's payload (the demo's 2 kg), its mass and inertia times ``scale``."""
    inertia = np.diag(PAYLOAD["payload_inertia"])
    return Inertial(scale * PAYLOAD["payload_mass"], np.array(PAYLOAD["payload_com"]), scale * inertia)


def corrections_file(folder: Path, scale: float = 1.0, joints: dict | None = None) -> Path:
    """The payload as the node knows it, as rnea_analyze --identify --payload-link writes it;
    ``joints``: joint terms by joint name (``JointCorrection``), which replace the URDF's there."""
    path = folder / f"payload_{scale:g}{'_joints' if joints else ''}.yaml"
    save_corrections(Corrections(joints or {}, Payload(PAYLOAD["payload_link"], payload_inertial(scale))), path)
    return path


def node_parameters(
    law: str, bandwidth: float, folder: Path, payload_scale: float = 1.0, joints: dict | None = None
) -> dict:
    """rnea_node's parameters for ``law`` at ``bandwidth``: equal for both laws (the module docstring)."""
    node = {
        "robot_description": ARM_URDF,
        "command_source": law,
        "corrections_file": str(corrections_file(folder, payload_scale, joints)),
        "urdf_joint_dynamics": True,
    }
    if law == "computed_torque":
        return {**node, "ct_kp": [bandwidth**2] * ARM.nv, "ct_kd": [2.0 * bandwidth] * ARM.nv}
    believed = ARM.with_payload(PAYLOAD["payload_link"], payload_inertial(payload_scale))
    _, kp, kd = critically_damped_gains(believed, np.array(START), bandwidth)
    return {**node, "kp": kp.tolist(), "kd": kd.tolist()}


def sim_parameters(start: list[float], duration: float) -> dict:
    return {
        "robot_description": ARM_URDF,
        "realtime": False,
        "initial_positions": start,
        "duration": duration,
        **PAYLOAD,
    }


def tracking(
    folder: Path,
    law: str,
    env: dict,
    payload_scale: float = 1.0,
    bandwidth: float = TRACKING_BANDWIDTH,
    integral: tuple[float, float] | None = None,
) -> np.ndarray:
    """RMS tracking error per moving joint [°] on the fast multi-sine; ``integral``: computed torque's
    (ct_ki, ct_i_clamp) on every joint."""
    trajectory = fast_multisine(np.array(START), moving=7)
    name = f"ct_track_{law}_{payload_scale:g}_{bandwidth:g}_{bool(integral)}".replace(".", "_")
    node = node_parameters(law, bandwidth, folder, payload_scale)
    if integral is not None:
        node = {**node, "ct_ki": [integral[0]], "ct_i_clamp": [integral[1]]}
    run = run_closed_loop(folder, name, sim_parameters(START, TRACKING_SECONDS), node, trajectory, ARM.joint_names, env)
    error = run.tracking_error(MOVING)
    if len(error) < 0.9 * TRACKING_SECONDS * 1000:
        raise RuntimeError(f"{name}: {len(error)} states of the trajectory\n{run.sim_log[-500:]}")
    return np.degrees(np.sqrt((error**2).mean(axis=0)))


SIM_PAYLOAD_SHAPE = (tuple(PAYLOAD["payload_com"]), tuple(PAYLOAD["payload_inertia"]))


def implicit_damping(timestep: float) -> dict:
    """Joint terms that make the node's model the simulator's: the URDF's damping d and friction of
    every joint that has them, and armature d·dt: MuJoCo's Euler step integrates joint damping
    implicitly, (M + dt·D) q̈ = τ − h − D q̇, as if the joint had that much more inertia."""
    return {
        name: JointCorrection(viscous=damping, coulomb=friction, armature=damping * timestep)
        for name, (damping, friction) in ARM.joint_dynamics.items()
    }


def tracking_in_process(
    law: str,
    bandwidth: float,
    folder: Path,
    timestep: float = 0.001,
    joint_dynamics: bool = True,
    velocity_shift: float = 0.0,
    joints: dict | None = None,
) -> np.ndarray:
    """``tracking``'s RMS per moving joint [°] (payload exact), in one process (``lockstep_in_process``):
    the simulator stepping every ``timestep``; ``joint_dynamics``: the URDF's damping and friction in
    the simulator and the node (else in neither); ``velocity_shift``, ``joints``: the node is sent
    the desired velocities that much earlier, and given these joint terms."""
    payload = SimPayload(*(PAYLOAD[k] for k in ("payload_link", "payload_mass")), *SIM_PAYLOAD_SHAPE)
    robot = SimRobot(ARM_URDF, SimOptions(timestep=timestep, payload=payload, keep_urdf_damping=joint_dynamics))
    robot.set_positions(dict(zip(robot.command_joints, START, strict=True)))
    node = node_parameters(law, bandwidth, folder, joints=joints)
    node["urdf_joint_dynamics"] = joint_dynamics
    trajectory = fast_multisine(np.array(START), moving=7)
    error = tracking_error(robot, node, trajectory, TRACKING_SECONDS, MOVING, velocity_shift)
    return np.degrees(np.sqrt((error**2).mean(axis=0)))


@dataclass(frozen=True)
class Step:
    """A step of ``size`` on joint ``joint`` at time ``when``, from ``start``, at rest before and after
    (the runner's trajectory interface: ``at``, ``at_times``)."""

    start: np.ndarray
    joint: int
    size: float
    when: float

    def at_times(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        q = np.tile(self.start, (len(t), 1))
        q[:, self.joint] += np.where(np.asarray(t) >= self.when, self.size, 0.0)
        return q, np.zeros_like(q), np.zeros_like(q)

    def at(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        q, qd, qdd = self.at_times(np.array([t]))
        return q[0], qd[0], qdd[0]


@dataclass(frozen=True)
class StepResponse:
    time: np.ndarray  # s after the step
    response: np.ndarray  # the joint's motion over the step's size: 0 before, 1 on target
    largest_effort: np.ndarray  # |effort| applied per joint, over its URDF limit (< 1: never clipped)

    @property
    def overshoot(self) -> float:
        return float(self.response.max() - 1.0)

    def rise_time(self) -> float:
        """From 10 % to 90 % of the step [s]."""
        return float(self.time[np.argmax(self.response >= 0.9)] - self.time[np.argmax(self.response >= 0.1)])


def step_response(folder: Path, law: str, pose: str, env: dict) -> StepResponse:
    """A 0.1 rad step on joint2 at ω_n = 10 rad/s from ``pose`` (a key of POSES)."""
    start = np.array(POSES[pose])
    joint = ARM.joint_names.index(STEP_JOINT)
    trajectory = Step(start, joint, STEP, STEP_AT)
    node = node_parameters(law, STEP_BANDWIDTH, folder)
    run = run_closed_loop(
        folder, f"ct_step_{law}_{pose}", sim_parameters(POSES[pose], STEP_SECONDS), node, trajectory,
        ARM.joint_names, env,
    )  # fmt: skip
    return _response(run, joint, start[joint])


def _response(run: Run, joint: int, start: float) -> StepResponse:
    after = run.time >= STEP_AT
    q = run.positions([STEP_JOINT])[:, 0]
    columns = [run.joint_names.index(name) for name in ARM.joint_names]
    largest = np.abs(run.effort[run.time >= 0.0][:, columns]).max(axis=0) / ARM.effort_limits
    return StepResponse(run.time[after] - STEP_AT, (q[after] - start) / STEP, largest)


def response_difference(a: StepResponse, b: StepResponse) -> float:
    """The largest difference of two step responses, as a fraction of the step, on their common times."""
    n = min(len(a.response), len(b.response))
    return float(np.abs(a.response[:n] - b.response[:n]).max())


def sampled_loop_radius(law: str, bandwidth: float, q: np.ndarray, period: float = 0.001) -> float:
    """The spectral radius of the feedback loop linearised at ``q`` and sampled at ``period`` (the
    node's commands held for one step: an exact double integrator under M(q), the model exact, the
    feed-forward cancelling the rest); > 1: unstable there. Computed torque's feedback is M(q) times
    its gains, PD + inverse dynamics' the torque gains of ``node_parameters``."""
    model = ARM.with_payload(PAYLOAD["payload_link"], payload_inertial())
    M = mass_matrix(model, q)
    n = len(M)
    if law == "computed_torque":
        kp, kd = M * bandwidth**2, M * 2.0 * bandwidth
    else:
        _, p, d = critically_damped_gains(model, np.array(START), bandwidth)
        kp, kd = np.diag(p), np.diag(d)
    inverse = np.linalg.inv(M)
    A = np.block([[np.eye(n), period * np.eye(n)], [np.zeros((n, n)), np.eye(n)]])
    B = np.vstack([0.5 * period**2 * inverse, period * inverse])
    return float(np.abs(np.linalg.eigvals(A - B @ np.hstack([kp, kd]))).max())


def hold_floor(law: str, bandwidth: float, period: float = 0.001) -> np.ndarray:
    """The tracking floor [°] (RMS per moving joint, the payload exact) of the 1 ms lockstep on the fast
    multi-sine, computed, not simulated: each law's error dynamics linearised along the trajectory, in
    continuous time (the simulator's semi-implicit Euler step makes the command act as a(t) over its
    step: a leapfrog), forced by what sampling at ``period`` h adds when a law ignores it: the
    measured velocity is the last step's mean, h/2 behind, so ė carries + (h/2) q̈_d; and MuJoCo
    integrates joint damping D implicitly, a torque h D q̈ the node's model lacks. Computed torque
    before it took both in (controller/computed_torque.py; now 0 to first order in h):
    ë + Kd ė + Kp e = −Kd (h/2) q̈_d + M(q_d)⁻¹ h D q̈_d; PD + inverse dynamics (its torque gains):
    M(q_d) ë + Kd ė + Kp e = −Kd (h/2) q̈_d + h D q̈_d. Integrated with steps of h/10."""
    model = ARM.with_payload(PAYLOAD["payload_link"], payload_inertial())
    n = len(MOVING)
    q, _, qdd = fast_multisine(np.array(START), moving=n).at_times(np.arange(0.0, TRACKING_SECONDS, period))
    damping = np.zeros(n)
    for name, (d, _) in ARM.joint_dynamics.items():
        damping[MOVING.index(name)] = d
    if law == "computed_torque":
        kp, kd = np.full(n, bandwidth**2), np.full(n, 2.0 * bandwidth)
    else:
        _, kp, kd = critically_damped_gains(model, np.array(START), bandwidth)
        kp, kd = kp[:n], kd[:n]
    e, e_dot, errors, dt = np.zeros(n), np.zeros(n), np.empty((len(q), n)), period / 10
    for k in range(len(q)):
        inverse = np.linalg.inv(mass_matrix(model, q[k])[:n, :n])
        a = qdd[k, :n]
        lag, torque = -kd * 0.5 * period * a, period * damping * a
        for _ in range(10):
            if law == "computed_torque":
                e_dot = e_dot + dt * (lag + inverse @ torque - kd * e_dot - kp * e)
            else:
                e_dot = e_dot + dt * (inverse @ (lag + torque - kd * e_dot - kp * e))
            e = e + dt * e_dot
        errors[k] = e
    return np.degrees(np.sqrt((errors**2).mean(axis=0)))
