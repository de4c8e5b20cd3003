"""The QP contact distribution on hand-made cases whose answers are known without the code: a
box on four points (flat and on slopes) and on two soles. The minimum-norm distribution is
reported beside it on the same cases."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.dynamics.contact_forces import Contact, ContactConsistentTorques, ContactForceQP, _solve_in_place
from rnea_ros.dynamics.contact_options import ContactQPOptions
from rnea_ros.dynamics.contacts import ContactLinks
from rnea_ros.dynamics.rotations import matrix_quaternion, quaternion_matrix
from rnea_ros.testing import contact_qp_reference as reference
from rnea_ros.testing.legged import (
    SOLO_FEET,
    SOLO_URDF,
    TALOS_SOLE_SIZE,
    TALOS_SOLES,
    TALOS_URDF,
    solo_standing_pose,
    talos_half_sitting,
)
from rnea_ros.testing.random_urdf import joint_xml, robot_xml

MASS, G = 10.0, 9.81
CORNERS = {"c1": (0.2, 0.1), "c2": (0.2, -0.1), "c3": (-0.2, 0.1), "c4": (-0.2, -0.1)}


def options(mu: float = 0.7, min_normal: float = 0.0, **changes) -> ContactQPOptions:
    """The QP's options these tests were written for: no margins, W = I (the smallest forces), then ``changes``."""
    return dataclasses.replace(ContactQPOptions.smallest_forces(mu, min_normal), **changes)


def box(feet: dict[str, tuple[float, float]], height: float = 0.05) -> RobotModel:
    """A 10 kg box whose centre of mass is ``height`` above its feet (fixed links at z = 0)."""
    body = (
        f'<link name="box"><inertial><origin xyz="0 0 {height}"/><mass value="{MASS}"/>'
        '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>'
    )
    for name, (x, y) in feet.items():
        body += f'<link name="{name}"/>' + joint_xml(
            f"{name}_joint", "box", name, "fixed", f'<origin xyz="{x} {y} 0"/>'
        )
    return RobotModel.from_urdf(robot_xml(body), floating_base=True)


def tilted(angle: float) -> np.ndarray:
    """Rotation about the world y axis: the box standing on a slope that rises along −x."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def standing(model: RobotModel, R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(q, base residual) of the box at rest with its base rotated by R."""
    q = model.neutral_configuration()
    q[3:7] = matrix_quaternion(R)
    zero = np.zeros(model.nv)
    return q, model.inverse_dynamics(q, zero, zero)[:6]


def solve(model: RobotModel, R: np.ndarray, mu: float, contacts=None, min_normal: float = 0.0):
    contacts = contacts or [Contact(link, normal=tuple(R[:, 2])) for link in CORNERS]
    q, residual = standing(model, R)
    JT = model.wrench_jacobian_transpose(q, [c.link for c in contacts])
    qp = ContactForceQP(contacts, model.gravity, options(mu, min_normal))
    return reference.distribute(qp, JT[:6], residual, [R] * len(contacts)), JT, residual


def cone_ratio(force_world: np.ndarray, normal: np.ndarray) -> float:
    """|tangential| / normal of a force: inside a cone of friction μ when ≤ μ."""
    fn = force_world @ normal
    return float(np.linalg.norm(force_world - fn * normal) / fn) if fn > 0 else math.inf


def test_a_box_on_four_points_on_flat_ground_gets_equal_vertical_forces():
    model = box(CORNERS)
    out, JT, residual = solve(model, np.eye(3), mu=0.8)
    np.testing.assert_allclose(out.forces_world, [[0.0, 0.0, MASS * G / 4]] * 4, atol=1e-6)
    np.testing.assert_allclose(out.residual, 0.0, atol=1e-6)
    # the torques with these wrenches hold the base: its rows vanish
    np.testing.assert_allclose(residual - JT[:6] @ out.wrenches, 0.0, atol=1e-6)


