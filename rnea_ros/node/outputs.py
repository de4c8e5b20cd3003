"""rnea_node's publishers, and the messages of one model built once and refilled for each state."""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

import numpy as np
from control_msgs.msg import JointTrajectoryControllerState
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, Header
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros.controller.state import LiveModel
from rnea_ros.controller.torques import Outputs
from rnea_ros.node import messages

if TYPE_CHECKING:
    from rclpy.node import Node

# [s] how often a topic's subscribers are counted while it has some, and while it has none (a
# subscriber that comes is served within UNHEARD_PERIOD of its match: what came before would not
# have reached it anyway)
LISTENED_PERIOD = 0.5
UNHEARD_PERIOD = 0.02


class OutputMessages:
    """The output messages of one model, built once and refilled for each state."""

    def __init__(self, live: LiveModel) -> None:
        self.live = live
        names = list(live.bound.names)  # the driver's names where joint_names maps them
        self.efforts, self.gravity = JointState(name=names), JointState(name=names)
        self.commands = messages.labelled_commands([names[j] for j in live.bound.command_order])
        self.residual = WrenchStamped()
        self.residual.header.frame_id = live.bound.model.base_link or ""
        links = live.bound.contacts.links if live.bound.contacts is not None else []
        self.contacts = [WrenchStamped(header=Header(frame_id=link)) for link in links]  # estimated_contact_wrenches
        self.contact_states = JointState(name=list(links))  # stance weight and force per contact link
        self.all_in_stance = np.ones(len(links))
        self.controller_state = JointTrajectoryControllerState(
            joint_names=[names[j] for j in live.bound.command_order], speed_scaling_factor=1.0
        )
        self.joint_commands = JointState(name=[names[j] for j in live.bound.command_order])


def fill_controller_state(msg: JointTrajectoryControllerState, outputs: Outputs, header) -> None:
    """``msg`` (its joint_names the command joints) filled as a JTC fills its controller_state, for
    the state ``outputs`` answers: reference (the desired point: positions and velocities only while
    one is fresh or held, NaN for a joint it does not name; accelerations always), feedback (the
    measured state), error (reference − feedback, where there is a reference) and output (the
    effort commands), stamped with the joint_states it answers."""
    inputs, rows = outputs.inputs, outputs.live.bound.command_order
    measured_q = inputs.q_measured if inputs.q_measured is not None else outputs.q
    measured_qd = inputs.qd_measured if inputs.qd_measured is not None else outputs.qd
    msg.header = header
    msg.feedback = JointTrajectoryPoint(
        positions=messages.as_float64_array(measured_q[rows]), velocities=messages.as_float64_array(measured_qd[rows])
    )
    reference = JointTrajectoryPoint(accelerations=messages.as_float64_array(inputs.qdd[rows]))
    error = JointTrajectoryPoint()
    if inputs.q_desired is not None:
        q_desired, qd_desired = inputs.q_desired[rows], inputs.qd_desired[rows]
        reference.positions, reference.velocities = (messages.as_float64_array(v) for v in (q_desired, qd_desired))
        error.positions = messages.as_float64_array(q_desired - measured_q[rows])
        error.velocities = messages.as_float64_array(qd_desired - measured_qd[rows])
    msg.reference, msg.error = reference, error
    msg.output = JointTrajectoryPoint(effort=messages.as_float64_array(outputs.commands))


def fill_joint_commands(msg: JointState, outputs: Outputs, header) -> None:
    """``msg`` (its names the command joints) filled for a driver that closes the joints' PD itself
    (a legged robot's motor drivers): position and velocity the reference in force (empty without
    one), effort the effort commands; stamped with the joint_states it answers plus ``reference_lead``
    (the time its reference is for: a driver that moves the reference on by its velocity does so from there)."""
    inputs, rows = outputs.inputs, outputs.live.bound.command_order
    msg.header = header if inputs is None or not inputs.reference_lead else led(header, inputs.reference_lead)
    if inputs is not None and inputs.q_desired is not None:
        msg.position = messages.as_float64_array(inputs.q_desired[rows])
        msg.velocity = messages.as_float64_array(inputs.qd_desired[rows])
    else:
        msg.position, msg.velocity = messages.as_float64_array(()), messages.as_float64_array(())
    msg.effort = messages.as_float64_array(outputs.commands)


def led(header: Header, lead: float) -> Header:
    """A copy of ``header`` stamped ``lead`` [s] later."""
    nanoseconds = header.stamp.sec * 1_000_000_000 + header.stamp.nanosec + round(lead * 1e9)
    later = Header(frame_id=header.frame_id)
    later.stamp.sec, later.stamp.nanosec = divmod(nanoseconds, 1_000_000_000)
    return later


# published only when heard
LAZY = ("efforts", "gravity", "residual", "contacts", "contact_states", "controller_state", "joint_commands")


