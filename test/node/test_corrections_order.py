"""A corrections file naming a joint the model lacks: one rule whichever comes first, the model or
the file (issue 33.6): refused whole, with the name and the model's nearest, and the model runs
without it (no ROS)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import yaml

from rnea_ros.controller.core import RneaCore, build_live_model
from rnea_ros.controller.settings import Settings
from rnea_ros.dynamics.corrections import CorrectionsError
from rnea_ros.testing.reference import ARM_URDF

TYPO = {"version": 1, "joints": {"joint1": {"offset": 5.0}, "jiont2": {"offset": 5.0}}}
REASON = r"\['jiont2'\] \(did you mean 'joint2' for 'jiont2'\?\)"


@pytest.fixture
def typo(tmp_path):
    path = tmp_path / "corrections.yaml"
    path.write_text(yaml.safe_dump(TYPO))
    return str(path)


def torques(core: RneaCore) -> np.ndarray:
    """τ at a still pose (the joints' offsets included)."""
    q = np.full(len(core.live.bound.model.joint_names), 0.2)
    return core.joint_states(core.live.bound.model.joint_names, q, np.zeros_like(q), True, 1.0, lambda: 1.0).tau


def uncorrected() -> np.ndarray:
    core = RneaCore(Settings(future_stamp_tolerance=3600.0))
    core.load(build_live_model(ARM_URDF, core.settings))
    return torques(core)


def test_the_model_first_then_the_file_refused_whole(typo):
    core = RneaCore(Settings(future_stamp_tolerance=3600.0))
    core.load(build_live_model(ARM_URDF, core.settings))
    with pytest.raises(CorrectionsError, match=REASON):
        core.set_corrections(typo)
    assert core.corrections is None and core.live.bound.corrected.corrections is None
    np.testing.assert_array_equal(torques(core), uncorrected())  # joint1's offset not applied either


def test_the_file_first_then_the_model_refused_whole(typo):
    core = RneaCore(Settings(future_stamp_tolerance=3600.0))
    core.set_corrections(typo)  # no model yet: nothing to check it against
    refused = core.load(build_live_model(ARM_URDF, core.settings))
    assert len(refused) == 1 and re.search(REASON, refused[0])
    assert core.corrections is None and core.live.bound.corrected.corrections is None
    np.testing.assert_array_equal(torques(core), uncorrected())  # joint1's offset not applied either


def test_a_file_that_fits_changes_the_torques_in_either_order(tmp_path):
    path = tmp_path / "corrections.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "joints": {"joint1": {"offset": 5.0}}}))
    for model_first in (True, False):
        core = RneaCore(Settings(future_stamp_tolerance=3600.0))
        if model_first:
            core.load(build_live_model(ARM_URDF, core.settings))
        core.set_corrections(str(path))
        assert core.load(build_live_model(ARM_URDF, core.settings)) == []
        np.testing.assert_allclose(torques(core) - uncorrected(), np.r_[5.0, np.zeros(7)], atol=1e-12)
