"""Identification of every link's inertia and of friction's shape, measured (in process, MuJoCo):
the example arm in MuJoCo is the true robot (its URDF, plus joint damping, friction loss and rotor
inertia no URDF holds); the model gets the URDF with every link's mass and inertia off by
20–30 % and centre of mass by 1–3 cm (``testing.perturbed``, seeds as given). 30 s of a
three-frequency multi-sine, or 60 s of rnea_excite's designed excitation (designed on the wrong
URDF), tracked with PD + the wrong model's inverse dynamics, are identified with ``--identify
--inertia``; another 15 s trajectory is held out. Gravity is compared with
Pinocchio's over 100 random poses within the joint limits. Then the same recording with MuJoCo's
default (soft) friction, joint terms only: Coulomb with the width chosen on held-out samples
against the fixed 0.01 rad/s.

    python benchmarks/identification.py [--seeds 1 2 3]    # writes docs/figures/identification.md
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from rnea_ros import RobotModel
from rnea_ros.analysis.excitation import ConditionNumber, design
from rnea_ros.analysis.identify import Identification
from rnea_ros.analysis.link_inertia import corrected_urdf, link_contexts, urdf_link_inertials
from rnea_ros.demo.figures import write_table
from rnea_ros.dynamics.corrections import with_corrections
from rnea_ros.dynamics.payload import consistency_problems
from rnea_ros.dynamics.regressor import links_regressor
from rnea_ros.testing.arm_in_mujoco import ARM, LOWER, START, TRUTH, UPPER, exciting, gravity_errors, simulate
from rnea_ros.testing.perturbed import perturbed_urdf
from rnea_ros.testing.reference import ARM_URDF

HAND_MADE, HELD_OUT = exciting(5, [0.23, 0.61, 1.3], 0.6), exciting(9, [0.17, 0.47, 1.1], 0.5)
ARM_JOINTS = np.r_[np.ones(7, dtype=bool), False]


def one_robot(seed: int, designed: bool, versus: list, soft: bool = False) -> list[object]:
    """The row of the main table; with ``designed`` (and not ``soft``), appends to ``versus`` the row
    against FIGAROH. ``soft``: MuJoCo's default friction loss instead of the simulator's stiffened one."""
    wrong_urdf = perturbed_urdf(ARM_URDF, seed=seed)
    wrong = RobotModel.from_urdf(wrong_urdf)
    if designed:  # rnea_excite's trajectory, designed on the wrong URDF (all a user has), 60 s
        excitation = design(wrong, wrong_urdf, START, moving=ARM_JOINTS, iterations=200)
        trajectory, seconds, condition = excitation.trajectory, 60.0, excitation.condition
    else:
        condition = ConditionNumber(wrong, wrong_urdf, START, ARM_JOINTS).of(HAND_MADE, 100.0)
        trajectory, seconds = HAND_MADE, 30.0
    q, qd, qdd, applied = simulate(trajectory, seconds, wrong, soft_friction=soft)
    recording = q, qd, qdd, applied
    links = urdf_link_inertials(wrong, wrong_urdf)
    contexts = link_contexts(wrong, wrong_urdf, links)  # as rnea_analyze gives them: each link's joint and reach
    identification = Identification(wrong.joint_names, None, links=links, link_contexts=contexts)
    started = time.perf_counter()
    for rows in np.array_split(np.arange(len(q)), int(seconds)):
        state = q[rows], qd[rows], qdd[rows]
        regressor = links_regressor(wrong, list(links), *state)
        identification.add(applied[rows], with_corrections(wrong, None).inverse_dynamics(*state), *state[1:], regressor)
    result = identification.links_result()
    fixed_urdf = corrected_urdf(wrong_urdf, result.inertials())
    fixed = with_corrections(RobotModel.from_urdf(fixed_urdf), identification.corrections())
    wall = time.perf_counter() - started
    q, qd, qdd, applied = simulate(HELD_OUT, 15.0, wrong, soft_friction=soft)
    before = np.sqrt(np.mean((applied - with_corrections(wrong, None).inverse_dynamics(q, qd, qdd)) ** 2, axis=0))
    after = np.sqrt(np.mean((applied - fixed.inverse_dynamics(q, qd, qdd)) ** 2, axis=0))
    ratio = before[:7] / after[:7]
    if designed:
        versus.append(against_figaroh(seed, soft, wrong_urdf, recording, (q, qd, qdd, applied), after[:7], wall))
    poses = np.random.default_rng(2).uniform(LOWER, UPPER, size=(100, 8))
    error = gravity_errors({"wrong": wrong_urdf, "fixed": fixed_urdf}, poses)
    rigid = sum(not consistency_problems(e.identified) for e in result.links)
    results = identification.results()[:7]
    alone = [j for j, r in enumerate(results) if not r.estimates["armature"].why]  # not only in a base combination
    armature = np.array([results[j].estimates["armature"].value for j in alone])
    in_urdf = np.array([wrong.joint_dynamics.get(name, (0.0, 0.0)) for name in wrong.joint_names[:7]])
    friction = {  # largest error over joints 1–7 of what the URDF's <dynamics> does not hold
        k: np.abs(np.array([r.estimates[k].value or np.nan for r in results]) / (TRUTH[t] - in_urdf[:, i]) - 1).max()
        * 100
        for i, (k, t) in enumerate((("viscous", "damping"), ("coulomb", "frictionloss")))
    }
    return [
        f"{seed}, {'designed (rnea_excite), 60 s' if designed else 'hand-made multi-sine, 30 s'}"
        + (", MuJoCo's soft friction" if soft else ""),
        f"{condition:.3g}",
        f"{before[:7].min():.2f}–{before[:7].max():.2f} → {after[:7].min():.3f}–{after[:7].max():.3f}",
        f"{ratio.min():.1f}–{ratio.max():.1f}×",
        f"{100 * error['wrong'].max():.1f} → {100 * error['fixed'].max():.2f}",
        f"{rigid} of {len(result.links)}",
        f"{result.base_parameters} of {result.parameters}",
        f"{np.abs(armature / TRUTH['armature'][alone] - 1).max() * 100:.0f} % (joints {alone[0] + 1}–{alone[-1] + 1})",
        f"{friction['coulomb']:.1f} %, {friction['viscous']:.1f} %",
        f"{wall:.1f}",
    ]


def against_figaroh(
    seed: int, soft: bool, urdf: str, recording, held_out, ours: np.ndarray, our_wall: float
) -> list[object]:
    """FIGAROH's base parameters (double QR, least squares) on the same recording and URDF."""
    from rnea_ros.testing.figaroh_reference import figaroh_held_out

    followers = {"finger_right_joint": "finger_left_joint"}
    theirs, fit = figaroh_held_out(urdf, ARM.joint_names, followers, recording, held_out, 7)
    return [
        f"{seed}, {'soft (MuJoCo default)' if soft else 'stiff (rnea_sim)'}",
        f"{np.sqrt(np.mean(ours**2)):.4f}",
        f"{np.sqrt(np.mean(theirs**2)):.4f}",
        " ".join(f"{x:.2f}" for x in ours / theirs),
        f"{len(fit.base)}",
        f"{our_wall:.1f}",
        f"{fit.seconds:.1f}",
    ]


