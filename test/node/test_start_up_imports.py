"""What rnea_node's start does not spend its CPU on before its first answer (issue 45): the node as the
docs start it (`--ros-args --params-file`, Go2 with four contact links, no other process), its imports
listed by Python (PYTHONPROFILEIMPORTTIME) and its phases stamped (RNEA_START_TRACE) on its stderr.

- The IDL code generator that ``rosidl_generator_py``'s ``__init__`` imports (rosidl_parser, lark, em:
  ~30 ms of CPU) is not imported by the time the node has started; the messages' type support is.
- numpy's OpenBLAS starts on one thread (its start on one per core doubled numpy's import), unless the
  user sets its threads.
- ``python -m rnea_ros.compile`` (scripts/setup) writes the package's bytecode: a process that writes
  none (PYTHONDONTWRITEBYTECODE) then compiles none of the node's modules from source (~50 modules,
  0.05-0.15 s of CPU at each start before)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

import rnea_ros
from rnea_ros.demo.closed_loop import stop
from rnea_ros.node.__main__ import BLAS_THREADS
from rnea_ros.testing.reference import robot_urdf
from rnea_ros.testing.ros_harness import ROS_ENV
from rnea_ros.testing.start_up import FEET

pytestmark = pytest.mark.ros

GO2 = "go2_description/urdf/go2.urdf"
STARTED = "rnea_node start started"
START_TIMEOUT = 60.0  # s for the node to build Go2's model (seconds at load 10)
GENERATOR = ("rosidl_generator_py.generate_py_impl", "rosidl_parser.parser", "lark", "em")
RECORD_COMPILED = """
import importlib.machinery, json, sys
compiled = []
from_source = importlib.machinery.SourceFileLoader.source_to_code
def recorded(self, data, path, *args, **kwargs):
    compiled.append(path)
    return from_source(self, data, path, *args, **kwargs)
importlib.machinery.SourceFileLoader.source_to_code = recorded
from rnea_ros.node import __main__ as start
start._kernels_ahead_of_time()
import rnea_ros.node.node
print(json.dumps(compiled))
"""


def go2_parameters(folder: Path) -> Path:
    parameters = {"robot_description": robot_urdf(GO2), "floating_base": True, "contact_links": FEET}
    params = folder / "robot.yaml"
    params.write_text(yaml.safe_dump({"rnea_node": {"ros__parameters": parameters}}))
    return params


def stderr_until_started(folder: Path) -> str:
    """The node's stderr up to its 'started' phase (it is stopped then), imports listed."""
    log = folder / "node.log"
    env = {**os.environ, **ROS_ENV, "RNEA_START_TRACE": "1", "PYTHONPROFILEIMPORTTIME": "1"}
    command = [sys.executable, "-m", "rnea_ros.node", "--ros-args", "--params-file", str(go2_parameters(folder))]
    with log.open("w") as out:
        node = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=out)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline and node.poll() is None and STARTED not in log.read_text():
            time.sleep(0.05)
    finally:
        stop(node)
    text = log.read_text()
    assert STARTED in text, text[-3000:]
    return text[: text.index(STARTED)]


def imported(stderr: str) -> set[str]:
    """The modules of ``-X importtime`` lines (``import time: self | cumulative | name``)."""
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def test_the_node_starts_without_the_idl_code_generator(tmp_path):
    before_started = stderr_until_started(tmp_path)
    modules = imported(before_started)
    assert "rnea_node start model built" in before_started
    assert "rosidl_generator_py.import_type_support_impl" in modules  # every message's type support
    assert "sensor_msgs.msg._joint_state" in modules
    assert not modules & set(GENERATOR), sorted(modules & set(GENERATOR))


def test_the_generator_is_still_there_for_whoever_asks(tmp_path):
    probe = """
import sys
from rnea_ros.node import __main__ as start
start._type_support_without_the_generator()
from std_msgs.msg import Header
Header()
assert "lark" not in sys.modules
from rosidl_generator_py import generate_py, import_type_support
import rosidl_generator_py
print(generate_py.__module__, import_type_support.__module__, "lark" in sys.modules, rosidl_generator_py.__all__)
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    generator, support, lark, names = done.stdout.split(" ", 3)
    assert (generator, support, lark) == (GENERATOR[0], "rosidl_generator_py.import_type_support_impl", "True")
    assert "generate_py" in names


BLAS_PROBE = """
import os
from rnea_ros.node.__main__ import one_blas_thread
one_blas_thread(os.environ)
import numpy
print(len(os.listdir("/proc/self/task")), os.environ["OPENBLAS_NUM_THREADS"])
"""


@pytest.mark.parametrize("users", [None, "2"], ids=["unset", "the user's"])
def test_openblas_starts_on_one_thread_unless_the_user_sets_its_threads(users):
    env = {name: value for name, value in os.environ.items() if name not in BLAS_THREADS}
    if users is not None:
        env["OPENBLAS_NUM_THREADS"] = users
    done = subprocess.run([sys.executable, "-c", BLAS_PROBE], env=env, capture_output=True, text=True, timeout=60)
    threads, setting = done.stdout.split()
    if users is None:
        assert (threads, setting) == ("1", "1")  # numpy's import started no thread
    else:
        assert setting == users


def test_rnea_compile_writes_the_bytecode_of_every_module_the_node_imports(tmp_path):
    from rnea_ros.compile import compile_bytecode

    package = tmp_path / "rnea_ros"
    shutil.copytree(Path(rnea_ros.__file__).resolve().parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"}

    def from_source() -> list[str]:
        command = [sys.executable, "-c", RECORD_COMPILED]
        done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=True)
        paths = json.loads(done.stdout.splitlines()[-1])
        return [path for path in paths if Path(path).is_relative_to(package)]

    assert len(from_source()) > 20  # none written: each start compiles them
    assert compile_bytecode(package)
    assert from_source() == []


def test_rnea_compile_writes_the_bytecode(monkeypatch):
    from rnea_ros import compile as rnea_compile

    written = []
    monkeypatch.setattr(rnea_compile, "compile_bytecode", lambda: written.append(True) or True)
    monkeypatch.setattr(rnea_compile, "compile_ahead_of_time", lambda: None)
    monkeypatch.setattr(rnea_compile, "STEPS", ())
    assert rnea_compile.main() == 0
    assert written == [True]
