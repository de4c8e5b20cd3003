"""rnea_node: live feed-forward efforts and gravity torques from /joint_states.

The ROS edge only: the logic is ``rnea_ros.controller``'s (plain Python). Parameters are specified in
``controller.parameters`` and declared by ``ros_parameters``, the inputs in ``controller.inputs`` (one row
per topic: its setter and thread; ``messages.READERS`` reads them, ``HANDLERS`` below takes those without a
setter), ``RneaCore`` merges them and computes, ``ModelLoader`` builds descriptions one at a time off the
hot path, ``change_parameters`` checks and applies a live change, and this class subscribes, publishes,
logs and answers rclpy with it. Threads: joint_states and the computation
run on a dedicated thread (``subscription``), the other inputs and the diagnostics on the
executor, model builds on the loader's thread. See the README for the interface.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable
from functools import partial

import rclpy
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy._rclpy_pybind11 import RCLError
from rclpy.clock import Clock, ClockType
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Header

from rnea_ros.controller import advice, diagnostics, inputs
from rnea_ros.controller.core import RneaCore, build_live_model
from rnea_ros.controller.inputs import Input, JointStateReading, PlannedTrajectory
from rnea_ros.controller.laws import LAWS
from rnea_ros.controller.live_parameters import change_parameters
from rnea_ros.controller.loader import ModelLoader
from rnea_ros.controller.parameters import NODE_PARAMETERS
from rnea_ros.controller.settings import GAINS_PREFIX, Settings, settings_from
from rnea_ros.controller.state import ConfigurationError, InvalidMessageError, LiveModel
from rnea_ros.controller.trajectory_feedforward import LateAnswers, answer_threads
from rnea_ros.dynamics import aot, compiled, jit
from rnea_ros.dynamics.compiled import quick_cache_loads
from rnea_ros.dynamics.corrections import CorrectionsError
from rnea_ros.dynamics.precompile import compile_notice
from rnea_ros.node import START_TRACE, messages, start_phase
from rnea_ros.node.outputs import OutputPublishers
from rnea_ros.plumbing import ros_parameters
from rnea_ros.plumbing.executor import PooledExecutor
from rnea_ros.plumbing.scheduling import use_fifo_scheduling
from rnea_ros.plumbing.signals import join_signal_thread
from rnea_ros.plumbing.subscription import DedicatedSubscription
from rnea_ros.plumbing.threads import quiet_after_shutdown

DESCRIPTION_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
MAX_WARNED_FRAMES = 100
EXECUTOR_THREADS = 4  # the executor's: see main()
GAINS_DESCRIPTION = (
    "Gain of one command joint, as joint_trajectory_controller names them (p: position, d: velocity); "
    "instead of kp and kd, not with them."
)
STARTUP_GRACE = 3.0  # s without a model before the console says why
FIRST_ANSWER_WAIT = 0.1  # s the rest of the start waits for the first answer (of a state already waiting)
# /diagnostics status name: what effort_commands carry besides the feedback (command_source)
STATUS_NAMES = {name: law.label for name, law in LAWS.items()}


class RneaNode(Node):
    def __init__(self) -> None:
        super().__init__("rnea_node")
        self.fatal_error: str | None = None
        try:
            settings = settings_from({**ros_parameters.declare(self, NODE_PARAMETERS), **declare_joint_gains(self)})
        except ValueError as error:
            settings = Settings()
            self._fatal(f"invalid parameter: {error}")
        self.core = RneaCore(settings)
        self._warned_frames: set[str] = set()
        self._clip_warned: set[str] = set()  # command joints whose first clip was warned on the console
        self.loader = ModelLoader(self._build, self._loaded, self._refused)
        self._started = time.monotonic()
        self.outputs = OutputPublishers(self)
        self.joint_states: DedicatedSubscription | None = None
        self.action_relay = None  # the FollowJointTrajectory relay (action_relay.py)
        self.late_answers = LateAnswers()  # trajectory answers that would have left after their start stamp
        if self.fatal_error:
            return
        start_phase("parameters")
        _tell_kernels(self.get_logger())
        # before the model's build: matched by the other processes while it runs (seconds on a busy machine)
        self._subscribe_inputs(settings)
        start_phase("subscribed")
        if settings.robot_description:
            self._load_at_startup(settings.robot_description)
            if self.fatal_error:
                return
            start_phase("model built")
        if settings.corrections_file:
            try:
                self.core.set_corrections(settings.corrections_file)
            except CorrectionsError as error:
                self._fatal(str(error))
                return
            self.get_logger().info(f"corrections loaded from {settings.corrections_file}")
        _trace_first_answer(self)
        # the first answer goes out before the rest is made, for the newest state: the ones that came during
        # the build are stale (answering them first delayed the answer a subscriber sees by 0.5 s at load 25)
        _start_answering(self)
        from rnea_ros.node import action_relay  # imported now (~0.1 s): the first answer does not wait for it

        self.action_relay = action_relay.serve(self, self.core, settings)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        # steady: /diagnostics says what is wrong even when the ROS clock stands still (use_sim_time, no /clock)
        self.create_timer(
            1.0,
            quiet_after_shutdown(self.context, self._publish_diagnostics),
            clock=Clock(clock_type=ClockType.STEADY_TIME),
        )

    def destroy_node(self) -> None:
        if self.joint_states is not None:
            self.joint_states.destroy()
        if self.action_relay is not None:
            self.action_relay.destroy()
        super().destroy_node()

    def _fatal(self, message: str) -> None:
        if _interrupted():  # the error is the signal's doing (a compile cut short): not the parameters'
            raise StartInterruptedError(message)
        self.fatal_error = message
        self.get_logger().fatal(f"{message}; fix the parameters. Shutting down.")

    # --- robot model -------------------------------------------------------------------------
    def _load_at_startup(self, description: str) -> None:
        """The description given by parameter: built before anything is served."""
        try:
            live = self._build(description)
            if _interrupted():  # the signal came during the build, its KeyboardInterrupt swallowed (a numba callback)
                raise StartInterruptedError("interrupted while building the model")
            self._loaded(live)
        except StartInterruptedError:
            raise
        except ConfigurationError as error:  # the node cannot do what it was configured for
            self._fatal(str(error))
        except Exception as error:  # a node that can never have a model must not pretend to run
            self.core.rejections.count("bad_robot_description")
            self._fatal(f"the robot_description parameter is refused: {str(error)[:500]}")

    def _build(self, description: str) -> LiveModel:
        advice.refuse_a_file_path(description)  # a path where the XML belongs: said so, not an XML error
        if notice := compile_notice():  # a cold numba cache: the first build compiles
            self.get_logger().info(notice)
        return build_live_model(description, self.core.settings)

    def _loaded(self, live: LiveModel | None) -> None:
        if live is None:  # a gravity change before any model: nothing to rebuild
            return
        ignored = self.core.load(live)
        if ignored:
            self.get_logger().error(f"corrections refused, the model runs without them: {ignored}")
        self._warned_frames = set()
        self._clip_warned = set()  # joints whose first clip the console has told (per model)
        base = f" on a floating base '{live.bound.model.base_link}'" if live.floating else ""
        self.get_logger().info(f"robot model loaded: {live.n} joints{base} {live.bound.model.joint_names}")
        for warning in live.bound.model.warnings[:20]:  # once per model; all of them in /diagnostics
            self.get_logger().warning(f"robot_description: {warning} (strict_inertia: true refuses it)")
        if self.core.settings.contact_links and not live.floating:
            self.get_logger().warning("contact_links is ignored: the robot has a fixed base")
        _run_distributions_later(self, live)

    def _refused(self, error: Exception) -> None:
        self.core.rejections.count("bad_robot_description")
        reason = str(error)[:500]  # a hostile description must not flood the log
        keeping = "keeping the previous model" if self.core.live is not None else "no model yet"
        self.get_logger().error(f"robot_description refused ({keeping}): {reason}")
        self.core.refused(reason)

    # --- inputs: one subscription per row of inputs.INPUTS -----------------------------------------
    def _subscribe_inputs(self, settings: Settings) -> None:
        """joint_states and the inputs that come at its rate on its thread (see subscription.py),
        the others on the executor; a row's parameter may name its topics, or make it unneeded."""
        main = inputs.BY_TOPIC["joint_states"]
        reliable = settings.joint_states_qos == "reliable"  # else sensor_data: best effort, as drivers publish
        qos = QoSProfile(
            depth=settings.joint_states_depth,
            reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
        )
        main_type = messages.READERS[main.topic].message_type
        self.joint_states = DedicatedSubscription(self, main_type, main.topic, self._taker(main), qos)
        flipped = set(settings.flip_wrench_topics)
        for row in inputs.INPUTS:
            if row is main or (row.unless_parameter and getattr(settings, row.unless_parameter)):
                continue
            message_type = messages.READERS[row.topic].message_type
            for topic in getattr(settings, row.topics_parameter) if row.topics_parameter else (row.topic,):
                taker = self._taker(row, topic, negated=topic in flipped)
                if row.thread == inputs.JOINT_STATES_THREAD:
                    self.joint_states.also_serve(message_type, topic, taker, row.depth, row.newest_only, row.raw)
                else:
                    qos = DESCRIPTION_QOS if row.latched else row.depth
                    self.create_subscription(
                        message_type, topic, quiet_after_shutdown(self.context, taker), qos, raw=row.raw
                    )

    def _taker(self, row: Input, topic: str = "", negated: bool = False):
        """The callback of ``row``'s subscription to ``topic``: counted, read, taken in by its setter
        (or the node's handler); a refused message is counted by its reason and logged."""
        reader = messages.READERS[row.topic].read
        read = reader if not negated else lambda msg: inputs.negated_wrench(reader(msg))
        handler = HANDLERS.get(row.topic)
        take = partial(handler, self) if handler else lambda reading, _: self.core.receive(row, reading)
        received, name, topic = self.core.inputs.received, row.topic, topic or row.topic

        def on_message(msg) -> None:
            received(name)
            try:
                take(read(msg), msg)
            except InvalidMessageError as rejection:
                self._reject(rejection, topic)

        return on_message

    def _reject(self, rejection: InvalidMessageError, topic: str) -> None:
        self.core.rejections.count(rejection.reason)
        if rejection.reason != "unknown_wrench_frame":
            self.get_logger().warning(f"{topic}: {rejection} (message ignored)", throttle_duration_sec=1.0)
        elif str(rejection) not in self._warned_frames and len(self._warned_frames) < MAX_WARNED_FRAMES:
            self._warned_frames.add(str(rejection))
            self.get_logger().warning(f"{rejection}: ignored")

    def _on_set_parameters(self, changed: list) -> SetParametersResult:
        """A live change is applied whole or refused with the reason; never accepted and ignored."""
        change = change_parameters(self.core, self.loader, ros_parameters.changes(changed))
        return SetParametersResult(successful=change.accepted, reason=change.reason or "")

    def _on_joint_states(self, reading: JointStateReading, msg) -> None:
        outputs = self.core.joint_states(*reading, self._clock_seconds)
        if outputs is not None:
            self.outputs.publish(outputs, msg.header)
            if outputs.clipped:
                warn_first_clips(self.get_logger(), outputs, self._clip_warned)

    def _clock_seconds(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _on_description(self, description: str, _msg) -> None:
        self.loader.submit(description)

    def _on_trajectory(self, planned: PlannedTrajectory, _data: bytes) -> None:
        """A planner's trajectory, answered on feedforward_trajectory with every point's effort."""
        answer_threads()  # on this thread of the executor
        result = self.core.trajectory(planned.trajectory)
        if result is None:
            self.get_logger().warning(
                "joint_trajectory before any robot model: not answered", throttle_duration_sec=1.0
            )
            return
        content = planned.content
        stamp = self._answer_stamp(content.stamp[0] * 1_000_000_000 + content.stamp[1])
        sec, nanosec = divmod(stamp, 1_000_000_000)
        header = Header(stamp=Time(sec=sec, nanosec=nanosec), frame_id=content.frame_id)
        self.outputs.trajectory.publish(messages.trajectory_cdr(header, result))  # bytes: 3x faster
        self.core.trajectory_times.add(time.perf_counter() - planned.arrived)
        self.core.trajectories += 1

    def _answer_stamp(self, stamp: int) -> int:
        """The answer's stamp [ns]: the trajectory's, or now when that has passed (LateAnswers)."""
        answer = self.late_answers.stamp(stamp, self.get_clock().now().nanoseconds)
        if answer != stamp:
            self.get_logger().warning(
                f"joint_trajectory answered {self.late_answers.latest_delay * 1e3:.0f} ms after its start stamp: "
                "re-stamped to now (a JTC would jump to where the trajectory is by then)",
                throttle_duration_sec=1.0,
            )
        return answer

    # --- diagnostics ---------------------------------------------------------------------------
    def _node_figures(self, values: dict[str, str], notes: list[str]) -> int:
        """What the node adds to the core's report: late answers and goal forwarding; the level they ask for."""
        values["late_answers"] = str(self.late_answers.count)
        if self.action_relay is not None:
            values.update(self.action_relay.values())
        late = self.late_answers.new()
        if late:
            notes.append(f"{late} trajectory answers after their start stamp (re-stamped to now)")
        return diagnostics.WARN if late else diagnostics.OK

    def _publish_diagnostics(self) -> None:
        self._explain_silence()
        if self.core.reporter.unreported_held:  # before the report, which counts them reported
            self.get_logger().warning(self.core.reporter.held_note())
        report = self.core.reporter.report(joint_states_publisher_note(self))
        notes = [report.message]
        level = max(report.level, self._node_figures(report.values, notes))
        status = DiagnosticStatus(
            level=bytes([level]),
            name=f"rnea_node: {STATUS_NAMES[self.core.settings.command_source]}",
            hardware_id=self.get_fully_qualified_name(),
            message="; ".join(notes),
            values=[KeyValue(key=k, value=v) for k, v in report.values.items()],
        )
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.get_clock().now().to_msg()
        self.outputs.diagnostics.publish(array)

    def _explain_silence(self) -> None:
        """Says on the console, every few seconds, why nothing is published when it is not."""
        core, logger = self.core, self.get_logger()
        if core.live is None and time.monotonic() - self._started > STARTUP_GRACE:
            topic = self.resolve_topic_name("robot_description")
            publishers = len(self.get_publishers_info_by_topic(topic))
            said = advice.no_description_said(topic, publishers, sys.argv, self.get_fully_qualified_name())
            logger.warning(said, throttle_duration_sec=5.0)
        problem = core.reporter.coverage_problem() or best_effort_problem(self) or namespace_problem(self)
        if problem:
            logger.warning(f"{problem}; topic '{self.joint_states.topic_name}'", throttle_duration_sec=5.0)


# the inputs a handler of the node takes in (the rows of inputs.INPUTS without a setter), by topic
HANDLERS: dict[str, Callable[[RneaNode, object, object], None]] = {
    "robot_description": RneaNode._on_description,
    "joint_states": RneaNode._on_joint_states,
    "joint_trajectory": RneaNode._on_trajectory,
}


def best_effort_problem(node: RneaNode) -> str | None:
    publishers = node.get_publishers_info_by_topic(node.joint_states.topic_name)
    best_effort = [(p.node_name, p.qos_profile.reliability == ReliabilityPolicy.BEST_EFFORT) for p in publishers]
    return advice.best_effort_only(best_effort, node.core.settings.joint_states_qos == "reliable")


def joint_states_publisher_note(node: RneaNode) -> str | None:
    """Why joint_states may not arrive: no publisher, or one whose QoS cannot reach a reliable reader."""
    if not node.get_publishers_info_by_topic(node.joint_states.topic_name):
        return "no joint_states publisher"
    return best_effort_problem(node)


def declare_joint_gains(node: Node) -> dict[str, object]:
    """gains.<joint>.p and .d given as overrides (a params file, -p), declared as given: the joints
    are the model's, unknown before it loads. rclpy keeps the overrides in ``_parameter_overrides``."""
    described = ParameterDescriptor(description=GAINS_DESCRIPTION, dynamic_typing=True)
    names = sorted(name for name in node._parameter_overrides if name.startswith(GAINS_PREFIX))
    return {name: node.declare_parameter(name, None, described).value for name in names}


def warn_first_clips(logger, outputs, warned: set[str]) -> None:
    """The first clip of each command joint to its effort limit, on the console (a WARN at most once
    a second; the joints a dropped line would have named are left for the next); /diagnostics counts
    every clip. ``warned``: the joints told so far, for this model."""
    found = advice.first_clips(outputs, warned)
    if found is not None and logger.warning(found[1], throttle_duration_sec=1.0):
        warned.update(found[0])


def namespace_problem(node: RneaNode) -> str | None:
    """A model, no joint_states yet and nothing publishing them on the node's topic, while JointState
    topics are published elsewhere (not by this node): the likely namespace mistake, said."""
    topic = node.joint_states.topic_name
    if node.core.live is None or time.monotonic() - node._started < STARTUP_GRACE:
        return None
    if node.core.inputs.count["joint_states"] or node.get_publishers_info_by_topic(topic):
        return None
    me, elsewhere = node.get_fully_qualified_name(), []
    for name, types in node.get_topic_names_and_types():
        if name == topic or "sensor_msgs/msg/JointState" not in types:
            continue
        nodes = [f"{p.node_namespace.rstrip('/')}/{p.node_name}" for p in node.get_publishers_info_by_topic(name)]
        nodes = [publisher for publisher in nodes if publisher != me]
        if nodes:
            elsewhere.append((name, nodes))
    elsewhere.sort(key=lambda item: not item[0].endswith("joint_states"))  # the likely driver first
    return advice.namespace_hint(topic, elsewhere)


# A model rebuild (Python, in a thread) holds the GIL; the interpreter hands it over every
# 5 ms by default, which at 2 kHz is 10 joint_states: the whole subscription queue.
GIL_SWITCH_INTERVAL = 0.0005


INTERRUPTED = "rnea_node: interrupted while starting"
_signals: list[int] = []  # SIGINT and SIGTERM received by this process


class StartInterruptedError(Exception):
    """A signal came while the node was starting: whatever failed after it is its consequence."""


def _on_signal(signum: int, _frame) -> None:
    _signals.append(signum)
    raise KeyboardInterrupt


def exit_interrupted() -> None:
    """Says so and exits 0 at once: a KeyboardInterrupt that went through Python run from C (pybind11's
    eval, while a module loads) makes the interpreter exit by SIGINT whatever caught it, and a module cut
    short while it loads may leave a thread that would hold the exit."""
    print(INTERRUPTED, file=sys.stderr, flush=True)
    sys.stdout.flush()
    os._exit(0)


def _unless_interrupt(unraisable) -> None:
    """The signal's KeyboardInterrupt raised in a callback from C (numba's compiler) is dropped there:
    not printed (``_interrupted`` knows of the signal); anything else as Python prints it."""
    if not isinstance(unraisable.exc_value, KeyboardInterrupt):
        sys.__unraisablehook__(unraisable)


def _interrupted() -> bool:
    return bool(_signals) or not rclpy.ok()


def _start() -> RneaNode | None:
    """The node, built and ready to spin; None when a signal stopped its start (SIGINT and SIGTERM
    raise KeyboardInterrupt wherever the start is; with SIGINT ignored, rclpy's handler still shuts the
    context down, and what fails after that is the signal's doing)."""
    node = None
    try:
        with warnings.catch_warnings(record=True) as warned:  # rclpy's C warns when the context dies under it
            node = RneaNode()
        if not _interrupted():
            for warning in warned:
                warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno)
        diagnostics.freeze_the_heap()
        if not _interrupted():
            node.core.collector_pauses.start()
            _schedule(node)
            start_phase("started")
            return node
    except (KeyboardInterrupt, StartInterruptedError, ExternalShutdownException):
        pass
    except Exception:
        if not _interrupted():
            raise
    if node is not None:
        node.destroy_node()
    return None


