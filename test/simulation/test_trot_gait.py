"""The trot's joint trajectory (``motion/gait.py``, ``testing/legged.py``'s ``solo_trot``), checked
without the simulator: the feet where the gait puts them by Pinocchio's forward kinematics, stance
and swing as rnea_node's gait has them, the velocities and accelerations the derivatives of the
positions."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from rnea_ros import RobotModel
from rnea_ros.dynamics.contact_schedule import PeriodicGait
from rnea_ros.motion.gait import Gait, lift_curve, smoothstep, smoothstep_integral
from rnea_ros.testing.legged import (
    GO2_FEET,
    GO2_URDF,
    SOLO_FEET,
    SOLO_FOOT_RADIUS,
    SOLO_TROT_PHASES,
    SOLO_URDF,
    SupportLineSway,
    base_acceleration,
    feet_kinematics,
    go2_trot,
    solo_standing_pose,
    solo_trot,
)

LIFT = 0.05


@pytest.fixture(scope="module")
def solo():
    model = RobotModel.from_urdf(SOLO_URDF, floating_base=True)
    reference = pin.buildModelFromXML(SOLO_URDF, pin.JointModelFreeFlyer())
    assert [reference.names[i] for i in range(2, reference.njoints)] == model.joint_names
    return model, reference


def pinocchio_feet(reference, q: np.ndarray, rolling: bool = False) -> np.ndarray:
    """(N, feet, 3): the feet links' origins in the base frame, by Pinocchio (base at the origin);
    ``rolling``: the points a rolling foot keeps still, c + r (−φ_y, φ_x, 0), φ = log3(R R_standingᵀ)."""
    data = reference.createData()
    frames = [reference.getFrameId(foot) for foot in SOLO_FEET]

    def poses(joints):
        pin.framesForwardKinematics(reference, data, np.r_[np.zeros(6), 1.0, joints])
        return [(data.oMf[f].rotation.copy(), data.oMf[f].translation.copy()) for f in frames]

    standing = poses(solo_standing_pose(reference.names[2:]))
    out = np.empty((len(q), len(frames), 3))
    for n, joints in enumerate(q):
        for k, (R, c) in enumerate(poses(joints)):
            phi = pin.log3(R @ standing[k][0].T) if rolling else np.zeros(3)
            out[n, k] = c + SOLO_FOOT_RADIUS * np.array([-phi[1], phi[0], 0.0])
    return out


def test_the_feet_kinematics_are_pinocchios(solo):
    model, reference = solo
    q = np.random.default_rng(4).uniform(-2.5, 2.5, (50, len(model.joint_names)))
    error = feet_kinematics(model, SOLO_FEET)(q) - pinocchio_feet(reference, q)
    assert np.abs(error).max() < 1e-12
    stand = solo_standing_pose(model.joint_names)
    near = stand + np.random.default_rng(5).uniform(-1.0, 1.0, q.shape)  # rotations under π from standing
    rolling = feet_kinematics(model, SOLO_FEET, SOLO_FOOT_RADIUS, stand)(near)
    assert np.abs(rolling - pinocchio_feet(reference, near, rolling=True)).max() < 1e-12


def test_go2s_feet_kinematics_are_pinocchios_and_its_stance_is_centred():
    """Go2's feet (frames fixed to its calves) by the model's tree and by Pinocchio; its trot's standing
    pose puts the feet's centre under the centre of mass (Pinocchio's)."""
    model = RobotModel.from_urdf(GO2_URDF, floating_base=True)
    reference = pin.buildModelFromXML(GO2_URDF, pin.JointModelFreeFlyer())
    data = reference.createData()
    frames = [reference.getFrameId(foot) for foot in GO2_FEET]
    q = np.random.default_rng(6).uniform(-1.5, 1.5, (20, 12))
    kinematics = feet_kinematics(model, GO2_FEET)
    for joints, feet in zip(q, kinematics(q), strict=True):
        pin.framesForwardKinematics(reference, data, np.r_[np.zeros(6), 1.0, joints])
        assert np.abs(feet - np.array([data.oMf[f].translation for f in frames])).max() < 1e-12
    stand = go2_trot(model).standing
    centre = pin.centerOfMass(reference, data, np.r_[np.zeros(6), 1.0, stand])
    assert np.abs(kinematics(stand[None])[0][:, :2].mean(axis=0) - centre[:2]).max() < 1e-9


def test_the_curves_and_their_derivatives():
    s = np.linspace(0.0, 1.0, 2001)
    for curve in (smoothstep, lift_curve):
        y, dy, ddy = curve(s)
        assert np.abs(np.gradient(y, s)[1:-1] - dy[1:-1]).max() < 1e-4
        assert np.abs(np.gradient(dy, s)[1:-1] - ddy[1:-1]).max() < 1e-3
        assert np.abs([dy[0], dy[-1], ddy[0], ddy[-1]]).max() < 1e-12
    assert lift_curve(np.array([0.5]))[0][0] == pytest.approx(1.0)
    steps = np.diff(smoothstep_integral(np.linspace(0.0, 2.0, 4001)))
    middles = np.linspace(0.0, 2.0, 4001)[:-1] + 0.00025
    assert np.abs(steps / 0.0005 - smoothstep(middles)[0]).max() < 1e-6


@pytest.mark.parametrize("speed", [0.0, 0.1], ids=["in place", "walking at 0.1 m/s"])
def test_the_feet_step_as_the_nodes_gait_says(solo, speed):
    """At 1,500 random times over 6 s (in place, or walking from 1 s on, at full speed from 2 s):
    the stance feet's rolling points (``feet_kinematics`` with the foot radius: a foot that rolls
    without sliding keeps it still) are where they landed in the world (base moving by X(t)), the swing feet are
    exactly the ones rnea_node's PeriodicGait has in swing (its own rule and clock, phases
    [0, 0.5, 0.5, 0]) and rise 5 cm at mid-swing; Pinocchio's kinematics of the joint positions."""
    model, reference = solo
    trot = solo_trot(model, speed=speed, walk_from=1.0, ramp=1.0)
    gait = trot.gait
    node_gait = PeriodicGait(SOLO_FEET, 0.5, [0.6], list(SOLO_TROT_PHASES))
    t = np.sort(np.random.default_rng(7).uniform(0.0, 6.0, 1500))
    q, _, _ = trot.at_times(t)
    feet = pinocchio_feet(reference, q, rolling=True)
    stance = np.array([node_gait.stance_at(x) for x in t])
    assert np.array_equal(stance, gait.in_stance(t))
    X = gait.base_x(t)[0]
    world = feet + np.stack([X, 0 * X, 0 * X], axis=1)[:, None, :]  # the base level at X(t)
    standing = trot.spots
    assert np.abs(world[..., 1:][stance] - standing[None, :, 1:].repeat(len(t), 0)[stance]).max() < 1e-9
    for k in range(len(SOLO_FEET)):
        touch_down = np.floor(t / 0.5 - SOLO_TROT_PHASES[k]) + SOLO_TROT_PHASES[k]
        for cycle in np.unique(touch_down[stance[:, k]]):  # one spot per stance
            x = world[stance[:, k] & (touch_down == cycle), k, 0]
            assert np.ptp(x) < 1e-9
            assert x[0] - standing[k, 0] == pytest.approx(gait.base_x(np.array([(cycle + 0.3) * 0.5]))[0][0], abs=1e-9)
    lifted = world[..., 2] - standing[None, :, 2]
    assert np.all(lifted[stance] < 1e-9) and np.all(lifted[~stance] > -1e-9)
    assert lifted[~stance].max() == pytest.approx(LIFT, abs=2e-4)  # the samples' nearest to mid-swing
    middle = (np.array([0.0, 0.5, 0.5, 0.0]) + 0.8) * 0.5 + 2.0  # mid-swing of each foot in the 5th cycle
    for k, when in enumerate(middle):
        top = pinocchio_feet(reference, trot.at_times(np.array([when]))[0], True)[0, k, 2] - standing[k, 2]
        assert top == pytest.approx(LIFT, abs=1e-9)
    if speed:
        end = gait.base_x(np.array([6.0]))[0][0]
        assert end == pytest.approx(speed * (6.0 - 1.0 - 0.5), abs=1e-12)  # the ramp loses half its time


