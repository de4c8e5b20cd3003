"""The differentiation window on recordings nobody here tuned it on (issue 46, item 1): a clean 1 kHz
recording whose stamps carry float64's rounding at 1.7e9 s, 500 Hz with 0.1 % stamp jitter, every
stamp recorded twice. Every sample gets its derivatives (the first and last one-sided), every
candidate window is scored on the same samples, and a stamp repeated is no step of 0 s.

The recordings: the example arm on its smooth trajectory (``testing.recorded_data``: efforts from
Pinocchio), whose q̈ is known in closed form (``smooth_trajectory``)."""

from __future__ import annotations

import io

import numpy as np
import pytest
import yaml

from rnea_ros import RobotModel
from rnea_ros.analysis.cli import main
from rnea_ros.analysis.differentiate import local_polynomial_derivatives
from rnea_ros.analysis.pipeline import analyze, chosen_window
from rnea_ros.analysis.recording import JointChunk
from rnea_ros.demo.example_robot import example_arm_urdf, smooth_trajectory
from rnea_ros.dynamics.corrections import with_corrections
from rnea_ros.testing.recorded_data import simulate, write_csv

NOMINAL = example_arm_urdf()
MODEL = RobotModel.from_urdf(NOMINAL)
AS_SIMULATED = with_corrections(MODEL, None, urdf_dynamics=True)  # simulate() gives joints the URDF's <dynamics>


def chunk(sim, rows=slice(None)) -> JointChunk:
    return JointChunk(list(sim.names), sim.t[rows], sim.q[rows], sim.qd[rows], sim.effort[rows])


@pytest.fixture(scope="module")
def clean_1khz():
    return simulate(NOMINAL, 8.0, rate=1000.0, position_noise=1e-9, seed=11)


@pytest.fixture(scope="module")
def jittered_500hz():
    return simulate(NOMINAL, 12.0, rate=500.0, position_noise=1e-7, jitter=0.001, seed=12)


@pytest.mark.parametrize("name", ["clean_1khz", "jittered_500hz"])
def test_every_sample_gets_its_derivatives_at_the_chosen_window(name, request):
    """Before: 4 ms at 1 kHz and 8 ms at 500 Hz were chosen while the outer samples of their windows
    fell in or out with the stamps' last bits, and 18 % / 12 % of the samples got no derivatives
    (left out of the fits and of the window's own score); the first and last never had any."""
    sim = request.getfixturevalue(name)
    choice = chosen_window(AS_SIMULATED, iter([chunk(sim)]))
    qd, qdd = local_polynomial_derivatives(sim.t, sim.q, choice.window, 3)
    assert np.isfinite(qd).all() and np.isfinite(qdd).all(), choice.describe()
    # rnea_analyze's whole pipeline: no sample skipped
    analysis = analyze(AS_SIMULATED, iter([chunk(sim)]), window=choice.window)
    assert analysis.underived == 0 and analysis.samples == len(sim.t)
    assert all(count == 0 for count in choice.left_out.values()), choice.describe()
    assert choice.scored == len(sim.t), choice.describe()
    assert "differentiates every one" in choice.describe()
    _, true_qd, true_qdd = smooth_trajectory(MODEL.nv, sim.t - sim.t[0])
    # the first and last samples, one-sided: as close to the true q̈ as the interior (the trajectory's
    # q̈ reaches 0.8 × 1² … 0.3 × 3² rad/s²)
    interior = np.abs(qdd[len(qdd) // 2] - true_qdd[len(qdd) // 2]).max()
    for row in (0, -1):
        assert np.abs(qdd[row] - true_qdd[row]).max() < max(20 * interior, 0.05), (row, qdd[row], true_qdd[row])
        assert np.abs(qd[row] - true_qd[row]).max() < 1e-3


def test_chunks_give_the_whole_recordings_derivatives_with_one_sided_ends(jittered_500hz):
    """The pipeline reads ±window of context around each chunk: the samples written, the first and
    last samples' one-sided derivatives included, do not depend on the chunking."""
    sim = jittered_500hz
    written = []
    for pieces in ([chunk(sim, slice(0, 600))], [chunk(sim, slice(k, min(k + 7, 600))) for k in range(0, 600, 7)]):
        rows = io.BytesIO()
        analysis = analyze(AS_SIMULATED, iter(pieces), window=0.01, csv_file=rows)
        assert analysis.underived == 0 and analysis.samples == 600
        written.append(rows.getvalue())
    assert written[0] == written[1]
    assert len(written[0].splitlines()) == 601


def test_a_window_that_leaves_samples_out_is_not_chosen():
    """Every 200 ms a lone sample 15 ms from its neighbours (0.5 % of the samples): windows up to
    13 ms cannot differentiate it (only ±window is searched for neighbours), 17 ms and longer can.
    On this clean recording every window scores the same on the samples they all differentiate, and
    the shortest would win; it leaves out more than 0.1 % of what a longer one covers, so it is not
    chosen."""
    sim = simulate(NOMINAL, 8.0, rate=1000.0, position_noise=1e-9, seed=13)
    phase = np.arange(len(sim.t)) % 200
    keep = (phase < 170) | (phase == 185)  # 185: 15 ms after 169 and before the next 0
    samples = JointChunk(list(sim.names), sim.t[keep], sim.q[keep], sim.qd[keep], sim.effort[keep])
    lone = int((phase[keep] == 185).sum())
    choice = chosen_window(AS_SIMULATED, iter([samples]))
    short = [w for w in choice.left_out if w < 0.014]
    assert short and all(choice.left_out[w] >= lone - 1 for w in short), choice.describe()
    assert choice.window > 0.014 and choice.left_out[choice.window] <= 0.001 * len(samples.t), choice.describe()
    assert choice.scored == len(samples.t) - max(choice.left_out.values()), choice.describe()


def test_every_stamp_twice_gives_the_true_viscous(tmp_path):
    """Every message recorded twice (the same stamp and state): the median step between stamps was 0
    and the recording was refused ("the stamps do not advance"). The step now comes from distinct
    stamps, and --identify finds joint3's viscous friction as on the recording without repeats."""
    sim = simulate(NOMINAL, 6.0, rate=500.0, viscous={"joint3": 1.0}, position_noise=1e-7, seed=14)
    twice = np.repeat(np.arange(len(sim.t)), 2)
    sim.t, sim.q, sim.qd, sim.effort = sim.t[twice], sim.q[twice], sim.qd[twice], sim.effort[twice]
    path = write_csv(tmp_path / "twice.csv", sim)
    (tmp_path / "arm.urdf").write_text(NOMINAL)
    out = tmp_path / "out"
    argv = [str(path), "--urdf", str(tmp_path / "arm.urdf"), "--urdf-dynamics", "--identify", "--no-csv"]
    assert main([*argv, "--coulomb-width", "0.01", "--out", str(out)]) == 0
    joints = yaml.safe_load((out / "corrections.yaml").read_text())["joints"]
    assert joints["joint3"]["viscous"] == pytest.approx(1.0, rel=0.03)
