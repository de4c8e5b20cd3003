"""Which QP solver for the contact distribution: quadprog, daqp (cold and warm-started from the last
active set), proxsuite (dense, warm-started), OSQP (warm-started) and Clarabel on the same problems,
beside the minimum-norm distribution, same run. Solo12 standing on four point feet (12 unknowns,
36 inequalities), the base state varied.

    python benchmarks/contact_qp.py [--states 2000] [--live-seconds 8]
    python benchmarks/contact_qp.py --busy 2       # the same beside two spinning processes

Prints per solver the median and 99th percentile of one solve, the ratio to quadprog, and the
largest difference of its forces from quadprog's (the answers must agree); then rnea_node's
own compute time per joint_states (the figure /diagnostics reports) with contact_distribution qp
and minimum_norm, and without contacts (inverse dynamics and gravity alone: the floor): in process
(its core, Solo12 on four point feet and Talos on two soles), and live: an rnea_node process fed
joint_states and base_odometry at 1 kHz over loopback DDS by another process, its /diagnostics
read at the end, with how many joint_states it received and answered of those sent. Writes
docs/figures/contact_qp.md (contact_qp_busy_N.md with --busy).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from rnea_ros import RobotModel
from rnea_ros.demo.figures import write_table
from rnea_ros.dynamics.contact_forces import Contact, ContactForceQP
from rnea_ros.dynamics.contact_options import ContactQPOptions
from rnea_ros.dynamics.contacts import ContactLinks
from rnea_ros.dynamics.rotations import matrix_quaternion, quaternion_matrix
from rnea_ros.testing import contact_qp_reference, legged
from rnea_ros.testing.reference import robot_urdf

FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
DISTRIBUTIONS = ("no contacts", "minimum_norm", "qp")
LIVE_RATE = 1000.0  # Hz
NODE_ROBOTS = {  # name: (URDF, contact links, sole size, standing pose of the joint names)
    "Solo12, four point feet": (legged.SOLO_URDF, legged.SOLO_FEET, [0.0, 0.0], legged.solo_standing_pose),
    "Talos, two soles": (legged.TALOS_URDF, legged.TALOS_SOLES, legged.TALOS_SOLE_SIZE, legged.talos_half_sitting),
}


def problems(model: RobotModel, count: int, rng: np.random.Generator):
    """(H, g, C, b, Jᵀ, residual) of the QP at ``count`` standing states with small base motions."""
    qp = ContactForceQP([Contact(foot) for foot in FEET], model.gravity, ContactQPOptions.smallest_forces(0.8, 1.0))
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
        problem = contact_qp_reference.problem(qp, JT[:6], rotations)
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
    parser.add_argument("--live-seconds", type=float, default=8.0, help="joint_states at 1 kHz per live run")
    parser.add_argument("--busy", type=int, default=0, help="processes spinning beside the runs (a loaded machine)")
    parser.add_argument("--publish", nargs=3, help=argparse.SUPPRESS)  # the live runs' publisher process
    args = parser.parse_args()
    if args.publish:
        return publish_standing_solo(args.publish[0], float(args.publish[1]), float(args.publish[2]))
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        solver_rows = compare_solvers(args.states)
        node_rows = compare_node_paths(args.states, args.live_seconds)
    finally:
        for process in busy:
            process.kill()
            process.wait()
    write_figures(solver_rows, node_rows, args)
    return None


def compare_solvers(states: int) -> list[tuple]:
    """One solve per solver on the same problems: the table's rows."""
    model = RobotModel.from_urdf(robot_urdf("solo_description/robots/solo12.urdf"), floating_base=True)
    cases = problems(model, states, np.random.default_rng(0))
    solvers = {"quadprog": quadprog_solver(), "daqp": daqp_solver(), "daqp (warm)": daqp_solver(warm=True)}
    solvers["proxsuite (warm)"] = proxsuite_solver(12, 36)
    solvers["osqp (warm)"] = osqp_solver(cases[0][:4])
    solvers["clarabel"] = clarabel_solver()
    results = {name: timed(solve, [c[:4] for c in cases]) for name, solve in solvers.items()}
    results["rnea_ros warm start"] = timed(
        lambda problem, r: problem.solve(r, "benchmark").x, [(c[6], c[5]) for c in cases]
    )
    reference = results["quadprog"]
    base = np.median(reference[0])
    print(f"{states} states of Solo12 on four point feet (12 unknowns, 36 inequalities); one solve [µs]:")
    rows = []
    for name, (times, answers) in results.items():
        worst = max(float(np.max(np.abs(a - r))) for a, r in zip(answers, reference[1], strict=True))
        p50, p99 = np.median(times), np.percentile(times, 99)
        print(f"  {name:<20} p50 {p50:8.1f}  p99 {p99:8.1f}  ×{p50 / base:6.2f}  max |x − quadprog's| {worst:.2e} N")
        rows.append((name, f"{p50:.1f}", f"{p99:.1f}", f"{p50 / base:.2f}", f"{worst:.1e}"))
    norm_times, _ = timed(lambda JT, r: ContactLinks.distribute(JT, r), [(c[4], c[5]) for c in cases])
    jac_times, _ = timed(lambda q: model.wrench_jacobian_transpose(q, FEET), [(model.neutral_configuration(),)] * 200)
    print(f"  {'minimum norm':<20} p50 {np.median(norm_times):8.1f}  (the contact Jacobian itself: p50 "
          f"{np.median(jac_times):.1f} µs)")  # fmt: skip
    rows.append(("minimum norm (not a QP)", f"{np.median(norm_times):.1f}", f"{np.percentile(norm_times, 99):.1f}",
                 f"{np.median(norm_times) / base:.2f}", "(other forces)"))  # fmt: skip
    return rows


