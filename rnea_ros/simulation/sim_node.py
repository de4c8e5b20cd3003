"""rnea_sim: the simulated robot behind the interfaces of a robot driver plus ros2_control.

Publishes ``joint_states`` (every joint: position, velocity, effort = the effort applied) and,
with a payload and a sensor, its force/torque sensor as ``geometry_msgs/WrenchStamped``; takes
efforts as ``effort_controllers/JointGroupEffortController`` does: ``std_msgs/Float64MultiArray``
on ``commands_topic``, values in the order of ``joints`` (by default the node's model order). A
command holds until the next; one of the wrong length, not finite, or whose layout label names other
joints or another order than ``joints`` (rnea_node labels its commands with its joints) is refused;
none for ``command_timeout`` (simulated time; 0: never, the last command holds as in a
JointGroupEffortController, which has no timeout) gives zero effort and a warning. Until the first
commands (``release_after_commands``) the robot is held, as by its brakes. With ``controller:
motor_pd`` the commands are ``sensor_msgs/JointState`` (a reference and a feed-forward per joint, by
name) and the PD is closed at every step, as legged robots' motor drivers do (``commands``).

Two clocks: ``realtime`` paces the physics to the wall clock (a driver's control loop); without
it (lockstep, for tests and figures) each step also waits, at most ``lockstep_timeout`` of wall
time, for a command sent after the last joint_states, so that every step uses the command
computed from the state before it (lockstep runs at real time or slower). Stamps are the
start's wall-clock time plus the simulated time (on ``/clock`` too, with ``publish_clock``). Physics
and publishing run on one thread; commands arrive on another; with ``controller_clock: wall`` the
joint_trajectory_controller stand-in runs on a third (``wall_clock_controller``). A robot that cannot
be simulated (no movable joint, a URDF MuJoCo refuses, gains of the wrong length) stops rnea_sim
with the reason, exit code 1. Its counts: ``sim_report``.
"""

from __future__ import annotations

import faulthandler
import math
import signal
import sys
import threading
import time

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory

from rnea_ros.plumbing.executor import PooledExecutor
from rnea_ros.plumbing.ros_parameters import declare
from rnea_ros.plumbing.scheduling import use_fifo_scheduling
from rnea_ros.plumbing.signals import join_signal_thread
from rnea_ros.plumbing.subscription import DedicatedSubscription
from rnea_ros.plumbing.threads import quiet_after_shutdown
from rnea_ros.simulation.commands import EffortCommands, MotorPdCommands
from rnea_ros.simulation.jtc_stand_in import JtcStandIn
from rnea_ros.simulation.lockstep import Lockstep
from rnea_ros.simulation.pacing import WallClockPacing
from rnea_ros.simulation.parameters import SIM_PARAMETERS, SimSettings, per_joint
from rnea_ros.simulation.record import Record, unwritable
from rnea_ros.simulation.sim_report import counts, diagnostics, summary
from rnea_ros.simulation.state_publishers import StatePublishers
from rnea_ros.simulation.wall_clock_controller import WallClockController

# ``physics`` (MuJoCo, through ``robot_setup``) is imported only once rclpy has loaded its
# middleware: with MuJoCo's libraries loaded first, Fast DDS (these Jazzy wheels) served only one of
# two readers of a topic, and the other starved (measured: a second joint_states reader stalled after ~1 s).

