"""Fuzzing every subscription of rnea_node, in process, with hypothesis.

The callbacks are called directly (no DDS, thousands of cases in seconds) and the
publishers are replaced by recorders. After every message the invariants hold:
no exception, nothing non-finite published, every output from one model (gravity
equals g(q) of the model that was live, commands equal the efforts in
command_joints order), and every invalid message counted as a rejection with
nothing published for it. The same node over real DDS is fuzzed in test_node_hostile.py.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import rclpy
from geometry_msgs.msg import WrenchStamped
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from reference import EXAMPLE_ARM
from ros_harness import init_rclpy
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import RobotModel
from rnea_ros.node import RneaNode

ARM_URDF = EXAMPLE_ARM.read_text()
HEAVY_URDF = ARM_URDF.replace('<mass value="3.5"/>', '<mass value="7.0"/>', 1)
MODELS = {text: RobotModel.from_urdf(text) for text in (ARM_URDF, HEAVY_URDF)}
ARM = MODELS[ARM_URDF]
COMMAND_JOINTS = ["joint7", "joint2", "finger_left_joint"]
NAMES = [*ARM.joint_names, "unknown_joint", "", "ß∂ƒ"]
LINKS = [*ARM.link_names, "no_such_link", ""]
FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

floats = st.one_of(
    st.floats(-4.0, 4.0),
    st.sampled_from([math.nan, math.inf, -math.inf, 1e155, -1e300, 0.0, 5e-324]),
)


class Recorder:
    """Stands in for a publisher: keeps a copy of what would have gone out."""

    def __init__(self) -> None:
        self.messages: list[dict] = []

    def publish(self, msg) -> None:
        if isinstance(msg, JointState):
            self.messages.append(
                {"name": list(msg.name), "position": np.array(msg.position), "effort": np.array(msg.effort)}
            )
        elif isinstance(msg, WrenchStamped):
            f, t = msg.wrench.force, msg.wrench.torque
            self.messages.append({"data": np.array([f.x, f.y, f.z, t.x, t.y, t.z])})
        else:
            self.messages.append({"data": np.array(msg.data)})


@pytest.fixture(scope="module")
def node():
    init_rclpy()
    node = RneaNode()
    node.command_joints = COMMAND_JOINTS
    node.state_timeout, node.acceleration_timeout, node.wrench_timeout = 1e9, 1e9, 1e9
    node.future_stamp_tolerance = 1e12
    node.pub_efforts, node.pub_gravity, node.pub_commands = Recorder(), Recorder(), Recorder()
    yield node
    node.destroy_node()
    rclpy.try_shutdown()


def reset(node: RneaNode) -> RneaNode:
    """The node with a fresh arm model whose joints are all known at stamp 1 (once per example)."""
    node._load_description(ARM_URDF, sequence=0)
    node.use_desired_state = False
    _send(node, ARM.joint_names, [0.0] * ARM.nv, [0.0] * ARM.nv, sec=1)
    for recorder in (node.pub_efforts, node.pub_gravity, node.pub_commands):
        recorder.messages.clear()
    return node


def _send(node: RneaNode, names, position, velocity, sec: int, nanosec: int = 0) -> JointState:
    msg = JointState(name=list(names), position=list(position), velocity=list(velocity))
    msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
    node._on_joint_states(msg)
    return msg


def check_outputs(node: RneaNode, model: RobotModel) -> None:
    """Everything recorded since the last check: finite, one model, commands = efforts in order."""
    efforts, gravity, commands = (r.messages for r in (node.pub_efforts, node.pub_gravity, node.pub_commands))
    assert len(efforts) == len(gravity) == len(commands)
    order = [model.joint_names.index(name) for name in COMMAND_JOINTS]
    for e, g, c in zip(efforts, gravity, commands, strict=True):
        assert e["name"] == g["name"] == model.joint_names
        for values in (e["position"], e["effort"], g["effort"], c["data"]):
            assert np.all(np.isfinite(values))
        np.testing.assert_allclose(g["effort"], model.gravity_torques(g["position"]), rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(c["data"], e["effort"][order])
    for recorder in (node.pub_efforts, node.pub_gravity, node.pub_commands):
        recorder.messages.clear()


def total_rejections(node: RneaNode) -> int:
    return sum(node.rejected.values())


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


@seed(20261122)
@FUZZ
@given(messages=st.lists(joint_states(), min_size=1, max_size=6))
def test_fuzzed_joint_states(node, messages):
    reset(node)
    for names, position, velocity, sec, nanosec in messages:
        before, published = total_rejections(node), node.published
        _send(node, names, position, velocity, sec, nanosec)
        if invalid(names, position, velocity):
            assert total_rejections(node) == before + 1
            assert node.published == published
        check_outputs(node, ARM)


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


@seed(20261123)
@FUZZ
@given(
    inputs=st.lists(st.one_of(trajectories(), wrenches()), min_size=1, max_size=5),
    use_desired_state=st.booleans(),
    q=st.lists(st.floats(-3, 3), min_size=ARM.nv, max_size=ARM.nv),
)
def test_fuzzed_accelerations_and_wrenches(node, inputs, use_desired_state, q):
    reset(node)
    node.use_desired_state = use_desired_state
    for k, msg in enumerate(inputs):
        if isinstance(msg, JointTrajectory):
            node._on_desired(msg)
        else:
            node._on_wrench(msg, 1.0)
        published, errors = node.published, node.rejected["compute_error"]
        _send(node, ARM.joint_names, q, [0.5] * ARM.nv, sec=2 + k)
        assert node.published == published + 1 or node.rejected["compute_error"] == errors + 1
        check_outputs(node, ARM)


def mutated_descriptions():
    """The arm's URDF with one hostile edit: cut, number replaced, element duplicated, bytes mangled."""
    numbers = st.sampled_from(["nan", "inf", "-1", "1e308", "0", "-0", "1e-320", "abc", ""])
    cut = st.tuples(st.integers(0, len(ARM_URDF)), st.integers(0, 400)).map(
        lambda c: ARM_URDF[: c[0]] + ARM_URDF[c[0] + c[1] :]
    )
    renumber = st.tuples(st.integers(0, 200), numbers).map(lambda r: _replace_nth_number(ARM_URDF, *r))
    duplicate = st.integers(0, 40).map(lambda k: _duplicate_nth_element(ARM_URDF, k))
    return st.one_of(cut, renumber, duplicate, st.sampled_from(["", " ", "<robot/>", "\udcff", ARM_URDF, HEAVY_URDF]))


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
def test_fuzzed_descriptions_keep_one_consistent_model(node, description, q):
    reset(node)
    previous = node.live
    node._load_description(description, sequence=0)
    if node.live is previous:  # refused: the arm stays and still answers
        model = ARM
    else:
        model = node.live.model
    names = model.joint_names
    published = node.published
    _send(node, names, (q * 3)[: len(names)], [0.0] * len(names), sec=1000)
    assert node.published == published + 1 or model.nv == 0
    check_outputs(node, model)