def compare_node_paths(states: int, live_seconds: float) -> list[tuple]:
    """rnea_node's own compute time per joint_states, in process and live (Solo12): the table's rows."""
    print("rnea_node's compute time per joint_states, its own measurement (/diagnostics) [µs]:")
    rows = []
    for robot in NODE_ROBOTS:
        in_process = {kind: node_compute_times(robot, kind, states) for kind in DISTRIBUTIONS}
        floor = np.median(in_process["no contacts"][0])
        for kind, (own, calls) in in_process.items():
            p50, p99, whole = np.median(own), np.percentile(own, 99), np.median(calls)
            line = f"  {robot:<24} {kind:<12} in process p50 {p50:6.1f} p99 {p99:6.1f} ×{p50 / floor:5.2f} the floor"
            row = (robot, kind, f"{p50:.1f}", f"{p99:.1f}", f"{whole:.1f}")
            if robot.startswith("Solo12"):
                live = live_compute_times(kind, live_seconds)
                counts = f"{live['received']}/{live['sent']} ({live['published']} answered)"
                line += f" (whole call {whole:6.1f}); live p50 {live['p50']} p99 {live['p99']}, {counts}"
                row += (live["p50"], live["p99"], counts)
            print(line, flush=True)
            rows.append(row + ("",) * (8 - len(row)))
    return rows


def write_figures(solver_rows: list[tuple], node_rows: list[tuple], args: argparse.Namespace) -> None:
    busy = f" With {args.busy} processes spinning beside the runs, on 2 cores." if args.busy else ""
    solver_header = ("solver", "p50 [µs]", "p99 [µs]", "× quadprog (p50)", "max ‖x − quadprog's‖ [N]")
    node_header = (
        "robot", "contact_distribution", "in process p50 [µs]", "p99", "whole joint_states call p50",
        "live p50 [µs]", "live p99", "joint_states received/sent at 1 kHz",
    )  # fmt: skip
    note = (
        f"One solve of the contact QP, {args.states} states of Solo12 on four point feet (12 unknowns, "
        "36 inequalities). daqp (warm): the last solution's active set as its start; rnea_ros warm start: "
        "`testing.contact_qp_reference`'s `ContactProblem.solve`, the last active set solved as equalities, "
        "quadprog when it is not optimal." + busy
    )
    node_note = (
        "rnea_node's own compute time per joint_states (what /diagnostics reports: the outputs of one state, "
        f"from its inputs to everything it publishes), in process ({args.states} states, one after another) "
        f"and live: an rnea_node process fed joint_states and base_odometry at {LIVE_RATE:.0f} Hz over loopback "
        f"DDS for {args.live_seconds:g} s by another process (Solo12 standing; its /diagnostics at the end)." + busy
    )
    name = f"contact_qp_busy_{args.busy}" if args.busy else "contact_qp"
    more = ((note, solver_header, solver_rows),)
    print(f"wrote {write_table(name, 'benchmarks/contact_qp.py', node_header, node_rows, node_note, more)}")


