"""One model from several threads. Batch calls under each numba threading layer (`workqueue`,
numba's fallback without OpenMP or TBB, is not thread-safe and used to abort the process); single
calls on one shared model, each thread with its own data (the kernels release the GIL); a model's
arrays are read-only. The node's two threads: ``test/node/test_threads_live.py``."""

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
    Q, QD, QDD = (rng.uniform(-1, 1, (30_000, model.nv)) for _ in range(3))  # enough work for threads
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


def test_a_model_is_read_only_and_shared_data_is_the_callers():
    import numpy as np

    from rnea_ros.dynamics.model import RobotModel
    from rnea_ros.testing.reference import ARM_URDF

    model = RobotModel.from_urdf(ARM_URDF)
    frame = model.tree.link_frames[model.link_names[-1]]
    for array in (model.joints, model.bodies, model.tree.bodies, model.gravity, model.effort_limits, frame.R):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 1.0
    q = np.full(model.nq, 0.3)
    data = model.create_data()
    np.testing.assert_array_equal(model.gravity_torques(q, data=data), model.gravity_torques(q))
    assert data is not model.thread_data() and data.work is not model.thread_data().work
    on_the_moon = RobotModel.from_urdf(ARM_URDF, gravity=(0.0, 0.0, -1.62))
    with pytest.raises(ValueError, match="create_data"):
        model.inverse_dynamics(q, q, q, data=on_the_moon.create_data())


def test_single_state_calls_on_one_model_from_two_threads_agree_with_one_thread_bit_for_bit():
    """The methods use a data of the calling thread; the kernels release the GIL, so the two threads
    compute at the same time."""
    import threading

    import numpy as np

    from rnea_ros.dynamics.model import RobotModel
    from rnea_ros.testing.legged import SOLO_FEET, SOLO_URDF, solo_standing_pose

    model = RobotModel.from_urdf(SOLO_URDF, floating_base=True)
    rng = np.random.default_rng(1)
    states = []
    for _ in range(1500):
        q = np.r_[
            rng.normal(0, 0.1, 3), 0.0, 0.0, 0.0, 1.0, solo_standing_pose(model.joint_names) + rng.normal(0, 0.3, 12)
        ]
        states.append((q, rng.normal(0, 1, model.nv), rng.normal(0, 1, model.nv)))

    def compute(state) -> bytes:
        q, qd, qdd = state
        tau, g, JT = model.with_contact_terms(q, qd, qdd, None, list(SOLO_FEET))
        parts = (model.inverse_dynamics(q, qd, qdd), model.gravity_torques(q), tau, g, JT)
        return b"".join(part.tobytes() for part in (*parts, model.wrench_jacobian_transpose(q, list(SOLO_FEET))))

    expected = [compute(state) for state in states]
    results: dict[int, list[bytes]] = {}
    start = threading.Barrier(2)

    def run(k: int) -> None:
        start.wait()
        results[k] = [compute(state) for state in (states if k == 0 else states[::-1])]

    threads = [threading.Thread(target=run, args=(k,)) for k in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert results[0] == expected and results[1] == expected[::-1]
