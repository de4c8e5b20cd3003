"""rnea_node on legged robots (ANYmal quadruped, Talos humanoid from example-robot-data) over real
DDS: base state from odometry and IMU, base acceleration, the base-wrench residual and contact
distribution, all checked against Pinocchio with a JointModelFreeFlyer."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
import rclpy
from geometry_msgs.msg import AccelStamped, WrenchStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu

from rnea_ros import RobotModel
from rnea_ros.testing.reference import PinocchioReference, robot_urdf
from rnea_ros.testing.ros_harness import Client, init_rclpy, running_node

pytestmark = pytest.mark.ros

ANYMAL_URDF = robot_urdf("anymal_b_simple_description/robots/anymal.urdf")
ANYMAL = RobotModel.from_urdf(ANYMAL_URDF, floating_base=True)
ANYMAL_PIN = PinocchioReference(ANYMAL_URDF, ANYMAL)
FEET = ["LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"]
TALOS_URDF = robot_urdf("talos_data/robots/talos_reduced.urdf", strip_mimic=True)
TALOS = RobotModel.from_urdf(TALOS_URDF, floating_base=True)
SOLES = ["left_sole_link", "right_sole_link"]
LONG = {"acceleration_timeout": 30.0, "wrench_timeout": 30.0, "base_timeout": 30.0, "state_timeout": 30.0}


@pytest.fixture(scope="module", autouse=True)
def ros():
    init_rclpy()
    yield
    rclpy.try_shutdown()


class LeggedClient(Client):
    def __init__(self, namespace: str, model: RobotModel) -> None:
        super().__init__(namespace, model.joint_names, wrench_topic="foot_wrenches")
        self.model = model
        self.odometry = self.node.create_publisher(Odometry, "base_odometry", 10)
        self.imu = self.node.create_publisher(Imu, "imu", 10)
        self.base_accel = self.node.create_publisher(AccelStamped, "desired_base_acceleration", 10)
        self.residuals: list[WrenchStamped] = []
        self.contacts: list[WrenchStamped] = []
        self.node.create_subscription(WrenchStamped, "base_wrench_residual", self.residuals.append, 100)
        self.node.create_subscription(WrenchStamped, "estimated_contact_wrenches", self.contacts.append, 100)

    def send_odometry(self, q_base, v_base) -> None:
        msg = Odometry()
        msg.header.frame_id, msg.child_frame_id = "odom", self.model.base_link
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        p.x, p.y, p.z = map(float, q_base[:3])
        o.x, o.y, o.z, o.w = map(float, q_base[3:])
        v, w = msg.twist.twist.linear, msg.twist.twist.angular
        v.x, v.y, v.z, w.x, w.y, w.z = map(float, v_base)
        self.odometry.publish(msg)

    def send_base_acceleration(self, classical) -> None:
        msg = AccelStamped()
        msg.header.frame_id = self.model.base_link
        a, alpha = msg.accel.linear, msg.accel.angular
        a.x, a.y, a.z, alpha.x, alpha.y, alpha.z = map(float, classical)
        self.base_accel.publish(msg)

    def answer(self, q, qd, timeout: float = 5.0):
        """(efforts, residual wrench, contact wrenches by link) for one joint_states."""
        msg = self.send_state(q, qd)
        stamp = msg.header.stamp.sec
        efforts = self.result_for(stamp, timeout)
        if efforts is None:
            return None
        self.spin_until(lambda: any(r.header.stamp.sec == stamp for r in self.residuals), 2.0)
        residual = next(_wrench(r) for r in self.residuals if r.header.stamp.sec == stamp)
        self.spin_for(0.1)
        contacts = {c.header.frame_id: _wrench(c) for c in self.contacts if c.header.stamp.sec == stamp}
        return np.array(efforts.effort), residual, contacts


def _wrench(msg: WrenchStamped) -> np.ndarray:
    f, t = msg.wrench.force, msg.wrench.torque
    return np.array([f.x, f.y, f.z, t.x, t.y, t.z])


def random_base(rng) -> tuple[np.ndarray, np.ndarray]:
    quaternion = rng.normal(size=4)
    return np.concatenate([rng.normal(size=3), quaternion / np.linalg.norm(quaternion)]), rng.normal(size=6)


def legged(tmp_path, namespace: str, model: RobotModel, urdf: str, **parameters):
    """A floating-base node on ``urdf`` and its client (a context manager, see ``running_node``)."""
    params = {"robot_description": urdf, "floating_base": True, "wrench_topics": ["foot_wrenches"], **LONG}
    return running_node(tmp_path, namespace, {**params, **parameters}, lambda ns: LeggedClient(ns, model))


def wait_serving(client: LeggedClient, q_base, v_base) -> None:
    for _ in range(60):
        client.send_odometry(q_base, v_base)
        client.spin_for(0.2)
        if client.efforts_at(np.zeros(client.model.nv - 6), timeout=0.3) is not None:
            return
    raise AssertionError("rnea_node never answered")


@pytest.fixture(scope="module")
def anymal(tmp_path_factory):
    with legged(tmp_path_factory.mktemp("anymal"), "anymal", ANYMAL, ANYMAL_URDF) as (process, client):
        wait_serving(client, *random_base(np.random.default_rng(0)))
        yield process, client


def test_odometry_and_base_acceleration_against_free_flyer(anymal):
    _, client = anymal
    rng = np.random.default_rng(1)
    q_base, v_base = random_base(rng)
    q, qd = rng.uniform(-1, 1, 12), rng.normal(size=12)
    classical = rng.normal(size=6)  # [a of the base origin, α], base frame
    client.send_odometry(q_base, v_base)
    client.send_base_acceleration(classical)
    client.spin_for(0.3)
    efforts, residual, _ = client.answer(q, qd)
    # Pinocchio's free-flyer acceleration is the derivative of the body-frame twist: a − ω × v.
    spatial = np.concatenate([classical[:3] - np.cross(v_base[3:], v_base[:3]), classical[3:]])
    expected = ANYMAL_PIN.inverse_dynamics(
        np.concatenate([q_base, q]), np.concatenate([v_base, qd]), np.concatenate([spatial, np.zeros(12)])
    )
    np.testing.assert_allclose(efforts, expected[6:], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(residual, expected[:6], rtol=1e-9, atol=1e-9)


def test_imu_on_a_rotated_link_maps_to_the_base(tmp_path):
    """Odometry never arrives: orientation and rate come from imu_link (mounted upside down on the
    base); Pinocchio's own placement of that frame gives the expected base orientation."""
    with legged(tmp_path, "anymal_imu", ANYMAL, ANYMAL_URDF) as (process, client):
        rng = np.random.default_rng(2)
        R_world_imu = pin.Quaternion(*rng.normal(size=4)).normalized().matrix()
        omega_imu = rng.normal(size=3)
        msg = Imu()
        msg.header.frame_id = "imu_link"
        quat = pin.Quaternion(R_world_imu)
        msg.orientation.x, msg.orientation.y, msg.orientation.z, msg.orientation.w = (
            quat.x,
            quat.y,
            quat.z,
            quat.w,
        )
        msg.angular_velocity.x, msg.angular_velocity.y, msg.angular_velocity.z = map(float, omega_imu)
        R_base_imu = ANYMAL_PIN.model.frames[ANYMAL_PIN.model.getFrameId("imu_link")].placement.rotation
        R_world_base = R_world_imu @ R_base_imu.T
        base_quat = pin.Quaternion(R_world_base)
        q_base = np.array([0, 0, 0, base_quat.x, base_quat.y, base_quat.z, base_quat.w])
        v_base = np.concatenate([np.zeros(3), R_base_imu @ omega_imu])
        q, qd = rng.uniform(-1, 1, 12), rng.normal(size=12)
        expected = ANYMAL_PIN.inverse_dynamics(np.concatenate([q_base, q]), np.concatenate([v_base, qd]), np.zeros(18))
        answer = None
        for _ in range(100):
            client.imu.publish(msg)
            client.spin_for(0.1)
            answer = client.answer(q, qd, timeout=0.5)
            if answer is not None:
                break
        assert answer is not None, process.output()
        np.testing.assert_allclose(answer[0], expected[6:], rtol=1e-9, atol=1e-9)
        assert client.diagnostic_says("base linear velocity taken as zero"), process.output()


