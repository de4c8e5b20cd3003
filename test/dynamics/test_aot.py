"""rnea_node's live kernels compiled ahead of time (issue 45: the first answer without numba's import).

Each run is a fresh process started as ``rnea_ros/node/__main__.py`` starts the node
(``_kernels_ahead_of_time``, then the node's modules): with a current module its answers come from the
module's machine code and numba is never imported; with a stale one (a source's hash changed in its
manifest) numba is imported, as without a module. Both give the same outputs to the bit (and the same
batches of a trajectory's points on a fixed base), on Go2 (both contact distributions), a fixed-base
arm, a URDF listing its joints out of tree order and robots drawn from example-robot-data.

The module is the one ``python -m rnea_ros.compile`` built (scripts/setup runs it); without a current one
these tests are skipped, save ``test_a_fresh_build_gives_the_same_bits`` (slow: it builds one).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rnea_ros.dynamics import aot

RUN = """
import json, os, sys
from pathlib import Path
os.environ.pop("RNEA_NO_AOT", None)
from rnea_ros.node import __main__ as start
from rnea_ros.dynamics import aot, jit
if sys.argv[1] == "numba":
    os.environ["RNEA_NO_AOT"] = "1"
else:
    aot.folder = lambda: Path(sys.argv[1])
start._kernels_ahead_of_time()
import rnea_ros.node.node  # the node's imports, as its start makes them
import numpy as np
from rnea_ros.controller.core import RneaCore, build_live_model
from rnea_ros.controller.inputs import BY_TOPIC
from rnea_ros.controller.settings import Settings
from rnea_ros.controller.state import OdometryReading
report = {"deferred": jit.deferring(), "status": aot.status(), "numba_before": None, "outputs": {}}
for label, urdf, options in json.loads(sys.stdin.read()):
    floating = options.get("floating_base", False)
    settings = Settings(future_stamp_tolerance=3600.0, base_timeout=3600.0, **{
        k: tuple(v) if isinstance(v, list) else v for k, v in options.items()})
    core = RneaCore(settings)
    core.load(build_live_model(urdf, settings))
    model = core.live.bound.model
    if floating:
        base = OdometryReading(np.array([0.1, -0.2, 0.3, 0.1, 0.2, -0.1, 0.97]),
                               np.array([0.3, -0.1, 0.2, 0.5, -0.4, 0.2]), model.base_link)
        core.receive(BY_TOPIC["base_odometry"], base)
    rng = np.random.default_rng(7)
    names = model.joint_names
    answers = []
    for k in range(4):
        q, qd = rng.uniform(-0.8, 0.8, len(names)), rng.uniform(-2.0, 2.0, len(names))
        out = core.joint_states(names, q, qd, True, 1.0 + 0.001 * k, lambda: 0.0)
        answers.append({f: np.asarray(getattr(out, f)).tolist() for f in ("tau", "gravity", "commands", "wrenches")
                        if getattr(out, f, None) is not None})
    if not floating:  # a trajectory's points, as the node's trajectory answers compute them
        from rnea_ros.dynamics import algorithms
        Q, V = rng.uniform(-0.8, 0.8, (40, model.nq)), rng.uniform(-2.0, 2.0, (40, model.nv))
        answers.append({"batch": algorithms.inverse_dynamics(model, model.create_data(), Q, V, V).tolist()})
    report["outputs"][label] = answers
