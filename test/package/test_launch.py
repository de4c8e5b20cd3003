"""The launch files, run against a stand-in of ROS's launch API (launch and launch_ros are not
installable here): what they hand to the node for given arguments, and the errors a user sees."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import pytest

from rnea_ros.description import DescriptionError, read_description, xacro_mappings

ROOT = Path(__file__).resolve().parents[2]
ARM = ROOT / "rnea_ros/demo/robots/example_arm.urdf"


class LaunchConfiguration:
    def __init__(self, name: str) -> None:
        self.name = name

    def perform(self, context: dict) -> str:
        return context[self.name]


def stand_in_modules(share: Path) -> dict[str, types.ModuleType]:
    def module(name: str, **attributes) -> types.ModuleType:
        made = types.ModuleType(name)
        made.__dict__.update(attributes)
        return made

    return {
        "ament_index_python.packages": module(
            "ament_index_python.packages", get_package_share_directory=lambda _: str(share)
        ),
        "launch": module("launch", LaunchDescription=list),
        "launch.actions": module(
            "launch.actions",
            DeclareLaunchArgument=lambda name, **kw: ("argument", name, kw.get("default_value", "")),
            OpaqueFunction=lambda function: ("opaque", function),
        ),
        "launch.substitutions": module("launch.substitutions", LaunchConfiguration=LaunchConfiguration),
        "launch_ros.actions": module("launch_ros.actions", Node=lambda **kw: kw),
    }


def launch(name: str, monkeypatch, **arguments) -> list[dict]:
    """The nodes ``launch/<name>`` starts with ``arguments`` (the others at their defaults)."""
    for module_name, module in stand_in_modules(ROOT).items():
        monkeypatch.setitem(sys.modules, module_name, module)
    spec = importlib.util.spec_from_file_location(f"launch_file_{name}", ROOT / "launch" / name)
    launch_file = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launch_file)
    description = launch_file.generate_launch_description()
    context = {entry[1]: entry[2] for entry in description if entry[0] == "argument"}
    context.update(arguments)
    (function,) = [entry[1] for entry in description if entry[0] == "opaque"]
    return function(context)


def test_rnea_launch_remaps_effort_commands_and_takes_use_sim_time(monkeypatch):
    (node,) = launch("rnea.launch.py", monkeypatch, urdf=str(ARM), effort_commands="/effort_controller/commands",
                     use_sim_time="true")  # fmt: skip
    assert node["remappings"] == [("effort_commands", "/effort_controller/commands")]
    assert {"use_sim_time": True} in node["parameters"]
    assert any(isinstance(p, dict) and "<robot" in p.get("robot_description", "") for p in node["parameters"])
    (default,) = launch("rnea.launch.py", monkeypatch)
    assert default["remappings"] == [("effort_commands", "effort_commands")]
    assert {"use_sim_time": False} in default["parameters"]
    assert not any(isinstance(p, dict) and "robot_description" in p for p in default["parameters"])  # the topic


def test_a_malformed_xacro_argument_says_what_the_form_is(monkeypatch, tmp_path):
    xacro_file = tmp_path / "robot.urdf.xacro"
    xacro_file.write_text(ARM.read_text())
    with pytest.raises(DescriptionError, match=r"name:=value pairs .* got 'prefix'"):
        launch("rnea.launch.py", monkeypatch, urdf=str(xacro_file), xacro_args="prefix")
    assert xacro_mappings("prefix:=left_ use_sim:=true") == {"prefix": "left_", "use_sim": "true"}
    assert "<robot" in read_description(xacro_file, "prefix:=left_")


def test_description_errors_name_the_file():
    with pytest.raises(DescriptionError, match="no robot description file"):
        read_description("/nonexistent/robot.urdf")
    with pytest.raises(DescriptionError, match=r"not a \.xacro file"):
        read_description(ARM, "a:=1")


def test_sim_launch_wires_the_node_to_the_simulated_controller(monkeypatch):
    sim, node = launch("sim.launch.py", monkeypatch, urdf=str(ARM))
    assert node["remappings"] == [("effort_commands", "effort_controller/commands")]
    assert sim["executable"] == "rnea_sim" and node["executable"] == "rnea_node"
