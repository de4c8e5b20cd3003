"""rnea_analyze's fast paths give what the plain ones give (issue 45, offline end to end): every
candidate window's derivatives in one pass (``local_polynomial_derivatives_many``) against each
window alone and against a polynomial's own derivatives; the plot's min/max envelope keeps every
spike; the window's choice on the benchmark's kind of recording and the CLI's outputs."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.analysis.differentiate import local_polynomial_derivatives, local_polynomial_derivatives_many
from rnea_ros.analysis.fast_csv import format_rows
from rnea_ros.analysis.plot import envelope

WINDOWS = [k * 1e-3 for k in (5, 7, 9, 13, 17, 25, 35, 51, 71, 101, 141, 201, 281, 401)]


def stamps(kind: str, n: int = 2_000) -> np.ndarray:
    rng = np.random.default_rng(3)
    t = 1.7e9 + np.arange(n) * 1e-3  # epoch seconds, as bags give them: steps vary in their last bits
    if kind == "jitter":
        t = np.sort(t + rng.normal(0.0, 2e-5, n))
    elif kind == "gap and repeats":
        t[1_500:] += 0.3  # a gap longer than any window: samples left without derivatives near it
        t[100:106] = t[100]  # one stamp six times
        t[1_000:] += 1.0  # a sample alone between two gaps: no derivatives at it, whatever the window
        t[1_001:] += 1.0
    elif kind == "random steps":
        t = 1.7e9 + np.cumsum(rng.exponential(1e-3, n))
    return t


@pytest.mark.parametrize("kind", ["even", "jitter", "gap and repeats", "random steps"])
def test_every_window_in_one_pass_equals_each_window_alone(kind):
    t = stamps(kind)
    s = t - t[0]
    rng = np.random.default_rng(4)
    y = np.column_stack([np.sin(2.0 * s + j) + rng.normal(0.0, 1e-4, len(t)) for j in range(3)])
    together = local_polynomial_derivatives_many(t, y, WINDOWS)
    for window, (qd, qdd) in zip(WINDOWS, together, strict=True):
        alone_qd, alone_qdd = local_polynomial_derivatives(t, y, window)
        for ours, theirs in ((qd, alone_qd), (qdd, alone_qdd)):
            assert np.array_equal(np.isnan(ours), np.isnan(theirs)), window  # the same samples underived
            finite = np.isfinite(theirs)
            scale = np.abs(theirs[finite]).max()
            # rounding only: the sums are taken in another order and scale; random steps give a few
            # barely determined windows (4 distinct stamps in 5 ms) where rounding shows most
            tolerance = 1e-4 if kind == "random steps" else 1e-8
            assert np.abs(ours[finite] - theirs[finite]).max() <= tolerance * scale, (window, kind)
    if kind == "gap and repeats":
        assert all(np.isnan(qdd[1_000]).all() for _, qdd in together)  # windows widened to no avail


def test_every_window_in_one_pass_is_exact_on_a_cubic():
    """A cubic's derivatives, whatever the window (the local fit is of degree 3), at every sample."""
    t = stamps("jitter", 2_000)
    s = t - t[0] - 1.0
    y = np.column_stack([0.3 * s**3 - s**2 + 2 * s + 1, -(s**3) + 0.5 * s])
    qd_true = np.column_stack([0.9 * s**2 - 2 * s + 2, -3 * s**2 + 0.5])
    qdd_true = np.column_stack([1.8 * s - 2, -6 * s])
    for window, (qd, qdd) in zip(WINDOWS, local_polynomial_derivatives_many(t - t[0], y, WINDOWS), strict=True):
        assert np.allclose(qd, qd_true, atol=1e-6), window
        assert np.allclose(qdd, qdd_true, atol=1e-3), window


def test_windows_must_increase():
    with pytest.raises(ValueError, match="increasing"):
        local_polynomial_derivatives_many(np.arange(10.0), np.zeros((10, 1)), [0.2, 0.1])


