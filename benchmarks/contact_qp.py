"""Which QP solver for the contact distribution: quadprog, proxsuite (dense, warm-started),
OSQP (warm-started) and Clarabel on the same problems, beside the minimum-norm distribution, same
run. Solo12 standing on four point feet (12 unknowns, 36 inequalities), the base state varied.

    python benchmarks/contact_qp.py [--states 2000]

Prints per solver the median and 99th percentile of one solve, the ratio to quadprog, and the
largest difference of its forces from quadprog's (the answers must agree); then rnea_node's
own compute time per joint_states (its core, in process; Solo12 on four point feet, Talos on two
soles) with contact_distribution qp and minimum_norm, and without contacts (inverse dynamics and
gravity alone: the floor).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from rnea_ros import RobotModel
from rnea_ros.dynamics.contact_forces import Contact, ContactForceQP
from rnea_ros.dynamics.contacts import ContactLinks
from rnea_ros.dynamics.rotations import matrix_quaternion, quaternion_matrix
from rnea_ros.testing.legged import (
    SOLO_FEET,
    SOLO_URDF,
    TALOS_SOLE_SIZE,
    TALOS_SOLES,
    TALOS_URDF,
    solo_standing_pose,
    talos_half_sitting,
)
from rnea_ros.testing.reference import robot_urdf

FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
NODE_ROBOTS = {  # name: (URDF, contact links, sole size, standing pose of the joint names)
    "Solo12, four point feet": (SOLO_URDF, SOLO_FEET, [0.0, 0.0], solo_standing_pose),
    "Talos, two soles": (TALOS_URDF, TALOS_SOLES, TALOS_SOLE_SIZE, talos_half_sitting),
}


def problems(model: RobotModel, count: int, rng: np.random.Generator):
    """(H, g, C, b, Jᵀ, residual) of the QP at ``count`` standing states with small base motions."""
    qp = ContactForceQP([Contact(foot) for foot in FEET], model.gravity, 0.8, 1.0)
    out = []
    for _ in range(count):
        q = model.neutral_configuration()
        q[7:] = np.tile([0.0, 0.8, -1.6], 4) + rng.normal(0, 0.05, 12)
        q[3:7] = matrix_quaternion(quaternion_matrix(np.r_[rng.normal(0, 0.05, 3), 1.0] / 1.0))
        q[3:7] /= np.linalg.norm(q[3:7])
        qd = np.r_[rng.normal(0, 0.1, 6), rng.normal(0, 0.5, 12)]
        qdd = np.r_[rng.normal(0, 0.5, 6), rng.normal(0, 2.0, 12)]
        residual = model.inverse_dynamics(q, qd, qdd)[:6]
        JT = model.wrench_jacobian_transpose(q, FEET)
        R_base = quaternion_matrix(q[3:7])
        rotations = [R_base @ model.link_rotation_in_base(foot, q, qd)[0] for foot in FEET]
        problem = qp.problem(JT[:6], rotations)
        out.append((problem.H, problem.A.T @ residual, problem.C, problem.b, JT, residual, problem))
    return out


def timed(solve, cases) -> tuple[np.ndarray, list[np.ndarray]]:
    times, answers = [], []
    for case in cases:
        start = time.perf_counter()
        x = solve(*case)
        times.append(time.perf_counter() - start)
        answers.append(x)
    return np.array(times) * 1e6, answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--states", type=int, default=2000)
    args = parser.parse_args()
    model = RobotModel.from_urdf(robot_urdf("solo_description/robots/solo12.urdf"), floating_base=True)
    cases = problems(model, args.states, np.random.default_rng(0))
    solvers = {"quadprog": quadprog_solver(), "proxsuite (warm)": proxsuite_solver(12, 36)}
    solvers["osqp (warm)"] = osqp_solver(cases[0][:4])
    solvers["clarabel"] = clarabel_solver()
    results = {name: timed(solve, [c[:4] for c in cases]) for name, solve in solvers.items()}
    reference = results["quadprog"]
    base = np.median(reference[0])
    print(f"{args.states} states of Solo12 on four point feet (12 unknowns, 36 inequalities); one solve [µs]:")
    for name, (times, answers) in results.items():
        worst = max(float(np.max(np.abs(a - r))) for a, r in zip(answers, reference[1], strict=True))
        print(
            f"  {name:<18} p50 {np.median(times):8.1f}  p99 {np.percentile(times, 99):8.1f}  "
            f"×{np.median(times) / base:6.2f}  max |x − quadprog's| {worst:.2e} N"
        )
    warm_times, warm_answers = timed(lambda problem, r: problem.solve(r, "benchmark").x, [(c[6], c[5]) for c in cases])
    worst = max(float(np.max(np.abs(a - r))) for a, r in zip(warm_answers, reference[1], strict=True))
    print(
        f"  {'rnea_ros warm start':<18} p50 {np.median(warm_times):8.1f}  p99 {np.percentile(warm_times, 99):8.1f}  "
        f"×{np.median(warm_times) / base:6.2f}  max |x − quadprog's| {worst:.2e} N  (ContactProblem.solve: the last "
        "active set first, quadprog when it fails)"
    )
    norm_times, _ = timed(lambda JT, r: ContactLinks.distribute(JT, r), [(c[4], c[5]) for c in cases])
    jac_times, _ = timed(lambda q: model.wrench_jacobian_transpose(q, FEET), [(model.neutral_configuration(),)] * 200)
    print(f"  {'minimum norm':<18} p50 {np.median(norm_times):8.1f}  (the contact Jacobian itself: p50 "
          f"{np.median(jac_times):.1f} µs)")  # fmt: skip
    print("rnea_node's compute time per joint_states, its own measurement (the whole joint_states call) [µs]:")
    for robot in NODE_ROBOTS:
        node_times = {
            kind: node_compute_times(robot, kind, args.states) for kind in ("no contacts", "minimum_norm", "qp")
        }
        floor = np.median(node_times["no contacts"][0])
        for kind, (own, calls) in node_times.items():
            print(
                f"  {robot:<24} {kind:<14} p50 {np.median(own):6.1f}  p99 {np.percentile(own, 99):6.1f}  "
                f"×{np.median(own) / floor:5.2f} the floor  ({np.median(calls):6.1f})"
            )


def node_compute_times(robot: str, distribution: str, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(the node's own compute times, whole joint_states calls) [µs] of RneaCore for ``count``
    joint_states of ``robot`` standing (``NODE_ROBOTS``), its contacts distributed by
    ``distribution`` ("no contacts": ID and g alone, the floor); odometry before each."""
    from rnea_ros.node.core import RneaCore, build_live_model
    from rnea_ros.node.diagnostics import ComputeTimes
    from rnea_ros.node.settings import Settings

    urdf, links, sole_size, pose = NODE_ROBOTS[robot]
    with_contacts = distribution != "no contacts"
    settings = Settings(
        floating_base=True, contact_links=tuple(links) if with_contacts else (),
        contact_distribution=distribution if with_contacts else "qp", friction_coefficient=0.8,
        sole_size=tuple(sole_size), future_stamp_tolerance=1e12,
    )  # fmt: skip
    core = RneaCore(settings)
    core.load(build_live_model(urdf, settings))
    core.compute_times = ComputeTimes(window=count)
    names = core.live.model.joint_names
    pose = pose(names)
    rng = np.random.default_rng(1)
    calls = []
    for k in range(count):
        core.odometry(np.array([0.0, 0.0, 0.25, 0.0, 0.0, 0.0, 1.0]), rng.normal(0, 0.05, 6), core.live.model.base_link)
        q = pose + rng.normal(0, 0.05, len(pose))
        start = time.perf_counter()
        core.joint_states(names, q, rng.normal(0, 0.5, len(pose)), True, 1.0 + k * 1e-3, lambda: 0.0)
        calls.append(time.perf_counter() - start)
    own = core.compute_times.recent()
    assert len(own) == count  # every joint_states computed
    return np.array(own[10:]) * 1e6, np.array(calls[10:]) * 1e6


