"""The rooms keep to what they may import (docs/development.md, "Rooms and floors").

A room is a subpackage of rnea_ros or one of its top-level modules; the rooms stand on floors
(``FLOORS``), and a room imports only rooms on floors below its own: no arrow runs up or sideways,
so there is no circle. The text diagram in docs/development.md is drawn from the same data
(``python test/package/test_layout.py`` prints it)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "rnea_ros"
DEVELOPMENT_MD = PACKAGE.parent / "docs" / "development.md"
ROS = {"rclpy", "std_msgs", "sensor_msgs", "geometry_msgs", "trajectory_msgs", "diagnostic_msgs", "nav_msgs"}
ROS |= {"rcl_interfaces", "builtin_interfaces", "launch", "launch_ros", "ament_index_python", "rosgraph_msgs"}
ROS |= {"control_msgs", "action_msgs"}  # the FollowJointTrajectory action (interfaces/control_msgs)
# node/ is the ROS edge only (its dunder files aside): the logic is controller/'s, tested without ROS.
MAX_NODE_MODULES = 5

# Top floor first. A room may import the rooms of the floors below its own, never one of its own
# floor or above.
FLOORS = (
    ("testing",),  # helpers of the tests and benchmarks, never used at run time
    ("demo", "generate_parameters", "compile"),
    ("node", "simulation", "aot_build"),  # the two ROS nodes; the node's kernels compiled ahead of time
    ("analysis", "plumbing", "controller"),  # offline analysis; the ROS plumbing both nodes share; the node's logic
    ("dynamics", "motion", "description", "parameter_spec"),  # no ROS
)
MAX_CLASS_LINES = 250
# module circles (type-only imports counted) while they are being removed: keep this set empty
CIRCLES_BEING_REMOVED: set[frozenset[str]] = set()
# classes over the limit while they are being split: keep this set empty
BEING_SPLIT: set[str] = set()


def imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module if node.module.startswith("rnea_ros") else node.module.split(".")[0])
    return roots


# --- rooms and floors ----------------------------------------------------------------------------
def modules() -> list[Path]:
    """Every module of the package but the dunder files (``__init__``, ``__main__``)."""
    return sorted(path for path in PACKAGE.rglob("*.py") if not path.name.startswith("__"))


def room_of(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def rooms() -> set[str]:
    subpackages = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    return subpackages | {path.stem for path in PACKAGE.glob("*.py") if not path.name.startswith("__")}


def imported_rooms(path: Path) -> set[str]:
    """The rooms ``path`` imports (anywhere in it, functions included); ``rnea_ros`` itself is the
    library's public API, re-exported from ``dynamics``."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "rnea_ros":
            names = [f"rnea_ros.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "rnea_ros":
                found.add(parts[1] if len(parts) > 1 and parts[1] in rooms() else "dynamics")
    return found


def room_graph() -> dict[str, set[str]]:
    """room → the other rooms it imports, from the code."""
    graph: dict[str, set[str]] = {room: set() for room in rooms()}
    for path in modules() + sorted(PACKAGE.glob("*/__init__.py")):
        room = room_of(path) if path.name != "__init__.py" else path.parent.name
        graph[room] |= imported_rooms(path) - {room}
    return graph


def floor_of(room: str) -> int:
    """0 for the lowest floor."""
    return next(len(FLOORS) - 1 - k for k, floor in enumerate(FLOORS) if room in floor)


def diagram() -> str:
    """The floors, top first, each room with the rooms it imports."""
    graph = room_graph()
    width = max(len(room) for floor in FLOORS for room in floor)
    lines = []
    for k, floor in enumerate(FLOORS):
        for i, room in enumerate(floor):
            label = str(len(FLOORS) - k) if i == 0 else ""
            arrows = f" → {', '.join(sorted(graph[room], key=lambda r: (-floor_of(r), r)))}" if graph[room] else ""
            lines.append(f"{label:>2}  {room:<{width}}{arrows}".rstrip())
    return "\n".join(lines)


def test_every_room_stands_on_one_floor():
    placed = [room for floor in FLOORS for room in floor]
    assert len(placed) == len(set(placed)), "a room on two floors"
    assert set(placed) == rooms(), f"not on a floor: {rooms() - set(placed)}; no such room: {set(placed) - rooms()}"


def test_no_arrow_runs_up_or_sideways():
    wrong = [
        f"{room} (floor {floor_of(room) + 1}) imports {other} (floor {floor_of(other) + 1})"
        for room, imported in sorted(room_graph().items())
        for other in sorted(imported)
        if floor_of(other) >= floor_of(room)
    ]
    assert not wrong, "\n".join(wrong)


def test_no_circle():
    graph = room_graph()
    done: set[str] = set()

    def visit(room: str, path: tuple[str, ...]) -> None:
        assert room not in path, "circle: " + " → ".join((*path[path.index(room) :], room))
        if room not in done:
            for other in sorted(graph[room]):
                visit(other, (*path, room))
            done.add(room)

    for room in sorted(graph):
        visit(room, ())


def module_graph() -> dict[str, set[str]]:
    """module (``room/name.py``, a package's ``room/__init__.py``) → the package's modules it imports,
    anywhere in it, ``if TYPE_CHECKING:`` blocks included; ``from package import module`` imports that
    module (and not the package's ``__init__``)."""
    paths = {path: path.relative_to(PACKAGE) for path in PACKAGE.rglob("*.py")}
    by_name = {".".join(("rnea_ros", *relative.with_suffix("").parts)): str(relative) for relative in paths.values()}
    by_name = {name.removesuffix(".__init__"): relative for name, relative in by_name.items()}
    graph = {}
    for path, relative in paths.items():
        package = ".".join(("rnea_ros", *relative.parent.parts))
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in by_name else base for a in node.names]
            else:
                continue
            found |= {by_name[name] for name in names if name in by_name}
        graph[str(relative)] = found - {str(relative)}
    return graph