def test_on_a_30_degree_slope_every_force_is_inside_its_cone_and_point_feet_get_no_torque():
    model = box(CORNERS)
    R = tilted(math.radians(30))
    out, JT, residual = solve(model, R, mu=0.8)
    normal = R[:, 2]
    ratios = [cone_ratio(f, normal) for f in out.forces_world]
    np.testing.assert_allclose(out.residual, 0.0, atol=1e-6)
    np.testing.assert_allclose(out.forces_world.sum(axis=0), [0.0, 0.0, MASS * G], atol=1e-6)
    assert max(ratios) <= 0.8 + 1e-9
    assert np.all(out.wrenches.reshape(4, 6)[:, 3:] == 0.0)  # forces only, at the points
    # the minimum-norm distribution on the same case: moments at point feet, and where it stands
    minimum_norm = ContactLinks.distribute(JT, residual).reshape(4, 6)
    forces = minimum_norm[:, :3] @ R.T  # link frame → world
    moments = np.linalg.norm(minimum_norm[:, 3:], axis=1)
    print(
        f"QP: tangential/normal {np.round(ratios, 3)}; minimum-norm: "
        f"{np.round([cone_ratio(f, normal) for f in forces], 3)}, moments at point feet {np.round(moments, 3)} N·m"
    )
    assert moments.max() > 0.01  # what the QP removes: a point foot cannot give a torque


def test_an_infeasible_slope_reports_the_residual_and_stays_on_the_cone():
    """45° with μ = 0.5: friction can hold at most ~0.46 of the normal force, tan 45° = 1 is needed."""
    model = box(CORNERS)
    R = tilted(math.radians(45))
    out, _, _ = solve(model, R, mu=0.5)
    normal = R[:, 2]
    assert np.linalg.norm(out.residual[:3]) > 0.3 * MASS * G  # the base's force rows: what slides it
    assert all(cone_ratio(f, normal) <= 0.5 + 1e-9 for f in out.forces_world)
    # friction is used to its limit (the pyramid's face, μ cos 22.5°) and what is left is mostly
    # the slope-wise force it cannot provide
    inner = 0.5 * math.cos(math.pi / 8)
    for f in out.forces_world:
        assert cone_ratio(f, normal) == pytest.approx(inner, rel=1e-6)
    left = out.residual[:3]  # in the base frame, whose x axis runs along the slope
    assert abs(left[0]) > 2 * abs(left[2]) and abs(left[1]) < 1e-6


def test_min_normal_force_is_respected():
    model = box(CORNERS)
    out, _, _ = solve(model, np.eye(3), mu=0.8, min_normal=30.0)  # 4 × 30 N > 98.1 N: cannot balance
    assert np.all(out.forces_world[:, 2] >= 30.0 - 1e-9)
    assert np.linalg.norm(out.residual) > 10.0


def test_two_soles_keep_the_centre_of_pressure_inside_and_bound_the_yaw_moment():
    """A box on two 0.2 × 0.1 m soles, its centre of mass 0.08 m ahead of the soles' centres: the
    weight must be carried forward in each sole (CoP at x = 0.08), never beyond its toe (0.1)."""
    soles = {"left": (-0.08, 0.1), "right": (-0.08, -0.1)}
    model = box(soles)
    contacts = [Contact(name, half_size=(0.1, 0.05)) for name in soles]
    out, _, _ = solve(model, np.eye(3), 0.7, contacts)
    np.testing.assert_allclose(out.residual, 0.0, atol=1e-6)
    for wrench in out.wrenches.reshape(2, 6):
        f, m = wrench[:3], wrench[3:]
        cop = np.array([-m[1], m[0]]) / f[2]
        assert cop[0] == pytest.approx(0.08, abs=1e-6) and abs(cop[1]) <= 0.05 + 1e-9
    # centre of mass beyond the toes (0.12 m ahead): no admissible wrench holds it; CoP at the toe
    model = box({"left": (-0.12, 0.1), "right": (-0.12, -0.1)})
    out, _, _ = solve(model, np.eye(3), 0.7, [Contact(name, half_size=(0.1, 0.05)) for name in ("left", "right")])
    assert np.linalg.norm(out.residual) > 1.0
    for wrench in out.wrenches.reshape(2, 6):
        assert -wrench[4] / wrench[2] <= 0.1 + 1e-9


