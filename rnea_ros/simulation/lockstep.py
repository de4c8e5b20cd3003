"""Lockstep (no ROS): each step waits for the controller's command computed from the state before it.

Plain lockstep waits, at most ``lockstep_timeout`` of wall time, for any command sent after the
last joint_states. Strict lockstep (``lockstep_answer_topic``) waits for the controller's answer to
that very state and every command it sent before it, and publishes the state again when neither
comes (a state or its answer lost)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from rnea_ros.simulation.commands import EffortCommands

START_WAIT = 0.05  # s of wall time a step waits for a controller that has not sent its first command
# s of wall time without an answer after which the state is published again (same stamp) and the
# controller's writer is looked for
RESEND_AFTER = 0.1
# s of wall time the first strict wait gives a command missing behind its answer before taking it for
# one lost before the brakes were released (see Lockstep._wait_for_the_answer)
FIRST_COMMAND_GRACE = 1.0


class Lockstep:
    """The wait of each step; ``on_answer`` is served by the commands' thread."""

    def __init__(
        self,
        commands: EffortCommands,
        timeout: float,
        answer_topic: str,
        count_answer_writers: Callable[[], int],
        resend: Callable[[], None],
        stop: threading.Event,
        logger,
    ) -> None:
        self.commands, self.timeout, self.answer_topic = commands, timeout, answer_topic
        self._count_answer_writers, self._resend, self._stop, self.logger = count_answer_writers, resend, stop, logger
        self.timeouts = 0
        self.resent_states = 0  # strict lockstep: states published again for want of an answer
        # strict lockstep: the stamp of the newest state the controller answered, and the count of
        # its answers (one answer per state it computed, after its command)
        self._answered: tuple[int, int] | None = None
        self._answers = 0
        self._suspended_since_answers: int | None = None  # strict lockstep suspended at this answer count
        self._strict_waits = 0

    def on_answer(self, stamp: tuple[int, int]) -> None:
        self._answers += 1
        self._answered = stamp
        self.commands.arrived.set()

    def wait(self, robot, stamp: tuple[int, int], released: bool) -> None:
        """After publishing the state of ``stamp``: the wait before the step, if the controller is expected."""
        commands = self.commands
        if not commands.controller_expected(robot):
            return
        # strict once the robot moves: while the brakes hold, a controller still gathering its
        # inputs may leave states unanswered
        if self.answer_topic and commands.latest is not None and released:
            self._strict(stamp)
        elif commands.latest is None:
            # no controller yet: it may not hear the first states (its reader matches late)
            commands.arrived.wait(min(self.timeout, START_WAIT))
        elif not commands.arrived.wait(self.timeout):
            self.timeouts += 1

    def _wait_for_the_answer(self, stamp: tuple[int, int]) -> str:
        """Strict lockstep: until the controller has answered the state of ``stamp`` and every command
        it sent before its answers has arrived (it sends one command, then one answer, per state).
        Returns "answered", "stopped" (shut down), "gone" (no writer of the answer topic is left: the
        controller stopped, which is not late) or "timeout" (lockstep_timeout).

        The controller's two writers match this process's readers one at a time: while the brakes
        held, its first commands may have been lost before the commands' reader matched, its answers
        not. The first strict wait (at the release) forgives that deficit once the state is answered
        and no command came for FIRST_COMMAND_GRACE; a command lost later is a timeout, loudly."""
        arrived = self.commands.arrived
        deadline = time.monotonic() + self.timeout
        first = self._strict_waits == 0
        self._strict_waits += 1
        quiet_since = time.monotonic()
        while True:
            answered = self._answered == stamp
            if answered and self.commands.received >= self._answers:
                return "answered"
            now = time.monotonic()
            if self._stop.is_set():
                return "stopped"
            if now >= deadline:
                return "timeout"
            if first and answered and now - quiet_since >= FIRST_COMMAND_GRACE:
                self.commands.received = self._answers  # lost before the release: count afresh
                return "answered"
            if arrived.wait(min(deadline - now, RESEND_AFTER)):
                quiet_since = time.monotonic()
            else:
                if self._count_answer_writers() == 0:
                    return "gone"
                if not answered:  # the state or its answer lost (seen while readers match): once more
                    self.resent_states += 1
                    self._resend()
            arrived.clear()

    def _strict(self, stamp: tuple[int, int]) -> None:
        """Waits for the controller's answer; after a timeout, stops waiting until it answers again
        (a controller that stalls once costs one lockstep_timeout, not one per step), loudly."""
        if self._suspended_since_answers is not None:
            if self._answers == self._suspended_since_answers:
                return
            self._suspended_since_answers = None
            self.logger.warning("strict lockstep resumed: the controller answers again")
        outcome = self._wait_for_the_answer(stamp)
        if outcome in ("answered", "stopped"):
            return
        self._suspended_since_answers = self._answers
        if outcome == "gone":
            self.logger.warning("strict lockstep: the controller is gone; stepping without it")
            return
        self.timeouts += 1
        self.commands.received = max(self.commands.received, self._answers)  # a command lost: count afresh
        self.logger.error(
            f"strict lockstep broken: no answer to the state of {stamp[0]}.{stamp[1]:09d} within "
            f"{self.timeout} s; stepping without the controller until it answers again"
        )
