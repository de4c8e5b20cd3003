"""Fuzzing every input of rnea_node, in process, with hypothesis.

Each message goes through what the node does with it, without DDS (thousands of cases in
seconds): ``messages`` turns it into arrays, ``RneaCore`` merges it and computes. After
every message the invariants hold: no exception but a rejection (``InvalidMessageError``,
which the node counts and logs), nothing non-finite in the outputs, every output from one
model (gravity equals g(q) of the model that was live, commands equal the efforts in
command_joints order), and every invalid message rejected with nothing output for it.
The node itself over real DDS is fuzzed in test_node_hostile.py.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from geometry_msgs.msg import AccelStamped, WrenchStamped
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from nav_msgs.msg import Odometry
from rclpy.serialization import serialize_message
from sensor_msgs.msg import Imu, JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import RobotModel
from rnea_ros.controller.core import RneaCore, build_live_model
from rnea_ros.controller.inputs import INPUTS, negated_wrench
from rnea_ros.controller.settings import Settings
from rnea_ros.controller.state import InvalidMessageError
from rnea_ros.controller.torques import Outputs
from rnea_ros.node import messages
from rnea_ros.node.messages import read_joint_states
from rnea_ros.testing.reference import ARM_URDF, HEAVY_ARM_URDF, robot_urdf

pytestmark = pytest.mark.ros

MODELS = {text: RobotModel.from_urdf(text) for text in (ARM_URDF, HEAVY_ARM_URDF)}
ARM = MODELS[ARM_URDF]
COMMAND_JOINTS = ("joint7", "joint2", "finger_left_joint")
NAMES = [*ARM.joint_names, "unknown_joint", "", "ß∂ƒ"]
LINKS = [*ARM.link_names, "no_such_link", ""]
FUZZ = settings(max_examples=400, deadline=None)
# the longest timeouts the parameters allow: stamps here are 0-10 s or 2**31 - 1 s, never 1 h apart
NEVER_STALE = {name: 3600.0 for name in ("state_timeout", "acceleration_timeout", "wrench_timeout", "base_timeout")}
ARM_SETTINGS = Settings(command_joints=COMMAND_JOINTS, **NEVER_STALE)


def clock() -> float:
    return 2.0**31  # no stamp drawn is in the future


class Fed:
    """What came out of the messages fed so far: outputs, and rejections by reason."""

    def __init__(self) -> None:
        self.outputs: list[Outputs] = []
        self.rejected: dict[str, int] = {}

    @property
    def total_rejected(self) -> int:
        return sum(self.rejected.values())


# those the core takes in alone, by type; of two topics of one type (desired_accelerations and
# contact_schedule, both JointTrajectory) the first in the table
ROWS = {}
for _row in INPUTS:
    if _row.setter is not None:
        ROWS.setdefault(messages.READERS[_row.topic].message_type, _row)


def feed(core: RneaCore, fed: Fed, msg, sign: float = 1.0) -> None:
    """What RneaNode's callbacks do with ``msg`` (its row of ``inputs.INPUTS``): read, hand to the
    core, publish or count."""
    try:
        if isinstance(msg, JointState):
            outputs = core.joint_states(*read_joint_states(msg), clock)
            if outputs is not None:
                fed.outputs.append(outputs)
            return
        row = ROWS[type(msg)]
        read = messages.READERS[row.topic].read  # as RneaNode._taker does
        reading = read(serialize_message(msg) if row.raw else msg)  # the node reads raw ones' bytes
        core.receive(row, negated_wrench(reading) if sign < 0 else reading)
    except InvalidMessageError as rejection:
        fed.rejected[rejection.reason] = fed.rejected.get(rejection.reason, 0) + 1


def arm_core() -> tuple[RneaCore, Fed]:
    """A core with the arm live and all its joints known at stamp 1."""
    core = RneaCore(ARM_SETTINGS)
    core.load(build_live_model(ARM_URDF, ARM_SETTINGS))
    fed = Fed()
    _send(core, fed, ARM.joint_names, [0.0] * ARM.nv, [0.0] * ARM.nv, sec=1)
    fed.outputs.clear()
    return core, fed


def _send(core: RneaCore, fed: Fed, names, position, velocity, sec: int, nanosec: int = 0) -> None:
    msg = JointState(name=list(names), position=list(position), velocity=list(velocity))
    msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
    feed(core, fed, msg)


def check_outputs(fed: Fed, model: RobotModel) -> None:
    """Every output since the last check: finite, one model, commands = efforts in order, clipped
    to the URDF's effort limits (no gains are set here)."""
    order = [model.joint_names.index(name) for name in COMMAND_JOINTS]
    for out in fed.outputs:
        assert out.live.bound.model.joint_names == model.joint_names
        for values in (out.q, out.tau, out.gravity, out.commands):
            assert np.all(np.isfinite(values))
        np.testing.assert_allclose(out.gravity, model.gravity_torques(out.q), rtol=1e-12, atol=1e-12)
        limits = model.effort_limits
        np.testing.assert_array_equal(out.commands, np.clip(out.tau, -limits, limits)[order])
    fed.outputs.clear()


