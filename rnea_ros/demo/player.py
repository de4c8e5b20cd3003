"""rnea_play: move your own robot through a multi-sine about where it stands, through rnea_node.

    rnea_play [--joints j1 j2 ...] [--amplitude 0.1] [--frequencies 0.2 0.5] [--seconds 10]
              [--wait 20] [--excitation excitation.yaml] [--urdf robot.urdf] [--ros-args -r __ns:=/robot ...]

Waits (at most ``--wait`` s) for ``joint_states``; its positions are the start. Then sends the
trajectory q(t) = start + Σ a_k (1 − cos 2π f_k t) (positions, velocities, accelerations) to
rnea_node's ``desired_accelerations``, 60 points of 1 ms ahead of the newest joint_states stamp
every 10 ms, so that rnea_node's ``effort_commands`` are PD + inverse dynamics along it (set
``kp``/``kd``: rnea_gains proposes them). Once a second it prints the node's feed-forward
efforts; at the end the RMS tracking error per joint, measured on joint_states, and a hint when a
simulator (rnea_sim's ``/diagnostics``) gave zero effort meanwhile for want of commands. Needs no robot
model: only joint names and positions; with the URDF (``--urdf``, or the ``robot_description``
topic when something publishes it) each joint stays within its position limits less
LIMIT_MARGIN (turned to the side with room, or its amplitude cut, with a warning). Exit code 1
when no joint_states came, or when they stop for JOINT_STATES_TIMEOUT during the run (the robot or
rnea_sim gone: said, and no figures); 130 on SIGINT, 143 on SIGTERM, quietly. With
``--excitation`` it plays rnea_excite's designed trajectory instead, once the robot stands at its
start.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy._rclpy_pybind11 import RCLError
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros.analysis.excitation import load as load_excitation
from rnea_ros.demo.closed_loop import SEND_PERIOD, trajectory_chunk
from rnea_ros.description import read_description
from rnea_ros.dynamics.urdf import ModelError, parse_urdf
from rnea_ros.motion.multisine import MultiSine, multisine, within_limits
from rnea_ros.plumbing.signals import join_signal_thread

LEAD = 0.5  # s of joint_states stamps between the start and trajectory time 0 (the node hears the first points)
POINT_PERIOD = 1e-3  # s between the points sent
START_TOLERANCE = 0.05  # rad or m between a designed excitation's start and where the robot stands
MAX_SAMPLES = 2_000_000  # joint_states kept for the final figures (over half an hour at 1 kHz)
LIMIT_MARGIN = 0.05  # rad or m kept from each URDF position limit
DESCRIPTION_WAIT = 2.0  # s to hear a robot_description on its topic (latched by robot_state_publisher)
DIAGNOSTICS_WAIT = 1.5  # s to hear the simulator's /diagnostics of the run's end (it publishes once a second)
JOINT_STATES_TIMEOUT = 5.0  # s of wall-clock time without joint_states after which the run stops (exit 1)


class TerminatedError(Exception):
    """SIGTERM: stop as on Ctrl-C, without a traceback."""


def _terminate(_signum, _frame) -> None:
    raise TerminatedError


class Player(Node):
    def __init__(self, joints: list[str] | None) -> None:
        super().__init__("rnea_play")
        self.wanted = joints
        self.joints: list[str] | None = None
        self.rows: list[int] = []
        self.stamps: list[float] = []
        self.positions: list[np.ndarray] = []
        self.newest = None  # builtin_interfaces/Time of the newest joint_states
        self.arrived = time.monotonic()  # when the newest joint_states came (monotonic)
        self.feedforward: tuple[list[str], np.ndarray] | None = None
        self.description: str | None = None
        self.zero_effort_steps: int | None = None  # rnea_sim's count, on /diagnostics
        self.diagnostics_heard = 0
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.create_subscription(String, "robot_description", self._on_description, latched)
        self.desired = self.create_publisher(JointTrajectory, "desired_accelerations", 10)
        self.create_subscription(JointState, "joint_states", self._on_joint_states, 100)
        self.create_subscription(JointState, "feedforward_efforts", self._on_feedforward, 10)
        self.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 10)

    def _on_joint_states(self, msg: JointState) -> None:
        if self.joints is None:
            names = [n for n, _ in zip(msg.name, msg.position, strict=False)]
            joints = self.wanted or names
            missing = [name for name in joints if name not in names]
            if missing:
                self.get_logger().error(f"joint_states lack {missing}; they have {names}", throttle_duration_sec=2.0)
                return
            self.joints, self.rows = joints, [names.index(name) for name in joints]
        if len(msg.position) <= max(self.rows) or len(self.stamps) >= MAX_SAMPLES:
            return
        self.newest = msg.header.stamp
        self.arrived = time.monotonic()
        self.stamps.append(msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9)
        self.positions.append(np.array([msg.position[k] for k in self.rows]))

    def _on_feedforward(self, msg: JointState) -> None:
        self.feedforward = (list(msg.name), np.array(msg.effort))

    def _on_description(self, msg: String) -> None:
        self.description = msg.data

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            values = {kv.key: kv.value for kv in status.values}
            if status.name == "rnea_sim" and "zero_effort_steps" in values:
                self.zero_effort_steps = int(values["zero_effort_steps"])
                self.diagnostics_heard += 1


def zero_effort_hint(steps: int) -> str:
    """What rnea_play says after a run during which the simulator zeroed the effort ``steps`` times."""
    return (
        f"hint: rnea_sim applied zero effort for {steps} steps during this run: no command reached it for longer "
        "than its command_timeout (rnea_node starved or stopped, a busy machine), so the figures above include "
        "a robot left without torque; its WARN lines and /diagnostics say when"
    )


def zero_effort_during(player: Player, before: int | None) -> int:
    """The simulator's zero-effort steps since ``before`` (its count when the run started), after
    waiting for its next /diagnostics; 0 without a simulator."""
    if player.zero_effort_steps is None:
        return 0
    heard = player.diagnostics_heard
    deadline = time.monotonic() + DIAGNOSTICS_WAIT
    while player.diagnostics_heard == heard and time.monotonic() < deadline:
        rclpy.spin_once(player, timeout_sec=0.05)
    return player.zero_effort_steps - (before or 0)


def position_limits(description: str, joints: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) of ``joints`` from the URDF (±inf where it gives none); ModelError if unreadable."""
    limits = parse_urdf(description).position_limits
    lower = np.array([limits.get(name, (-np.inf, np.inf))[0] for name in joints])
    upper = np.array([limits.get(name, (-np.inf, np.inf))[1] for name in joints])
    return lower, upper


