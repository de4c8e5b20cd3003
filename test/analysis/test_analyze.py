"""rnea_analyze on recordings the tests write themselves: the "measured" efforts come from
Pinocchio on a modified arm (link4 20 % heavier, viscous friction on joint3) plus noise,
and the summary must find those modifications, and nothing where there is none."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.analysis.cli import main
from rnea_ros.analysis.pipeline import analyze
from rnea_ros.analysis.recording import RecordingError, open_recording
from rnea_ros.demo.example_robot import example_arm_urdf
from rnea_ros.dynamics.corrections import with_corrections
from rnea_ros.testing.recorded_data import heavier_link_urdf, simulate, write_bag, write_csv

NOMINAL = example_arm_urdf()
MODEL = RobotModel.from_urdf(NOMINAL)
# simulate() gives the joints the URDF's <dynamics> (as the simulator does): the model has them too
AS_SIMULATED = with_corrections(MODEL, None, urdf_dynamics=True)
SECONDS = 12.0
VISCOUS = 2.0  # N·m·s/rad on joint3


@pytest.fixture(scope="module")
def modified():
    return simulate(heavier_link_urdf(1.2), SECONDS, viscous={"joint3": VISCOUS}, seed=1)


@pytest.fixture(scope="module")
def exact():
    return simulate(NOMINAL, SECONDS, seed=2)


@pytest.fixture(scope="module")
def modified_bag(tmp_path_factory, modified):
    return write_bag(tmp_path_factory.mktemp("bags") / "modified", modified, description=NOMINAL)


def summaries(path, chunk=5000, **options) -> dict[str, dict]:
    analysis = analyze(AS_SIMULATED, open_recording(path, "/joint_states", chunk), **options)
    return {name: analysis.fits.summary(j) for j, name in enumerate(analysis.joint_names)}


def expected_scales(sim) -> np.ndarray:
    """measured ≈ scale·nominal: the least-squares scale between the true and the nominal rigid-body
    torques on the exact (noise-free) trajectory, computed here without rnea_analyze."""
    from rnea_ros.demo.example_robot import smooth_trajectory

    q, qd, qdd = smooth_trajectory(MODEL.nv, sim.t - sim.t[0])
    true = RobotModel.from_urdf(heavier_link_urdf(1.2)).inverse_dynamics(q, qd, qdd)
    nominal = MODEL.inverse_dynamics(q, qd, qdd)
    nominal_c, true_c = nominal - nominal.mean(0), true - true.mean(0)
    return (nominal_c * true_c).sum(0) / (nominal_c * nominal_c).sum(0)


def test_summary_detects_heavier_link_and_viscous_friction(modified_bag, modified):
    s = summaries(modified_bag)
    assert s["joint3"]["viscous"] == pytest.approx(VISCOUS, rel=0.05)
    for name in ("joint1", "joint2", "joint4", "joint5", "joint6"):
        assert abs(s[name]["viscous"]) < 0.05 * VISCOUS, name
    scales = expected_scales(modified)
    for j, name in enumerate(MODEL.joint_names[:6]):
        if name != "joint3":  # its friction is not a scale
            assert s[name]["scale"] == pytest.approx(scales[j], abs=0.01), name
    assert s["joint2"]["scale"] > 1.03 and s["joint4"]["scale"] > 1.03  # they carry link4
    assert s["joint6"]["scale"] == pytest.approx(1.0, abs=0.01)  # it does not


def test_exact_model_explains_everything(tmp_path, exact):
    s = summaries(write_bag(tmp_path / "exact", exact))
    for name in MODEL.joint_names[:6]:
        assert s[name]["rms"] < 0.03, name  # the 0.02 N·m measurement noise, plus differentiation
        assert s[name]["scale"] == pytest.approx(1.0, abs=0.01), name
        assert abs(s[name]["viscous"]) < 0.05, name
        assert s[name]["corr"] > 0.99, name


def test_mcap_csv_uneven_stamps_and_two_publishers_agree(tmp_path):
    sim = simulate(heavier_link_urdf(1.2), 6.0, viscous={"joint3": VISCOUS}, jitter=0.3, seed=3)
    reference = summaries(write_bag(tmp_path / "db3", sim))
    others = {
        "mcap": summaries(write_bag(tmp_path / "mcap", sim, storage="mcap")),
        "csv": summaries(write_csv(tmp_path / "rec.csv", sim)),
        "two publishers": summaries(write_bag(tmp_path / "split", sim, split_joints=4)),
    }
    for label, s in others.items():
        for name in MODEL.joint_names[:6]:
            for key in ("scale", "viscous", "rms"):
                assert s[name][key] == pytest.approx(reference[name][key], rel=0.02, abs=2e-3), (label, name, key)
    assert reference["joint3"]["viscous"] == pytest.approx(VISCOUS, rel=0.05)


@pytest.mark.slow  # 16 s of CPU: the whole bag read 7 samples at a time
def test_chunking_does_not_change_results(tmp_path, modified_bag):
    outputs = []
    for chunk in (7, 700, 100_000):  # 7 samples: much shorter than the 50 ms window
        with open(tmp_path / f"{chunk}.csv", "wb") as f:
            analyze(AS_SIMULATED, open_recording(modified_bag, "/joint_states", chunk), csv_file=f)
        outputs.append((tmp_path / f"{chunk}.csv").read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]


def test_velocities_from_positions(modified_bag):
    s = summaries(modified_bag, velocities="positions")
    assert s["joint3"]["viscous"] == pytest.approx(VISCOUS, rel=0.05)


def test_tool_wrench_from_the_bag(tmp_path):
    n = int(4.0 * 1000)
    push = np.zeros((n, 6))
    push[n // 2 :, 2] = -30.0  # a 30 N push on the tool from the middle on
    sim = simulate(NOMINAL, 4.0, wrenches={"tcp": push}, seed=4)
    bag = write_bag(tmp_path / "wrench", sim, wrenches={"tcp": push})
    from rnea_ros.analysis.recording import read_bag_wrenches

    with_wrench = summaries(bag, wrenches=read_bag_wrenches(bag, ["/tool_wrench"]))
    without = summaries(bag)
    assert with_wrench["joint2"]["rms"] < 0.03
    assert without["joint2"]["rms"] > 1.0


@pytest.mark.slow  # 3 s alone, 11.9 s of CPU in one CI run (first plot, cold caches)
def test_cli_writes_csv_plot_and_lists_joint_mismatches(tmp_path, capsys):
    sim = simulate(NOMINAL, 2.0, joints=[*MODEL.joint_names[:7]], seed=5)
    sim.names[6] = "wrist_extra_joint"  # in the recording, not in the model; joint7 is missing
    bag = write_bag(tmp_path / "bag", sim, description=NOMINAL)
    assert main([str(bag), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "not in the recording" in out and "joint7" in out and "finger_left_joint" in out
    assert "wrist_extra_joint" in out
    assert (tmp_path / "out/torques.png").read_bytes().startswith(b"\x89PNG")
    lines = (tmp_path / "out/samples.csv").read_text().splitlines()
    assert lines[0].startswith("time,joint1.position") and len(lines) == len(sim.t) + 1


def test_bad_recordings_give_clear_errors(tmp_path, modified_bag, capsys):
    truncated = tmp_path / "truncated"
    shutil.copytree(modified_bag, truncated)
    db3 = next(truncated.glob("*.db3"))
    db3.write_bytes(db3.read_bytes()[: db3.stat().st_size // 3])
    bad_csv = tmp_path / "bad.csv"
    bad_csv.write_text("t,a,b\n1,2,3\n")
    cases = [
        [str(tmp_path / "missing")],
        [str(truncated)],
        [str(bad_csv), "--urdf", str(tmp_path / "none.urdf")],
        [str(modified_bag), "--topic", "/nope"],
    ]
    (tmp_path / "arm.urdf").write_text(NOMINAL)
    cases.append([str(bad_csv), "--urdf", str(tmp_path / "arm.urdf")])
    for args in cases:
        assert main([*args, "--out", str(tmp_path / "out")]) == 2, args
        assert "rnea_analyze:" in capsys.readouterr().err


def test_recording_errors_are_value_errors():
    with pytest.raises(RecordingError):
        next(open_recording("/nonexistent/bag", "/joint_states"))


def test_stamps_out_of_order_are_sorted_or_skipped(tmp_path, exact):
    """Rows swapped inside a chunk are sorted; a row that goes back across a chunk boundary is
    dropped and counted; the rest of the analysis is unaffected."""
    path = write_csv(tmp_path / "rec.csv", exact)
    lines = path.read_text().splitlines()
    lines[11], lines[12] = lines[12], lines[11]  # inside the first chunk of 1000
    lines[1001], lines[2001] = lines[2001], lines[1001]  # sample 2000 comes first, in chunk 1
    path.write_text("\n".join(lines) + "\n")
    analysis = analyze(AS_SIMULATED, open_recording(path, "/joint_states", chunk=1000))
    assert analysis.out_of_order >= 1
    assert analysis.samples + analysis.out_of_order == len(exact.t)
    for j in range(6):
        assert analysis.fits.summary(j)["scale"] == pytest.approx(1.0, abs=0.01)


def test_cli_identify_writes_corrections_that_find_the_friction(tmp_path, modified_bag, capsys):
    import yaml

    from rnea_ros.dynamics.corrections import Corrections

    assert main([str(modified_bag), "--out", str(tmp_path / "out"), "--no-csv", "--identify", "--urdf-dynamics"]) == 0
    out = capsys.readouterr().out
    assert "residual RMS" in out and "n/i: the recording does not determine it" in out
    corrections = Corrections.from_dict(yaml.safe_load((tmp_path / "out/corrections.yaml").read_text()))
    assert corrections.joints["joint3"].viscous == pytest.approx(VISCOUS, rel=0.05)


def test_parquet_samples_hold_the_same_values_as_the_csv(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    sim = simulate(NOMINAL, 2.0, seed=6)
    bag = write_bag(tmp_path / "bag", sim, description=NOMINAL)
    assert main([str(bag), "--out", str(tmp_path / "out"), "--parquet", "--chunk", "700"]) == 0
    table = pq.read_table(tmp_path / "out/samples.parquet")
    csv_lines = (tmp_path / "out/samples.csv").read_text().splitlines()
    assert table.column_names == csv_lines[0].split(",")
    from_csv = np.loadtxt(csv_lines[1:], delimiter=",")
    from_parquet = np.column_stack([table.column(k).to_numpy() for k in range(table.num_columns)])
    np.testing.assert_allclose(from_parquet, from_csv, atol=5e-7, rtol=0)  # the CSV keeps 6 decimals


def test_hostile_recordings_and_outputs_are_messages_not_tracebacks(tmp_path, exact, capsys):
    """A CSV 100,000 columns wide (once 37 GiB asked for), a position of 1e300, a corrections.yaml
    that cannot be written: each an error line and exit code 2."""
    (tmp_path / "arm.urdf").write_text(NOMINAL)
    wide = tmp_path / "wide.csv"
    wide.write_text("time," + ",".join(f"j{k}.position" for k in range(100_000)) + "\n0.0" + ",0.0" * 100_000 + "\n")
    huge = write_csv(tmp_path / "huge.csv", exact)
    lines = huge.read_text().splitlines()
    cells = lines[500].split(",")
    cells[1] = "1e300"
    lines[500] = ",".join(cells)
    huge.write_text("\n".join(lines) + "\n")
    blocked = tmp_path / "blocked"
    (blocked / "corrections.yaml").mkdir(parents=True)  # a folder where the file must go
    recording = write_csv(tmp_path / "fine.csv", exact)
    for args, words in (
        ([str(wide), "--out", str(tmp_path / "out_wide")], "columns"),
        ([str(huge), "--out", str(tmp_path / "out_huge")], "position"),
        ([str(recording), "--identify", "--no-csv", "--out", str(blocked)], "cannot write"),
        ([str(recording), "--out", str(tmp_path / "arm.urdf" / "out")], "is a file"),
    ):
        assert main([*args, "--urdf", str(tmp_path / "arm.urdf")]) == 2, args
        captured = capsys.readouterr()
        assert words in captured.err, args
        assert "samples of" not in captured.out, args  # refused before the recording was analysed


def test_what_was_not_identified_is_not_written_as_a_value():
    from rnea_ros.dynamics.corrections import Corrections, JointCorrection

    written = Corrections({"joint1": JointCorrection(offset=-0.046), "joint2": JointCorrection(coulomb=0.3)}).to_dict()
    assert written["joints"] == {"joint1": {"offset": -0.046}, "joint2": {"coulomb": 0.3, "coulomb_width": 0.01}}