def test_margins_keep_forces_off_the_cone_and_the_centre_of_pressure_off_the_sole_edge():
    """A 20° slope needs tan 20° = 0.364 of the normal force from friction. With μ = 0.5 and
    friction_margin 0.9 the pyramid's face is at 0.5·0.9·cos 22.5° = 0.416: held, every force
    at most 0.9 μ. With 0.7 the face is at 0.323: not held, the residual says so. Two soles under a
    centre of mass 0.09 m ahead: the whole sole holds it (toe at 0.1); its central 80 % (0.08)
    does not, and the centre of pressure stays at 0.08."""
    model, R = box(CORNERS), tilted(math.radians(20))
    q, residual = standing(model, R)
    contacts = [Contact(link, normal=tuple(R[:, 2])) for link in CORNERS]
    JT = model.wrench_jacobian_transpose(q, list(CORNERS))[:6]
    for margin, held in ((0.9, True), (0.7, False)):
        qp = ContactForceQP(contacts, model.gravity, options(0.5, friction_margin=margin))
        out = reference.distribute(qp, JT, residual, [R] * 4)
        assert (np.linalg.norm(out.residual) < 1e-6) == held, margin
        assert max(cone_ratio(f, R[:, 2]) for f in out.forces_world) <= margin * 0.5 + 1e-9
    soles = {"left": (-0.09, 0.1), "right": (-0.09, -0.1)}
    model = box(soles)
    q, residual = standing(model, np.eye(3))
    JT = model.wrench_jacobian_transpose(q, list(soles))[:6]
    for margin, held in ((1.0, True), (0.8, False)):
        qp = ContactForceQP(
            [Contact(name, half_size=(0.1, 0.05)) for name in soles], model.gravity, options(0.7, sole_margin=margin)
        )
        out = reference.distribute(qp, JT, residual, [np.eye(3)] * 2)
        assert (np.linalg.norm(out.residual) < 1e-6) == held, margin
        for wrench in out.wrenches.reshape(2, 6):
            assert -wrench[4] / wrench[2] <= 0.1 * margin + 1e-9
    with pytest.raises(ValueError, match="margin"):
        ContactForceQP(contacts, model.gravity, options(0.5, friction_margin=0.0))


@pytest.mark.parametrize("angle, mu", [(0.0, 0.8), (30.0, 0.6), (45.0, 0.5)])
def test_the_warm_started_solution_is_quadprogs_along_a_sequence_of_states(angle, mu):
    """Successive states (the base tilting a little further each time) solved with the last active
    set first give quadprog's own solution from scratch: none active (flat), friction faces active
    (steep), infeasible (45°, μ 0.5)."""
    model = box(CORNERS)
    contacts = [Contact(link, normal=tuple(tilted(math.radians(angle))[:, 2])) for link in CORNERS]
    qp = ContactForceQP(contacts, model.gravity, options(mu))
    for step in range(30):
        R = tilted(math.radians(angle + 0.05 * step))
        q, residual = standing(model, R)
        JT = model.wrench_jacobian_transpose(q, list(CORNERS))
        problem = reference.problem(qp, JT[:6], [R] * 4)
        warm = problem.solve(residual, "sequence").x
        np.testing.assert_allclose(warm, from_scratch(problem, residual), atol=1e-5 * (1.0 + np.abs(warm).max()))


def from_scratch(problem, residual: np.ndarray) -> np.ndarray:
    """quadprog on the exact problem (the equalities A x = r first), else on the closest one."""
    import quadprog

    try:
        G, a = np.hstack([problem.A.T, problem.C.T]), np.r_[residual, problem.b]
        return quadprog.solve_qp(problem.W, np.zeros(len(problem.W)), G, a, 6)[0]
    except ValueError:
        return quadprog.solve_qp(problem.H, problem.A.T @ residual, problem.C.T, problem.b, 0)[0]


def reference_contact_torques(model, qp, links, q, qd, qdd):
    """(τ − Jᵀf, g − Jᵀf_g, f) from the general pieces: the model's ID, g and 6-column contact
    Jacobian, the links' rotations by forward kinematics, the QP of ``qp.problem`` and quadprog
    from scratch."""
    tau, g = model.inverse_dynamics(q, qd, qdd), model.gravity_torques(q)
    JT = model.wrench_jacobian_transpose(q, links)
    R_base = quaternion_matrix(q[3:7])
    problem = reference.problem(qp, JT[:6], [R_base @ model.link_rotation_in_base(link, q, qd)[0] for link in links])
    results = []
    for torques in (tau, g):
        x = from_scratch(problem, torques[:6])
        wrenches = np.zeros(6 * len(links))
        wrenches[qp.columns] = problem.to_link @ x
        results.append((torques - JT @ wrenches, wrenches))
    return results[0][0], results[1][0], results[0][1]


