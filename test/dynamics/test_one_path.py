"""One computation, one path (issue 47, item 3): ``RobotModel``'s methods are ``algorithms``'s
functions with the calling thread's data (rnea_node's computation passes its own:
test/controller/test_thread_data.py), and the corrections are applied by a free function, so that
no import circle (type-only imports included) runs through ``corrections.py``."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.dynamics import algorithms
from rnea_ros.dynamics.corrections import CorrectedModel, with_corrections
from rnea_ros.testing.reference import ARM_URDF, PinocchioReference, assert_close

PACKAGE = Path(__file__).resolve().parents[2] / "rnea_ros"
ARM = RobotModel.from_urdf(ARM_URDF)


def module_imports() -> dict[str, set[str]]:
    """module → the package's modules it imports anywhere (functions and ``TYPE_CHECKING`` blocks too)."""
    modules = {".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts): path for path in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("rnea_ros"):
                found |= {f"{node.module}.{alias.name}" for alias in node.names} | {node.module}
            elif isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
        graph[name] = (found & modules.keys()) - {name}
    return graph


def reaches(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for other in graph[todo.pop()] - seen:
            seen.add(other)
            todo.append(other)
    return seen


def test_no_import_circle_runs_through_the_corrections():
    """model.py knows nothing of the corrections (it used to import them for ``with_corrections``'
    types and, inside the method, to apply them: a circle with corrections.py → model.py)."""
    graph = module_imports()
    corrections = "rnea_ros.dynamics.corrections"
    assert corrections not in reaches(graph, corrections), "an import circle runs through corrections.py"
    assert corrections not in reaches(graph, "rnea_ros.dynamics.model")
    assert not hasattr(RobotModel, "with_corrections")


def test_the_free_function_is_pinocchio_with_the_payload_and_the_joint_terms():
    """``with_corrections(model, ...)`` against Pinocchio: the rigid bodies, and the joint terms added."""
    from rnea_ros.dynamics.corrections import Corrections, JointCorrection

    corrections = Corrections({"joint3": JointCorrection(viscous=0.4, offset=0.25)})
    corrected = with_corrections(ARM, corrections)
    assert isinstance(corrected, CorrectedModel) and corrected.urdf_model is ARM
    rng = np.random.default_rng(470)
    q, qd, qdd = rng.uniform(-1, 1, (3, ARM.nv))
    k = ARM.joint_names.index("joint3")
    expected = PinocchioReference(ARM_URDF, ARM).inverse_dynamics(q, qd, qdd)
    expected[k] += 0.4 * qd[k] + 0.25
    assert_close(corrected.inverse_dynamics(q, qd, qdd), expected)


@pytest.mark.parametrize("method", ["inverse_dynamics", "gravity_torques"])
def test_the_methods_call_the_algorithms_on_the_hot_path_too(monkeypatch, method):
    """Plain float64 vectors (the node's hot path) go through ``algorithms`` as every other input, with
    the calling thread's data: one path, the same bits."""
    q, qd, qdd = np.random.default_rng(4).uniform(-1, 1, (3, ARM.nv))
    args = (q, qd, qdd) if method == "inverse_dynamics" else (q,)
    expected = getattr(ARM, method)(*args)
    calls = []
    original = getattr(algorithms, method)

    def spy(model, data, *rest):
        calls.append(data)
        return original(model, data, *rest)

    monkeypatch.setattr(algorithms, method, spy)
    assert np.array_equal(getattr(ARM, method)(*args), expected)
    assert calls == [ARM.thread_data()]
    own = ARM.create_data()
    assert np.array_equal(getattr(ARM, method)(*args, data=own), expected)
    assert calls[-1] is own