def test_velocities_and_accelerations_are_the_positions_derivatives(solo):
    """q̇ = J⁻¹ ṗ and q̈ = J⁻¹(p̈ − J̇q̇) against central differences of q at 0.2 ms over 0.8 s, walking
    from 0.2 s (q̈ away from lift-offs and touch-downs, where the curves' jerk steps); the trajectory
    held at rest at its start before time 0; its table played back as computed."""
    model, _ = solo
    trot = solo_trot(model, speed=0.1, walk_from=0.2, ramp=0.4)
    h = 2e-4
    t = np.arange(round(0.8 / h) + 1) * h
    q, qd, qdd = trot.at_times(t)
    scale_v, scale_a = np.abs(qd).max(), np.abs(qdd).max()
    assert scale_v > 3.0 and scale_a > 100.0  # the legs do move (rad/s, rad/s²)
    assert np.abs((q[2:] - q[:-2]) / (2 * h) - qd[1:-1]).max() < 1e-4 * scale_v
    switches = np.concatenate([(np.arange(-1, 4) + p + shift) * 0.5 for p in (0.0, 0.5) for shift in (0.0, 0.6)])
    smooth = np.abs(t[1:-1, None] - switches).min(axis=1) > 1.5 * h
    assert np.abs((qd[2:] - qd[:-2]) / (2 * h) - qdd[1:-1])[smooth].max() < 1e-4 * scale_a
    before = trot.at_times(np.array([-1.0, -0.1]))
    assert np.allclose(before[0], trot.standing) and not np.any(before[1]) and not np.any(before[2])
    table = trot.tabulated(0.8)
    between = np.random.default_rng(2).uniform(-0.2, 0.8, 500)
    tolerances = (1e-9, 1e-6, 1e-3)  # rad, rad/s, rad/s²
    for played, computed, tolerance in zip(table.at_times(between), trot.at_times(between), tolerances, strict=True):
        assert np.abs(played - computed).max() < tolerance