@pytest.mark.parametrize("robot", ["solo12", "talos"])
def test_the_one_call_hot_path_is_the_general_pieces_and_quadprog_along_a_sequence(robot):
    """ContactConsistentTorques (state, ID, g, Jacobian, QP matrices, warm-started solves in one
    kernel call) against the general pieces and quadprog from scratch, along 40 states whose base
    tilts from 0 to 39° and accelerates sideways more and more: no active constraint at first,
    then friction faces (and for Talos's soles the centre of pressure's edges), infeasible at the end."""
    if robot == "solo12":
        model, links = RobotModel.from_urdf(SOLO_URDF, floating_base=True), list(SOLO_FEET)
        pose, contacts = solo_standing_pose(model.joint_names), [Contact(link) for link in links]
    else:
        model, links = RobotModel.from_urdf(TALOS_URDF, floating_base=True), list(TALOS_SOLES)
        pose = talos_half_sitting(model.joint_names)
        contacts = [Contact(link, (TALOS_SOLE_SIZE[0] / 2, TALOS_SOLE_SIZE[1] / 2)) for link in links]
    weights = {"tangential_weight": 10.0, "moment_length": 0.05}  # the node's defaults
    fused = ContactConsistentTorques(
        model, links, ContactForceQP(contacts, model.gravity, options(0.5, 1.0, **weights))
    )
    general = ContactForceQP(contacts, model.gravity, options(0.5, 1.0, **weights))
    rng = np.random.default_rng(5)
    quadprog_calls, worst = 0, np.zeros(3)
    for step in range(40):
        q = model.neutral_configuration()
        q[3:7] = matrix_quaternion(tilted(math.radians(step)))
        q[7:] = pose + rng.normal(0, 0.02, len(pose))
        qd = rng.normal(0, 0.2, model.nv)
        qdd = np.r_[0.0, 0.3 * step, 0.0, 0.0, 0.0, 0.0, rng.normal(0, 0.5, model.nv - 6)]
        before = fused.qp._active_sets_by_series.copy()
        tau, g, f = fused(q[:7], qd[:6], qdd[:6], q[7:], qd[6:], qdd[6:])
        quadprog_calls += int(not np.array_equal(before, fused.qp._active_sets_by_series))
        tau_ref, g_ref, f_ref = reference_contact_torques(model, general, links, q, qd, qdd)
        scale = 1.0 + np.abs(tau_ref).max() + np.abs(g_ref).max()
        differences = [np.abs(a - b).max() / scale for a, b in ((tau, tau_ref), (g, g_ref), (f, f_ref))]
        worst = np.maximum(worst, differences)
    print(f"{robot}: largest differences (τ, g, f) {worst} of the torques' scale; {quadprog_calls} active sets")
    # the forces to the conditioning of H (ε = 1e-9 of its largest entry), the torques better
    assert worst[:2].max() < 1e-6 and worst[2] < 1e-5
    assert 2 <= quadprog_calls < 40  # the warm start served some states, and the active sets did change
    assert np.linalg.norm(tau[:6]) > 1.0  # the last state is infeasible: a residual is left


def test_the_one_call_hot_path_refuses_bad_states():
    model = box(CORNERS)
    fused = ContactConsistentTorques(
        model, list(CORNERS), ContactForceQP([Contact(c) for c in CORNERS], model.gravity, options())
    )
    q, zero = model.neutral_configuration(), np.zeros(6)
    fused(q[:7], zero, zero, q[7:], q[7:], q[7:])  # a box has no joints: empty joint states
    with pytest.raises(ValueError, match="state shapes"):
        fused(q[:7], zero, zero, np.zeros(1), q[7:], q[7:])
    with pytest.raises(ValueError, match="finite"):
        fused(np.r_[0.0, np.nan, 0.0, 0.0, 0.0, 0.0, 1.0], zero, zero, q[7:], q[7:], q[7:])
    with pytest.raises(ValueError, match="unit norm"):
        fused(np.r_[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0], zero, zero, q[7:], q[7:], q[7:])


def test_gaussian_elimination_is_numpys_solve_and_sees_singular_systems():
    rng = np.random.default_rng(2)
    for size in (1, 6, 12, 30):
        K, rhs = rng.normal(size=(size, size)), rng.normal(size=size)
        y = rhs.copy()
        assert _solve_in_place(K.copy(), y)
        np.testing.assert_allclose(y, np.linalg.solve(K, rhs), rtol=1e-9, atol=1e-9)
    singular = rng.normal(size=(5, 5))
    singular[3] = 2.0 * singular[1]
    assert not _solve_in_place(singular, np.ones(5))
    assert not _solve_in_place(np.full((3, 3), np.nan), np.ones(3))