def module_circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The modules that reach one another (strongly connected, more than one), each circle once."""
    reach = {module: set() for module in graph}
    for module in graph:
        stack = list(graph[module])
        while stack:
            other = stack.pop()
            if other not in reach[module]:
                reach[module].add(other)
                stack.extend(graph[other])
    circles = {frozenset({m, *(o for o in reach[m] if m in reach[o])}) for m in graph if m in reach[m]}
    return sorted(circles, key=sorted)


def test_module_circles_are_found():
    graph = {"a.py": {"b.py"}, "b.py": {"c.py"}, "c.py": {"a.py"}, "d.py": {"a.py"}}
    assert module_circles(graph) == [frozenset({"a.py", "b.py", "c.py"})]
    assert module_circles({"a.py": {"b.py"}, "b.py": set()}) == []


def test_no_module_circle_even_among_type_only_imports():
    circles = set(module_circles(module_graph()))
    new = [sorted(circle) for circle in circles - CIRCLES_BEING_REMOVED]
    assert not new, f"import circles: {new}"
    assert not CIRCLES_BEING_REMOVED - circles, f"gone: remove {CIRCLES_BEING_REMOVED - circles} from the set"


def test_the_package_itself_imports_the_library_only():
    assert imported_rooms(PACKAGE / "__init__.py") == {"dynamics"}


def test_the_docs_draw_the_floors_from_the_code():
    assert f"```text\n{diagram()}\n```" in DEVELOPMENT_MD.read_text(), (
        "docs/development.md's diagram differs from the code; `python test/package/test_layout.py` prints it:\n"
        + diagram()
    )


def documented_modules() -> set[str]:
    """The modules the rooms table of docs/development.md names: in a room's row (`room/`), each
    `module.py` without a slash; a top-level module's row (`module.py`) names itself."""
    named = set()
    for line in DEVELOPMENT_MD.read_text().splitlines():
        row = re.match(r"\| `([a-z_]+)(/|\.py)` \|", line)
        if row is None:
            continue
        room, kind = row.groups()
        if kind == ".py":
            named.add(f"{room}.py")
        else:
            named |= {f"{room}/{name}" for name in re.findall(r"`([a-z_]+\.py)`", line)}
    return named


def test_the_docs_table_names_every_module_and_no_other():
    actual = {str(path.relative_to(PACKAGE)) for path in modules()}
    documented = documented_modules()
    assert not actual - documented, f"not in docs/development.md's rooms table: {sorted(actual - documented)}"
    assert not documented - actual, (
        f"in docs/development.md's rooms table, no such module: {sorted(documented - actual)}"
    )


def classes() -> list[tuple[str, int]]:
    found = []
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                found.append((f"{path.relative_to(PACKAGE)}:{node.name}", node.end_lineno - node.lineno + 1))
    return found


def test_every_class_is_at_most_250_lines():
    over = {name: lines for name, lines in classes() if lines > MAX_CLASS_LINES}
    assert not set(over) - BEING_SPLIT, f"classes over {MAX_CLASS_LINES} lines: {over}"
    assert not BEING_SPLIT - set(over), f"split already: remove {BEING_SPLIT - set(over)} from BEING_SPLIT"