def test_the_planners_base_acceleration_is_the_references_plus_a_pd_in_the_base_frame():
    """The trot's planner (``testing/legged.py``'s base_acceleration, for ``testing/trot.py``'s
    BaseFeedback): a = Rᵀ(Ẍ + Kp (p_ref − p) + Kd (v_ref −
    R v)), α = −Kp_r φ − Kd_r ω, checked on a base turned a quarter turn about z (world x is its −y),
    and tilted about x, against values worked out by hand; the reference's X(t) walking at 0.1 m/s."""
    gait = Gait(0.5, 0.6, (0.0, 0.5, 0.5, 0.0), 0.05, speed=0.1, walk_from=0.0, ramp=1.0)
    gains = (100.0, 20.0, 400.0, 40.0)
    s = np.sqrt(0.5)
    # at t = 2 s the reference is at X = 0.1 (2 − 1/2) = 0.15 m, 0.1 m/s, at rest in acceleration
    p = np.array([0.14, 0.002, 0.3])  # 1 cm behind, 2 mm left, 1 cm high
    v = np.array([0.0, -0.05, 0.0])  # base frame: world +x 0.05 m/s
    a, alpha = base_acceleration(gait, 0.29, gains, 2.0, p, np.array([0.0, 0.0, s, s]), v, np.zeros(3))
    a_world = 100.0 * np.array([0.01, -0.002, -0.01]) + 20.0 * np.array([0.05, 0.0, 0.0])
    np.testing.assert_allclose(a, [a_world[1], -a_world[0], a_world[2]], atol=1e-12)
    yaw = np.pi / 2
    np.testing.assert_allclose(alpha, [0.0, 0.0, -400.0 * yaw], atol=1e-9)
    # tilted 0.05 rad about x, turning at 0.2 rad/s about y, at the reference: a = 0, α = −Kp_r φ − Kd_r ω
    c, t = np.cos(0.025), np.sin(0.025)
    a, alpha = base_acceleration(
        gait, 0.3, gains, -1.0, np.array([0.0, 0.0, 0.3]), np.array([t, 0.0, 0.0, c]), np.zeros(3), [0.0, 0.2, 0.0]
    )
    np.testing.assert_allclose(alpha, [-400.0 * 0.05, -40.0 * 0.2, 0.0], atol=1e-9)
    np.testing.assert_allclose(a, 0.0, atol=1e-12)
    # level and at rest, with an orientation reference (θ, ω, α): α = α_ref + Kp_r θ + Kd_r ω_ref
    sway = (np.array([0.01, -0.02, 0.0]), np.array([0.1, 0.0, 0.3]), np.array([1.0, 2.0, 3.0]))
    level = np.array([0.0, 0.0, 0.0, 1.0])
    _, alpha = base_acceleration(
        gait, 0.3, gains, -1.0, np.array([0.0, 0.0, 0.3]), level, np.zeros(3), np.zeros(3), sway
    )
    np.testing.assert_allclose(alpha, [1.0 + 4.0 + 4.0, 2.0 - 8.0, 3.0 + 12.0], atol=1e-9)


