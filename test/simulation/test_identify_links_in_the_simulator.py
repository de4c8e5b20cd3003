"""Every link's inertia, and friction of the shape MuJoCo gives it, identified from a recording of
MuJoCo's robot (the true URDF, plus joint damping, friction loss and rotor inertia that no URDF
holds) by a model whose URDF has every link's mass and inertia off by 20–30 % and its centre of
mass by 1–3 cm. Gravity torques are checked with Pinocchio. Each check runs with MuJoCo's default
(soft) friction loss, whose force settles within ~10 ms, and with rnea_sim's stiffened one.

Every draw is seeded (the wrong URDF, the excitation's design, the held-out trajectory, the poses),
so one environment gives the same figures on every run. Another numpy or BLAS build rounds the
design's SVDs differently, and its (1+1) evolution strategy then keeps other trials: another
trajectory of the same quality, as another design seed gives here. The bounds hold, with a margin,
over design seeds 0-3 here (stiff friction, where another environment failed the old bounds)
and over what that environment found (issue 33); where they are looser than one run's figure, the
test says what that figure is."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.analysis.excitation import design
from rnea_ros.analysis.identify import SHAPES, Identification
from rnea_ros.analysis.link_inertia import corrected_urdf, link_contexts, urdf_link_inertials
from rnea_ros.analysis.recording import JointChunk
from rnea_ros.analysis.window import choose_window
from rnea_ros.dynamics.corrections import with_corrections
from rnea_ros.dynamics.payload import consistency_problems
from rnea_ros.dynamics.regressor import links_regressor
from rnea_ros.testing.arm_in_mujoco import ARM, LOWER, START, TRUTH, UPPER, exciting, gravity_errors, simulate
from rnea_ros.testing.perturbed import perturbed_urdf
from rnea_ros.testing.reference import ARM_URDF

TRUE = ARM
pytestmark = pytest.mark.slow  # a 200-iteration design and 60 s simulated per friction: ~2 min of CPU each

DESIGN_SEED = 0  # rnea_excite's default


@pytest.fixture(scope="module", params=["soft friction", "stiff friction"])
def wrong_urdf_identified(request):
    """60 s of rnea_excite's excitation, designed on the wrong URDF (all its user has)."""
    wrong_urdf = perturbed_urdf(ARM_URDF, seed=1)
    wrong = RobotModel.from_urdf(wrong_urdf)
    moving = np.r_[np.ones(7, dtype=bool), False]
    excitation = design(wrong, wrong_urdf, START, moving=moving, iterations=200, seed=DESIGN_SEED)
    soft = request.param == "soft friction"
    q, qd, qdd, applied = simulate(excitation.trajectory, 60.0, wrong, soft_friction=soft)
    links = urdf_link_inertials(wrong, wrong_urdf)
    contexts = link_contexts(wrong, wrong_urdf, links)  # as rnea_analyze gives them: each link's joint and reach
    identification = Identification(wrong.joint_names, None, links=links, link_contexts=contexts)
    corrected = with_corrections(wrong, None)
    for rows in np.array_split(np.arange(len(q)), 60):
        state = q[rows], qd[rows], qdd[rows]
        identification.add(
            applied[rows],
            corrected.inverse_dynamics(*state),
            qd[rows],
            qdd[rows],
            links_regressor(wrong, list(links), *state),
        )
    return wrong_urdf, wrong, identification, (q, qd, qdd, applied), soft


@pytest.fixture(scope="module")
def held_out(wrong_urdf_identified):
    """Another trajectory, the same controller and friction: (q, q̇, q̈, applied τ)."""
    soft = wrong_urdf_identified[4]
    return simulate(exciting(9, [0.17, 0.47, 1.1], 0.5), 15.0, wrong_urdf_identified[1], soft_friction=soft)


def test_the_wrong_urdf_is_really_wrong(wrong_urdf_identified):
    wrong_urdf = wrong_urdf_identified[0]
    true_links = urdf_link_inertials(TRUE, ARM_URDF)
    for link, inertial in urdf_link_inertials(TRUE, wrong_urdf).items():
        if true_links[link].mass > 0.0:
            assert 0.19 <= abs(inertial.mass / true_links[link].mass - 1.0) <= 0.31, link
            assert 0.009 <= np.linalg.norm(inertial.com - true_links[link].com) <= 0.031, link