def kept_within_limits(player: Player, trajectory: MultiSine, description: str | None) -> MultiSine:
    """The multi-sine within the URDF's limits, each joint changed said; unchanged without a URDF."""
    log = player.get_logger()
    if description is None:
        log.warning("no URDF (--urdf, or a robot_description topic): the joints' limits are not checked")
        return trajectory
    try:
        lower, upper = position_limits(description, player.joints)
    except ModelError as error:
        log.warning(f"the URDF cannot be read ({error}): the joints' limits are not checked")
        return trajectory
    kept, said = within_limits(trajectory, lower, upper, LIMIT_MARGIN)
    for i, what in said.items():
        log.warning(f"{player.joints[i]} {what}")
    return kept


def rms_table(joints: list[str], stamps: np.ndarray, q: np.ndarray, trajectory: MultiSine, t0: float) -> str:
    moving = stamps >= t0
    reference, _, _ = trajectory.at_times(stamps[moving] - t0)
    rms = np.degrees(np.sqrt(((reference - q[moving]) ** 2).mean(axis=0)))
    lines = [f"RMS tracking error over {moving.sum()} joint_states [° for revolute joints; prismatic: m × 57.3]:"]
    lines += [f"  {name:<28}{value:10.4f}" for name, value in zip(joints, rms, strict=True)]
    return "\n".join(lines)