def test_imu_behind_joints_on_a_humanoid(tmp_path):
    """Talos's IMU sits on the torso, two joints above the base: the node must undo those joints'
    rotation and rate. The IMU reading is made by Pinocchio's forward kinematics."""
    with legged(tmp_path, "talos_imu", TALOS, TALOS_URDF) as (process, client):
        reference = PinocchioReference(TALOS_URDF, TALOS)
        rng = np.random.default_rng(6)
        n = TALOS.nv - 6
        base_quat = pin.Quaternion(*rng.normal(size=4)).normalized()
        q_full = np.concatenate([np.zeros(3), base_quat.coeffs(), rng.uniform(-0.5, 0.5, n)])
        v_full = np.concatenate([np.zeros(3), rng.normal(size=3), rng.normal(size=n)])  # no linear velocity
        model, data = reference.model, reference.data
        pin.forwardKinematics(model, data, reference.q(q_full), reference.v(v_full))
        pin.updateFramePlacements(model, data)
        frame = model.getFrameId("imu_link")
        R_world_imu = data.oMf[frame].rotation
        omega_imu = pin.getFrameVelocity(model, data, frame, pin.LOCAL).angular
        msg = Imu()
        msg.header.frame_id = "imu_link"
        quat = pin.Quaternion(R_world_imu)
        msg.orientation.x, msg.orientation.y, msg.orientation.z, msg.orientation.w = quat.x, quat.y, quat.z, quat.w
        msg.angular_velocity.x, msg.angular_velocity.y, msg.angular_velocity.z = map(float, omega_imu)
        expected = reference.node_torques(q_full, v_full, np.zeros(TALOS.nv))  # rigid: its <dynamics> left out
        answer = None
        for _ in range(100):
            client.imu.publish(msg)
            client.spin_for(0.1)
            answer = client.answer(q_full[7:], v_full[6:], timeout=0.5)
            if answer is not None:
                break
        assert answer is not None, process.output()
        np.testing.assert_allclose(answer[0], expected[6:], rtol=1e-9, atol=1e-8)
        np.testing.assert_allclose(answer[1], expected[:6], rtol=1e-9, atol=1e-8)