def test_the_wrong_urdf_does_not_choose_a_long_window(wrong_urdf_identified):
    """The positions are MuJoCo's at 1 kHz, without noise: any window fits them, so the choice must be
    short. Scored on the joint terms alone, the wrong URDF's residual fell with the window's length
    (its wrong inertial torque smoothed away): 280 ms was chosen, and the corrected arm tracked up to
    5.5× worse in real time than with 50 ms (benchmarks/identification.py --real-time)."""
    _, wrong, _, (q, qd, _, applied), _ = wrong_urdf_identified
    t = np.arange(len(q)) * 1e-3
    samples = JointChunk(list(wrong.joint_names), t[:30_000], q[:30_000], qd[:30_000], applied[:30_000])
    choice = choose_window(with_corrections(wrong, None), samples, order=3)
    assert choice.window <= 0.05, choice.describe()


def test_every_identified_link_is_a_rigid_body_and_the_urdf_reads_back(wrong_urdf_identified):
    wrong_urdf, _, identification, *_ = wrong_urdf_identified
    result = identification.links_result()
    # a link whose estimate leaves its bounds (a centre of mass beyond its reach) keeps the URDF's values,
    # and so does link1, which turns about the vertical joint1 only: no torque depends on its mass or
    # centre of mass, its inertia about the axis is joint1's armature's column (issue 46: its columns
    # add no rank; before, its mass moved with the consistent estimate's search)
    print("kept at the URDF's:", result.kept)
    assert len(result.links) + len(result.kept) == 9 and len(result.links) >= 6, result.kept
    assert "link1" in result.kept and "add no rank" in result.kept["link1"], result.kept
    assert {"link2", "link3", "link4", "link5", "link6", "link7"} <= {e.link for e in result.links}, result.kept
    assert 0 < result.base_parameters < result.parameters
    for estimate in result.links:
        assert consistency_problems(estimate.identified) == [], estimate.link
    fixed = RobotModel.from_urdf(corrected_urdf(wrong_urdf, result.inertials()), strict=True)
    assert fixed.joint_names == TRUE.joint_names and not fixed.warnings


def held_out_rms(wrong_urdf_identified, held_out) -> np.ndarray:
    """Per joint: the held-out residual RMS of the corrected URDF with its corrections."""
    wrong_urdf, _, identification, *_ = wrong_urdf_identified
    fixed_urdf = corrected_urdf(wrong_urdf, identification.links_result().inertials())
    fixed = with_corrections(RobotModel.from_urdf(fixed_urdf), identification.corrections())
    q, qd, qdd, applied = held_out
    return np.sqrt(np.mean((applied - fixed.inverse_dynamics(q, qd, qdd)) ** 2, axis=0))


def test_held_out_torques_four_times_closer_than_with_the_wrong_urdf(wrong_urdf_identified, held_out):
    wrong = wrong_urdf_identified[1]
    q, qd, qdd, applied = held_out
    before = np.sqrt(np.mean((applied - with_corrections(wrong, None).inverse_dynamics(q, qd, qdd)) ** 2, axis=0))
    after = held_out_rms(wrong_urdf_identified, held_out)
    print("held-out RMS [N·m] before", before.round(4), "after", after.round(4), "ratio", (before / after).round(1))
    # joint7, whose torques are the smallest, the least: 5.1-5.3x over design seeds 0-3 (stiff friction)
    assert np.all(after[:7] * 4.0 < before[:7])