def real_time(seeds: list[int]) -> Path:
    """rnea_sim's JTC stand-in on the true arm, rnea_node's feed-forward from the wrong URDF and from
    rnea_analyze --identify --inertia's corrected.urdf + corrections.yaml (testing.real_time_arm)."""
    import tempfile

    import rclpy

    from rnea_ros.testing.real_time_arm import identify_wrong_arm, track_in_real_time
    from rnea_ros.testing.ros_harness import ROS_ENV, init_rclpy

    init_rclpy()
    rows = []
    try:
        for soft in (True, False):
            for seed in seeds:
                folder = Path(tempfile.mkdtemp(prefix="rnea_identification_"))
                wrong_urdf, corrected_urdf, corrections = identify_wrong_arm(folder, seed, soft)
                wrong = track_in_real_time(folder, f"rt_wrong_{seed}", wrong_urdf, ROS_ENV, soft_friction=soft)
                fixed = track_in_real_time(folder, f"rt_fixed_{seed}", corrected_urdf, ROS_ENV, str(corrections), soft)
                ratio = wrong / fixed
                rows.append(
                    [f"{seed}, {'soft (MuJoCo default)' if soft else 'stiff'}", " ".join(f"{x:.3f}" for x in wrong),
                     " ".join(f"{x:.4f}" for x in fixed), f"{ratio.min():.1f}–{ratio.max():.1f}×"]
                )  # fmt: skip
    finally:
        rclpy.try_shutdown()
    return write_table(
        "identification_real_time",
        "benchmarks/identification.py",
        ["wrong URDF (seed), friction", "wrong URDF: RMS per joint 1–7 [°]", "corrected.urdf + corrections", "ratio"],
        rows,
        "With --real-time. Real time, rnea_sim's joint_trajectory_controller stand-in (PID per joint) plus rnea_node's "
        "feed-forward on the trajectory's points, a fast multi-sine for 4 s on the true arm (damping, "
        "friction loss and armature in the simulator only; rnea_sim's soft_friction true or false).",
    )