floats = st.one_of(
    st.floats(-4.0, 4.0),
    st.sampled_from([math.nan, math.inf, -math.inf, 1e155, -1e300, 0.0, 5e-324]),
)


@st.composite
def joint_states(draw):
    names = draw(st.lists(st.sampled_from(NAMES), max_size=12))
    n = len(names)
    position = draw(st.lists(floats, min_size=max(n + draw(st.sampled_from([0, 0, 0, -1, 1])), 0), max_size=14))
    velocity_length = draw(st.sampled_from([n, n, 0, n + 1, max(n - 1, 0)]))
    velocity = draw(st.lists(floats, min_size=velocity_length, max_size=velocity_length))
    sec = draw(st.sampled_from([0, 1, 2, 3, 2**31 - 1]) | st.integers(0, 10))
    return names, position, velocity, sec, draw(st.integers(0, 999_999_999))


def invalid(names, position, velocity) -> bool:
    """By the interface's rules (README): what must be rejected, whatever the stamps."""
    n = len(names)
    wrong_length = len(position) != n or (len(velocity) not in (0, n))
    non_finite = any(not math.isfinite(x) for x in [*position, *velocity])
    return wrong_length or non_finite or len(set(names)) != n


@pytest.mark.slow  # 10-13 s of CPU on 2 loaded cores
@seed(20261122)
@FUZZ
@given(messages=st.lists(joint_states(), min_size=1, max_size=6))
def test_fuzzed_joint_states(messages):
    core, fed = arm_core()
    for names, position, velocity, sec, nanosec in messages:
        before, published = fed.total_rejected, len(fed.outputs)
        _send(core, fed, names, position, velocity, sec, nanosec)
        if invalid(names, position, velocity):
            assert fed.total_rejected == before + 1
            assert len(fed.outputs) == published
        check_outputs(fed, ARM)


@st.composite
def trajectories(draw):
    names = draw(st.lists(st.sampled_from(NAMES), max_size=10))
    points = []
    for _ in range(draw(st.integers(0, 2))):
        length = draw(st.sampled_from([len(names), len(names), 0, len(names) + 1]))
        points.append(
            JointTrajectoryPoint(
                positions=draw(st.lists(floats, min_size=length, max_size=length)),
                velocities=draw(st.lists(floats, min_size=length, max_size=length)),
                accelerations=draw(st.lists(floats, min_size=length, max_size=length)),
            )
        )
    return JointTrajectory(joint_names=names, points=points)


@st.composite
def wrenches(draw):
    msg = WrenchStamped()
    msg.header.frame_id = draw(st.sampled_from(LINKS))
    f, t = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z, t.x, t.y, t.z = draw(st.lists(floats, min_size=6, max_size=6))
    return msg


@pytest.mark.slow  # 10-13 s of CPU on 2 loaded cores
@seed(20261123)
@FUZZ
@given(
    inputs=st.lists(st.one_of(trajectories(), wrenches()), min_size=1, max_size=5),
    use_desired_state=st.booleans(),
    q=st.lists(st.floats(-3, 3), min_size=ARM.nv, max_size=ARM.nv),
)
def test_fuzzed_accelerations_and_wrenches(inputs, use_desired_state, q):
    core, fed = arm_core()
    core.settings = ARM_SETTINGS.with_values(use_desired_state=use_desired_state)
    for k, msg in enumerate(inputs):
        feed(core, fed, msg)
        published, errors = core.published, fed.rejected.get("compute_error", 0)
        _send(core, fed, ARM.joint_names, q, [0.5] * ARM.nv, sec=2 + k)
        assert core.published == published + 1 or fed.rejected.get("compute_error", 0) == errors + 1
        check_outputs(fed, ARM)


def mutated_descriptions():
    """The arm's URDF with one hostile edit: cut, number replaced, element duplicated, bytes mangled."""
    numbers = st.sampled_from(["nan", "inf", "-1", "1e308", "0", "-0", "1e-320", "abc", ""])
    cut = st.tuples(st.integers(0, len(ARM_URDF)), st.integers(0, 400)).map(
        lambda c: ARM_URDF[: c[0]] + ARM_URDF[c[0] + c[1] :]
    )
    renumber = st.tuples(st.integers(0, 200), numbers).map(lambda r: _replace_nth_number(ARM_URDF, *r))
    duplicate = st.integers(0, 40).map(lambda k: _duplicate_nth_element(ARM_URDF, k))
    return st.one_of(
        cut, renumber, duplicate, st.sampled_from(["", " ", "<robot/>", "\udcff", ARM_URDF, HEAVY_ARM_URDF])
    )


def _replace_nth_number(text: str, n: int, value: str) -> str:
    import re

    matches = list(re.finditer(r"-?\d+\.?\d*(e-?\d+)?", text))
    m = matches[n % len(matches)]
    return text[: m.start()] + value + text[m.end() :]