DESCRIPTION_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
RECORD_WRITE_WAIT = 120.0  # s the shutdown waits for the record to be written (an hour of states: seconds)


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
        p, logger = self.p, self.get_logger()
        self.robot = None  # physics.SimRobot once a description is built
        self.finished = threading.Event()
        self.clipped = 0
        self.steps = 0
        self.pacing: WallClockPacing | None = None  # the physics thread's, once it runs
        self.record = Record(p.record_file, p.floating_base, logger) if p.record_file else None
        self._stop = threading.Event()
        self.outputs = StatePublishers(self, p)
        if p.controller == "motor_pd":
            self.commands = MotorPdCommands(logger, p.command_timeout, p.release_after_commands, p.pid_p, p.pid_d)
            self.subscription = DedicatedSubscription(self, JointState, p.commands_topic, self._on_joint_command, 10)
        else:
            self.commands = EffortCommands(logger, p.command_timeout, p.release_after_commands)
            self.subscription = DedicatedSubscription(self, Float64MultiArray, p.commands_topic, self._on_command, 10)
        self.lockstep = Lockstep(
            self.commands,
            p.lockstep_timeout,
            p.lockstep_answer_topic,
            lambda: self.count_publishers(p.lockstep_answer_topic),
            self.outputs.resend,
            self._stop,
            logger,
        )
        if p.lockstep_answer_topic and not p.realtime:
            self.subscription.also_serve(JointState, p.lockstep_answer_topic, self._on_answer, 100)
        self.jtc: JtcStandIn | None = None  # the joint_trajectory_controller stand-in, when chosen
        self.jtc_action = None  # its action server and controller state (jtc_action.JtcAction)
        self.wall_controller: WallClockController | None = None  # the stand-in on its own clock
        self.diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        if p.controller == "joint_trajectory":
            self.create_subscription(JointTrajectory, p.trajectory_topic, self._on_trajectory, 10, raw=True)
        self._thread = threading.Thread(target=self._run, name="physics", daemon=True)
        self._start_wall = time.time()  # stamps are this wall-clock time plus the simulated time
        if self.fatal_error:
            return
        if p.robot_description:
            self._start(p.robot_description)
        else:
            self.create_subscription(String, "robot_description", lambda msg: self._start(msg.data), DESCRIPTION_QOS)

    # --- set-up ----------------------------------------------------------------------------------
    def _start(self, description: str) -> None:
        if self.robot is not None:
            self.get_logger().warning("a new robot_description is ignored: restart the simulation to change the robot")
            return
        from rnea_ros.simulation.robot_setup import build_robot

        try:
            robot = build_robot(description, self.p)
        except Exception as error:
            self._stop_at_start(f"cannot simulate this robot_description: {str(error)[:500]}")
            return
        joints = robot.command_joints
        if self.p.controller == "joint_trajectory":
            try:
                self.jtc = JtcStandIn(robot, self.p, self._start_wall, self.get_logger())
            except ValueError as error:
                self._stop_at_start(f"cannot simulate with these gains: {error}")
                return
            self.jtc_action = self._serve_jtc_action(robot)
            if self.p.controller_clock == "wall":
                self.wall_controller = WallClockController(
                    self.jtc, self.p.rate, self.p.controller_delay, self.get_logger()
                )
            where = f"a joint_trajectory_controller stand-in on '{self.resolve_topic_name(self.p.trajectory_topic)}'"
        elif self.p.controller == "motor_pd":
            try:
                self.commands.kp, self.commands.kd = (
                    np.array(per_joint(getattr(self.p, name), len(joints), name)) for name in ("pid_p", "pid_d")
                )
            except ValueError as error:
                self._stop_at_start(f"cannot simulate with these gains: {error}")
                return
            where = f"joint commands (reference and feed-forward, PD in the driver) on '{self.subscription.topic_name}'"
        else:
            where = f"commands on '{self.subscription.topic_name}'"
        self.robot = robot
        for warning in robot.warnings:
            self.get_logger().warning(warning)
        self.get_logger().info(
            f"simulating {len(robot.joint_names)} joints at {self.p.rate:.0f} Hz "
            f"({'real time' if self.p.realtime else 'lockstep'}); {where} for {joints}"
        )
        self.subscription.start()
        self.create_timer(self.p.diagnostics_period, quiet_after_shutdown(self.context, self._publish_diagnostics))
        if self.wall_controller is not None:
            self.wall_controller.observe(robot)
            self.wall_controller.start()
        self._thread.start()

    def _stop_at_start(self, reason: str) -> None:
        """The robot cannot be simulated: main ends the process, exit code 1."""
        self.fatal_error = reason
        self.get_logger().fatal(f"{reason}; fix it and restart. Shutting down.")

    def _serve_jtc_action(self, robot):
        from rnea_ros.simulation.jtc_action import JtcAction  # control_msgs: only with the stand-in

        return JtcAction(self, self.jtc, self.p, lambda: self._start_wall + robot.time)

    def _on_trajectory(self, data: bytes) -> None:
        if self.jtc is not None and self.robot is not None:
            self.jtc.on_trajectory(data)

    def _on_command(self, msg: Float64MultiArray) -> None:
        dim = msg.layout.dim
        self.commands.on_message(msg.data, self.robot, dim[0].label if dim else "")

    def _on_joint_command(self, msg: JointState) -> None:
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9 - self._start_wall
        self.commands.on_joint_command(msg.name, msg.position, msg.velocity, msg.effort, self.robot, stamp)

    def _on_answer(self, msg: JointState) -> None:
        self.lockstep.on_answer((msg.header.stamp.sec, msg.header.stamp.nanosec))

    def _efforts_now(self, robot) -> np.ndarray | None:
        """The command in force (None while the brakes hold): the JTC stand-in's (its last one when it
        runs on the wall clock), or the commands'."""
        if self.wall_controller is not None:
            return self.wall_controller.command
        return self.jtc.efforts(robot) if self.jtc is not None else self.commands.efforts(robot)

    def _publish_diagnostics(self) -> None:
        if self.robot is not None:
            array = diagnostics(counts(self), self.get_fully_qualified_name(), self.commands.joint_order_problem)
            array.header.stamp = self.get_clock().now().to_msg()
            self.diagnostics.publish(array)

    # --- the loop --------------------------------------------------------------------------------
    def _run(self) -> None:
        robot, p = self.robot, self.p
        dt = 1.0 / p.rate
        self.pacing = pacing = WallClockPacing(dt, p.realtime_catch_up if p.realtime else math.inf)
        released_at = None  # simulated time the brakes were released
        try:
            while not self._stop.is_set() and rclpy.ok(context=self.context):
                if released_at is not None and p.duration > 0.0 and robot.time - released_at >= p.duration - 1e-9:
                    break
                if self.steps % p.publish_every == 0:
                    self.commands.arrived.clear()
                    stamp = self._publish(robot)
                    if not p.realtime and self.jtc is None:  # the stand-in is inside this loop
                        self.lockstep.wait(robot, stamp, released_at is not None)
                efforts = self._efforts_now(robot)
                if efforts is None:
                    robot.data.time += dt  # held by the brakes until the controller sends its first command
                else:
                    if released_at is None:
                        released_at = robot.time
                        pacing.release(self.steps)
                    self.clipped += robot.step(efforts)
                self.steps += 1
                if self.wall_controller is not None:
                    self.wall_controller.observe(robot)
                # Lockstep may run slower than real time, never faster: stamps are the wall clock's
                # start plus simulated time, and must never be in the future for the controller.
                pacing.after_step(self.steps)
        except Exception as error:  # the loop must say why it stopped
            if rclpy.ok(context=self.context):
                self.get_logger().fatal(f"simulation stopped: {error!r}")
            # else: shut down (Ctrl-C) between the loop's check and a publish: nothing went wrong
        finally:
            try:
                if self.wall_controller is not None:
                    self.wall_controller.stop()
                if self.record is not None:
                    self.record.write(robot, self._log_error)
                self._log_info(summary(counts(self)))
            finally:
                self.finished.set()  # whatever happened above: main must not wait forever

    def _publish(self, robot) -> tuple[int, int]:
        state = self.outputs.publish(robot, self._start_wall)
        stamp = state.stamp
        if self.record is not None:
            self.record.add(stamp[0] + stamp[1] * 1e-9, state.position, state.velocity, state.effort, robot)
        return stamp

    def _log_info(self, text: str) -> None:
        if rclpy.ok(context=self.context):
            self.get_logger().info(text)
        else:  # shut down: the logger's copy to /rosout would fail with an error line of its own
            print(f"[rnea_sim] {text}", file=sys.stderr, flush=True)

    def _log_error(self, text: str) -> None:
        if rclpy.ok(context=self.context):
            self.get_logger().error(text)
        else:  # shut down: the logger's copy to /rosout would fail
            print(f"[rnea_sim] {text}", file=sys.stderr, flush=True)

    def destroy_node(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=RECORD_WRITE_WAIT)  # it writes the record as it ends
        self.subscription.destroy()
        super().destroy_node()


