"""Markers (declared in setup.cfg, [tool:pytest]), each declared in the test file that needs it:

- ``ros``: needs ROS 2 (message packages, rclpy, nodes over loopback DDS with a private
  ROS_DOMAIN_ID from ``rnea_ros.testing.domain``). A file that needs it says so at module level,
  ``pytestmark = pytest.mark.ros`` (or a list holding it).
- ``slow``: over the time limit below on its own (marked at module level or on the test).

``pytest -m "not ros and not slow"`` is the fast inner loop. These rules keep it fast and honest:

- A file is not even imported when its module-level marks alone deselect it (``-m "not ros"`` and
  ``pytestmark = pytest.mark.ros``), nor, without rclpy, when it is marked ``ros``: this hook reads
  the marks from the file's syntax tree. So the inner loop never imports rclpy through a ROS file.
- A session whose ``-m`` deselects every ``ros`` test fails if rclpy was imported all the same (a
  test or helper not marked ``ros`` that imports it).
- A test marked ``ros`` that fails is run once more (``ROS_RERUNS``), its CPU counted afresh.
- A test not marked ``slow`` fails when it takes over ``unmarked_test_limit`` seconds of CPU (its
  process's and its waited-for children's, setup included: the machine's load does not change
  it), or ``unmarked_test_wall_factor`` times that in wall-clock time (a test that waits).

Tests run the batch kernel (``rnea_batch``, split over numba's threads) on one thread in this
process: on this 2-core machine shared with other work, each call's second thread waits to be
scheduled, and rnea_excite's 200-iteration design took 5-14 s of CPU on two threads against 0.5 s
on one (load ~10). The rows, hence the results, are the same; test/dynamics/test_threads.py runs
the kernel on every thread in subprocesses, whose environment this leaves alone.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib.util
import itertools
import os
import sys
import time
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
from _pytest.mark.expression import Expression

try:
    import numba
except ModuleNotFoundError as missing:  # a checkout without the project's .venv, or the venv not active
    print(
        f"pytest: {missing.name} is not installed for {sys.executable}: run scripts/test (it sets up .venv), "
        "or scripts/setup --dev, then source scripts/env, then pytest",
        file=sys.stderr,
    )
    raise SystemExit(pytest.ExitCode.USAGE_ERROR) from None

try:
    ROS_AVAILABLE = importlib.util.find_spec("rclpy") is not None
except ImportError:
    ROS_AVAILABLE = False

MARKS = ("ros", "slow")
# a `ros` test (processes over DDS, often a closed loop in real time) that fails is run once more
# (pytest-rerunfailures; the summary counts it as "rerun"): on 2 cores shared with other work, a CI
# run failed 4 of ~300 such tests on timing alone; a broken feature fails both runs
ROS_RERUNS = 1


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("unmarked_test_limit", "CPU seconds a test not marked slow may take", default="10")
    parser.addini("unmarked_test_wall_factor", "its wall-clock limit, as a multiple of the CPU one", default="10")


def pytest_configure(config: pytest.Config) -> None:
    numba.set_num_threads(1)  # this thread's batch calls: see the module's docstring


def module_marks(path: Path) -> set[str]:
    """The names in ``MARKS`` that the module's ``pytestmark`` assignment holds."""
    for statement in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(statement, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "pytestmark" for target in statement.targets
        ):
            return {node.attr for node in ast.walk(statement.value) if isinstance(node, ast.Attribute)} & set(MARKS)
    return set()


def mark_matches(declared: set[str], others: list[str], truth: dict[str, bool], name: str, /, **_: object) -> bool:
    """A mark matcher for ``Expression.evaluate`` that notes every name it is asked about in ``others``."""
    if name not in declared and name not in others:
        others.append(name)
    return name in declared or truth.get(name, False)


def selectable(expression: Expression, declared: set[str]) -> bool:
    """True when some test carrying the marks ``declared`` (and any others) can match ``expression``:
    tries every truth assignment of the other names the expression reads, learning them as it goes."""
    others: list[str] = []
    while True:
        known = len(others)
        for values in itertools.product((False, True), repeat=known):
            truth = dict(zip(others, values, strict=False))
            if expression.evaluate(functools.partial(mark_matches, declared, others, truth)):
                return True
        if len(others) == known:
            return False


def mark_expression(config: pytest.Config) -> Expression | None:
    text = config.getoption("markexpr", default="")
    return Expression.compile(text) if text else None


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    marks = module_marks(collection_path)
    if "ros" in marks and not ROS_AVAILABLE:
        return True
    expression = mark_expression(config)
    return True if marks and expression is not None and not selectable(expression, marks) else None


def pytest_sessionfinish(session: pytest.Session) -> None:
    expression = mark_expression(session.config)
    if expression is None or selectable(expression, {"ros"}) or "rclpy" not in sys.modules:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line("rclpy was imported by a session that deselects every `ros` test", red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


def cpu_seconds() -> float:
    """This process's CPU time and that of its children it has waited for."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


class Clock:
    """CPU and wall-clock time spent by one test, its setup included."""

    def __init__(self) -> None:
        self.cpu = 0.0
        self.wall = 0.0

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        cpu, wall = cpu_seconds(), time.perf_counter()
        try:
            yield
        finally:
            self.cpu += cpu_seconds() - cpu
            self.wall += time.perf_counter() - wall


CLOCKS = pytest.StashKey[Clock]()
NEAR_LIMIT = pytest.StashKey[list[tuple[float, str]]]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    item.stash[CLOCKS] = Clock()  # a rerun starts its own count
    with item.stash[CLOCKS].running():
        return (yield)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.pluginmanager.hasplugin("rerunfailures"):
        return
    for item in items:
        if item.get_closest_marker("ros") and not item.get_closest_marker("flaky"):
            item.add_marker(pytest.mark.flaky(reruns=ROS_RERUNS))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    with item.stash.setdefault(CLOCKS, Clock()).running():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Generator[None, pytest.TestReport, None]:
    report = yield
    clock = item.stash.get(CLOCKS, None)
    if report.when != "call" or not report.passed or clock is None or item.get_closest_marker("slow"):
        return report
    limit = float(item.config.getini("unmarked_test_limit"))
    wall_limit = limit * float(item.config.getini("unmarked_test_wall_factor"))
    if clock.cpu > limit / 2:
        item.config.stash.setdefault(NEAR_LIMIT, []).append((clock.cpu, item.nodeid))
    if clock.cpu > limit or clock.wall > wall_limit:
        report.outcome = "failed"
        report.longrepr = (
            f"not marked slow, yet took {clock.cpu:.1f} s of CPU (limit {limit:g} s) and {clock.wall:.1f} s "
            f"of wall-clock time (limit {wall_limit:g} s), setup included: mark it slow or make it smaller"
        )
    return report


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """Unmarked tests over half the CPU limit: the ones a busier run may push over it."""
    near = sorted(config.stash.get(NEAR_LIMIT, []), reverse=True)
    if near:
        terminalreporter.section("unmarked tests over half the CPU limit")
        for cpu, nodeid in near:
            terminalreporter.write_line(f"{cpu:5.1f} s  {nodeid}")
