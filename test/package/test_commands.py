"""scripts/setup makes every console script that setup.py declares, each running that entry point."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = ROOT / ".venv" / "bin"


def declared_console_scripts() -> dict[str, str]:
    """setup.py's console scripts, name -> "module:function", read from its syntax tree."""
    calls = [node for node in ast.walk(ast.parse((ROOT / "setup.py").read_text())) if isinstance(node, ast.Call)]
    (setup_call,) = [call for call in calls if getattr(call.func, "id", "") == "setup"]
    (entry_points,) = [ast.literal_eval(k.value) for k in setup_call.keywords if k.arg == "entry_points"]
    return dict((part.strip() for part in line.split("=")) for line in entry_points["console_scripts"])


def test_setup_py_declares_the_documented_commands():
    assert {"rnea_node", "rnea_sim", "rnea_analyze", "rnea_gains", "rnea_play", "rnea_demo", "rnea_excite"} <= set(
        declared_console_scripts()
    )


def test_the_overview_lists_every_command():
    """docs/overview.md names every console script where it lists them: in .venv/bin and in a workspace."""
    text = (ROOT / "docs/overview.md").read_text()
    venv = text[text.index("put the commands in `.venv/bin`") :].split("\n\n")[0]
    workspace = text[text.index("the console scripts") :].split("\n\n")[0]
    for listing in (venv, workspace):
        missing = [name for name in declared_console_scripts() if f"`{name}`" not in listing]
        assert not missing, f"docs/overview.md does not list {missing}: {listing}"


def test_the_own_robot_block_checks_the_limits_with_the_urdf():
    """rnea_play in docs/own-robot.md's tested block is given the URDF: the joints' limits are checked."""
    text = (ROOT / "docs/own-robot.md").read_text()
    block = text[text.index("<!-- tested: test/package/test_walkthrough.py") :].split("```")[1]
    (play,) = [line for line in block.splitlines() if line.startswith("rnea_play")]
    assert '--urdf "$ROBOT"' in play, play


@pytest.mark.parametrize("name", sorted(declared_console_scripts()))
def test_scripts_setup_made_the_command(name):
    command = VENV_BIN / name
    assert command.is_file(), f"{command} is missing: run scripts/setup"
    text = command.read_text()
    module, function = declared_console_scripts()[name].split(":")
    assert "Made by scripts/setup" in text, f"{command} was not made by scripts/setup"
    assert f"from {module} import {function}" in text, f"{command} does not run {module}:{function}: run scripts/setup"


def test_rnea_excite_runs():
    result = subprocess.run([str(VENV_BIN / "rnea_excite"), "--help"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: rnea_excite")


def test_the_activated_venv_imports_the_library_outside_the_checkout(tmp_path):
    """The README's snippet after `source .venv/bin/activate` alone, from another folder (no scripts/env)."""
    code = "from rnea_ros import RobotModel; print(RobotModel.__name__)"
    script = f'source "{ROOT}/.venv/bin/activate" && python -c "{code}"'
    environment = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    result = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=environment, capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == "RobotModel", result.stderr