def _schedule(node: SimNode) -> None:
    """Every thread on SCHED_FIFO when ``thread_priority`` asks for it (the executor's, started
    later, inherit it)."""
    priority = node.p.thread_priority
    if priority and node.fatal_error is None:
        refused = use_fifo_scheduling(priority)
        if refused:
            node.get_logger().warning(f"thread_priority: {refused}")
        else:
            node.get_logger().info(f"thread_priority: every thread on SCHED_FIFO at priority {priority}")


def main(args=None) -> None:
    faulthandler.enable(all_threads=True)  # a crash in C code (rclpy, MuJoCo): every thread's stack in the log
    rclpy.init(args=args)
    node = SimNode()
    terminated = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: terminated.set())  # stop as on Ctrl-C: the record written
    # an action goal's execute callback blocks a thread until the goal ends (jtc_action); a preempted
    # one and its successor hold one each, the timers and subscriptions need the others
    executor = PooledExecutor(num_threads=4)
    executor.add_node(node)
    _schedule(node)
    try:
        while rclpy.ok() and not node.finished.is_set() and not terminated.is_set() and node.fatal_error is None:
            executor.spin_once(timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        join_signal_thread()  # before the executor's SIGINT guard condition is freed
        fatal = node.fatal_error
        executor.shutdown(timeout_sec=1.0)
        node.destroy_node()
        rclpy.try_shutdown()
    sys.exit(1 if fatal else 0)


if __name__ == "__main__":
    main()
