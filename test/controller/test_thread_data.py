"""rnea_node's computation writes its own thread's ``ModelData`` explicitly (issue 47, item 3, as
Pinocchio's Model/Data): never the data the model's methods keep for the calling thread."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.controller.core import build_live_model
from rnea_ros.controller.settings import Settings
from rnea_ros.controller.state import DesiredPoints
from rnea_ros.controller.torques import compute_outputs
from rnea_ros.testing.reference import ARM_URDF, PinocchioReference, assert_close

ARM = RobotModel.from_urdf(ARM_URDF)


@pytest.mark.parametrize("law", ["inverse_dynamics", "gravity", "none", "computed_torque"])
def test_the_nodes_computation_writes_its_own_threads_data_never_the_models_thread_data(law):
    """The joint_states thread's computation writes ``live.data`` (and a law its own), never the data
    the model's methods give this thread: two threads that share a model never share a buffer."""
    settings = Settings(command_source=law, kp=(20.0,), kd=(2.0,), ct_kp=(100.0,))
    live = build_live_model(ARM_URDF, settings)
    names = live.bound.model.joint_names
    rng = np.random.default_rng(47)
    q, qd = rng.uniform(-1, 1, (2, ARM.nv))
    live.merge_joint_states(names, q, qd, 1.0, settings.state_timeout)
    live.set_desired(DesiredPoints(names, rng.uniform(-1, 1, ARM.nv), q + 0.05, qd - 0.1), now=0.0)
    thread_data = live.bound.model.thread_data().work
    thread_data[:] = np.nan  # written by nothing below, or the outputs' checks would see it
    before = live.data.work.copy()
    outputs = compute_outputs(live, live.inputs_now(0.0, settings), settings)
    assert np.isnan(thread_data).all()
    assert not np.array_equal(live.data.work, before)
    assert np.isfinite(outputs.commands).all() and np.isfinite(outputs.tau).all()
    reference = PinocchioReference(ARM_URDF, ARM)
    zero = np.zeros(ARM.nv)
    assert_close(outputs.gravity, reference.inverse_dynamics(q + 0.05, zero, zero))  # at the desired state
