"""The efforts an effort controller sends rnea_sim (``std_msgs/Float64MultiArray`` on
``commands_topic``, as to a JointGroupEffortController), and which one holds at each step (no ROS)."""

from __future__ import annotations

import threading
from collections import deque

import numpy as np

MAX_EXTRAPOLATION = 0.05  # s: motor_pd moves a reference on (or back) by its velocity this far at most
AGES_KEPT = 10_000  # commands whose age at arrival motor_pd keeps for its counts
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


class MotorPdCommands(EffortCommands):
    """``controller: motor_pd``: a driver that closes each joint's PD itself, as legged robots' motor
    drivers do (Unitree's, Solo's), and takes from its controller, per joint by name, a reference and
    a feed-forward: ``sensor_msgs/JointState`` (rnea_node's ``joint_commands``), stamped with the state
    it answers. At every physics step, from the newest command,

        effort = effort + kp (position + velocity·age − q) + kd (velocity − q̇),

    age the time since its stamp (the state it answers; rnea_node's reference_lead stamps it later: the
    time its reference is for, the age negative while it is early), within ±MAX_EXTRAPOLATION; without
    position and velocity: the effort alone."""

    def __init__(self, logger, command_timeout: float, release_after_commands: int, kp, kd) -> None:
        super().__init__(logger, command_timeout, release_after_commands)
        self.kp, self.kd = np.asarray(kp, dtype=float), np.asarray(kd, dtype=float)
        self.reference: tuple[np.ndarray, np.ndarray, float] | None = None  # (q, q̇, its time) of the command in force
        self._order: tuple[tuple[str, ...], np.ndarray | None] = ((), None)  # (names, their rows in joints)
        self._state_rows: np.ndarray | None = None  # the command joints' rows in the robot's state
        self.ages: deque[float] = deque(maxlen=AGES_KEPT)  # simulated time from a command's stamp to its arrival

    def age_counts(self) -> dict[str, float]:
        """The commands' age at arrival (from their stamp: the state they answer, plus a lead), p50 and max
        of the last AGES_KEPT [ms]."""
        ages = np.array(self.ages) if self.ages else np.zeros(1)
        return {
            "command_age_p50_ms": round(float(np.median(ages)) * 1e3, 3),
            "command_age_max_ms": round(float(ages.max()) * 1e3, 3),
        }

    def on_joint_command(self, names, position, velocity, effort, robot, answered: float) -> None:
        """One JointState command, stamped ``answered`` (simulated time: the state it answers, plus a lead): its
        names any order of the robot's ``command_joints``; refused (a log line each second at most) when
        they are not, or its values not finite or not one per name."""
        if robot is None:
            return
        self.received += 1
        self.ages.append(robot.time - answered)
        order = self._rows(tuple(names), robot.command_joints)
        n = len(names)
        problem = None
        if order is None:
            problem = f"its joints {list(names)} are not this simulator's joints {list(robot.command_joints)}"
        elif len(effort) != n or len(position) not in (0, n) or len(velocity) != len(position):
            problem = f"{len(position)} positions, {len(velocity)} velocities, {len(effort)} efforts for {n} names"
        if problem is None:
            to_joints = np.argsort(order)
            values = [np.asarray(v, dtype=float) for v in (effort, position, velocity)]
            values = [v[to_joints] if len(v) else v for v in values]
            if not all(np.all(np.isfinite(v)) for v in values):
                problem = "values that are not finite"
        if problem is not None:
            self.refused += 1
            self.logger.error(f"joint command refused: {problem}", throttle_duration_sec=1.0)
            return
        effort, position, velocity = values
        self.reference = (position, velocity, answered) if len(position) else None
        self.latest = (effort, robot.time)
        self.accepted += 1
        self.arrived.set()

    def _rows(self, names: tuple[str, ...], joints: list[str]) -> np.ndarray | None:
        """Where each name is in ``joints`` (None unless the names are ``joints`` in some order)."""
        known, rows = self._order
        if names != known:
            rows = np.array([joints.index(name) for name in names]) if sorted(names) == sorted(joints) else None
            self._order = (names, rows)
        return rows

    def efforts(self, robot) -> np.ndarray | None:
        """The feed-forward plus the PD on the reference in force; zeros when stale, None while the brakes hold."""
        command, reference = self.latest, self.reference
        stale = command is not None and self.command_timeout > 0.0 and robot.time - command[1] > self.command_timeout
        feed_forward = super().efforts(robot)
        if feed_forward is None or reference is None or stale:
            return feed_forward
        if self._state_rows is None:
            self._state_rows = np.array([robot.joint_names.index(name) for name in robot.command_joints])
        q, qd = robot.positions()[self._state_rows], robot.velocities()[self._state_rows]
        position, velocity, answered = reference
        # the reference moved on by its velocity from its stamp (a first-order hold): a reference held
        # as it came lags by the command's age (4-8 ms cost a trotting leg ~1° RMS); back, while a
        # command stamped ahead (reference_lead) is early
        ahead = min(max(robot.time - answered, -MAX_EXTRAPOLATION), MAX_EXTRAPOLATION)
        return feed_forward + self.kp * (position + velocity * ahead - q) + self.kd * (velocity - qd)