def play(
    player: Player,
    amplitude: float,
    frequencies: list[float],
    seconds: float,
    wait: float,
    designed: MultiSine | None = None,
    description: str | None = None,
) -> int:
    """Plays the multi-sine about where the robot stands, within the limits of the URDF
    ``description`` (or the one heard on robot_description), or ``designed`` (rnea_excite's, within
    its limits by design), which must start where the robot stands."""
    log = player.get_logger()
    deadline = time.monotonic() + wait
    while player.newest is None and time.monotonic() < deadline:
        rclpy.spin_once(player, timeout_sec=0.05)
    if player.newest is None:
        log.error(f"no joint_states on '{player.resolve_topic_name('joint_states')}' within {wait:g} s")
        return 1
    start = player.positions[-1].copy()
    if designed is None:
        listen_until = time.monotonic() + DESCRIPTION_WAIT
        while description is None and player.description is None and time.monotonic() < listen_until:
            rclpy.spin_once(player, timeout_sec=0.05)
        trajectory = kept_within_limits(
            player, multisine(start, amplitude, frequencies), description or player.description
        )
    else:
        trajectory = designed
    if designed is not None and np.abs(designed.start - start).max() > START_TOLERANCE:
        log.error(
            f"the excitation starts at {np.round(designed.start, 3).tolist()}, the robot stands at "
            f"{np.round(start, 3).tolist()}: move it there first (within {START_TOLERANCE} rad or m)"
        )
        return 1
    t0 = player.stamps[-1] + LEAD
    zero_effort_before = player.zero_effort_steps
    print(f"playing a multi-sine on {player.joints} from {np.round(start, 3).tolist()}", flush=True)
    sent = printed = time.monotonic()
    wall_limit = time.monotonic() + 20.0 * (seconds + LEAD) + wait  # lockstep runs slower than real time
    while player.stamps[-1] < t0 + seconds and time.monotonic() < wall_limit:
        rclpy.spin_once(player, timeout_sec=SEND_PERIOD / 4)
        now = time.monotonic()
        if now - player.arrived > JOINT_STATES_TIMEOUT:
            log.error(
                f"joint_states stopped {now - player.arrived:.1f} s ago on "
                f"'{player.resolve_topic_name('joint_states')}' (the robot or rnea_sim gone?): "
                "run cut short, no figures"
            )
            return 1
        if now - sent >= SEND_PERIOD:
            sent = now
            player.desired.publish(trajectory_chunk(player.joints, trajectory, player.newest, t0, POINT_PERIOD))
        if now - printed >= 1.0 and player.feedforward is not None:
            printed = now
            names, effort = player.feedforward
            shown = ", ".join(f"{n} {e:.2f}" for n, e in list(zip(names, effort, strict=False))[:6])
            print(f"t {player.stamps[-1] - t0:6.2f} s   rnea_node feed-forward [N·m]: {shown}", flush=True)
    end, _, _ = trajectory.at(seconds)
    hold = JointTrajectoryPoint(positions=end.tolist(), velocities=[0.0] * len(end), accelerations=[0.0] * len(end))
    player.desired.publish(JointTrajectory(joint_names=player.joints, points=[hold]))
    if player.feedforward is None:
        log.warning("no feedforward_efforts heard: is rnea_node running in this namespace?")
    stamps = np.array(player.stamps)
    if not np.any(stamps >= t0):
        log.error("no joint_states during the trajectory: no figures")
        return 1
    print(rms_table(player.joints, stamps, np.array(player.positions), trajectory, t0), flush=True)
    zeroed = zero_effort_during(player, zero_effort_before)
    if zeroed > 0:
        print(zero_effort_hint(zeroed), flush=True)
    return 0


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    own = argv[: argv.index("--ros-args")] if "--ros-args" in argv else argv
    parser = argparse.ArgumentParser(
        prog="rnea_play", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--joints", nargs="+", help="the joints to move (default: every joint of joint_states)")
    parser.add_argument("--amplitude", type=float, default=0.1, help="largest excursion per joint [rad or m]")
    parser.add_argument("--frequencies", type=float, nargs="+", default=[0.2, 0.5], help="[Hz]")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of the trajectory")
    parser.add_argument("--wait", type=float, default=20.0, help="longest wait for joint_states [s]")
    parser.add_argument("--excitation", help="play this rnea_excite file instead (its joints, from its start)")
    parser.add_argument("--urdf", help="keep within this URDF's position limits (default: robot_description's)")
    args = parser.parse_args(own)
    description = None
    if args.urdf:
        try:
            description = read_description(args.urdf)
        except (OSError, ValueError) as error:
            parser.error(f"--urdf: {error}")
    designed = None
    if args.excitation:
        try:
            args.joints, designed = load_excitation(args.excitation)
        except ValueError as error:
            parser.error(str(error))
    if not (0.0 < args.seconds <= 3600.0 and 0.0 <= args.amplitude <= 3.0):
        parser.error("--seconds must be in (0, 3600] and --amplitude in [0, 3]")
    signal.signal(signal.SIGTERM, _terminate)  # rclpy's handler, installed by init, calls it after its own
    player = None
    try:
        rclpy.init(args=argv[len(own) :] and ["rnea_play", *argv[len(own) :]])
        player = Player(args.joints)
        code = play(player, args.amplitude, args.frequencies, args.seconds, args.wait, designed, description)
    except KeyboardInterrupt:
        code = 130
    except (TerminatedError, ExternalShutdownException):
        code = 143
    except RCLError:  # the context shut down by a signal under a call in C
        if rclpy.ok():
            raise
        code = 143
    finally:
        join_signal_thread()  # before rclpy's global executor goes
        if player is not None:
            player.destroy_node()
        rclpy.try_shutdown()
    sys.exit(code)


if __name__ == "__main__":
    main()