report["numba_before"] = "numba" in sys.modules
print(json.dumps(report))
"""
FEET = ["FL_foot", "FR_foot", "RL_foot", "RR_foot"]
DRAWN = 3


def robots(seed: int) -> list[tuple[str, str, dict]]:
    """Go2 on both distributions, the example arm, a URDF out of tree order, and DRAWN robots of
    example-robot-data drawn by ``seed`` (on a fixed base)."""
    from rnea_ros import ModelError, RobotModel
    from rnea_ros.testing.reference import ARM_URDF, EXAMPLE_ROBOT_DATA, robot_urdf

    go2 = robot_urdf("go2_description/urdf/go2.urdf")
    chosen = [
        (
            "go2 minimum_norm",
            go2,
            {"floating_base": True, "contact_links": FEET, "contact_distribution": "minimum_norm"},
        ),
        ("go2 qp", go2, {"floating_base": True, "contact_links": FEET, "contact_distribution": "qp"}),
        ("example arm", ARM_URDF, {}),
        (
            "so101 (joints out of tree order)",
            (EXAMPLE_ROBOT_DATA / "so_arm_description/urdf/so101.urdf").read_text(),
            {},
        ),
    ]
    rng = np.random.default_rng(seed)
    drawn = 0
    for path in rng.permutation(sorted(EXAMPLE_ROBOT_DATA.rglob("*.urdf"))):
        urdf = path.read_text()
        try:
            RobotModel.from_urdf(urdf)
        except (ModelError, ValueError):  # a file the node refuses too
            continue
        chosen.append((str(path.relative_to(EXAMPLE_ROBOT_DATA)), urdf, {}))
        drawn += 1
        if drawn == DRAWN:
            break
    return chosen


def run(mode: str, chosen: list) -> dict:
    """The node's start path in a fresh process: ``mode`` a module's folder, or "numba"."""
    command = [sys.executable, "-c", RUN, mode]
    done = subprocess.run(command, input=json.dumps(chosen), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def built() -> Path:
    """The module scripts/setup built, if it is current."""
    folder = aot.folder()
    reason = aot.stale_reason(folder)
    if reason is not None:
        pytest.skip(reason)
    return folder


def test_type_names_are_numbas():
    import numba

    from rnea_ros.dynamics.algorithms import ContactKernelArrays

    a = np.zeros((3, 4))
    readonly = np.zeros(5)
    readonly.flags.writeable = False
    arrays = [a, a.T, a[:, 1], readonly, np.zeros(3, dtype=np.intp), np.zeros((2, 2), dtype=bool)]
    scalars = [np.float64(1.0), np.bool_(True), True, 3, 2.5]
    tuples = [
        (1, 2),
        (1, 2.0),
        ContactKernelArrays(a, a, a, a),
        ContactKernelArrays(a, readonly, a, np.zeros((2, 2, 6))),
    ]
    values = arrays + scalars + tuples
    for value in values:
        assert aot.type_name(value) == str(numba.typeof(value)), value


def test_the_node_start_imports_no_numba_with_a_current_module_and_does_with_a_stale_one(built, tmp_path):
    seed = int(np.random.default_rng().integers(1 << 30))
    chosen = robots(seed)
    print(f"seed {seed}: {[label for label, _, _ in chosen]}")
    with_module = run(str(built), chosen)
    assert with_module["deferred"], with_module["status"]
    assert not with_module["numba_before"], "numba imported on the node's start path with a current module"
    stale = tmp_path / "stale"
    shutil.copytree(built, stale)
    manifest = json.loads((stale / aot.MANIFEST).read_text())
    first = next(iter(manifest["sources"]))
    manifest["sources"][first] = "0" * 64  # as if that source had changed since the build
    (stale / aot.MANIFEST).write_text(json.dumps(manifest))
    with_stale = run(str(stale), chosen)
    assert not with_stale["deferred"] and "stale" in with_stale["status"], with_stale["status"]
    assert with_stale["numba_before"]
    assert with_module["outputs"] == with_stale["outputs"]  # to the last bit (floats through JSON's repr)
    assert len(with_module["outputs"]) == len(chosen)


@pytest.mark.slow
def test_a_fresh_build_gives_the_same_bits(tmp_path):
    from rnea_ros import aot_build

    print(aot_build.build(tmp_path / "module"))
    seed = int(np.random.default_rng().integers(1 << 30))
    chosen = robots(seed)
    print(f"seed {seed}: {[label for label, _, _ in chosen]}")
    ahead = run(str(tmp_path / "module"), chosen)
    assert ahead["deferred"] and not ahead["numba_before"], ahead["status"]
    assert ahead["outputs"] == run("numba", chosen)["outputs"]