def test_the_plot_envelope_keeps_every_spike_and_the_order_of_time():
    rng = np.random.default_rng(5)
    y = rng.normal(0.0, 1.0, 40_000)
    spikes = [123, 17_777, 39_999]
    y[spikes] = [50.0, -60.0, 70.0]  # one sample each, far beyond the noise
    y[20_000:20_500] = np.nan  # a gap stays a gap
    rows = envelope(y, 1_600)
    assert len(rows) <= 1_600
    assert np.all(np.diff(rows) > 0)  # increasing: the line is drawn in time order
    assert set(spikes) <= set(rows.tolist())
    assert np.nanmax(y[rows]) == 70.0 and np.nanmin(y[rows]) == -60.0
    assert np.isnan(y[rows]).any()
    # every bucket's extremes: the drawn line spans what the data span in each stretch of samples
    for start in range(0, 40_000, 4_000):
        stretch = y[start : start + 4_000]
        drawn = y[rows[(rows >= start) & (rows < start + 4_000)]]
        assert np.nanmax(drawn) == np.nanmax(stretch) and np.nanmin(drawn) == np.nanmin(stretch)


def test_a_short_line_is_drawn_whole():
    y = np.arange(100.0)
    assert np.array_equal(envelope(y, 1_600), np.arange(100))


@pytest.mark.parametrize("decimals", range(10))
def test_csv_digits_two_at_a_time_are_the_scaled_integer_in_fixed_point(decimals):
    """fast_csv writes two digits at a time, the integer part and the fraction apart: every field is
    round(|x|·10^decimals) (half to even) written by Python with the point put back, from 1 to 19
    digits, ties, nan and ±inf included."""
    rng = np.random.default_rng(decimals)
    values = rng.normal(size=(400, 6)) * 10.0 ** rng.integers(-decimals - 2, 18 - decimals, size=(400, 6))
    values[0] = [np.nan, np.inf, -np.inf, -0.0, 0.5 * 10.0**-decimals, -1.5 * 10.0**-decimals]
    values = np.clip(values, -8e18 / 10.0**decimals, 8e18 / 10.0**decimals)

    def field(x: float) -> str:
        if not np.isfinite(x):
            return str(x)  # nan, inf, -inf
        digits = str(int(np.round(abs(x) * 10.0**decimals))).rjust(decimals + 1, "0")
        sign = "-" if x < 0 and digits.strip("0") else ""
        return sign + (digits[:-decimals] + "." + digits[-decimals:] if decimals else digits)

    expected = "".join(",".join(field(x) for x in row) + "\n" for row in values)
    assert format_rows(values, decimals).decode() == expected


@pytest.mark.slow  # 30 s simulated and two choices on 30,000 samples: 7.6 s of CPU at load 6, near the 10 s limit
def test_the_window_chosen_on_stretches_is_the_one_chosen_on_every_sample(monkeypatch):
    """30,000 samples (as rnea_analyze's leading ones): fitted on every 4th stretch of 1,000, the
    same window as on all of them, with every candidate's score within 5 % of its score there."""
    from rnea_ros import RobotModel
    from rnea_ros.analysis import window as window_module
    from rnea_ros.analysis.pipeline import chosen_window
    from rnea_ros.analysis.recording import JointChunk
    from rnea_ros.demo.example_robot import example_arm_urdf
    from rnea_ros.dynamics.corrections import with_corrections
    from rnea_ros.testing.recorded_data import simulate

    urdf = example_arm_urdf()
    corrected = with_corrections(RobotModel.from_urdf(urdf), None, urdf_dynamics=True)
    sim = simulate(urdf, 30.0, rate=1000.0, position_noise=1e-6, jitter=0.001, seed=21)
    samples = JointChunk(list(sim.names), sim.t, sim.q, sim.qd, sim.effort)
    stretches = chosen_window(corrected, iter([samples]))
    monkeypatch.setattr(window_module, "SCORED_SAMPLES", len(sim.t))
    every = chosen_window(corrected, iter([samples]))
    assert stretches.stride == 4 and stretches.scored == 8_000 and every.stride == 1, stretches.describe()
    assert stretches.window == every.window, (stretches.describe(), every.describe())
    for window, score in every.scores.items():
        assert abs(stretches.scores[window] / score - 1.0) < 0.05, (stretches.describe(), every.describe())


