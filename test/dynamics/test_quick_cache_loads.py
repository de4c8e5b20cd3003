"""``compiled.quick_cache_loads`` (issue 45, rnea_node's first answer in a second): kernels loaded from
numba's cache without numba's compiler set-up, in a fresh interpreter as rnea_node's start loads them.

What it shows: the loads import neither scipy.linalg nor numba's implementation registries (the
~0.5 s of CPU the start saves), the live model of Go2 with four foot contacts computes Pinocchio's
numbers, and after ``finish_compiler_set_up`` numba is whole again: its BLAS flag as numba sets it,
and a new kernel that needs BLAS compiles and runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.testing.reference import PinocchioReference, assert_close, random_state, robot_urdf

pytest.importorskip("pinocchio")

# slow: a fresh interpreter loading numba and Go2's kernels (~2 s of CPU), compiling them (~30 s)
# when numba's cache is cold (a fresh clone before `python -m rnea_ros.compile`)
pytestmark = pytest.mark.slow

GO2 = "go2_description/urdf/go2.urdf"
FEET = ["FL_foot", "FR_foot", "RL_foot", "RR_foot"]
SCRIPT = """
import json, sys
import numpy as np
from rnea_ros.controller.core import build_live_model
from rnea_ros.controller.settings import settings_from
from rnea_ros.dynamics.compiled import finish_compiler_set_up, quick_cache_loads
from rnea_ros.testing.reference import robot_urdf

states = json.loads(sys.argv[1])
settings = settings_from({"floating_base": True, "contact_links": sys.argv[3:]})
with quick_cache_loads():  # as rnea_node's start builds its model
    live = build_live_model(robot_urdf(sys.argv[2]), settings)
    model = live.bound.model
    out = {"tau": [], "g": []}
    for q, v, a in states:
        out["tau"].append(model.inverse_dynamics(np.array(q), np.array(v), np.array(a)).tolist())
        out["g"].append(model.gravity_torques(np.array(q)).tolist())
# the last three: what numba's target refresh imports and nothing else here does
heavy = ("scipy.linalg", "numba.np.random.generator_core", "numba.np.polynomial.polynomial_core", "numba.cpython.heapq")
out["imported while loading"] = sorted(name for name in heavy if name in sys.modules)
finish_compiler_set_up()
out["blas flag"] = sys.modules["numba.np.arraymath"]._HAVE_BLAS
import numba

@numba.njit
def product(m, x):
    return m @ x

out["blas kernel"] = product(np.arange(9.0).reshape(3, 3), np.ones(3)).tolist()
print(json.dumps(out))
"""


def test_kernels_loaded_quickly_compute_pinocchios_numbers_and_numba_is_whole_after():
    urdf = robot_urdf(GO2)
    model = RobotModel.from_urdf(urdf, floating_base=True)
    reference = PinocchioReference(urdf, model)
    rng = np.random.default_rng(45)
    states = [tuple(x.tolist() for x in random_state(model, rng)) for _ in range(3)]
    env = {**os.environ}
    env.pop("NUMBA_DISABLE_JIT", None)
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(states), GO2, *FEET],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.splitlines()[-1])
    assert out["imported while loading"] == []
    for (q, v, a), tau, g in zip(states, out["tau"], out["g"], strict=True):
        q, v, a = np.array(q), np.array(v), np.array(a)
        assert_close(np.array(tau), reference.inverse_dynamics(q, v, a))
        assert_close(np.array(g), reference.gravity_torques(q))
    assert out["blas flag"] is True  # scipy is installed: as numba sets it
    assert out["blas kernel"] == [3.0, 12.0, 21.0]