def test_the_sway_is_the_turn_about_the_support_line_that_no_foot_can_stop(solo):
    """``SupportLineSway``, the planner's orientation reference walking: while a diagonal pair stands
    alone, its angular acceleration is about the line through the pair's contact points, and with the
    base turning so, Pinocchio's floating-base inverse dynamics of the trot's joint motion needs no
    moment about that line (what the feet cannot give), within 5 % of the moment the base level would
    need (the inertia about the line is taken with the legs as standing); ω and α are the derivatives
    of θ; each such phase starts at rest, turned back by half the turn it makes; standing still, level.
    A walk that starts at once keeps the table short (1.5 s: ~1.5 s of CPU)."""
    model, reference = solo
    trot = solo_trot(model, speed=0.1, walk_from=0.0, ramp=0.5)
    sway = SupportLineSway(model, trot, SOLO_FOOT_RADIUS, 1.5)
    t, theta, omega, alpha = sway.t, sway.theta, sway.omega, sway.alpha
    still = SupportLineSway(model, solo_trot(model), SOLO_FOOT_RADIUS, 0.3)
    assert not np.any(still.theta) and not np.any(still.alpha)
    inside = slice(2, -2)
    smooth = np.abs(np.diff(alpha, axis=0)).max(axis=1) < 0.5  # α jumps at the phases' ends
    smooth = smooth[1:] & smooth[:-1]
    np.testing.assert_allclose(np.gradient(theta, t, axis=0)[inside], omega[inside], atol=0.05 * np.abs(omega).max())
    domega = np.gradient(omega, t, axis=0)[1:-1][smooth]
    np.testing.assert_allclose(domega, alpha[1:-1][smooth], atol=0.05 * np.abs(alpha).max())
    alone = sway.gait.in_stance(t).sum(axis=1) == 2
    edges = np.flatnonzero(np.diff(alone.astype(int)))
    phases = [(a + 1, b + 1) for a, b in zip(edges[::2], edges[1::2], strict=False) if alone[a + 1]]
    assert len(phases) >= 4
    data = reference.createData()
    q, qd, qdd = trot.at_times(t)
    _, Xd, Xdd = sway.gait.base_x(t)
    feet = trot.feet(t)[0] - np.array([0.0, 0.0, SOLO_FOOT_RADIUS])
    checked = 0
    for a, b in phases:
        np.testing.assert_allclose(theta[a], -theta[b - 1], atol=1e-9)
        np.testing.assert_allclose(omega[a], 0.0, atol=1e-12)
        if Xd[a] < 0.05:
            continue
        for i in range(a + 5, b - 5, 20):
            pair = np.flatnonzero(sway.gait.in_stance(t[i : i + 1])[0])
            p0, p1 = feet[i, pair]
            u = (p1 - p0) / np.linalg.norm(p1 - p0)
            assert np.linalg.norm(np.cross(alpha[i], u)) < 1e-9 * max(1.0, np.linalg.norm(alpha[i]))
            config, velocity = np.r_[np.zeros(6), 1.0, q[i]], np.r_[Xd[i], np.zeros(5), qd[i]]
            moments = []
            for turning in (np.zeros(3), alpha[i]):
                acceleration = np.r_[np.array([Xdd[i], 0.0, 0.0]) + np.cross(turning, -p0), turning, qdd[i]]
                wrench = pin.rnea(reference, data, config, velocity, acceleration)[:6]
                moments.append(u @ (wrench[3:] - np.cross(p0, wrench[:3])))
            assert abs(moments[1]) <= 0.05 * abs(moments[0]), (t[i], moments)
            checked += 1
    assert checked >= 10


@pytest.mark.ros  # nav_msgs and rclpy's serialization
def test_the_planner_reads_the_odometrys_stamp_from_its_bytes_and_answers_every_period():
    """BaseFeedback's subscription takes each odometry as bytes: the stamp read there (CDR, little
    and big endian) decides whether the planner answers it (its period) before the message is read."""
    from types import SimpleNamespace

    from nav_msgs.msg import Odometry
    from rclpy.serialization import serialize_message

    from rnea_ros.testing.trot import BaseFeedback

    msg = Odometry()
    msg.header.stamp.sec, msg.header.stamp.nanosec = 1795891093, 123_000_000
    msg.pose.pose.position.x = 0.25
    little = serialize_message(msg)
    assert little[1] == 1  # CDR little endian, as Fast DDS writes here
    stamp = 1795891093.123
    for last, answered in ((stamp - 0.001, False), (stamp - 0.004, True), (None, True)):
        read = []
        planner = SimpleNamespace(stamps=[] if last is None else [last], period=0.004, _on_odometry=read.append)
        BaseFeedback._on_bytes(planner, little)
        assert len(read) == answered
    # big endian: the stamp read as such (1 ms after the last answered: skipped, the message not read)
    big = little[:1] + b"\x00" + little[2:4] + (1795891093).to_bytes(4, "big") + (123_000_000).to_bytes(4, "big")
    planner = SimpleNamespace(stamps=[stamp - 0.001], period=0.004, _on_odometry=None)
    BaseFeedback._on_bytes(planner, big + little[12:])
    assert read[0].stamp == (1795891093, 123_000_000) and read[0].pose[0] == 0.25  # read at its offsets
