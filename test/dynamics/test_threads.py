"""Batch calls from several threads, one model per thread as the README advises, under each
numba threading layer; `workqueue` (numba's fallback without OpenMP or TBB) is not thread-safe
and used to abort the process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import threading
    import numba
    import numpy as np
    from rnea_ros.dynamics.model import RobotModel
    from rnea_ros.testing.reference import ARM_URDF

    rng = np.random.default_rng(0)
    model = RobotModel.from_urdf(ARM_URDF)
    Q, QD, QDD = (rng.uniform(-1, 1, (3000, model.nv)) for _ in range(3))
    expected = np.array([model.inverse_dynamics(q, qd, qdd) for q, qd, qdd in zip(Q, QD, QDD)])
    failures = []

    def work():
        own = RobotModel.from_urdf(ARM_URDF)
        for _ in range(15):
            if not np.allclose(own.inverse_dynamics(Q, QD, QDD), expected, rtol=0, atol=1e-12):
                failures.append("batch differs from single calls")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    print(numba.threading_layer(), len(failures), sum(t.is_alive() for t in threads))
    """
)


@pytest.mark.parametrize("layer", ["workqueue", "default"])
def test_batch_calls_from_four_threads_agree_with_single_calls(layer):
    env = dict(os.environ)
    if layer != "default":
        env["NUMBA_THREADING_LAYER"] = layer
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    used, failures, alive = done.stdout.split()
    if layer != "default":
        assert used == layer
    assert (failures, alive) == ("0", "0")