def _run_distributions_later(node: RneaNode, live: LiveModel, delay: float = 1.0) -> None:
    """Every contact distribution run once, ``delay`` s after the model went live: the build ran only
    the one the settings use (the first answer does not wait for the others' kernels, ~0.1 s each)
    and a switch of contact_distribution then finds its kernel loaded."""
    if live.bound.contacts is None:
        return

    def run() -> None:
        node.destroy_timer(timer)
        try:
            live.bound.run_distributions()
        except ValueError as error:
            node.get_logger().warning(f"a contact distribution cannot compute at the neutral state: {error}")

    steady = Clock(clock_type=ClockType.STEADY_TIME)
    timer = node.create_timer(delay, quiet_after_shutdown(node.context, run), clock=steady)


def _tell_kernels(logger) -> None:
    """Where the live kernels come from, once at INFO: the ahead-of-time module, or numba's cache and why."""
    if jit.deferring():
        logger.info(f"{aot.status()}: numba is imported only for a kernel they lack")
        compiled.report_to(logger.info)
    elif aot.status() != aot.NOT_LOADED:
        logger.info(f"kernels from numba's cache: {aot.status()}")


def _start_answering(node: RneaNode) -> None:
    """The joint_states thread started, the rest of the start (the relay's import, the heap's freeze: C
    calls that hold the GIL) held until its first publish or FIRST_ANSWER_WAIT: a state taken was
    published 1-23 ms later beside them, 1-10 ms when they wait (Go2, two busy processes, load 4.7)."""
    answered, publish = threading.Event(), node.outputs.publish

    def first_publish(*args) -> None:
        node.outputs.publish = publish
        publish(*args)
        answered.set()

    node.outputs.publish = first_publish
    node.joint_states.start(backlog=False)
    answered.wait(FIRST_ANSWER_WAIT)