def test_joint_fits_in_one_pass_are_numpys_sums_over_the_finite_samples():
    """``JointFits.add``'s compiled pass against the sums written out with numpy and the regressor
    module's friction-law columns, NaN samples (an effort not measured, a state not derived) left out."""
    from rnea_ros.analysis.pipeline import JointFits
    from rnea_ros.dynamics.regressor import friction_law_columns

    rng = np.random.default_rng(45)
    measured, model, qd = rng.normal(size=(3, 2_000, 4)) * np.array([3.0, 3.0, 0.5])[:, None, None]
    qd[::7, 1] = 0.0  # sign(0) = 0
    measured[::11, 2], model[5::13, 0], qd[3::17, 3] = np.nan, np.nan, np.nan
    fits = JointFits(4)
    fits.add(measured[:1_500], model[:1_500], qd[:1_500])
    fits.add(measured[1_500:], model[1_500:], qd[1_500:])
    for j in range(4):
        ok = np.isfinite(measured[:, j]) & np.isfinite(model[:, j]) & np.isfinite(qd[:, j])
        m, p, r = measured[ok, j], model[ok, j], measured[ok, j] - model[ok, j]
        X = friction_law_columns(qd[ok, j])
        assert fits.n[j] == ok.sum()
        expected = [m.sum(), p.sum(), m @ m, p @ p, m @ p, r @ r]
        np.testing.assert_allclose(fits.sums[:, j], expected, rtol=1e-12)
        np.testing.assert_allclose(fits.friction_normal[j], X.T @ X, rtol=1e-12)
        np.testing.assert_allclose(fits.friction_rhs[j], X.T @ r, rtol=1e-12, atol=1e-12)


def test_torques_png_is_rendered_in_two_bands_by_two_processes_with_matplotlibs_pixels(tmp_path, monkeypatch):
    """torques.png drawn by the forked worker: its two bands of axes rendered by two processes (the worker and
    one it forks), each deflating its own rows into the one PNG (fails before: one process drew the whole
    figure and PIL saved it). The file has the bytes of ``write_plot``'s, rendered whole in this process,
    and decodes to the pixels of matplotlib's own ``savefig`` of the same figure."""
    import io
    import os

    from PIL import Image

    from rnea_ros.analysis import plot
    from rnea_ros.analysis.pipeline import Analysis, JointFits

    names = ["shoulder", "elbow", "wrist"]
    analysis = Analysis(names, JointFits(3))
    t = 1.7e9 + np.arange(5_000) * 1e-3
    waves = np.sin(np.outer(t - t[0], np.arange(1, 10))) + np.random.default_rng(4).normal(0, 0.05, (5_000, 9))
    waves[2_500, 1] = 9.0  # a spike in the elbow's panel, by the bands' border
    analysis.plot.add(np.column_stack([t, waves]))
    rendered, log = plot._rendered, tmp_path / "bands.txt"

    def logged(fig, band=None):
        with open(log, "a") as file:
            file.write(f"{os.getpid()} {band}\n")
        return rendered(fig, band)

    monkeypatch.setattr(plot, "_rendered", logged)  # the worker is forked after: it renders through this too
    with plot.PlotWorker() as worker:
        worker.prepare(names)
        worker.write(analysis, tmp_path / "worker.png")
    bands = dict(line.split(" ", 1)[::-1] for line in log.read_text().splitlines())
    assert sorted(bands) == ["slice(0, 2, None)", "slice(2, None, None)"]
    assert len(set(bands.values()) | {str(os.getpid())}) == 3  # two processes, neither this one
    plot.write_plot(analysis, tmp_path / "here.png")
    assert (tmp_path / "worker.png").read_bytes() == (tmp_path / "here.png").read_bytes()

    fig, axes, _ = plot._torques_axes(names)
    plot._add_lines(axes, names, analysis.plot.rows())
    saved = io.BytesIO()
    fig.savefig(saved, format="png", dpi=90)
    expected = np.asarray(Image.open(saved))
    assert expected.shape == (702, 900, 4)  # 10 x 7.8 inches at 90 dpi
    assert np.array_equal(np.asarray(Image.open(tmp_path / "worker.png")), expected)