def quadprog_solver():
    import quadprog

    return lambda H, g, C, b: quadprog.solve_qp(H, g, C.T, b, 0)[0]


def proxsuite_solver(n: int, m: int):
    import proxsuite

    solver = proxsuite.proxqp.dense.QP(n, 0, m)
    state = {"init": False}

    def solve(H, g, C, b):
        u = np.full(len(b), 1e20)
        if not state["init"]:
            solver.settings.eps_abs = 1e-9
            solver.init(H, -g, None, None, C, b, u)
            state["init"] = True
        else:
            solver.update(H, -g, None, None, C, b, u)
        solver.solve()
        return solver.results.x.copy()

    return solve


def osqp_solver(first):
    import osqp
    from scipy import sparse

    H, g, C, b = first
    solver = osqp.OSQP()
    solver.setup(
        sparse.csc_matrix(np.triu(H)), -g, sparse.csc_matrix(C), b, np.full(len(b), np.inf),
        verbose=False, eps_abs=1e-9, eps_rel=1e-9, polishing=True, warm_starting=True,
    )  # fmt: skip

    def solve(H, g, C, b):
        solver.update(Px=sparse.csc_matrix(np.triu(H)).data, q=-g, Ax=sparse.csc_matrix(C).data, l=b)
        return solver.solve().x.copy()

    return solve


def clarabel_solver():
    import clarabel
    from scipy import sparse

    settings = clarabel.DefaultSettings()
    settings.verbose = False

    def solve(H, g, C, b):
        cones = [clarabel.NonnegativeConeT(len(b))]
        solver = clarabel.DefaultSolver(sparse.csc_matrix(np.triu(H)), -g, sparse.csc_matrix(-C), -b, cones, settings)
        return np.array(solver.solve().x)

    return solve


if __name__ == "__main__":
    main()
