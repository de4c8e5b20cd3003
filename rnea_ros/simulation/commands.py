"""The efforts an effort controller sends rnea_sim (``std_msgs/Float64MultiArray`` on
``commands_topic``, as to a JointGroupEffortController), and which one holds at each step (no ROS)."""

from __future__ import annotations

import threading

import numpy as np

STALE_CONTROLLER = 0.1  # s of simulated time without commands after which lockstep stops waiting for them


class EffortCommands:
    """The newest accepted command and the counts of what came; ``arrived`` is set by each arrival.
    Written by the commands' thread, read by the physics thread (each a single assignment)."""

    def __init__(self, logger, command_timeout: float, release_after_commands: int) -> None:
        self.logger = logger
        self.command_timeout = command_timeout
        self.release_after_commands = release_after_commands
        self.latest: tuple[np.ndarray, float] | None = None  # (efforts, simulated time received)
        self.arrived = threading.Event()
        self.received = 0  # every arrival, refused ones too: strict lockstep counts arrivals
        self.accepted = 0
        self.refused = 0
        self.zero_effort_steps = 0  # steps with a stale command (zero effort)
        self.refused_joint_order = 0  # commands whose joints (layout label) are not ``joints`` in order
        self.joint_order_problem = ""  # what the last such command's label said, for /diagnostics
        self._label_checked: tuple[str, list[str] | None] = ("", None)  # (label, its other joints or None)

    def other_joints(self, label: str, robot) -> list[str] | None:
        """The joints a command's label names when they are not the robot's ``command_joints`` in
        order; None when they are, or when the label is not one name per joint. Checked once per label."""
        checked, other = self._label_checked
        if label == checked:
            return other
        names = [name.strip() for name in label.split(",")]
        joints = list(robot.command_joints)
        other = names if len(names) == len(joints) and names != joints else None
        if other is not None:
            same_set = "the same joints in another order" if sorted(names) == sorted(joints) else "other joints"
            self.joint_order_problem = (
                f"its values are for joints {names} (its layout label), {same_set} than this simulator's joints "
                f"{joints}: applied, they would drive the wrong joints. Give rnea_sim joints: {names} "
                "(rnea_gains writes the list), or the sender this order"
            )
        self._label_checked = (label, other)
        return other

    def on_message(self, data, robot, label: str = "") -> None:
        """One command for ``robot`` (ignored while there is none), refused when of the wrong length,
        labelled with other joints or another order, or not finite (one log line per reason, each at
        most once a second). ``label``: the layout's first dimension's label; rnea_node writes its
        joints there, comma-separated (a label that is not one name per value is no list of joints)."""
        values = np.asarray(data, dtype=float)
        if robot is None:
            return
        self.received += 1
        if len(values) != len(robot.command_joints):
            self.refused += 1
            joints = robot.command_joints
            self.logger.error(
                f"command refused: {len(values)} values for {len(joints)} joints {joints}", throttle_duration_sec=1.0
            )
            return
        if label and self.other_joints(label, robot) is not None:
            self.refused += 1
            self.refused_joint_order += 1
            self.logger.error(f"command refused: {self.joint_order_problem}", throttle_duration_sec=1.0)
            return
        if not np.all(np.isfinite(values)):
            self.refused += 1
            self.logger.error("command refused: values that are not finite", throttle_duration_sec=1.0)
            return
        self.latest = (values, robot.time)
        self.accepted += 1
        self.arrived.set()

    def efforts(self, robot) -> np.ndarray | None:
        """The command in force, zeros when it is stale; None while the brakes hold."""
        command = self.latest
        if command is None or self.accepted < self.release_after_commands:
            return None
        values, received = command
        if self.command_timeout > 0.0 and robot.time - received > self.command_timeout:
            self.logger.warning(
                f"no command for {robot.time - received:.2f} s (> command_timeout): zero effort",
                throttle_duration_sec=2.0,
            )
            self.zero_effort_steps += 1
            return np.zeros(len(robot.command_joints))
        return values

    def controller_expected(self, robot) -> bool:
        """Lockstep waits for a controller that has not started yet or is still sending; once its
        commands are stale the robot goes on without it (zero effort, or the last command held
        when command_timeout is 0), at full speed."""
        command = self.latest
        patience = self.command_timeout or STALE_CONTROLLER
        return command is None or robot.time - command[1] <= patience