def test_a_band_process_that_fails_leaves_its_band_to_the_worker(monkeypatch):
    """When the forked process dies before sending its band, the worker renders that band itself: the same
    bytes as the whole figure's."""
    import os

    from rnea_ros.analysis import plot

    names = ["shoulder", "elbow"]
    fig, axes, _ = plot._torques_axes(names)
    t = np.arange(3_000) * 1e-3
    plot._add_lines(axes, names, np.column_stack([t, np.cos(np.outer(t, np.arange(1, 7)))]))
    expected = plot.png_bytes(plot._rendered(fig), plot._split_row(fig), plot.TORQUES_DPI)
    parent, rendered, here = os.getpid(), plot._rendered, []

    def failing_there(fig, band=None):
        if os.getpid() != parent:
            raise RuntimeError("the band's process fails")
        here.append(band)
        return rendered(fig, band)

    monkeypatch.setattr(plot, "_rendered", failing_there)
    assert plot._forked_bands(fig) == expected
    assert here == [slice(2, None), slice(0, 2)]  # its own band, then the failed process's


def test_position_noise_fits_each_window_as_its_own_cubic():
    """window.position_noise (the windows of even stamps grouped by their bytes, each pseudo-inverse
    once) equals a cubic fitted by lstsq at every sample on its own, on stamps at 1.7e9 s (whose
    rounding makes a few distinct windows) and on jittered ones (every window distinct)."""
    from rnea_ros.analysis.window import position_noise

    rng = np.random.default_rng(5)
    for t in (1.7e9 + np.arange(3_000) * 1e-3, np.cumsum(rng.uniform(0.5e-3, 1.5e-3, 3_000))):
        q = np.column_stack([np.sin(3 * t), np.cos(2 * t)]) + rng.normal(scale=1e-4, size=(len(t), 2))
        scaled = []
        for i in range(3, len(t) - 3):
            s = t[i - 3 : i + 4] - t[i]
            V = np.vander(s / np.abs(s).max(), 4, increasing=True)
            fit = V @ np.linalg.lstsq(V, q[i - 3 : i + 4], rcond=None)[0]
            leverage = (V @ np.linalg.pinv(V))[3, 3]
            scaled.append((q[i] - fit[3]) ** 2 / (1.0 - leverage))
        expected = np.sqrt(np.median(scaled, axis=0) / 0.4549)
        np.testing.assert_allclose(position_noise(t, q), expected, rtol=1e-6)


def test_a_chunk_in_model_space_takes_each_joints_recorded_column():
    """pipeline.to_model_space (all columns at once): each model joint's column from the recording,
    in the model's order, whatever the recording's; q = q̇ = 0 and effort NaN for a joint not recorded."""
    from types import SimpleNamespace

    from rnea_ros.analysis.pipeline import to_model_space
    from rnea_ros.analysis.recording import JointChunk

    rng = np.random.default_rng(8)
    recorded = ["c", "extra", "a"]
    q, qd, effort = (rng.normal(size=(50, 3)) for _ in range(3))
    model = SimpleNamespace(joint_names=["a", "b", "c"], nv=3)
    for velocity in (qd, None):
        out = to_model_space(JointChunk(recorded, np.arange(50.0), q, velocity, effort), model)
        assert out.names == ["a", "b", "c"] and out.q.flags.c_contiguous
        np.testing.assert_array_equal(out.q, np.column_stack([q[:, 2], np.zeros(50), q[:, 0]]))
        np.testing.assert_array_equal(out.effort, np.column_stack([effort[:, 2], np.full(50, np.nan), effort[:, 0]]))
        if velocity is None:
            assert out.qd is None
        else:
            np.testing.assert_array_equal(out.qd, np.column_stack([qd[:, 2], np.zeros(50), qd[:, 0]]))


def test_torques_and_gravity_in_one_batch_are_each_calls_own_bits():
    """pipeline._torques (τ and g(q) as one batch's rows, split over numba's threads) gives the bits of
    the corrected model's inverse dynamics and of gravity_torques called apart, with every row usable,
    some rows not, and g(q) wanted on other rows than τ."""
    from rnea_ros import RobotModel
    from rnea_ros.analysis.pipeline import _torques
    from rnea_ros.demo.example_robot import example_arm_urdf
    from rnea_ros.dynamics.corrections import Corrections, JointCorrection, with_corrections

    model = RobotModel.from_urdf(example_arm_urdf())
    corrected = with_corrections(model, Corrections({model.joint_names[1]: JointCorrection(viscous=0.3)}))
    rng = np.random.default_rng(9)
    n = 40_000  # x2 states x 8 joints: over rnea_block.PARALLEL_WORK, the batch split over threads
    q, qd, qdd = (rng.uniform(-2, 2, (n, model.nv)) for _ in range(3))
    every = np.ones(n, bool)
    some = rng.random(n) > 0.1
    for usable, gravity_rows in ((every, every), (some, some), (some, rng.random(n) > 0.5)):
        tau, gravity = _torques(corrected, q, qd, qdd, usable, gravity_rows, None)
        expected_tau = corrected.inverse_dynamics(q[usable], qd[usable], qdd[usable])
        np.testing.assert_array_equal(tau[usable], expected_tau)
        np.testing.assert_array_equal(gravity[gravity_rows], model.gravity_torques(q[gravity_rows]))
        assert np.isnan(tau[~usable]).all() and np.isnan(gravity[~gravity_rows]).all()


