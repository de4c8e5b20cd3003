"""Hints that point at the actual fix (issue 45), without ROS: the /clock hint names rnea_sim's
``publish_clock``; a params file keyed for another node names the keys it holds; a file path given
as robot_description is recognised; a joint_names map written the wrong way round is said to be
reversed; a namespace other than the driver's names the joint_states seen elsewhere."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from rnea_ros import RobotModel
from rnea_ros.controller import advice
from rnea_ros.controller.core import RneaCore, build_live_model
from rnea_ros.controller.settings import Settings
from rnea_ros.controller.state import ConfigurationError, InvalidMessageError
from rnea_ros.testing.reference import ARM_URDF, EXAMPLE_ARM

ARM = RobotModel.from_urdf(ARM_URDF)


def test_the_clock_hint_names_the_simulators_publish_clock():
    core = RneaCore(Settings())
    core.load(build_live_model(ARM_URDF, Settings()))
    zeros = np.zeros(ARM.nv)
    with pytest.raises(InvalidMessageError) as rejection:
        core.joint_states(ARM.joint_names, zeros, zeros, True, 1.75e9, lambda: 0.0)  # use_sim_time, no /clock
    said = str(rejection.value)
    assert "publish_clock" in said and "rnea_sim with use_sim_time" not in said, said


def test_a_params_file_keyed_for_another_node_names_the_keys_found(tmp_path):
    path = tmp_path / "robot.yaml"
    path.write_text(yaml.safe_dump({"/arm/rnea_node": {"ros__parameters": {"robot_description": ARM_URDF}}}))
    files = advice.params_files(["rnea_node", "--ros-args", "--params-file", str(path), "-r", "__ns:=/x"])
    assert files == [str(path)]
    keys = advice.description_keys(files, "/rnea_node")
    assert "['/arm/rnea_node']" in keys and "'/rnea_node'" in keys and "'/**'" in keys, keys
    said = advice.no_description("/robot_description", 0, True, keys)
    assert "made without --with-description" not in said and "/arm/rnea_node" in said, said
    # a file that really sets no robot_description keeps the old hint
    path.write_text(yaml.safe_dump({"/**": {"ros__parameters": {"kp": [1.0]}}}))
    assert advice.description_keys(files, "/rnea_node") is None
    assert "made without --with-description" in advice.no_description("/robot_description", 0, True, None)
    assert advice.description_keys([str(tmp_path / "missing.yaml")], "/rnea_node") is None


def test_a_file_path_given_as_robot_description_is_recognised():
    said = advice.file_path_given(str(EXAMPLE_ARM))
    assert "an existing file" in said and "not a URDF's text" in said and "--params-file" in said, said
    assert "a file name" in advice.file_path_given("robots/missing_arm.urdf")
    assert advice.file_path_given(ARM_URDF) is None
    assert advice.file_path_given("") is None
    assert advice.file_path_given("robot") is None  # no path: the XML parser's error says what is wrong


def test_a_joint_names_map_written_the_wrong_way_round_is_said_to_be_reversed():
    reversed_map = tuple(f"{name}:=axis_{k}" for k, name in enumerate(ARM.joint_names))  # urdf:=driver
    with pytest.raises(ConfigurationError, match="wrong way round") as error:
        build_live_model(ARM_URDF, Settings(joint_names=reversed_map))
    said = str(error.value)
    assert f"'axis_0:={ARM.joint_names[0]}'" in said and "did you mean" not in said, said
    with pytest.raises(ConfigurationError, match="did you mean 'joint1'"):  # a typo is still a typo
        build_live_model(ARM_URDF, Settings(joint_names=("a1:=joint_1",)))


def test_a_namespace_other_than_the_drivers_names_the_publishers_seen():
    said = advice.namespace_hint("/arm/joint_states", [("/joint_states", ["/rnea_sim"])])
    assert "'/joint_states' (from ['/rnea_sim'])" in said and "-r joint_states:=/joint_states" in said, said
    assert "__ns" in said
    assert advice.namespace_hint("/arm/joint_states", []) is None
