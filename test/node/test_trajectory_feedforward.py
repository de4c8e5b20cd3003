"""A trajectory with every point's effort filled, against Pinocchio on states known in closed form:
a cubic in time per joint, given by positions and velocities at sparse points, is exactly the
JTC's cubic spline, so its q, q̇, q̈ between the points are known without the code under test."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.controller.core import build_live_model
from rnea_ros.controller.inputs import BY_TOPIC
from rnea_ros.controller.settings import Settings
from rnea_ros.controller.state import InvalidMessageError, OdometryReading
from rnea_ros.controller.trajectory_feedforward import with_efforts
from rnea_ros.motion.trajectory import JointSpline, Trajectory, linear_efforts
from rnea_ros.testing.reference import ARM_URDF, PinocchioReference

LIVE = build_live_model(ARM_URDF, Settings(urdf_joint_dynamics=True))
ARM = LIVE.bound.model
PIN = PinocchioReference(ARM_URDF, ARM)
rng = np.random.default_rng(21)
C = rng.uniform(-0.6, 0.6, (4, ARM.nv))  # q(t) = C0 + C1 t + C2 t² + C3 t³


def cubic(t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    t = t[:, None]
    return C[0] + C[1] * t + C[2] * t**2 + C[3] * t**3, C[1] + 2 * C[2] * t + 3 * C[3] * t**2, 2 * C[2] + 6 * C[3] * t


def planner_trajectory(spacing: float = 0.1, names=None) -> Trajectory:
    times = np.arange(0.0, 1.0 + 1e-9, spacing)
    q, qd, _ = cubic(times)
    order = [ARM.joint_names.index(name) for name in (names or ARM.joint_names)]
    return Trajectory(list(names or ARM.joint_names), times, q[:, order], qd[:, order])


def test_efforts_are_pinocchios_with_the_urdf_joint_dynamics_at_every_resampled_point():
    names = list(reversed(ARM.joint_names))  # any joint order
    result = with_efforts(LIVE, planner_trajectory(0.1, names), spacing=0.01)
    assert len(result.times) == 101 and result.joint_names == names
    q, qd, qdd = cubic(result.times)  # the closed form, model order
    order = [ARM.joint_names.index(name) for name in names]
    np.testing.assert_allclose(result.positions, q[:, order], atol=1e-12)
    np.testing.assert_allclose(result.accelerations, qdd[:, order], atol=1e-9)
    expected = np.array([PIN.node_torques(q[k], qd[k], qdd[k], urdf_joint_dynamics=True) for k in range(len(q))])
    expected = expected[:, order]
    np.testing.assert_allclose(result.efforts, expected, rtol=1e-9, atol=1e-9)


def test_resampling_puts_the_jtc_linear_effort_on_the_torque_between_points():
    """The JTC interpolates effort linearly between points: the error that leaves against the torque
    the motion needs, for the planner's points 0.1 s apart and resampled every 10 ms. Rigid bodies
    only: the URDF's Coulomb friction (tanh over 0.01 rad/s) turns faster than any spacing."""
    rigid = build_live_model(ARM_URDF, Settings(urdf_joint_dynamics=False))
    fine = np.linspace(0.0, 1.0, 2001)
    q, qd, qdd = cubic(fine)
    needed = np.array([PIN.inverse_dynamics(q[k], qd[k], qdd[k]) for k in range(len(fine))])
    errors = {}
    for spacing in (0.0, 0.01):
        result = with_efforts(rigid, planner_trajectory(0.1), spacing=spacing)
        errors[spacing] = np.abs(linear_efforts(result.times, result.efforts, fine) - needed).max()
    print(f"feed-forward error between points: {errors[0.0]:.4f} N·m (0.1 s), {errors[0.01]:.6f} (10 ms)")
    assert errors[0.01] < errors[0.0] / 50