@pytest.mark.parametrize("ground_tilt", [0.0, math.radians(10.0)])
def test_a_spherical_foot_pushes_at_its_lowest_point(ground_tilt):
    """Four spherical feet of radius 3 cm centred on the box's corner links, the box tilted by 15°:
    the same forces and torques as point feet placed by hand at the spheres' lowest points along
    the ground's normal (which is not the box's z when the ground is tilted otherwise), and each
    wrench about the corner is the force with its moment d × f."""
    radius, R = 0.03, tilted(math.radians(15.0))
    n = tilted(ground_tilt)[:, 2]
    d = -radius * R.T @ n  # the lowest point from the corner, in the box's (and the corner's) frame
    rounded_model = box(CORNERS)
    lowest = {name: (x + d[0], y + d[1], d[2]) for name, (x, y) in CORNERS.items()}
    body = (
        f'<link name="box"><inertial><origin xyz="0 0 0.05"/><mass value="{MASS}"/>'
        '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>'
    )
    for name, (x, y, z) in lowest.items():
        body += f'<link name="{name}"/>' + joint_xml(
            f"{name}_joint", "box", name, "fixed", f'<origin xyz="{x} {y} {z}"/>'
        )
    pointed_model = RobotModel.from_urdf(robot_xml(body), floating_base=True)
    results = []
    for model, r in ((rounded_model, radius), (pointed_model, 0.0)):
        contacts = [Contact(link, normal=tuple(n), radius=r) for link in CORNERS]
        fused = ContactConsistentTorques(model, list(CORNERS), ContactForceQP(contacts, model.gravity, options(0.6)))
        q = model.neutral_configuration()
        q[3:7] = matrix_quaternion(R)
        zero = np.zeros(model.nv)
        results.append(
            fused(
                q[:7],
                np.array([0.0, 0.0, 0.0, 0.1, 0.0, 0.0]),
                np.r_[0.3, 0.0, 0.2, 0.0, 0.5, 0.0],
                q[7:],
                zero[6:],
                zero[6:],
            )
        )
    (tau, g, f), (tau_point, g_point, f_point) = results
    np.testing.assert_allclose(tau, tau_point, atol=1e-9)
    np.testing.assert_allclose(g, g_point, atol=1e-9)
    forces = f.reshape(4, 6)[:, :3]
    np.testing.assert_allclose(forces, f_point.reshape(4, 6)[:, :3], atol=1e-5)  # to H's conditioning (ε 1e-9)
    np.testing.assert_allclose(f.reshape(4, 6)[:, 3:], np.cross(d, forces), atol=1e-12)
    assert np.abs(tau[:6]).max() < 1e-6 and forces[:, 2].min() > 1.0  # feasible: every foot pushes


def test_a_radius_is_for_a_point_contact_and_a_foot():
    with pytest.raises(ValueError, match="radius"):
        ContactForceQP([Contact("c1", (0.1, 0.05), radius=0.02)], np.array([0.0, 0.0, -9.81]))
    with pytest.raises(ValueError, match="radius"):
        ContactForceQP([Contact("c1", radius=-0.01)], np.array([0.0, 0.0, -9.81]))


def exact_reference(feet: dict, height: float, contacts: list[Contact], W_blocks: list[np.ndarray]) -> np.ndarray:
    """The exact problem of the flat box, solved by hand: unknowns per contact in the world frame (a
    force, and a sole's moment), Σ f = m g upwards and Σ (p − c) × f + Σ m = 0 about the centre of
    mass c, minimising ½ Σ xᵀ W x (no inequality active); its KKT system by numpy."""
    sizes = [c.size for c in contacts]
    n = sum(sizes)
    E, e = np.zeros((6, n)), np.r_[0.0, 0.0, MASS * G, 0.0, 0.0, 0.0]
    W = np.zeros((n, n))
    o = 0
    for contact, size, block in zip(contacts, sizes, W_blocks, strict=True):
        x, y = feet[contact.link]
        lever = np.array([x, y, -height])  # from the centre of mass
        E[:3, o : o + 3] = np.eye(3)
        E[3:, o : o + 3] = np.array([[0, -lever[2], lever[1]], [lever[2], 0, -lever[0]], [-lever[1], lever[0], 0]])
        if size == 6:
            E[3:, o + 3 : o + 6] = np.eye(3)
        W[o : o + size, o : o + size] = block
        o += size
    K = np.block([[W, E.T], [E, np.zeros((6, 6))]])
    return np.linalg.solve(K, np.r_[np.zeros(n), e])[:n]


