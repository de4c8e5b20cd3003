"""rnea_node's publishers, and the messages of one model built once and refilled for each state."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, Header
from trajectory_msgs.msg import JointTrajectory

from rnea_ros.node import messages
from rnea_ros.node.state import LiveModel
from rnea_ros.node.torques import Outputs

if TYPE_CHECKING:
    from rclpy.node import Node


class OutputMessages:
    """The output messages of one model, built once and refilled for each state."""

    def __init__(self, live: LiveModel) -> None:
        self.live = live
        names = list(live.names)  # the driver's names where joint_names maps them
        self.efforts, self.gravity = JointState(name=names), JointState(name=names)
        self.commands = messages.labelled_commands([names[j] for j in live.command_order])
        self.residual = WrenchStamped()
        self.residual.header.frame_id = live.model.base_link or ""
        links = live.contacts.links if live.contacts is not None else []
        self.contacts = [WrenchStamped(header=Header(frame_id=link)) for link in links]  # estimated_contact_wrenches
        self.contact_states = JointState(name=list(links))  # stance weight and force per contact link
        self.all_in_stance = np.ones(len(links))


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
        self._messages: OutputMessages | None = None  # touched by the joint_states thread only

    def publish(self, outputs: Outputs, header) -> None:
        """effort_commands first (it is what a controller waits for), then the other outputs."""
        out = self._messages
        if out is None or out.live is not outputs.live:
            out = self._messages = OutputMessages(outputs.live)
        out.commands.data = messages.as_float64_array(outputs.commands)
        self.commands.publish(out.commands)
        position = messages.as_float64_array(outputs.q)
        efforts = out.efforts
        efforts.header, efforts.position = header, position
        efforts.velocity, efforts.effort = messages.as_float64_array(outputs.qd), messages.as_float64_array(outputs.tau)
        self.efforts.publish(efforts)
        gravity = out.gravity
        gravity.header, gravity.position, gravity.effort = header, position, messages.as_float64_array(outputs.gravity)
        self.gravity.publish(gravity)
        if outputs.base_residual is not None:
            self._publish_wrench(self.residual, out.residual, header, outputs.base_residual)
        if outputs.wrenches is not None:
            wrenches = outputs.wrenches.reshape(-1, 6)
            for msg, wrench in zip(out.contacts, wrenches, strict=True):
                self._publish_wrench(self.contacts, msg, header, wrench)
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
