"""A live parameter change as one transaction without ROS (issue 47): refused with the reason and
nothing changed, or accepted whole with the model the node runs on; rclpy's result is the node's."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from rnea_ros.controller.core import RneaCore, build_live_model
from rnea_ros.controller.live_parameters import ParameterChange, change_parameters
from rnea_ros.controller.loader import ModelLoader
from rnea_ros.controller.settings import Settings
from rnea_ros.testing.reference import ARM_URDF


def arm_core() -> tuple[RneaCore, ModelLoader]:
    core = RneaCore(Settings(future_stamp_tolerance=3600.0))
    loader = ModelLoader(lambda description: build_live_model(description, core.settings), core.load, print)
    core.load(build_live_model(ARM_URDF, core.settings))
    return core, loader


def corrections_file(tmp_path, joints: dict) -> str:
    path = tmp_path / "corrections.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "joints": joints}))
    return str(path)


def test_a_refused_value_changes_nothing_and_says_why():
    core, loader = arm_core()
    settings, live = core.settings, core.live
    change = change_parameters(core, loader, {"kp": [1.0, 2.0]})  # 2 gains for the arm's 8 joints
    assert not change.accepted and "kp" in change.reason and change.bound is None
    assert core.settings is settings and core.live is live


def test_a_description_cannot_be_emptied():
    core, loader = arm_core()
    change = change_parameters(core, loader, {"robot_description": ""})
    assert change == ParameterChange("robot_description cannot be emptied at run time")


def test_corrections_that_do_not_fit_are_refused_whole_with_the_kp_beside_them(tmp_path):
    core, loader = arm_core()
    settings, live = core.settings, core.live
    path = corrections_file(tmp_path, {"jiont2": {"offset": 5.0}})
    change = change_parameters(core, loader, {"corrections_file": path, "kp": [10.0]})
    assert not change.accepted and change.reason.endswith("(previous corrections kept)"), change.reason
    assert core.settings is settings and core.live is live and core.corrections is None


def test_accepted_whole_with_the_model_the_node_runs_on(tmp_path):
    core, loader = arm_core()
    path = corrections_file(tmp_path, {"joint1": {"offset": 0.5}})
    change = change_parameters(core, loader, {"corrections_file": path, "kp": [10.0]})
    assert change.accepted and change.reason is None
    assert change.bound is core.live.bound and core.live.bound.corrected.corrections is core.corrections
    assert core.settings.kp == (10.0,) and core.settings.corrections_file == path
    assert core.live.bound.corrected.corrections.joints["joint1"].offset == 0.5


def test_a_gravity_change_rebuilds_the_model_loaded_with_its_corrections(tmp_path):
    core, loader = arm_core()
    path = corrections_file(tmp_path, {"joint1": {"offset": 0.5}})
    assert change_parameters(core, loader, {"corrections_file": path}).accepted
    change = change_parameters(core, loader, {"gravity": [0.0, 0.0, -1.62]})
    assert change.accepted and change.bound is core.live.bound
    np.testing.assert_array_equal(core.live.bound.model.gravity, [0.0, 0.0, -1.62])
    assert core.live.bound.corrected.corrections is core.corrections is not None


@pytest.mark.parametrize("description", ["<robot name='broken'>", "not xml"])
def test_a_description_that_cannot_be_built_is_refused_and_the_model_kept(description):
    core, loader = arm_core()
    live = core.live
    change = change_parameters(core, loader, {"robot_description": description})
    assert not change.accepted and change.reason.startswith("the model cannot be built"), change.reason
    assert core.live is live