def test_friction_and_armature_are_found_beside_the_links_inertias(wrong_urdf_identified):
    """Viscous and Coulomb within 10 % (what the URDF's <dynamics> does not already hold), armature
    within 10 % on joints 3 and 4 and 25 % on joints 5–7, the smallest (0.02, 0.02, 0.01 kg·m²), whose
    estimate moves with the design: up to 16 % on joint6 (stiff friction, design seed 3). On joints 1
    and 2 a recording determines the armature only together with link inertias about the same axis:
    what the joint's motor moves, M_jj(q) + armature, is checked over random poses of the whole range
    (joint1 1-5 %, joint2 0.3 % over design seeds 0-3)."""
    identification = wrong_urdf_identified[2]
    results = identification.results()[:7]
    found = {k: np.array([r.estimates[k].value for r in results]) for k in ("viscous", "coulomb", "armature")}
    print("armature found", found["armature"].round(4), "true", TRUTH["armature"])
    # the whole joint terms: the model is the rigid bodies (urdf_joint_dynamics false), the corrections
    # replace the URDF's <dynamics> (joint1's 0.5 and 0.1)
    np.testing.assert_allclose(found["viscous"], TRUTH["damping"], rtol=0.1)
    np.testing.assert_allclose(found["coulomb"], TRUTH["frictionloss"], rtol=0.1)
    # joints 3 and 4 within 1.6 % over design seeds 0-3; joints 5-7 within 16 % (joint6, seed 3) and
    # 12.5 % on joint5 or 6 in another environment
    np.testing.assert_allclose(found["armature"][2:4], TRUTH["armature"][2:4], rtol=0.1)
    np.testing.assert_allclose(found["armature"][4:], TRUTH["armature"][4:], rtol=0.25)
    if wrong_urdf_identified[4]:  # soft: the Coulomb term follows q̇ ~10 ms ahead on some joint
        assert any(r.coulomb_lead > 0.0 for r in results)
    assert all(results[j].estimates["armature"].why for j in (0, 1))  # marked: only in combination
    fixed = RobotModel.from_urdf(corrected_urdf(wrong_urdf_identified[0], identification.links_result().inertials()))
    poses = np.random.default_rng(3).uniform(LOWER, UPPER, size=(100, 8))
    for j in (0, 1):
        seen = {}  # the inertia joint j's motor moves: M_jj(q) + armature_j, over the poses
        for name, model, armature in (("found", fixed, found["armature"][j]), ("true", TRUE, TRUTH["armature"][j])):
            unit = np.zeros_like(poses)
            unit[:, j] = 1.0
            at_rest = np.zeros_like(poses)
            M_jj = model.inverse_dynamics(poses, at_rest, unit)[:, j] - model.gravity_torques(poses)[:, j]
            seen[name] = M_jj + armature
        error = np.abs(seen["found"] / seen["true"] - 1.0).max()
        print(f"joint{j + 1}: armature + M_jj(q) within {100 * error:.2f} % over 100 poses")
        assert error < 0.15  # 12 % on joint1: poses over the whole range, the recording covers less


def test_no_worse_than_figaroh_on_the_same_recording(wrong_urdf_identified, held_out):
    """FIGAROH's documented method (base parameters by its double QR, least squares) on the same
    60 s and the same held-out trajectory. Here the RMS over joints 1–7 is 0.69-0.73× FIGAROH's (design
    seeds 0-3, stiff friction; 0.27× with soft friction); another environment's design found 1.31× (0.144 against 0.110
    N·m), so the bound is 1.5×: this test shows the method is of FIGAROH's class on every design,
    docs/figures/identification.md measures by how much it does better."""
    pytest.importorskip("figaroh")
    from rnea_ros.testing.figaroh_reference import figaroh_held_out

    wrong_urdf, _, _, recording, _ = wrong_urdf_identified
    followers = {"finger_right_joint": "finger_left_joint"}
    theirs, fit = figaroh_held_out(wrong_urdf, TRUE.joint_names, followers, recording, held_out, 7)
    ours = held_out_rms(wrong_urdf_identified, held_out)[:7]
    print("held-out RMS [N·m] ours", ours.round(4), "FIGAROH's", theirs.round(4), f"({len(fit.base)} base parameters)")
    assert np.sqrt(np.mean(ours**2)) <= 1.5 * np.sqrt(np.mean(theirs**2))


