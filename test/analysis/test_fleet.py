"""A fleet of eight recordings: identified one per task, pooled, the robot whose joint3 has twice
the others' friction flagged; the Dask path (a LocalCluster on loopback) gives the same numbers
as local worker processes."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.analysis.cli import main
from rnea_ros.analysis.fleet import RecordingTask, drift, pooled, run_tasks
from rnea_ros.demo.example_robot import example_arm_urdf
from rnea_ros.testing.recorded_data import simulate, write_bag

NOMINAL = example_arm_urdf()
VISCOUS = {"joint3": 1.0, "joint1": 0.5}
WORN = 5  # this robot's joint3 has twice the friction


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> list[str]:
    folder = tmp_path_factory.mktemp("fleet")
    paths = []
    for k in range(8):
        viscous = dict(VISCOUS, joint3=2.0 * VISCOUS["joint3"]) if k == WORN else VISCOUS
        sim = simulate(NOMINAL, 4.0, viscous=viscous, seed=100 + k)
        paths.append(str(write_bag(folder / f"robot{k}", sim, description=NOMINAL)))
    return paths


@pytest.mark.slow  # 9 s of CPU
def test_the_worn_robot_is_flagged_and_the_pool_finds_the_common_friction(fleet):
    results = run_tasks([RecordingTask(path, NOMINAL, urdf_dynamics=True) for path in fleet], workers=2)
    flagged = drift(results)
    assert {(path.rsplit("/", 1)[-1], joint, parameter) for path, joint, parameter, *_ in flagged} == {
        (f"robot{WORN}", "joint3", "viscous")
    }, flagged
    per_robot = [{r.name: r for r in result.identification.results()} for result in results]
    assert per_robot[WORN]["joint3"].estimates["viscous"].value == pytest.approx(2.0, rel=0.05)
    pool = {r.name: r for r in pooled(results).results()}
    assert pool["joint3"].estimates["viscous"].value == pytest.approx((7 * 1.0 + 2.0) / 8, rel=0.05)
    assert pool["joint1"].estimates["viscous"].value == pytest.approx(0.5, rel=0.05)


@pytest.mark.slow  # 12 s of CPU
def test_dask_gives_the_same_numbers_as_local_workers(fleet):
    distributed = pytest.importorskip("distributed")
    tasks = [RecordingTask(path, NOMINAL, urdf_dynamics=True) for path in fleet[:4]]
    local = run_tasks(tasks, workers=2)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        remote = run_tasks(tasks, scheduler=cluster.scheduler_address)
    for a, b in zip(local, remote, strict=True):
        assert a.path == b.path and a.samples == b.samples
        np.testing.assert_array_equal(a.identification.sums.xx, b.identification.sums.xx)
        np.testing.assert_array_equal(a.identification.sums.xr, b.identification.sums.xr)


@pytest.mark.slow  # 8 s of CPU
def test_the_cli_takes_several_recordings(fleet, tmp_path, capsys):
    assert main([*fleet, "--out", str(tmp_path / "out"), "--workers", "2"]) == 0
    out = capsys.readouterr().out
    assert f"DRIFT robot{WORN}: joint3 viscous" in out and "pooled over the fleet" in out
    assert (tmp_path / "out/corrections.yaml").is_file()


def test_a_corrupt_recording_is_named_and_the_rest_of_the_fleet_analysed(fleet, tmp_path, capsys):
    corrupt = tmp_path / "corrupt.mcap"
    corrupt.write_bytes(b"\x89MCAP0\r\n" + bytes(range(256)) * 40)
    missing = str(tmp_path / "gone.mcap")
    code = main([*fleet[:3], str(corrupt), missing, "--out", str(tmp_path / "out"), "--workers", "1"])
    captured = capsys.readouterr()
    assert code == 1
    assert f"{corrupt} left out" in captured.err and f"{missing} left out" in captured.err
    assert "3 recordings" in captured.out and "2 of 5 recordings left out" in captured.out
    assert (tmp_path / "out/corrections.yaml").is_file()


def test_a_scheduler_that_never_answers_is_an_error_within_its_timeout(fleet, tmp_path, capsys):
    pytest.importorskip("distributed")
    import socket
    import time

    with socket.socket() as silent:  # accepts connections (the kernel's backlog) and never speaks
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        start = time.monotonic()
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        code = main([*fleet[:2], "--scheduler", address, "--scheduler-timeout", "0.5", "--out", str(tmp_path)])
        elapsed = time.monotonic() - start
    assert code == 2 and "no Dask scheduler answers" in capsys.readouterr().err
    assert elapsed < 30.0  # a bound on a hang: the timeout is 0.5 s