def friction_shape() -> list[list[object]]:
    q, qd, qdd, applied = simulate(HAND_MADE, 30.0, soft_friction=True)
    model = with_corrections(ARM, None, urdf_dynamics=False)
    rows = []
    for label, width in (("width fixed 0.01 rad/s, no lead", 0.01), ("chosen on held-out samples (default)", None)):
        identification = Identification(ARM.joint_names, width)
        identification.add(applied, model.inverse_dynamics(q, qd, qdd), qd, qdd)
        results = identification.results()[:7]
        found = {k: np.array([r.estimates[k].value for r in results]) for k in ("coulomb", "viscous", "armature")}
        error = {
            k: np.abs(found[k] / TRUTH[t] - 1).max() * 100
            for k, t in (("coulomb", "frictionloss"), ("viscous", "damping"), ("armature", "armature"))
        }
        widths, leads = sorted({r.coulomb_width for r in results}), sorted({r.coulomb_lead for r in results})
        rows.append(
            [label, ", ".join(f"{w:g}" for w in widths), ", ".join(f"{t:g}" for t in leads)]
            + [f"{error[k]:.1f} %" for k in ("coulomb", "viscous", "armature")]
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--real-time", action="store_true", help="only the real-time tracking (needs ROS 2)")
    args = parser.parse_args()
    if args.real_time:
        print(real_time(args.seeds).read_text())
        return
    versus: list = []
    rows = [one_robot(seed, designed, versus) for seed in args.seeds for designed in (False, True)]
    rows += [one_robot(seed, True, versus, soft=True) for seed in args.seeds]
    header = [
        "wrong URDF (seed), excitation",
        "condition number",
        "held-out RMS, joints 1–7 [N·m]: wrong URDF → corrected",
        "ratio per joint",
        "gravity, largest error [% of the joint's largest]: wrong → corrected",
        "links a rigid body",
        "base parameters",
        "armature where determined alone, largest error",
        "Coulomb, viscous: largest error",
        "identification [s]",
    ]
    path = write_table(
        "identification",
        "benchmarks/identification.py",
        header,
        rows,
        "Gravity errors over the joints gravity acts on (joints 2–6 and the finger). Armature of joints 1–2 "
        "is determined only together with link inertias about the same axis (see the test). Friction: "
        "rnea_sim's stiffened friction loss, or MuJoCo's default soft one (the issue's condition); the "
        "Coulomb term's width and lead chosen per joint on held-out samples (the default options).",
    )
    friction = write_table(
        "identification_friction",
        "benchmarks/identification.py",
        ["Coulomb shape", "widths used [rad/s]", "leads used [s]", "Coulomb, largest error", "viscous", "armature"],
        friction_shape(),
        "MuJoCo's default friction loss (soft: it ramps up with velocity), joint terms only, the true URDF.",
    )
    figaroh = write_table(
        "identification_figaroh",
        "benchmarks/identification.py",
        [
            "wrong URDF (seed), friction",
            "held-out RMS, joints 1–7 [N·m]: ours",
            "FIGAROH's",
            "ours / FIGAROH's, per joint",
            "FIGAROH's base parameters",
            "ours [s]",
            "FIGAROH's [s]",
        ],
        versus,
        "The same 60 s recording of the designed excitation and the same held-out trajectory, with either "
        "friction. FIGAROH "
        "1.0.2: Pinocchio's regressor with viscous, Coulomb (sign), armature and offset per joint, base "
        "parameters by its double QR, ordinary least squares; it gives base parameters, not a URDF. Ours: "
        "weighted by each joint's residual variance, every link a rigid body, a corrected URDF.",
    )
    print(path.read_text())
    print(friction.read_text())
    print(figaroh.read_text())


if __name__ == "__main__":
    main()