def test_the_command_forks_its_plot_worker_before_numba_is_imported():
    """rnea_analyze's module (``cli``) imports neither numba nor the analysis: ``main`` forks torques.png's
    worker first, whose matplotlib import then runs beside numba's (fails before: cli imported the
    pipeline at its top). The functions that moved to ``command`` are still found under ``cli``."""
    import subprocess
    import sys

    probe = (  # imported as the console script imports it: ``from ... import`` asks the module for __path__
        "import sys; from rnea_ros.analysis.cli import entry_point; "
        "print(sorted(m for m in ('numba', 'rnea_ros.analysis.pipeline', 'matplotlib') if m in sys.modules)); "
        "from rnea_ros.analysis import cli; print(cli.with_corrections.__module__)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["[]", "rnea_ros.analysis.command"]


def test_the_command_ends_without_teardown_and_loses_no_output(tmp_path):
    """rnea_analyze's entry point leaves by os._exit (the interpreter's teardown skipped): its exit code
    is main's, and what it printed reaches a pipe whole (flushed first), its files written."""
    import subprocess
    import sys

    from rnea_ros.demo.example_robot import example_arm_urdf
    from rnea_ros.testing.recorded_data import simulate, write_csv

    urdf = example_arm_urdf()
    recording = write_csv(tmp_path / "recording.csv", simulate(urdf, 2.0, rate=500.0))
    (tmp_path / "arm.urdf").write_text(urdf)
    command = [sys.executable, "-c", "from rnea_ros.analysis.cli import entry_point; entry_point()"]
    base = [*command, str(recording), "--urdf", str(tmp_path / "arm.urdf"), "--window", "0.05"]
    done = subprocess.run([*base, "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().split("\n")[-1].startswith("wrote ")  # the last line, after the summary
    assert (tmp_path / "out" / "samples.csv").stat().st_size > 0 and (tmp_path / "out" / "torques.png").is_file()
    refused = subprocess.run([*base, "--topic", "/x", "--start", "5"], capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "rnea_analyze:" in refused.stderr


@pytest.mark.parametrize("measured", [False, True])
def test_the_command_imports_coverage_only_when_a_measurement_has(tmp_path, measured):
    """rnea_analyze's console script keeps numba's import from loading coverage.py (numba reports compiled
    lines to a running measurement; none runs unless coverage was imported first, by its .pth hook or
    ``coverage run``): fails before, where numba imported it wherever it was installed."""
    import os
    import subprocess
    import sys

    pytest.importorskip("coverage")
    report = (
        "import os, sys; exit_ = os._exit; "
        "os._exit = lambda code: (os.write(2, ('coverage=%s numba=%s' % (type(sys.modules.get('coverage')).__name__, "
        "'numba' in sys.modules)).encode()), exit_(code)); "
    )
    probe = ("import coverage; " if measured else "") + report
    probe += "from rnea_ros.analysis.cli import entry_point; entry_point()"
    hooks = ("COVERAGE_PROCESS_START", "COVERAGE_PROCESS_CONFIG")  # the .pth hook's: no measurement here
    environment = {key: value for key, value in os.environ.items() if key not in hooks}
    (tmp_path / "r.csv").write_text("time,a.position,a.effort\n")
    arguments = [str(tmp_path / "r.csv"), "--urdf", str(tmp_path / "missing.urdf"), "--out", str(tmp_path / "out")]
    done = subprocess.run(
        [sys.executable, "-c", probe, *arguments], capture_output=True, text=True, timeout=60, env=environment
    )
    assert done.returncode == 2 and "missing.urdf" in done.stderr  # refused after numba's import
    assert done.stderr.rstrip().endswith(f"coverage={'module' if measured else 'NoneType'} numba=True")