class Listened:
    """Whether a publisher's topic has subscribers, counted at most every LISTENED_PERIOD while it
    has, every UNHEARD_PERIOD while it has none (a count costs ~9 µs, a publish several times that)."""

    def __init__(self, publisher) -> None:
        self.publisher, self.heard, self.next_count = publisher, False, -math.inf

    def __call__(self) -> bool:
        now = time.monotonic()
        if now >= self.next_count:
            self.heard = self.publisher.get_subscription_count() > 0
            self.next_count = now + (LISTENED_PERIOD if self.heard else UNHEARD_PERIOD)
        return self.heard


class OutputPublishers:
    """Every topic rnea_node publishes; ``publish`` sends the outputs of one state."""

    def __init__(self, node: Node) -> None:
        # No QoS event handlers on the publishers (incompatible subscribers are warned on their side):
        # the executor polls every handler on each wake-up, which costs ~5 µs per message each.
        from rclpy.event_handler import PublisherEventCallbacks  # rclpy here only: OutputMessages needs none

        quiet = PublisherEventCallbacks(use_default_callbacks=False)

        def publisher(msg_type, topic: str):
            return node.create_publisher(msg_type, topic, 10, event_callbacks=quiet)

        self.efforts = publisher(JointState, "feedforward_efforts")
        self.gravity = publisher(JointState, "gravity_torques")
        self.commands = publisher(Float64MultiArray, "effort_commands")
        self.diagnostics = publisher(DiagnosticArray, "/diagnostics")
        self.trajectory = publisher(JointTrajectory, "feedforward_trajectory")
        self.residual = publisher(WrenchStamped, "base_wrench_residual")
        self.contacts = publisher(WrenchStamped, "estimated_contact_wrenches")
        self.contact_states = publisher(JointState, "contact_states")
        self.controller_state = publisher(JointTrajectoryControllerState, "~/controller_state")
        self.joint_commands = publisher(JointState, "joint_commands")
        self._heard = {name: Listened(getattr(self, name)) for name in LAZY}
        self._messages: OutputMessages | None = None  # touched by the joint_states thread only

    def publish(self, outputs: Outputs, header) -> None:
        """effort_commands always, first (it is what a controller waits for); the other outputs only
        to topics that have subscribers: each publish costs rclpy's conversion and a DDS write (a
        legged robot's nine messages were three quarters of its answer's time)."""
        out = self._messages
        if out is None or out.live is not outputs.live:
            out = self._messages = OutputMessages(outputs.live)
        out.commands.data = messages.as_float64_array(outputs.commands)
        self.commands.publish(out.commands)
        heard = {name: listened() for name, listened in self._heard.items()}
        position = messages.as_float64_array(outputs.q)
        if heard["efforts"]:
            efforts = out.efforts
            efforts.header, efforts.position = header, position
            efforts.velocity = messages.as_float64_array(outputs.qd)
            efforts.effort = messages.as_float64_array(outputs.tau)
            self.efforts.publish(efforts)
        if heard["gravity"]:
            gravity = out.gravity
            gravity.header, gravity.position = header, position
            gravity.effort = messages.as_float64_array(outputs.gravity)
            self.gravity.publish(gravity)
        if outputs.base_residual is not None and heard["residual"]:
            self._publish_wrench(self.residual, out.residual, header, outputs.base_residual)
        if outputs.wrenches is not None:
            self._publish_contacts(out, outputs, header, heard)
        if outputs.inputs is not None and heard["controller_state"]:
            fill_controller_state(out.controller_state, outputs, header)
            self.controller_state.publish(out.controller_state)
        if heard["joint_commands"]:
            fill_joint_commands(out.joint_commands, outputs, header)
            self.joint_commands.publish(out.joint_commands)

    def _publish_contacts(self, out: OutputMessages, outputs: Outputs, header, heard: dict[str, bool]) -> None:
        wrenches = outputs.wrenches.reshape(-1, 6)
        if heard["contacts"]:
            for msg, wrench in zip(out.contacts, wrenches, strict=True):
                self._publish_wrench(self.contacts, msg, header, wrench)
        if heard["contact_states"]:
            states = out.contact_states
            states.header = header
            states.position = messages.as_float64_array(out.all_in_stance if outputs.stance is None else outputs.stance)
            states.effort = messages.as_float64_array(np.linalg.norm(wrenches[:, :3], axis=1))
            self.contact_states.publish(states)

    @staticmethod
    def _publish_wrench(publisher, msg: WrenchStamped, header, wrench: np.ndarray) -> None:
        msg.header.stamp = header.stamp
        f, t = msg.wrench.force, msg.wrench.torque
        f.x, f.y, f.z, t.x, t.y, t.z = (float(x) for x in wrench)
        publisher.publish(msg)