def test_the_tangential_weight_turns_forces_toward_the_contact_normals():
    """Four feet in a valley, each on ground tilted 20° toward the middle (normals (0, ±sin 20°,
    cos 20°)), the sideways parts cancelling in pairs: per foot f = a n + b t carries F = m g / 4
    with a cos 20° + b sin 20° = F at the least a² + w b², so b / a = tan 20° / w: the smallest
    forces (w = 1) are vertical, tan 20° = 0.364 of friction on every foot, and the tangential
    weight w turns them toward the normals. Each also against the exact problem solved by hand."""
    model = box(CORNERS)
    tilt = math.radians(20)
    normals = {link: (0.0, -math.copysign(math.sin(tilt), y), math.cos(tilt)) for link, (_, y) in CORNERS.items()}
    contacts = [Contact(link, normal=normals[link]) for link in CORNERS]
    q, residual = standing(model, np.eye(3))
    JT = model.wrench_jacobian_transpose(q, list(CORNERS))[:6]
    ratios = {}
    for weight in (1.0, 10.0, 1000.0):
        qp = ContactForceQP(contacts, model.gravity, options(2.0, tangential_weight=weight))
        out = reference.distribute(qp, JT, residual, [np.eye(3)] * 4)
        blocks = []
        for link in CORNERS:
            nn = np.outer(normals[link], normals[link])
            blocks.append(nn + weight * (np.eye(3) - nn))
        np.testing.assert_allclose(
            out.forces_world.ravel(), exact_reference(CORNERS, 0.05, contacts, blocks), atol=1e-9
        )
        np.testing.assert_allclose(out.residual, 0.0, atol=1e-9)
        forces = zip(out.forces_world, CORNERS, strict=True)
        ratios[weight] = max(cone_ratio(f, np.array(normals[link])) for f, link in forces)
    for weight, ratio in ratios.items():
        assert ratio == pytest.approx(math.tan(tilt) / weight, rel=1e-9), weight


def test_the_moment_length_draws_the_centres_of_pressure_toward_the_soles_centres():
    """Two 0.2 × 0.1 m soles 0.2 m apart, the centre of mass 0.03 m to the left: the rolling moment
    is made by the soles' normal forces and by their moments. A moment weighed as a force at 1 m is
    cheap: the centres of pressure move off the soles' centres by nearly the centre of mass's offset
    (29.8 mm); weighed at 1 cm, by 0.42 mm. Each against the exact problem solved by hand."""
    soles = {"left": (0.0, 0.1 - 0.03), "right": (0.0, -0.1 - 0.03)}  # from the centre of mass
    model = box(soles)
    contacts = [Contact(name, half_size=(0.1, 0.05)) for name in soles]
    q, residual = standing(model, np.eye(3))
    JT = model.wrench_jacobian_transpose(q, list(soles))[:6]
    offsets = {}
    for length in (1.0, 0.01):
        qp = ContactForceQP(contacts, model.gravity, options(0.7, moment_length=length))
        out = reference.distribute(qp, JT, residual, [np.eye(3)] * 2)
        block = np.eye(6)
        block[3:, 3:] /= length**2
        np.testing.assert_allclose(out.x, exact_reference(soles, 0.05, contacts, [block, block]), atol=1e-9)
        wrenches = out.wrenches.reshape(2, 6)
        offsets[length] = max(abs(w[3] / w[2]) for w in wrenches)  # centre of pressure: y = m_x / f_z
    print(f"largest centre of pressure off the sole's centre: {offsets}")
    assert offsets[0.01] < 1e-3 < 0.02 < offsets[1.0]


def test_the_exact_problem_is_used_where_it_can_be_and_the_closest_where_it_cannot():
    """On a 20° slope with μ 0.5 the box is held (exact: no residual at all); pushed down the slope
    with half its weight besides, friction cannot hold it and the closest forces are used; the push
    gone, the warm start returns to the exact problem."""
    model, R = box(CORNERS), tilted(math.radians(20))
    q, standing_still = standing(model, R)
    JT = model.wrench_jacobian_transpose(q, list(CORNERS))[:6]
    pushed = standing_still - np.r_[0.5 * MASS * G, 0.0, 0.0, 0.0, 0.0, 0.0]  # base frame: x down the slope
    qp = ContactForceQP([Contact(link, normal=tuple(R[:, 2])) for link in CORNERS], model.gravity, options(0.5))
    for residual, exact in ((standing_still, True), (pushed, False), (pushed, False), (standing_still, True)):
        problem = reference.problem(qp, JT, [R] * 4)
        out = problem.solve(residual, "series")
        assert problem.exact["series"] == exact
        assert (np.linalg.norm(out.residual) < 1e-12) == exact