def foot_wrenches_in_balance(q: np.ndarray, rng) -> dict[str, np.ndarray]:
    """Random wrenches on three feet and, solved with Pinocchio, the fourth that makes the base
    rows of τ(q, 0, 0) vanish: a static stance the measured wrenches fully explain."""

    def base_part(wrenches):
        return ANYMAL_PIN.inverse_dynamics(q, np.zeros(18), np.zeros(18), wrenches)[:6]

    wrenches = {foot: np.concatenate([rng.normal(size=2) * 5, [rng.uniform(40, 80)], np.zeros(3)]) for foot in FEET[:3]}
    b0 = base_part(wrenches)
    A = np.column_stack([base_part({**wrenches, FEET[3]: e}) - b0 for e in np.eye(6)])
    wrenches[FEET[3]] = np.linalg.solve(A, -b0)
    return wrenches


def test_measured_foot_wrenches_explain_the_base_and_a_missing_one_shows_up(anymal):
    _, client = anymal
    rng = np.random.default_rng(3)
    q_base = np.array([0.1, -0.2, 0.45, 0.0, 0.0, 0.0, 1.0])
    q = np.tile([0.0, 0.6, -1.2], 4)
    wrenches = foot_wrenches_in_balance(np.concatenate([q_base, q]), rng)
    client.send_odometry(q_base, np.zeros(6))
    client.send_base_acceleration(np.zeros(6))  # standing still (an earlier test left one)
    for foot, w in wrenches.items():
        client.send_wrench(foot, w)
    client.spin_for(0.3)
    _, residual, _ = client.answer(q, np.zeros(12))
    assert np.linalg.norm(residual) < 1e-8
    # One foot's sensor goes silent (expires): the residual is the base image of its wrench.
    missing = FEET[3]
    three = {foot: w for foot, w in wrenches.items() if foot != missing}
    expected = ANYMAL_PIN.inverse_dynamics(np.concatenate([q_base, q]), np.zeros(18), np.zeros(18), three)[:6]
    client.send_wrench(missing, np.zeros(6))
    client.spin_for(0.3)
    _, residual, _ = client.answer(q, np.zeros(12))
    np.testing.assert_allclose(residual, expected, rtol=1e-9, atol=1e-9)
    assert np.linalg.norm(residual) > 10.0
    for foot in FEET:
        client.send_wrench(foot, np.zeros(6))