def node_compute_times(robot: str, distribution: str, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(the node's own compute times, whole joint_states calls) [µs] of RneaCore for ``count``
    joint_states of ``robot`` standing (``NODE_ROBOTS``), its contacts distributed by
    ``distribution`` ("no contacts": ID and g alone, the floor); odometry before each."""
    from rnea_ros.controller.core import RneaCore, build_live_model
    from rnea_ros.controller.diagnostics import ComputeTimes
    from rnea_ros.controller.inputs import BY_TOPIC
    from rnea_ros.controller.settings import Settings
    from rnea_ros.controller.state import OdometryReading

    urdf, links, sole_size, pose = NODE_ROBOTS[robot]
    with_contacts = distribution != "no contacts"
    settings = Settings(
        floating_base=True, contact_links=tuple(links) if with_contacts else (),
        contact_distribution=distribution if with_contacts else "qp", friction_coefficient=0.8,
        sole_size=tuple(sole_size), future_stamp_tolerance=3600.0,
    )  # fmt: skip
    core = RneaCore(settings)
    core.load(build_live_model(urdf, settings))
    core.compute_times = ComputeTimes(window=count)
    names = core.live.bound.model.joint_names
    pose = pose(names)
    rng = np.random.default_rng(1)
    calls = []
    for k in range(count):
        base = np.array([0.0, 0.0, 0.25, 0.0, 0.0, 0.0, 1.0])
        reading = OdometryReading(base, rng.normal(0, 0.05, 6), core.live.bound.model.base_link)
        core.receive(BY_TOPIC["base_odometry"], reading)
        q = pose + rng.normal(0, 0.05, len(pose))
        start = time.perf_counter()
        core.joint_states(names, q, rng.normal(0, 0.5, len(pose)), True, 1.0 + k * 1e-3, lambda: 0.0)
        calls.append(time.perf_counter() - start)
    own = core.compute_times.recent()
    assert len(own) == count  # every joint_states computed
    return np.array(own[10:]) * 1e6, np.array(calls[10:]) * 1e6


def live_compute_times(distribution: str, seconds: float) -> dict:
    """An rnea_node process (Solo12, its four feet as ``distribution`` says) fed by ``publish_standing_solo``
    in another process: its /diagnostics compute time p50 and p99 [µs], and the joint_states sent,
    received and answered."""
    from rnea_ros.testing import ros_harness

    if not rclpy_started():
        ros_harness.init_rclpy()
    contacts = {} if distribution == "no contacts" else {"contact_links": FEET, "contact_distribution": distribution}
    parameters = {"robot_description": legged.SOLO_URDF, "floating_base": True, "friction_coefficient": 0.8, **contacts}
    namespace = f"live_{distribution.replace(' ', '_')}"
    folder = Path(tempfile.mkdtemp(prefix="rnea_contact_qp_"))
    node = ros_harness.NodeProcess(folder, namespace, parameters)
    client = ros_harness.Client(namespace, [])
    try:
        publisher = subprocess.Popen(
            [sys.executable, __file__, "--publish", namespace, str(LIVE_RATE), str(seconds)],
            env={**os.environ, **ros_harness.ROS_ENV}, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        client.spin_until(lambda: publisher.poll() is not None, seconds + 60.0)
        if publisher.poll() is None:
            publisher.kill()
            raise RuntimeError("the joint_states publisher did not finish")
        sent = int(publisher.stdout.read().strip() or 0)
        client.spin_for(1.2)  # the node's next /diagnostics, after the last message
        values = client.latest_diagnostic_values()
    finally:
        client.close()
        node.stop()
    return {
        "p50": values.get("compute time p50 [us]", "none"),
        "p99": values.get("compute time p99 [us]", "none"),
        "sent": sent,
        "received": int(values.get("joint_states total", 0)),
        "published": int(values.get("published", 0)),
    }


def rclpy_started() -> bool:
    import rclpy

    return rclpy.ok()


def publish_standing_solo(namespace: str, rate: float, seconds: float) -> None:
    """The live runs' robot: Solo12 standing, base_odometry then joint_states (both stamped now) at
    ``rate`` for ``seconds`` once rnea_node listens; prints how many joint_states it sent."""
    import rclpy
    from nav_msgs.msg import Odometry
    from rclpy.node import Node
    from sensor_msgs.msg import JointState

    from rnea_ros.testing.ros_harness import at_rate

    rclpy.init()
    node = Node("standing_solo", namespace=namespace)
    joint_states = node.create_publisher(JointState, "joint_states", 10)
    odometry_publisher = node.create_publisher(Odometry, "base_odometry", 10)
    model = RobotModel.from_urdf(legged.SOLO_URDF, floating_base=True)
    pose = legged.solo_standing_pose(model.joint_names)
    state = JointState(name=list(model.joint_names))
    odometry = Odometry(child_frame_id=model.base_link)
    odometry.pose.pose.position.z, odometry.pose.pose.orientation.w = 0.25, 1.0
    deadline = time.monotonic() + 30.0
    while (joint_states.get_subscription_count() == 0 or odometry_publisher.get_subscription_count() == 0) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.01)  # what is sent before rnea_node has matched is lost to discovery
    time.sleep(1.0)
    rng = np.random.default_rng(2)
    sent = 0
    for _ in at_rate(rate, seconds):
        state.header.stamp.sec, state.header.stamp.nanosec = divmod(time.time_ns(), 1_000_000_000)
        odometry.header.stamp = state.header.stamp
        state.position = (pose + rng.normal(0, 0.02, len(pose))).tolist()
        state.velocity = rng.normal(0, 0.2, len(pose)).tolist()
        odometry_publisher.publish(odometry)
        joint_states.publish(state)
        sent += 1
    print(sent, flush=True)
    node.destroy_node()
    rclpy.try_shutdown()


def daqp_solver(warm: bool = False):
    """daqp: C x ≥ b as b ≤ C x ≤ ∞; ``warm``: the last solution's active constraints as its start."""
    import daqp

    last = {"sense": None}

    def solve(H, g, C, b):
        upper = np.full(len(b), 1e30)
        sense = last["sense"] if warm and last["sense"] is not None else np.zeros(len(b), dtype=np.int32)
        x, _, flag, info = daqp.solve(H, -g, C, upper, b, sense.copy())
        if flag != 1:
            raise RuntimeError(f"daqp: exit flag {flag}")
        last["sense"] = np.where(np.asarray(info["lam"]) != 0.0, 3, 0).astype(np.int32)  # active (1), lower (2)
        return np.asarray(x)

    return solve


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
