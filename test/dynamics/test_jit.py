"""Deferred compilation (rnea_ros.jit), as rnea_node starts: the first answers computed by the kernels
as plain Python without numba imported, then numba's dispatchers put in place everywhere the package
holds a kernel, and the model rebuilt on them gives the same outputs to the last bit.

Each case runs in a fresh process: a process that imported a kernel module without deferring (this
one) never defers."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

DEFERRED_RUN = """
import json, sys, types
import numpy as np
from rnea_ros import jit
jit.defer_compilation()
from rnea_ros.controller.core import RneaCore, build_live_model
from rnea_ros.controller.inputs import BY_TOPIC
from rnea_ros.controller.settings import Settings
from rnea_ros.controller.state import OdometryReading
from rnea_ros.testing.reference import robot_urdf

report = {}
deferred = {id(function) for function, _ in jit._deferred}
urdf = robot_urdf("go2_description/urdf/go2.urdf")
feet = ["FL_foot", "FR_foot", "RL_foot", "RR_foot"]
settings = Settings(floating_base=True, contact_links=tuple(feet), contact_distribution="KIND",
                    future_stamp_tolerance=3600.0, base_timeout=3600.0)
core = RneaCore(settings)
core.load(build_live_model(urdf, settings))
base = OdometryReading(np.array([0.1, -0.2, 0.3, 0.1, 0.2, -0.1, 0.97]), np.array([0.3, -0.1, 0.2, 0.5, -0.4, 0.2]),
                       core.live.bound.model.base_link)
core.receive(BY_TOPIC["base_odometry"], base)
names = core.live.bound.model.joint_names
rng = np.random.default_rng(7)
states = [(rng.uniform(-0.8, 0.8, len(names)), rng.uniform(-2.0, 2.0, len(names))) for _ in range(5)]

def answers(first_stamp):
    outputs = []
    for k, (q, qd) in enumerate(states):
        out = core.joint_states(names, q, qd, True, first_stamp + 0.001 * k, lambda: 0.0)
        fields = [f for f in ("gravity", "commands") if getattr(out, f, None) is not None]
        outputs.append({f: np.asarray(getattr(out, f)).tolist() for f in fields})
    return outputs

report["plain"] = answers(1.0)
report["numba_before"] = "numba" in sys.modules
report["python_entry"] = isinstance(core.live.bound.model.entry_points.inverse_dynamics, types.FunctionType)
report["swapped"] = jit.compile_deferred()
live = core.live
core.load(live.rebound(build_live_model(live.bound.description, settings).bound))
report["compiled"] = answers(2.0)
report["python_entry_after"] = isinstance(core.live.bound.model.entry_points.inverse_dynamics, types.FunctionType)
left = []
for name, module in list(sys.modules.items()):
    if name.startswith("rnea_ros.") and module is not None:
        owners = [module, *(v for v in vars(module).values() if isinstance(v, type) and v.__module__ == name)]
        left += [f"{name}.{key}" for owner in owners for key, value in vars(owner).items() if id(value) in deferred]
report["left"] = left
print(json.dumps(report))
"""


def deferred_run(kind: str) -> dict:
    command = [sys.executable, "-c", DEFERRED_RUN.replace("KIND", kind)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.splitlines()[-1])


@pytest.mark.parametrize("kind", ["minimum_norm", "qp"])
def test_plain_python_first_then_numba_gives_the_same_bits(kind):
    report = deferred_run(kind)
    assert not report["numba_before"], "numba was imported before the kernels were compiled"
    assert report["python_entry"] and not report["python_entry_after"], report
    assert report["swapped"] > 50, report["swapped"]  # every kernel of the library and the controller
    assert report["left"] == [], report["left"]  # no module or class still holds a plain Python kernel
    assert len(report["plain"]) == 5 and report["plain"][0]["gravity"], report["plain"]
    assert report["compiled"] == report["plain"]  # to the last bit: the same operations in the same order