def test_a_corrections_payload_and_friction_are_in_the_efforts(tmp_path):
    import yaml

    from rnea_ros.controller.core import RneaCore

    path = tmp_path / "corrections.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "joints": {"joint2": {"viscous": 2.0, "offset": 0.5}}}))
    core = RneaCore(Settings())
    core.set_corrections(str(path))
    core.load(build_live_model(ARM_URDF, Settings()))
    plain = with_efforts(LIVE, planner_trajectory(), 0.0)
    corrected = with_efforts(core.live, planner_trajectory(), 0.0)
    j = ARM.joint_names.index("joint2")
    np.testing.assert_allclose(corrected.efforts[:, j] - plain.efforts[:, j], 2.0 * plain.velocities[:, j] + 0.5)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (
            lambda t: Trajectory([*t.joint_names[:-1], t.joint_names[0]], t.times, t.positions, t.velocities),
            "duplicate_names",
        ),
        (lambda t: Trajectory(["nope", *t.joint_names[1:]], t.times, t.positions, t.velocities), "unknown_joints"),
        (lambda t: Trajectory(t.joint_names[1:], t.times, t.positions[:, 1:], t.velocities[:, 1:]), "missing_joints"),
        (lambda t: Trajectory(t.joint_names, t.times[::-1], t.positions, t.velocities), "bad_trajectory"),
    ],
)
def test_what_cannot_be_used_whole_is_refused_with_a_reason(change, reason):
    with pytest.raises(InvalidMessageError) as refused:
        with_efforts(LIVE, change(planner_trajectory()), 0.01)
    assert refused.value.reason == reason


def test_the_spline_is_the_jtcs_quintic_when_accelerations_are_given():
    """A quintic in time is exactly the JTC's quintic through its values at two points."""
    a = rng.uniform(-1, 1, 6)
    poly = np.polynomial.Polynomial(a)
    ends = np.array([0.2, 0.9])
    spline = JointSpline(ends, poly(ends)[:, None], poly.deriv()(ends)[:, None], poly.deriv(2)(ends)[:, None])
    t = np.linspace(0.2, 0.899, 50)
    q, qd, qdd = spline.sample(t)
    np.testing.assert_allclose(q[:, 0], poly(t), atol=1e-10)
    np.testing.assert_allclose(qd[:, 0], poly.deriv()(t), atol=1e-9)
    np.testing.assert_allclose(qdd[:, 0], poly.deriv(2)(t), atol=1e-8)


# --- a floating base standing on its feet ------------------------------------------------------
def solo_core(**settings):
    """rnea_node's core with Solo12 on its four point feet (qp), odometry at rest received."""
    from rnea_ros.controller.core import RneaCore
    from rnea_ros.testing.legged import SOLO_FEET, SOLO_URDF

    settings = Settings(
        floating_base=True, contact_links=tuple(SOLO_FEET), contact_distribution="qp", friction_coefficient=0.8,
        future_stamp_tolerance=3600.0, base_timeout=60.0, **settings,
    )  # fmt: skip
    core = RneaCore(settings)
    core.load(build_live_model(SOLO_URDF, settings))
    core.receive(BY_TOPIC["base_odometry"], OdometryReading(SOLO_BASE, np.zeros(6), core.live.bound.model.base_link))
    return core


SOLO_BASE = np.array([0.0, 0.0, 0.25, 0.0, 0.0, 0.0, 1.0])


def crouch(names) -> Trajectory:
    """Solo12 from its standing pose down 20 % (knees from −1.6 to −1.92 rad) and up in 2 s."""
    from rnea_ros.testing.legged import solo_standing_pose

    stand = solo_standing_pose(names)
    positions = np.array([stand, 1.2 * stand, stand])
    return Trajectory(list(names), np.array([0.0, 1.0, 2.0]), positions, np.zeros_like(positions))


def pinocchio_frame_jacobians(pin_ref, q_full, frames) -> np.ndarray:
    """(3·frames, nv) the frames' linear velocity rows (their own axes), in this model's column order."""
    import pinocchio as pin

    q_pin = pin_ref.q(q_full)
    pin.computeJointJacobians(pin_ref.model, pin_ref.data, q_pin)
    pin.updateFramePlacements(pin_ref.model, pin_ref.data)
    rows = []
    for frame in frames:
        J = pin.getFrameJacobian(pin_ref.model, pin_ref.data, pin_ref.model.getFrameId(frame), pin.LOCAL)[:3]
        rows.append(np.concatenate([J[:, :6], J[:, [joint.idx_v for joint in pin_ref.joints]]], axis=1))
    return np.vstack(rows)