@pytest.mark.parametrize(
    "robot, model, urdf, links",
    [("quadruped", ANYMAL, ANYMAL_URDF, FEET), ("humanoid", TALOS, TALOS_URDF, SOLES)],
)
def test_contact_links_make_the_base_wrench_vanish(tmp_path, robot, model, urdf, links):
    with legged(tmp_path, f"{robot}_contacts", model, urdf, contact_links=links) as (_, client):
        rng = np.random.default_rng(4)
        q_base = np.array([0.0, 0.0, 0.8, *pin.Quaternion(pin.rpy.rpyToMatrix(0.05, -0.03, 0.4)).coeffs()])
        n = model.nv - 6
        q = rng.uniform(-0.3, 0.3, n)
        wait_serving(client, q_base, np.zeros(6))
        answer = None
        for _ in range(20):
            answer = client.answer(q, np.zeros(n))
            if answer is not None and set(answer[2]) == set(links):
                break
        efforts, residual, contacts = answer
        assert np.linalg.norm(residual) < 1e-8
        # Pinocchio with the node's estimated contact wrenches: the same joint torques, no base wrench.
        reference = PinocchioReference(urdf, model)
        tau = reference.inverse_dynamics(np.concatenate([q_base, q]), np.zeros(model.nv), np.zeros(model.nv), contacts)
        np.testing.assert_allclose(tau[:6], 0.0, atol=1e-8)
        np.testing.assert_allclose(efforts, tau[6:], rtol=1e-9, atol=1e-8)
        # The estimated wrenches carry the robot's weight.
        mass = sum(inertia.mass for inertia in reference.model.inertias)
        total_force = sum(_world_force(reference, q_base, q, link, w) for link, w in contacts.items())
        np.testing.assert_allclose(total_force, [0, 0, mass * 9.81], rtol=1e-6, atol=1e-6)


def _world_force(reference: PinocchioReference, q_base, q, link: str, wrench) -> np.ndarray:
    pin_q = reference.q(np.concatenate([q_base, q]))
    pin.framesForwardKinematics(reference.model, reference.data, pin_q)
    R = reference.data.oMf[reference.model.getFrameId(link)].rotation
    return R @ wrench[:3]


def test_the_contact_distribution_changes_live_to_the_qp_and_back(tmp_path):
    """contact_distribution set while the node serves ANYmal on four feet: the minimum-norm wrenches
    ask the point feet for torques; after the change to qp the feet get forces only, inside the
    friction cone (μ 0.7), still explaining the base (Pinocchio with those wrenches); then back."""
    with legged(tmp_path, "anymal_switch", ANYMAL, ANYMAL_URDF, contact_links=FEET) as (_, client):
        q_base = np.array([0.0, 0.0, 0.6, 0.0, 0.0, 0.0, 1.0])
        q = np.random.default_rng(8).uniform(-0.3, 0.3, ANYMAL.nv - 6)
        wait_serving(client, q_base, np.zeros(6))

        def contacts_now():
            for _ in range(20):
                answer = client.answer(q, np.zeros(len(q)))
                if answer is not None and set(answer[2]) == set(FEET):
                    return answer
            raise AssertionError("no contact wrenches for every foot")

        assert max(np.abs(w[3:]).max() for w in contacts_now()[2].values()) > 1e-3
        result = client.set_parameter("contact_distribution", "qp")
        assert result.successful, result.reason
        efforts, residual, contacts = contacts_now()
        assert np.linalg.norm(residual) < 1e-6
        for link, wrench in contacts.items():
            assert np.all(wrench[3:] == 0.0), link
            f = _world_force(ANYMAL_PIN, q_base, q, link, wrench)
            assert f[2] > 0.0 and np.hypot(f[0], f[1]) <= 0.7 * f[2] + 1e-9, (link, f)
        tau = ANYMAL_PIN.inverse_dynamics(
            np.concatenate([q_base, q]), np.zeros(ANYMAL.nv), np.zeros(ANYMAL.nv), contacts
        )
        np.testing.assert_allclose(tau[:6], 0.0, atol=1e-6)
        np.testing.assert_allclose(efforts, tau[6:], rtol=1e-9, atol=1e-8)
        assert client.set_parameter("contact_distribution", "minimum_norm").successful
        assert max(np.abs(w[3:]).max() for w in contacts_now()[2].values()) > 1e-3
        assert not client.set_parameter("contact_distribution", "optimal").successful
