"""rnea_sim: the simulated robot behind the interfaces of a robot driver plus ros2_control.

Publishes ``joint_states`` (every joint: position, velocity, effort = the effort applied) and,
with a payload and a sensor, its force/torque sensor as ``geometry_msgs/WrenchStamped``; takes
efforts as ``effort_controllers/JointGroupEffortController`` does: ``std_msgs/Float64MultiArray``
on ``commands_topic``, values in the order of ``joints``. A command holds until the next; one of
the wrong length or not finite is refused; none for ``command_timeout`` (simulated time; 0: never,
the last command holds as in a JointGroupEffortController, which has no timeout) gives
zero effort and a warning. Until the first commands (``release_after_commands``) the robot is
held, as by its brakes.

Two clocks: ``realtime`` paces the physics to the wall clock (a driver's control loop); without
it (lockstep, for tests and figures) each step also waits, at most ``lockstep_timeout`` of wall
time, for a command sent after the last joint_states, so that every step uses the command
computed from the state before it (lockstep runs at real time or slower). Stamps are the
start's wall-clock time plus the simulated time. Physics and publishing run on one thread; commands arrive on another.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np
import rclpy
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory

from rnea_ros.node.ros_parameters import declare
from rnea_ros.node.subscription import DedicatedSubscription
from rnea_ros.simulation.parameters import SIM_PARAMETERS, SimSettings
from rnea_ros.simulation.trajectory_controller import Gains, TrajectoryController
from rnea_ros.trajectory import MAX_TRAJECTORY_POINTS, checked_trajectory
from rnea_ros.trajectory_cdr import read_joint_trajectory

# ``physics`` (MuJoCo) is imported only once rclpy has loaded its middleware: with MuJoCo's
# libraries loaded first, Fast DDS (these Jazzy wheels) served only one of two readers of a
# topic, and the other starved (measured: a second joint_states reader stalled after ~1 s).

DESCRIPTION_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
PID_PARAMETERS = ("pid_p", "pid_i", "pid_d", "pid_i_clamp")
START_WAIT = 0.05  # s of wall time a step waits for a controller that has not sent its first command
# s of wall time without an answer after which the state is published again (same stamp) and the
# controller's writer is looked for
RESEND_AFTER = 0.1
STALE_CONTROLLER = 0.1  # s of simulated time without commands after which lockstep stops waiting for them
TAP_DEPTH = 10_000
RECORD_WRITE_WAIT = 120.0  # s the shutdown waits for the record to be written (an hour of states: seconds)
MAX_RECORDED = 3_600_000  # one hour at 1 kHz; later states are not recorded (with a warning)


class SimNode(Node):
    def __init__(self) -> None:
        super().__init__("rnea_sim")
        try:
            self.p = SimSettings(**declare(self, SIM_PARAMETERS))
            self.fatal_error = unwritable(self.p.record_file) if self.p.record_file else None
            if self.fatal_error:
                self.fatal_error = f"record_file '{self.p.record_file}' cannot be written: {self.fatal_error}"
        except ValueError as error:  # a parameter out of its range or of the wrong type
            self.p, self.fatal_error = SimSettings(), f"invalid parameter: {error}"
        if self.fatal_error:
            self.get_logger().fatal(f"{self.fatal_error}; fix the parameters. Shutting down.")
        self.robot = None  # physics.SimRobot once a description is built
        self.finished = threading.Event()
        self.refused_commands = 0
        self.accepted_commands = 0
        self.zero_effort_steps = 0  # steps with a stale command (zero effort)
        self.lockstep_timeouts = 0
        self.resent_states = 0  # strict lockstep: states published again for want of an answer
        self._resendable: list[tuple] = []  # (publisher, message) of the newest state
        self.clipped = 0
        self.record: list[tuple] = []  # (stamp, q, qd, effort[, contact positions, wrenches]) per published state
        self._command = None  # (efforts, simulated time received)
        self._command_arrived = threading.Event()
        self._stop = threading.Event()
        self.pub_states = self.create_publisher(JointState, "joint_states", 100)
        # a second writer of the same states, for a recorder: a second reader of joint_states cost
        # rnea_node ~6 % of them (Fast DDS from the Jazzy wheels, measured 2026-11-23)
        # the last 10 s of states kept for it, also for a recorder that matches late (transient
        # local): a busy machine's recorder process once started 1.9 s into the trajectory
        tap_qos = QoSProfile(
            depth=TAP_DEPTH, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
        )
        self.pub_tap = self.create_publisher(JointState, self.p.tap_topic, tap_qos) if self.p.tap_topic else None
        self.pub_sensor = self.create_publisher(WrenchStamped, self.p.sensor_topic, 10) if self.p.sensor_topic else None
        self.pub_odometry = self.create_publisher(Odometry, self.p.odometry_topic, 10) if self.p.floating_base else None
        self.commands = DedicatedSubscription(self, Float64MultiArray, self.p.commands_topic, self._on_command, 10)
        # strict lockstep: the stamp of the newest state the controller answered, and the counts of
        # its answers and commands (one of each per state it computed, commands first)
        self._answered: tuple[int, int] | None = None
        self._answers = self._commands_received = 0
        self._suspended_since_answers: int | None = None  # strict lockstep suspended at this answer count
        if self.p.lockstep_answer_topic and not self.p.realtime:
            self.commands.also_serve(JointState, self.p.lockstep_answer_topic, self._on_answer, 100)
        self.jtc: TrajectoryController | None = None  # the joint_trajectory_controller stand-in, when chosen
        self.refused_trajectories = 0
        if self.p.controller == "joint_trajectory":
            self.create_subscription(JointTrajectory, self.p.trajectory_topic, self._on_trajectory, 10, raw=True)
        self._thread = threading.Thread(target=self._run, name="physics", daemon=True)
        self._start_wall = time.time()  # stamps are this wall-clock time plus the simulated time
        self._jtc_rows: list[int] = []
        self._jtc_logged = 0
        if self.fatal_error:
            return
        if self.p.robot_description:
            self._start(self.p.robot_description)
        else:
            self.create_subscription(String, "robot_description", lambda msg: self._start(msg.data), DESCRIPTION_QOS)

    # --- set-up ----------------------------------------------------------------------------------
    def _start(self, description: str) -> None:
        if self.robot is not None:
            self.get_logger().warning("a new robot_description is ignored: restart the simulation to change the robot")
            return
        try:
            self.robot = self._build(description)
        except Exception as error:
            self.get_logger().error(f"cannot simulate this robot_description: {str(error)[:500]}")
            return
        joints = self.robot.command_joints
        if self.p.controller == "joint_trajectory":
            try:
                values = [_per_joint(getattr(self.p, name), len(joints), name) for name in PID_PARAMETERS]
                gains = Gains(*(np.array(v) for v in values))
            except ValueError as error:
                self.get_logger().error(f"cannot simulate with these gains: {error}")
                self.robot = None
                return
            self.jtc = TrajectoryController(joints, gains)
            self._jtc_rows = [self.robot.joint_names.index(name) for name in joints]
            where = f"a joint_trajectory_controller stand-in on '{self.resolve_topic_name(self.p.trajectory_topic)}'"
        else:
            where = f"commands on '{self.commands.topic_name}'"
        for warning in self.robot.warnings:
            self.get_logger().warning(warning)
        self.get_logger().info(
            f"simulating {len(self.robot.joint_names)} joints at {self.p.rate:.0f} Hz "
            f"({'real time' if self.p.realtime else 'lockstep'}); {where} for {joints}"
        )
        self.commands.start()
        self._thread.start()

    def _build(self, description: str):
        from rnea_ros.simulation.physics import Payload, SimOptions, SimRobot

        p = self.p
        joints = list(p.joints)
        payload = None
        if p.payload_link and p.payload_mass > 0.0:
            payload = Payload(p.payload_link, p.payload_mass, tuple(p.payload_com), tuple(p.payload_inertia))
        options = SimOptions(
            timestep=1.0 / p.rate,
            gravity=tuple(p.gravity),
            keep_urdf_damping=p.keep_urdf_damping,
            payload=payload,
            sensor_link=p.payload_link if payload is not None and p.sensor_topic else "",
            floating_base=p.floating_base,
            contact_links=p.contact_links,
            contact_radius=p.contact_radius,
            sole_size=tuple(_per_joint(p.sole_size, 2, "sole_size")),
            friction=p.friction,
            ground_slope=p.ground_slope,
            initial_yaw=p.initial_yaw,
            soft_friction=p.soft_friction,
        )
        robot = SimRobot(description, options, joints)
        n = len(robot.command_joints)
        # what a real joint has and its URDF does not say: the calibration loop's hidden truth
        for parameter, field in (
            ("armature", "dof_armature"),
            ("damping", "dof_damping"),
            ("friction_loss", "dof_frictionloss"),
        ):
            values = _per_joint(getattr(p, parameter), n, parameter)
            for name, value in zip(robot.command_joints, values, strict=True):
                getattr(robot.model, field)[robot._joint(name)[1]] += value
        initial = _per_joint(p.initial_positions, n, "initial_positions")
        robot.set_positions(dict(zip(robot.command_joints, initial, strict=True)))
        return robot

    # --- commands --------------------------------------------------------------------------------
    def _on_command(self, msg: Float64MultiArray) -> None:
        robot = self.robot
        values = np.asarray(msg.data, dtype=float)
        if robot is None:
            return
        self._commands_received += 1  # refused ones too: strict lockstep counts arrivals
        if len(values) != len(robot.command_joints):  # one log line per reason, each at most once a second
            self.refused_commands += 1
            joints = robot.command_joints
            self.get_logger().error(
                f"command refused: {len(values)} values for {len(joints)} joints {joints}", throttle_duration_sec=1.0
            )
            return
        if not np.all(np.isfinite(values)):
            self.refused_commands += 1
            self.get_logger().error("command refused: values that are not finite", throttle_duration_sec=1.0)
            return
        self._command = (values, robot.time)
        self.accepted_commands += 1
        self._command_arrived.set()

    def _on_trajectory(self, data: bytes) -> None:
        """A trajectory for the JTC stand-in: it starts at its header.stamp (zero: on arrival). Read
        from its bytes: building a Python object per point would hold the simulation loop back."""
        jtc, robot = self.jtc, self.robot
        if jtc is None or robot is None:
            return
        try:
            content = read_joint_trajectory(data, MAX_TRAJECTORY_POINTS)
            trajectory = checked_trajectory(content.joint_names, content.time_from_start, content.fields)
            stamp = content.stamp[0] + content.stamp[1] * 1e-9
            jtc.receive(trajectory, stamp - self._start_wall if stamp > 0.0 else None)
        except ValueError as error:
            self.refused_trajectories += 1
            self.get_logger().error(f"trajectory refused: {str(error)[:300]}", throttle_duration_sec=1.0)

    def _on_answer(self, msg: JointState) -> None:
        self._answers += 1
        self._answered = (msg.header.stamp.sec, msg.header.stamp.nanosec)
        self._command_arrived.set()

    def _wait_for_the_answer(self, stamp: tuple[int, int]) -> str:
        """Strict lockstep: until the controller has answered the state of ``stamp`` and every command
        it sent before its answers has arrived (it sends one command, then one answer, per state).
        Returns "answered", "stopped" (shut down), "gone" (no writer of the answer topic is left: the
        controller stopped, which is not late) or "timeout" (lockstep_timeout)."""
        deadline = time.monotonic() + self.p.lockstep_timeout
        while True:
            answered = self._answered == stamp
            if answered and self._commands_received >= self._answers:
                return "answered"
            remaining = deadline - time.monotonic()
            if self._stop.is_set():
                return "stopped"
            if remaining <= 0.0:
                return "timeout"
            if not self._command_arrived.wait(min(remaining, RESEND_AFTER)):
                if self.count_publishers(self.p.lockstep_answer_topic) == 0:
                    return "gone"
                if not answered:  # the state or its answer lost (seen while readers match): once more
                    self.resent_states += 1
                    for publisher, message in self._resendable:
                        publisher.publish(message)
            self._command_arrived.clear()

    def _strict_lockstep(self, stamp: tuple[int, int]) -> None:
        """Waits for the controller's answer; after a timeout, stops waiting until it answers again
        (a controller that stalls once costs one lockstep_timeout, not one per step), loudly."""
        if self._suspended_since_answers is not None:
            if self._answers == self._suspended_since_answers:
                return
            self._suspended_since_answers = None
            self.get_logger().warning("strict lockstep resumed: the controller answers again")
        outcome = self._wait_for_the_answer(stamp)
        if outcome in ("answered", "stopped"):
            return
        self._suspended_since_answers = self._answers
        if outcome == "gone":
            self.get_logger().warning("strict lockstep: the controller is gone; stepping without it")
            return
        self.lockstep_timeouts += 1
        self._commands_received = max(self._commands_received, self._answers)  # a command lost: count afresh
        self.get_logger().error(
            f"strict lockstep broken: no answer to the state of {stamp[0]}.{stamp[1]:09d} within "
            f"{self.p.lockstep_timeout} s; stepping without the controller until it answers again"
        )

    def _efforts_now(self, robot) -> np.ndarray | None:
        """The command in force, zeros when it is stale; None while the brakes hold. With the JTC
        stand-in: its command of this step (the brakes hold until its first trajectory)."""
        if self.jtc is not None:
            if not self.jtc.has_trajectory:
                return None
            q, qd = robot.positions()[self._jtc_rows], robot.velocities()[self._jtc_rows]
            efforts = self.jtc.command(robot.time, 1.0 / self.p.rate, q, qd)
            if self.jtc.trajectories > self._jtc_logged:
                self._jtc_logged = self.jtc.trajectories
                self.get_logger().info(f"trajectory {self._jtc_logged} started at simulated time {robot.time:.4f} s")
            return efforts
        command = self._command
        if command is None or self.accepted_commands < self.p.release_after_commands:
            return None
        values, received = command
        if self.p.command_timeout > 0.0 and robot.time - received > self.p.command_timeout:
            self.get_logger().warning(
                f"no command for {robot.time - received:.2f} s (> command_timeout): zero effort",
                throttle_duration_sec=2.0,
            )
            self.zero_effort_steps += 1
            return np.zeros(len(robot.command_joints))
        return values

    def _controller_expected(self, robot) -> bool:
        """Lockstep waits for a controller that has not started yet or is still sending; once its
        commands are stale the robot goes on without it (zero effort, or the last command held
        when command_timeout is 0), at full speed."""
        if self.jtc is not None:
            return False  # the controller is inside this loop
        command = self._command
        patience = self.p.command_timeout or STALE_CONTROLLER
        return command is None or robot.time - command[1] <= patience

    # --- the loop --------------------------------------------------------------------------------
    def _run(self) -> None:
        robot, p = self.robot, self.p
        dt = 1.0 / p.rate
        start_wall = self._start_wall
        start_monotonic = time.monotonic()
        steps = 0
        released_at = None  # simulated time the brakes were released
        try:
            while not self._stop.is_set() and rclpy.ok(context=self.context):
                if released_at is not None and p.duration > 0.0 and robot.time - released_at >= p.duration - 1e-9:
                    break
                if steps % p.publish_every == 0:
                    self._command_arrived.clear()
                    stamp = self._publish(robot, start_wall)
                    if not p.realtime and self._controller_expected(robot):
                        # strict once the robot moves: while the brakes hold, a controller still
                        # gathering its inputs may leave states unanswered
                        if p.lockstep_answer_topic and self._command is not None and released_at is not None:
                            self._strict_lockstep(stamp)
                        elif self._command is None:
                            # no controller yet: it may not hear the first states (its reader matches late)
                            self._command_arrived.wait(min(p.lockstep_timeout, START_WAIT))
                        elif not self._command_arrived.wait(p.lockstep_timeout):
                            self.lockstep_timeouts += 1
                efforts = self._efforts_now(robot)
                if efforts is None:
                    robot.data.time += dt  # held by the brakes until the controller sends its first command
                else:
                    released_at = robot.time if released_at is None else released_at
                    self.clipped += robot.step(efforts)
                steps += 1
                # Lockstep may run slower than real time, never faster: stamps are the wall clock's
                # start plus simulated time, and must never be in the future for the controller.
                delay = start_monotonic + steps * dt - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
        except Exception as error:  # the loop must say why it stopped
            if rclpy.ok(context=self.context):
                self.get_logger().fatal(f"simulation stopped: {error!r}")
            # else: shut down (Ctrl-C) between the loop's check and a publish: nothing went wrong
        finally:
            try:
                self._write_record(robot)
                summary = (
                    f"simulated {robot.time:.3f} s in {steps} steps: {self.accepted_commands} commands taken, "
                    f"{self.refused_commands} refused, {self.zero_effort_steps} steps at zero effort (stale "
                    f"command), {self.lockstep_timeouts} lockstep waits timed out ({self.resent_states} states "
                    f"sent again), {self.clipped} efforts clipped"
                )
                if rclpy.ok(context=self.context):
                    self.get_logger().info(summary)
                else:  # shut down: the logger's copy to /rosout would fail with an error line of its own
                    print(f"[rnea_sim] {summary}", file=sys.stderr, flush=True)
            finally:
                self.finished.set()  # whatever happened above: main must not wait forever

    def _publish(self, robot, start_wall: float) -> tuple[int, int]:
        sec, nanosec = divmod(round((start_wall + robot.time) * 1e9), 1_000_000_000)
        msg = JointState(
            name=robot.joint_names,
            position=robot.positions().tolist(),
            velocity=robot.velocities().tolist(),
            effort=robot.applied.tolist(),
        )
        msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
        self.pub_states.publish(msg)
        self._resendable = [(self.pub_states, msg)]
        if self.pub_tap is not None:
            self.pub_tap.publish(msg)
        if self.p.record_file:
            if len(self.record) < MAX_RECORDED:
                state = (sec + nanosec * 1e-9, msg.position, msg.velocity, msg.effort)
                if self.p.floating_base:
                    state += (robot.contact_positions(), robot.contact_wrenches())
                self.record.append(state)
            elif len(self.record) == MAX_RECORDED:
                self.get_logger().warning(f"record_file: only the first {MAX_RECORDED} states are kept", once=True)
        if self.pub_odometry is not None:
            self._publish_odometry(robot, msg.header.stamp)
        if self.pub_sensor is not None:
            wrench = robot.sensor_wrench() * (-1.0 if self.p.sensor_reports_robot_side else 1.0)
            sensor = WrenchStamped()
            sensor.header.stamp = msg.header.stamp
            sensor.header.frame_id = self.p.payload_link
            f, t = sensor.wrench.force, sensor.wrench.torque
            f.x, f.y, f.z, t.x, t.y, t.z = (float(x) for x in wrench)
            self.pub_sensor.publish(sensor)
            self._resendable.append((self.pub_sensor, sensor))
        return sec, nanosec

    def _publish_odometry(self, robot, stamp) -> None:
        position, quaternion, linear, angular = robot.base_state()
        odometry = Odometry(child_frame_id=robot.base_link)
        odometry.header.stamp, odometry.header.frame_id = stamp, "world"
        self._resendable.append((self.pub_odometry, odometry))
        pose, twist = odometry.pose.pose, odometry.twist.twist
        pose.position.x, pose.position.y, pose.position.z = (float(x) for x in position)
        o = pose.orientation
        o.x, o.y, o.z, o.w = (float(x) for x in quaternion)
        twist.linear.x, twist.linear.y, twist.linear.z = (float(x) for x in linear)
        twist.angular.x, twist.angular.y, twist.angular.z = (float(x) for x in angular)
        self.pub_odometry.publish(odometry)

    def _write_record(self, robot) -> None:
        if not self.p.record_file:
            return
        columns = list(zip(*self.record, strict=True)) if self.record else [(), (), (), ()]
        floating = {}
        if self.p.floating_base:
            # ground truth of the contacts: each link's origin in the world, the ground's wrench on it
            # in its frame about its origin (as estimated_contact_wrenches)
            floating = {
                "contact_links": np.array(robot.options.contact_links),
                "contact_position": np.array(columns[4] if self.record else ()),
                "contact_wrench": np.array(columns[5] if self.record else ()),
            }
        arrays = {
            "joint_names": np.array(robot.joint_names),
            "stamp": np.array(columns[0]),
            "position": np.array(columns[1]),
            "velocity": np.array(columns[2]),
            "effort": np.array(columns[3]),
            **floating,
        }
        path = Path(self.p.record_file)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:  # atomically: an interrupted write leaves no half a file
            with open(temporary, "wb") as file:
                np.savez(file, **arrays)
            os.replace(temporary, path)
        except OSError as error:
            temporary.unlink(missing_ok=True)
            self._log_error(f"record_file '{path}' not written: {error.strerror or error}")

    def _log_error(self, text: str) -> None:
        if rclpy.ok(context=self.context):
            self.get_logger().error(text)
        else:  # shut down: the logger's copy to /rosout would fail
            print(f"[rnea_sim] {text}", file=sys.stderr, flush=True)

    def destroy_node(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=RECORD_WRITE_WAIT)  # it writes the record as it ends
        self.commands.destroy()
        super().destroy_node()


def _per_joint(values, n: int, name: str) -> list[float]:
    values = [float(v) for v in values]
    if len(values) == 1:
        return values * n
    if len(values) != n:
        raise ValueError(f"{name} has {len(values)} values: give 1 or {n}")
    return values


def unwritable(record_file: str) -> str | None:
    """Why ``record_file`` cannot be written (a file made and removed beside it), or None."""
    path = Path(record_file)
    if path.is_dir():
        return "it is a directory"
    probe = path.with_name(f".{path.name}.{os.getpid()}.probe")
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        return str(error.strerror or error)
    return None


def main(args=None) -> None:
    rclpy.init(args=args)
    node = SimNode()
    terminated = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: terminated.set())  # stop as on Ctrl-C: the record written
    try:
        while rclpy.ok() and not node.finished.is_set() and not terminated.is_set() and node.fatal_error is None:
            rclpy.spin_once(node, timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        fatal = node.fatal_error
        node.destroy_node()
        rclpy.try_shutdown()
    sys.exit(1 if fatal else 0)


if __name__ == "__main__":
    main()