def test_a_standing_robots_trajectory_has_the_efforts_of_forces_that_carry_it_with_its_feet_still():
    """Solo12 crouching and rising, its feet held: at every resampled point, with the base twist that
    Pinocchio's foot Jacobians say keeps the feet still (and its derivative along the points), the
    efforts are Pinocchio's inverse dynamics less the feet's forces f through the joints' columns,
    where the same f carry the base: Jᵀ f gives the base rows too."""
    from rnea_ros.testing.legged import SOLO_FEET, SOLO_URDF

    core = solo_core()
    model = core.live.bound.model
    result = core.trajectory(crouch(model.joint_names))
    assert result is not None and len(result.times) == 201
    pin_ref = PinocchioReference(SOLO_URDF, model)
    v_base = []
    for q, qd in zip(result.positions, result.velocities, strict=True):
        J = pinocchio_frame_jacobians(pin_ref, np.concatenate([SOLO_BASE, q]), SOLO_FEET)
        v_base.append(-np.linalg.lstsq(J[:, :6], J[:, 6:] @ qd, rcond=None)[0])
    v_base = np.array(v_base)
    a_base = np.gradient(v_base, result.times, axis=0)
    assert np.abs(v_base).max() > 0.05  # the base moves (down, then up)
    worst = 0.0
    for k in range(len(result.times)):
        q_full = np.concatenate([SOLO_BASE, result.positions[k]])
        tau = pin_ref.inverse_dynamics(
            q_full, np.r_[v_base[k], result.velocities[k]], np.r_[a_base[k], result.accelerations[k]]
        )
        J = pinocchio_frame_jacobians(pin_ref, q_full, SOLO_FEET)  # point feet: forces only
        f = np.linalg.solve(J[:, 6:].T, tau[6:] - result.efforts[k])  # the forces these efforts leave to the feet
        worst = max(worst, np.abs(J[:, :6].T @ f - tau[:6]).max())
    print(f"largest base-row mismatch of the feet's forces: {worst:.2e} (N, N·m); base speed up to "
          f"{np.abs(v_base[:, :3]).max():.3f} m/s")  # fmt: skip
    assert worst < 1e-6


def test_a_standing_robots_trajectory_at_rest_has_the_live_efforts():
    """Two points at the same pose: the trajectory's efforts are what feedforward_efforts gives there."""
    core = solo_core()
    names = core.live.bound.model.joint_names
    held = crouch(names)
    still = Trajectory(held.joint_names, held.times[:2], held.positions[[0, 0]], held.velocities[:2])
    result = core.trajectory(still)
    live = core.joint_states(names, held.positions[0], np.zeros(len(names)), True, 1.0, lambda: 0.0)
    np.testing.assert_allclose(result.efforts, np.tile(live.tau, (len(result.times), 1)), atol=1e-9)


def test_a_floating_base_trajectory_needs_contacts_and_a_base_state():
    from rnea_ros.controller.core import RneaCore
    from rnea_ros.testing.legged import SOLO_URDF

    without_contacts = Settings(floating_base=True)
    core = RneaCore(without_contacts)
    core.load(build_live_model(SOLO_URDF, without_contacts))
    names = core.live.bound.model.joint_names
    with pytest.raises(InvalidMessageError) as refused:
        core.trajectory(crouch(names))
    assert refused.value.reason == "floating_base"
    core = solo_core()
    long = crouch(names)
    long = Trajectory(long.joint_names, long.times * 200.0, long.positions, long.velocities)  # 400 s: 40,001 points
    with pytest.raises(InvalidMessageError) as refused:
        core.trajectory(long)
    assert refused.value.reason == "too_many_points"
    core.live.odometry = None  # never received
    with pytest.raises(InvalidMessageError) as refused:
        core.trajectory(crouch(names))
    assert refused.value.reason == "no_base_state"