# --- what each room may import besides rnea_ros --------------------------------------------------
@pytest.mark.parametrize("path", sorted((PACKAGE / "dynamics").glob("*.py")), ids=lambda p: p.name)
def test_dynamics_imports_numpy_numba_lxml_urdf_parser_only(path):
    allowed_third_party = {"numpy", "numba", "lxml", "urdf_parser_py"}
    for root in imported_roots(path):
        if root.startswith("rnea_ros"):
            assert root.startswith("rnea_ros.dynamics"), f"{path.name} imports {root}"
        else:
            if (path.name, root) in (("corrections.py", "yaml"), ("contact_forces.py", "quadprog")):
                continue  # optional: imported when a corrections file is read or written, or a QP solved
            assert root in allowed_third_party or root in sys.stdlib_module_names, f"{path.name} imports {root}"


@pytest.mark.parametrize("path", sorted((PACKAGE / "controller").glob("*.py")), ids=lambda p: p.name)
def test_the_controller_imports_no_ros_and_no_node(path):
    """The node's logic is plain Python on the rooms below: no ROS, no node, no plumbing."""
    allowed_rooms = ("dynamics", "controller", "motion", "parameter_spec")
    for root in imported_roots(path):
        if root.startswith("rnea_ros"):
            assert root.split(".")[1] in allowed_rooms, f"{path.name} imports {root}"
        elif (path.name, root) == ("advice.py", "yaml"):
            continue  # a params file read when there is no model, to say what is wrong with it
        else:
            assert root in {"numpy", "numba"} or root in sys.stdlib_module_names, f"{path.name} imports {root}"
        assert root != "importlib", f"{path.name}: no module looked up by name"


def test_the_node_room_is_the_ros_edge_only():
    found = sorted(path.name for path in (PACKAGE / "node").glob("*.py") if not path.name.startswith("__"))
    assert len(found) <= MAX_NODE_MODULES, found


@pytest.mark.parametrize("room", ["dynamics", "analysis", "motion", "controller"])
def test_offline_rooms_never_import_ros(room):
    for path in (PACKAGE / room).glob("*.py"):
        roots = imported_roots(path)
        assert not roots & ROS, f"{path.name}: {roots & ROS}"


def test_only_the_simulation_imports_mujoco():
    for path in PACKAGE.rglob("*.py"):
        if "mujoco" in imported_roots(path) or "import mujoco" in path.read_text():
            assert path.parent.name == "simulation", f"{path.relative_to(PACKAGE)} imports mujoco"


def test_simulation_imports_the_physics_and_ros_only():
    """The simulated robot knows no rnea_ros dynamics: MuJoCo is its physics."""
    allowed = {"numpy", "lxml", "mujoco"} | ROS
    for path in (PACKAGE / "simulation").glob("*.py"):
        for root in imported_roots(path):
            if root.startswith("rnea_ros"):
                assert root.split(".")[1] in ("simulation", "plumbing", "motion", "parameter_spec"), (path.name, root)
            else:
                assert root in allowed or root in sys.stdlib_module_names, (path.name, root)


# --- without ROS ---------------------------------------------------------------------------------
BLOCK_ROS = """
import sys
class NoROS:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ImportError("ROS is not installed here: " + name)
sys.meta_path.insert(0, NoROS())
"""


def run_without_ros(code: str) -> subprocess.CompletedProcess:
    script = BLOCK_ROS.format(blocked=ROS) + code
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)


def test_the_library_and_the_node_logic_import_without_rclpy():
    result = run_without_ros(
        "from rnea_ros import RobotModel, ModelError\n"
        "import rnea_ros.controller.core, rnea_ros.controller.loader, rnea_ros.controller.inputs\n"
        "import rnea_ros.analysis.pipeline, rnea_ros.demo.example_robot\n"
        "import rnea_ros.motion.trajectory, rnea_ros.motion.multisine, rnea_ros.plumbing.trajectory_cdr\n"
        "from rnea_ros.demo.example_robot import example_arm_urdf\n"
        "print(RobotModel.from_urdf(example_arm_urdf()).nv)\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "8"


def test_the_blocker_does_block_the_node():
    result = run_without_ros("import rnea_ros.node.node\n")
    assert result.returncode != 0 and "ROS is not installed here: rclpy" in result.stderr


def test_the_checkout_does_not_shadow_ros_modules(tmp_path):
    """scripts/env puts only the package on the path: the checkout's launch/ is no `launch` module
    (run from elsewhere: Python puts the working directory itself on the path)."""
    code = (
        "import importlib.util as u; s = u.find_spec('launch'); print(s and list(s.submodule_search_locations or []))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert str(PACKAGE.parent / "launch") not in result.stdout, result.stdout


if __name__ == "__main__":
    print(diagram())