def _duplicate_nth_element(text: str, n: int) -> str:
    lines = text.splitlines(keepends=True)
    k = [i for i, line in enumerate(lines) if line.strip().startswith("<")][n % 40]
    return "".join(lines[: k + 1] + lines[k:])


@seed(20261124)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(description=mutated_descriptions(), q=st.lists(st.floats(-3, 3), min_size=ARM.nv, max_size=ARM.nv))
def test_fuzzed_descriptions_keep_one_consistent_model(description, q):
    """What the node's loader does with each description: build, and load only what built."""
    core, fed = arm_core()
    try:
        core.load(build_live_model(description, ARM_SETTINGS))
    except Exception:  # refused: the arm stays and still answers
        pass
    model = core.live.bound.model
    names = model.joint_names
    published = core.published
    _send(core, fed, names, (q * 3)[: len(names)], [0.0] * len(names), sec=1000)
    assert core.published == published + 1 or model.nv == 0
    check_outputs(fed, model)


# --- the floating-base inputs (ANYmal) -----------------------------------------------------------
LEGGED_STAMPS = itertools.count(10)


LEGGED_SETTINGS = Settings(floating_base=True, contact_links=("LF_FOOT", "RH_FOOT"), **NEVER_STALE)


@pytest.fixture(scope="module")
def legged_core() -> RneaCore:
    core = RneaCore(LEGGED_SETTINGS)
    core.load(build_live_model(robot_urdf("anymal_b_simple_description/robots/anymal.urdf"), LEGGED_SETTINGS))
    assert core.live.floating
    return core


def _base_message(kind: str, values: list[float], frame: str):
    if kind == "odometry":
        msg = Odometry(child_frame_id=frame)
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        p.x, p.y, p.z, o.x, o.y, o.z, o.w = values[:7]
        v, w = msg.twist.twist.linear, msg.twist.twist.angular
        v.x, v.y, v.z, w.x, w.y, w.z = values[7:13]
        return msg
    if kind == "imu":
        msg = Imu()
        msg.header.frame_id = frame
        o, w = msg.orientation, msg.angular_velocity
        o.x, o.y, o.z, o.w, w.x, w.y, w.z = values[:7]
        return msg
    msg = AccelStamped()
    msg.header.frame_id = frame
    a, alpha = msg.accel.linear, msg.accel.angular
    a.x, a.y, a.z, alpha.x, alpha.y, alpha.z = values[:6]
    return msg


@seed(20261125)
@FUZZ
@given(
    inputs=st.lists(
        st.tuples(
            st.sampled_from(["odometry", "imu", "accel"]),
            st.lists(floats, min_size=13, max_size=13),
            st.sampled_from(["base", "imu_link", "LF_FOOT", "", "nowhere"]),
            st.booleans(),  # normalise the quaternion (else mostly garbage)
        ),
        min_size=1,
        max_size=5,
    ),
    q=st.lists(st.floats(-2, 2), min_size=12, max_size=12),
)
def test_fuzzed_base_inputs(legged_core, inputs, q):
    core, fed = legged_core, Fed()
    for kind, values, frame, normalise in inputs:
        quaternion = slice(3, 7) if kind == "odometry" else slice(0, 4)
        norm = np.linalg.norm(values[quaternion])
        if normalise and np.isfinite(norm) and norm > 1e-3:
            values[quaternion] = list(np.array(values[quaternion]) / norm)
        feed(core, fed, _base_message(kind, values, frame))
        published = core.published
        _send(core, fed, core.live.bound.model.joint_names, q, [0.1] * 12, sec=next(LEGGED_STAMPS))
        valid_odometry = kind == "odometry" and frame == "base" and normalise and np.all(np.isfinite(values))
        if valid_odometry and abs(norm) > 1e-3 and np.all(np.abs(values) < 1e6):
            assert core.published == published + 1 or fed.rejected.get("compute_error", 0) > 0
        for out in fed.outputs:
            for values_out in (out.tau, out.gravity, out.commands, out.base_residual, *out.contact_wrenches.values()):
                assert np.all(np.isfinite(values_out))
        fed.outputs.clear()


def test_finite_inputs_whose_efforts_overflow_are_refused_and_nothing_is_published():
    core = RneaCore(ARM_SETTINGS)
    core.load(build_live_model(ARM_URDF, ARM_SETTINGS))
    fed = Fed()
    names = list(ARM.joint_names)
    state = JointState(name=names, position=[0.3] * len(names), velocity=[0.0] * len(names))
    feed(core, fed, state)
    assert len(fed.outputs) == 1
    wrench = WrenchStamped()
    wrench.header.frame_id = "tcp"
    wrench.wrench.force.z = 1e308  # finite; its torques about the joints are not
    feed(core, fed, wrench)
    feed(core, fed, state)
    assert len(fed.outputs) == 1 and fed.rejected == {"compute_error": 1}