def test_description_topic_callback_never_raises(node):
    reset(node)
    node._on_description(String(data="<robot name='x'><link name='a'/></robot>"))
    node._on_description(String(data="\x00" * 1000))


# --- the floating-base inputs (ANYmal) -----------------------------------------------------------
LEGGED_STAMPS = itertools.count(10)


@pytest.fixture(scope="module")
def legged_node(node):
    from reference import robot_urdf

    urdf = robot_urdf("anymal_b_simple_description/robots/anymal.urdf")
    legged = RneaNode()
    legged.floating_base, legged.base_timeout = True, 1e9
    legged.state_timeout, legged.acceleration_timeout, legged.wrench_timeout = 1e9, 1e9, 1e9
    legged.future_stamp_tolerance = 1e12
    legged.contact_links = ["LF_FOOT", "RH_FOOT"]
    legged.pub_efforts, legged.pub_gravity, legged.pub_commands = Recorder(), Recorder(), Recorder()
    legged.pub_residual, legged.pub_contacts = Recorder(), Recorder()
    legged._load_description(urdf, sequence=0)
    assert legged.live is not None and legged.live.floating
    yield legged
    legged.destroy_node()


def _base_message(kind: str, values: list[float], frame: str):
    from geometry_msgs.msg import AccelStamped
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import Imu

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
def test_fuzzed_base_inputs(legged_node, inputs, q):
    node = legged_node
    handlers = {"odometry": node._on_odometry, "imu": node._on_imu, "accel": node._on_base_acceleration}
    for kind, values, frame, normalise in inputs:
        quaternion = slice(3, 7) if kind == "odometry" else slice(0, 4)
        norm = np.linalg.norm(values[quaternion])
        if normalise and np.isfinite(norm) and norm > 1e-3:
            values[quaternion] = list(np.array(values[quaternion]) / norm)
        handlers[kind](_base_message(kind, values, frame))
        published = node.published
        _send(node, node.live.model.joint_names, q, [0.1] * 12, sec=next(LEGGED_STAMPS))
        valid_odometry = kind == "odometry" and frame == "base" and normalise and np.all(np.isfinite(values))
        if valid_odometry and abs(norm) > 1e-3 and np.all(np.abs(values) < 1e6):
            assert node.published == published + 1 or node.rejected["compute_error"] > 0
        if node.published > published:
            for recorder in (node.pub_efforts, node.pub_gravity, node.pub_residual, node.pub_contacts):
                last = recorder.messages[-1]
                values_out = last.get("effort", last.get("data"))
                assert values_out is None or np.all(np.isfinite(values_out))
        for recorder in (node.pub_efforts, node.pub_gravity, node.pub_commands, node.pub_residual):
            recorder.messages.clear()