def test_gravity_of_the_corrected_urdf_against_pinocchio(wrong_urdf_identified):
    pytest.importorskip("pinocchio")
    wrong_urdf, _, identification, *_ = wrong_urdf_identified
    fixed_urdf = corrected_urdf(wrong_urdf, identification.links_result().inertials())
    poses = np.random.default_rng(2).uniform(LOWER, UPPER, size=(100, 8))
    error = gravity_errors({"wrong": wrong_urdf, "fixed": fixed_urdf}, poses)
    print("largest gravity error / the joint's largest gravity torque: wrong", error["wrong"].round(4))
    print("                                                           fixed", error["fixed"].round(4))
    assert error["wrong"].max() > 0.15
    assert error["fixed"].max() < 0.015  # 0.38-0.87 % over design seeds 0-3; docs/figures/identification.md


def test_friction_of_mujocos_default_shape_within_ten_percent_with_the_default_options():
    """MuJoCo's default friction loss ramps up with velocity; a fixed tanh width of 0.01 rad/s
    finds Coulomb 15–32 % low on joints 3 and 7: the width and lead chosen on held-out samples do not."""
    q, qd, qdd, applied = simulate(exciting(5, [0.23, 0.61, 1.3]), 30.0, soft_friction=True)
    model = with_corrections(TRUE, None, urdf_dynamics=False)
    fixed_width = Identification(TRUE.joint_names, 0.01)
    chosen = Identification(TRUE.joint_names, None)  # the default of rnea_analyze --identify
    for identification in (fixed_width, chosen):
        identification.add(applied, model.inverse_dynamics(q, qd, qdd), qd, qdd)
    coulomb = np.array([r.estimates["coulomb"].value for r in chosen.results()[:7]])
    viscous = np.array([r.estimates["viscous"].value for r in chosen.results()[:7]])
    print("widths", [r.coulomb_width for r in chosen.results()[:7]], "Coulomb", coulomb.round(3))
    np.testing.assert_allclose(coulomb, TRUTH["frictionloss"], rtol=0.1)
    np.testing.assert_allclose(viscous, TRUTH["damping"], rtol=0.11)
    at_fixed = np.array([r.estimates["coulomb"].value for r in fixed_width.results()[:7]])
    assert np.abs(at_fixed / TRUTH["frictionloss"] - 1.0).max() > 0.15
    assert all(len(r.held_out) == len(SHAPES) for r in chosen.results()[:7])


def test_rnea_analyze_inertia_writes_a_corrected_urdf_that_explains_the_recording(tmp_path, capsys):
    from rnea_ros.analysis.cli import main
    from rnea_ros.dynamics.corrections import load_corrections

    wrong_urdf = perturbed_urdf(ARM_URDF, seed=3)
    wrong = RobotModel.from_urdf(wrong_urdf)
    q, qd, _, applied = simulate(exciting(5, [0.23, 0.61, 1.3]), 30.0, wrong)
    (tmp_path / "wrong.urdf").write_text(wrong_urdf)
    header = ["time"] + [f"{n}.{k}" for k in ("position", "velocity", "effort") for n in TRUE.joint_names]
    rows = np.column_stack([np.arange(len(q)) * 1e-3, q, qd, applied])
    np.savetxt(tmp_path / "run.csv", rows, delimiter=",", header=",".join(header), comments="", fmt="%.12g")
    out = tmp_path / "out"
    argv = [str(tmp_path / "run.csv"), "--urdf", str(tmp_path / "wrong.urdf"), "--out", str(out), "--no-csv"]
    with pytest.raises(SystemExit):  # a payload is part of its link's inertia: one or the other
        main([*argv, "--identify", "--inertia", "--payload-link", "link7"])
    assert main([*argv, "--identify", "--inertia"]) == 0
    printed = capsys.readouterr().out
    assert "every link's inertia" in printed and " NO" not in printed
    fixed = RobotModel.from_urdf((out / "corrected.urdf").read_text(), strict=True)
    corrected = with_corrections(fixed, load_corrections(out / "corrections.yaml"))
    q, qd, qdd, applied = simulate(exciting(9, [0.17, 0.47, 1.1], 0.5), 10.0, wrong)
    before = np.sqrt(np.mean((applied - with_corrections(wrong, None).inverse_dynamics(q, qd, qdd))[:, :7] ** 2))
    after = np.sqrt(np.mean((applied - corrected.inverse_dynamics(q, qd, qdd))[:, :7] ** 2))
    print(f"held-out RMS over joints 1-7: {before:.4f} → {after:.4f} N·m")
    assert after * 5.0 < before