def _trace_first_answer(node: RneaNode) -> None:
    """With RNEA_START_TRACE: the first joint_states taken and the first outputs published, stamped."""
    if not os.environ.get(START_TRACE):
        return
    for owner, name, phase in (
        (node.core, "joint_states", "first joint_states"),
        (node.outputs, "publish", "first publish"),
    ):
        method, seen = getattr(owner, name), []

        def stamped(*args, method=method, seen=seen, phase=phase):
            if not seen:
                seen.append(start_phase(phase))
            return method(*args)

        setattr(owner, name, stamped)


def _schedule(node: RneaNode) -> None:
    """Every thread of the node on SCHED_FIFO when ``thread_priority`` asks for it (threads the
    executor starts later inherit it)."""
    priority = node.core.settings.thread_priority
    if priority:
        refused = use_fifo_scheduling(priority)
        if refused:
            node.get_logger().warning(f"thread_priority: {refused}")
        else:
            node.get_logger().info(f"thread_priority: every thread on SCHED_FIFO at priority {priority}")


def main(args=None) -> None:
    # the node's kernels load from numba's cache without numba's compiler set-up (~0.6 s of CPU at the
    # start, and at a trajectory's or a new model's first load); a kernel not in the cache compiles as usual
    if jit.deferring():  # __main__'s start on ahead-of-time kernels: quick loads set when numba is imported
        _run(args)
        return
    with quick_cache_loads():
        _run(args)


