"""The simulator's record and its start-up under hostile conditions: interrupted (SIGINT, SIGTERM)
at any moment its record is the states up to the last step, never a broken file; a record_file it
cannot write stops it at once with the reason (exit code 1), not after the run."""

from __future__ import annotations

import signal
import time
import zipfile

import numpy as np
import pytest

from rnea_ros.demo.closed_loop import start, stop
from rnea_ros.testing.reference import ARM_URDF
from rnea_ros.testing.ros_harness import ROS_ENV

pytestmark = [pytest.mark.ros]


def simulator(tmp_path, name: str, record) -> tuple:
    parameters = {"robot_description": ARM_URDF, "realtime": True, "record_file": str(record), "duration": 0.0}
    return start("rnea_ros.simulation", name, parameters, tmp_path, ROS_ENV), tmp_path / f"{name}_simulation.log"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("after", [0.0, 1.0, 3.0])
def test_an_interrupted_simulator_leaves_a_readable_record_of_every_step(tmp_path, sig, after):
    record = tmp_path / "record.npz"
    process, log = simulator(tmp_path, f"interrupted_{sig.name.lower()}_{int(after)}", record)
    deadline = time.monotonic() + 30.0
    while after > 0.0 and "simulating" not in (log.read_text() if log.exists() else "") and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(after)
    process.send_signal(sig)
    code = process.wait(timeout=60)
    text = log.read_text()
    if "simulating" not in text:  # stopped before the robot was built (in its imports, maybe): no record
        assert not record.exists(), text[-800:]
        return
    assert code == 0, text[-1500:]
    with np.load(record) as data:
        stamps, positions, names = data["stamp"], data["position"], data["joint_names"]
    steps = int(text.split(" steps:")[0].rsplit(" in ", 1)[1])
    assert len(stamps) == steps and positions.shape == (steps, len(names)) and len(names) == 9  # every step
    if after >= 1.0:
        assert steps >= 500
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temporary left


@pytest.mark.parametrize("where", ["missing folder", "a folder"])
def test_a_record_file_that_cannot_be_written_stops_the_simulator_at_once(tmp_path, where):
    record = tmp_path / "nowhere" / "record.npz" if where == "missing folder" else tmp_path
    process, log = simulator(tmp_path, f"unwritable_{where.split()[-1]}", record)
    try:
        assert process.wait(timeout=30) == 1
    finally:
        stop(process)
    assert "record_file" in log.read_text() and "cannot be written" in log.read_text()


def test_the_record_is_a_valid_archive_even_when_the_write_is_cut(tmp_path):
    """What the atomic write protects against: a file cut short is no archive numpy can read."""
    path = tmp_path / "whole.npz"
    np.savez(path, a=np.arange(100_000.0))
    cut = tmp_path / "cut.npz"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises((zipfile.BadZipFile, ValueError, OSError)):
        np.load(cut)["a"]


@pytest.mark.parametrize(
    ("module", "parameters", "words"),
    [
        ("rnea_ros.simulation", {"rate": -5.0}, "rate"),
        ("rnea_ros.simulation", {"controller": "bogus"}, "controller must be one of"),
        ("rnea_ros.simulation", {"rate": "fast"}, "rate"),
        ("rnea_ros.node", {"state_timeout": -1.0}, "state_timeout"),
        ("rnea_ros.node", {"command_source": "torque"}, "command_source"),
    ],
)
def test_a_bad_parameter_stops_either_node_with_its_reason_and_no_traceback(tmp_path, module, parameters, words):
    process = start(module, "bad_parameter", parameters, tmp_path, ROS_ENV)
    try:
        assert process.wait(timeout=30) == 1
    finally:
        stop(process)
    log = (tmp_path / f"bad_parameter_{module.rsplit('.', 1)[-1]}.log").read_text()
    assert "FATAL" in log and words in log and "Traceback" not in log, log[-1500:]
