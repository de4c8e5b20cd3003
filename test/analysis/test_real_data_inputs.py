"""rnea_analyze on what real robots record: efforts on the motor side (converted per joint), joints
whose effort is not measured (empty CSV fields), 100 Hz with position noise (the differentiation
window chosen by the data). The "measured" efforts come from Pinocchio (testing.recorded_data)."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.analysis.cli import main
from rnea_ros.analysis.pipeline import analyze, chosen_window, summary_table
from rnea_ros.analysis.recording import open_recording
from rnea_ros.analysis.window import second_derivative_gain
from rnea_ros.demo.example_robot import example_arm_urdf
from rnea_ros.dynamics.corrections import with_corrections
from rnea_ros.testing.recorded_data import simulate, write_csv

NOMINAL = example_arm_urdf()
MODEL = RobotModel.from_urdf(NOMINAL)
AS_SIMULATED = with_corrections(MODEL, None, urdf_dynamics=True)  # simulate() gives joints the URDF's <dynamics>


@pytest.fixture(scope="module")
def recording():
    return simulate(NOMINAL, 3.0, viscous={"joint3": 1.0}, seed=7)


@pytest.fixture
def urdf(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(NOMINAL)
    return str(path)


def summaries(path, **options) -> dict[str, dict]:
    analysis = analyze(AS_SIMULATED, open_recording(path, "/joint_states"), window=0.05, **options)
    return {name: analysis.fits.summary(j) for j, name in enumerate(analysis.joint_names)}, analysis


def rewritten(path, source, column: str, value) -> None:
    """``source`` CSV with every cell of ``column`` replaced by ``value(cell)``."""
    with open(source, newline="") as f:
        rows = list(csv.reader(f))
    k = rows[0].index(column)
    for row in rows[1:]:
        row[k] = value(row[k])
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows(rows)


def test_a_joint_without_effort_is_named_and_left_out(tmp_path, recording):
    plain = write_csv(tmp_path / "plain.csv", recording)
    rewritten(tmp_path / "unmeasured.csv", plain, "joint4.effort", lambda _: "")
    measured, _ = summaries(plain)
    partial, analysis = summaries(tmp_path / "unmeasured.csv")
    assert analysis.unmeasured() == ["joint4"]
    assert partial["joint4"]["n"] == 0
    for name in ("joint1", "joint2", "joint3", "joint5"):
        assert partial[name]["rms"] == measured[name]["rms"], name  # the other joints' rows are untouched
    table = summary_table(analysis)
    assert "joints recorded without an effort (not measured; their rows left out): ['joint4']" in table
    assert not any(line.startswith("joint4 ") for line in table.splitlines())
    rewritten(tmp_path / "nan.csv", plain, "joint4.effort", lambda _: "nan")
    assert summaries(tmp_path / "nan.csv")[1].unmeasured() == ["joint4"]


def test_motor_side_efforts_converted_per_joint(tmp_path, recording, urdf):
    plain = write_csv(tmp_path / "plain.csv", recording)
    scale, offset = -1.2, 0.3  # link-side torque = -1.2 × reading + 0.3 (gear ratio × constant, sign -1)
    rewritten(tmp_path / "motor.csv", plain, "joint2.effort", lambda cell: repr((float(cell) - offset) / scale))
    (tmp_path / "conversion.yaml").write_text(f"joint2: {{scale: {scale}, offset: {offset}}}\n")
    from rnea_ros.analysis.effort_conversion import load_effort_conversion

    conversion = load_effort_conversion(tmp_path / "conversion.yaml")
    expected, _ = summaries(plain)
    converted, _ = summaries(tmp_path / "motor.csv", effort_conversion=conversion)
    unconverted, _ = summaries(tmp_path / "motor.csv")
    assert converted["joint2"]["rms"] == pytest.approx(expected["joint2"]["rms"], rel=1e-6)
    assert converted["joint2"]["scale"] == pytest.approx(expected["joint2"]["scale"], rel=1e-6)
    assert unconverted["joint2"]["scale"] == pytest.approx(expected["joint2"]["scale"] / scale, rel=0.05)
    out = tmp_path / "out"
    args = [
        str(tmp_path / "motor.csv"),
        "--urdf",
        urdf,
        "--urdf-dynamics",
        "--window",
        "0.05",
        "--no-csv",
        "--out",
        str(out),
    ]
    assert main([*args, "--effort-conversion", str(tmp_path / "conversion.yaml")]) == 0


@pytest.mark.parametrize(
    "content, reason",
    [
        ("joint_2: {scale: 2.0}\n", "did you mean 'joint2'"),
        ("joint2: {scale: 0}\n", "non-zero"),
        ("joint2: {scale: .nan}\n", "finite"),
        ("joint2: {gain: 2}\n", "must be a number or"),
        ("[1, 2]\n", "expected a mapping"),
    ],
)
def test_a_bad_conversion_file_is_refused_with_its_reason(tmp_path, recording, urdf, capsys, content, reason):
    plain = write_csv(tmp_path / "plain.csv", recording)
    (tmp_path / "conversion.yaml").write_text(content)
    arguments = [
        str(plain),
        "--urdf",
        urdf,
        "--effort-conversion",
        str(tmp_path / "conversion.yaml"),
        "--out",
        str(tmp_path / "o"),
    ]
    assert main(arguments) == 2
    assert reason in capsys.readouterr().err


def test_the_window_follows_the_sampling_rate_and_the_noise():
    """100 Hz with an encoder's noise: the 50 ms default spans 5 samples and q̈ is noise; the
    chosen window is longer, and at 1 kHz with almost no noise it is short."""
    noisy = simulate(NOMINAL, 30.0, rate=100.0, position_noise=2e-4, jitter=0.2, seed=3)
    clean = simulate(NOMINAL, 6.0, rate=1000.0, position_noise=1e-9, seed=4)
    chosen = {}
    for label, sim in (("noisy", noisy), ("clean", clean)):
        samples = _chunk(sim)
        chosen[label] = chosen_window(AS_SIMULATED, iter([samples]))
    assert chosen["noisy"].samples >= 13, chosen["noisy"].describe()
    assert chosen["clean"].window <= 0.05, chosen["clean"].describe()
    # the noise left in q̈ at the chosen window: from the positions' noise, as the filter passes it
    gain = second_derivative_gain(chosen["noisy"].samples, 3, chosen["noisy"].period)
    assert chosen["noisy"].qdd_noise[0] == pytest.approx(2e-4 * gain, rel=0.25)


def _chunk(sim):
    from rnea_ros.analysis.recording import JointChunk

    return JointChunk(list(sim.names), sim.t, sim.q, sim.qd, sim.effort)


def test_the_chosen_window_explains_a_100_hz_recording(tmp_path, urdf):
    """At 100 Hz with an encoder's noise, the old fixed 50 ms (5 samples) made q̈ noise: joint2's
    residual 3 N·m against efforts of 27 N·m RMS, negative armatures. With the window the data
    choose, the exact model explains every joint to within a few times the effort noise (0.02)."""
    sim = simulate(NOMINAL, 30.0, rate=100.0, position_noise=2e-4, seed=5)
    path = write_csv(tmp_path / "arm100.csv", sim)
    choice = chosen_window(AS_SIMULATED, open_recording(path, "/joint_states"))
    rms = {}
    for window in (0.05, choice.window):
        analysis = analyze(AS_SIMULATED, open_recording(path, "/joint_states"), window=window)
        rms[window] = np.array([analysis.fits.summary(j)["rms"] for j in range(7)])
    assert rms[0.05].max() > 1.0  # what the fixed default did
    assert rms[choice.window].max() < 0.2, (choice.describe(), rms[choice.window])
    out = tmp_path / "out"
    assert main([str(path), "--urdf", urdf, "--urdf-dynamics", "--identify", "--no-csv", "--out", str(out)]) == 0
    import yaml

    written = yaml.safe_load((out / "corrections.yaml").read_text())
    for name, terms in (written.get("joints") or {}).items():
        assert terms.get("armature", 0.0) >= 0.0, (name, terms)


@pytest.mark.parametrize("window", [["--start", "100"], ["--start", "2.95"], ["--end", "0.005"]])
def test_a_window_past_the_end_or_too_short_is_refused_in_one_line(tmp_path, recording, urdf, capsys, window):
    """--start past the end used to end in an IndexError traceback (exit 1); 9 samples left printed nan
    friction and a scale of 2.4 without a word."""
    plain = write_csv(tmp_path / "plain.csv", recording)
    for fixed in ([], ["--window", "0.05"]):
        assert main([str(plain), "--urdf", urdf, *window, *fixed, "--out", str(tmp_path / "o")]) == 2
        err = capsys.readouterr().err.strip()
        said = [line for line in err.splitlines() if not line.startswith("analysed ")]  # the progress line
        assert len(said) == 1 and said[0].startswith("rnea_analyze: ") and "--start" in said[0], err


def test_a_conversion_file_that_is_no_regular_file_or_too_large_is_refused_at_once(tmp_path, recording, urdf, capsys):
    """--effort-conversion follows the corrections file's rules (issue 46, item 6): a FIFO waited forever,
    /dev/zero filled the memory, a file of any size was read whole. Now one line and exit code 2."""
    import os
    import subprocess
    import sys

    plain = write_csv(tmp_path / "plain.csv", recording)
    fifo = tmp_path / "conversion.fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.yaml"
    big.write_text("joint2: {scale: 1.0}\n" + "# padding\n" * 120_000)  # 1.2 MB: a valid file, too large
    aliased = tmp_path / "aliased.yaml"
    aliased.write_text("joint2: &a {scale: 2.0}\njoint3: *a\n")
    base = [str(plain), "--urdf", urdf, "--window", "0.05", "--no-csv", "--out", str(tmp_path / "o")]
    # the FIFO in a process of its own, with a deadline: before, it never returned
    command = [sys.executable, "-c", "import sys; from rnea_ros.analysis.cli import main; sys.exit(main(sys.argv[1:]))"]
    done = subprocess.run(
        [*command, *base, "--effort-conversion", str(fifo)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and "is not a regular file" in done.stderr, done.stderr
    for path, reason in ((big, "bytes, more than the 1048576 allowed"), (aliased, "anchors and aliases")):
        assert main([*base, "--effort-conversion", str(path)]) == 2
        assert reason in capsys.readouterr().err


def test_dev_zero_as_a_conversion_file_is_refused(tmp_path, recording, urdf, capsys):
    plain = write_csv(tmp_path / "plain.csv", recording)
    assert (
        main(
            [
                str(plain),
                "--urdf",
                urdf,
                "--window",
                "0.05",
                "--effort-conversion",
                "/dev/zero",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    assert "is not a regular file" in capsys.readouterr().err