def _run(args) -> None:
    # a crash in C code (rclpy, the kernels) writes every thread's Python stack to stderr: rnea_sim
    # once died of SIGSEGV at its start in a quiet suite, its log saying nothing more
    faulthandler.enable(all_threads=True)
    for signum in (signal.SIGINT, signal.SIGTERM):  # rclpy's handlers, installed by init, call these after theirs
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _on_signal)
    sys.unraisablehook = _unless_interrupt
    sys.setswitchinterval(GIL_SWITCH_INTERVAL)
    start_phase("imported")
    try:
        rclpy.init(args=args)
        start_phase("rclpy init")
        node = _start()
    except KeyboardInterrupt:
        node = None
    except RCLError as error:  # e.g. a URDF given with -p: one line with the remedy, no traceback
        said = advice.command_line_error(str(error))
        if said is None:
            raise
        print(said, file=sys.stderr)
        sys.exit(2)
    if node is None:
        with contextlib.suppress(RCLError):  # rclpy's signal handler may be shutting it down meanwhile
            rclpy.try_shutdown()
        exit_interrupted()
    # the relay's goals wait on its own thread (action_relay), none on these; the JTC's answers, the
    # parameters, /diagnostics and the other inputs share them
    executor = PooledExecutor(num_threads=EXECUTOR_THREADS)
    try:
        if node.fatal_error is None:
            rclpy.spin(node, executor=executor)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        join_signal_thread()  # before the executor's SIGINT guard condition is freed
        executor.shutdown(timeout_sec=1.0)
        node.core.collector_pauses.stop()
        fatal = node.fatal_error
        node.destroy_node()
        rclpy.try_shutdown()
    if fatal:
        sys.exit(1)


if __name__ == "__main__":
    main()
