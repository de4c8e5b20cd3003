"""The translation of the Panda paper's MATLAB model files (rnea_ros/testing/panda_paper_model.py),
on small files written here in the style of MATLAB's Symbolic Math Toolbox, with values worked out
by hand; the paper's own files are not in the checkout (benchmarks/real_recording.py reads them)."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.testing.panda_paper_model import JOINTS, PaperModel, _evaluate

HEADER = "% a comment\nfunction out = get_Thing(q,dq)\n%GET_THING\nq1 = q(1);\nq2 = q(2);\ndq1 = dq(1);\n"


def test_a_column_vector_with_continuations_and_temporaries() -> None:
    text = HEADER + "t2 = cos(q1);\nt3 = t2.^2;\nout = [t3.*2.0;...\n    dq1./4.0-q2];\n"
    q, dq = np.array([[0.3, 1.5], [1.0, -2.0]]), np.array([[2.0], [-8.0]])
    variables = {"q1": q[:, 0], "q2": q[:, 1], "dq1": dq[:, 0]}
    np.testing.assert_allclose(
        _evaluate(text, variables), [[2 * np.cos(0.3) ** 2, 0.5 - 1.5], [2 * np.cos(1.0) ** 2, -2.0 + 2.0]]
    )


def test_a_matrix_built_from_a_stacked_vector_indexed_from_one() -> None:
    text = HEADER + "B_hat = [q1;q2.*3.0;5.0];\nout = [B_hat(1) , B_hat(2) ;...\n  B_hat(2) , B_hat(3) ];\n"
    M = _evaluate(text, {"q1": np.array([1.0, 2.0]), "q2": np.array([10.0, 20.0]), "dq1": np.zeros(2)})
    np.testing.assert_allclose(M, [[[1.0, 30.0], [30.0, 5.0]], [[2.0, 60.0], [60.0, 5.0]]])


def _diagonal_model(coriolis: str) -> PaperModel:
    """A 7-joint model with M = diag(2 + cos q2, 1, …, 1): its Christoffel symbols give
    c1 = −sin q2 q̇1 q̇2, c2 = ½ sin q2 q̇1², the rest 0; g = (0, 9 sin q2, 0, …)."""
    entries = [["0.0"] * JOINTS for _ in range(JOINTS)]
    entries[0][0] = "cos(q2)+2.0"
    for j in range(1, JOINTS):
        entries[j][j] = "1.0"
    rows = ";...\n".join(" , ".join(row) for row in entries)
    mass = f"function M = get_MassMatrix(q)\nq2 = q(2);\nM = [{rows}];\n"
    gravity = "function g = get_GravityVector(q)\nq2 = q(2);\ng = [0.0;sin(q2).*9.0;" + ";".join(["0.0"] * 5) + "];\n"
    return PaperModel(mass, coriolis, gravity, np.zeros((4, JOINTS)))


RIGHT = (
    "function c = get_CoriolisVector(q,dq)\nq2 = q(2);\ndq1 = dq(1);\ndq2 = dq(2);\n"
    "c = [-sin(q2).*dq1.*dq2;sin(q2).*dq1.^2./2.0;" + ";".join(["0.0"] * 5) + "];\n"
)


def test_the_check_accepts_a_consistent_model_and_its_torques_sum_the_parts() -> None:
    model = _diagonal_model(RIGHT)
    rng = np.random.default_rng(3)
    q, qd, qdd = (rng.uniform(-2, 2, (5, JOINTS)) for _ in range(3))
    assert model.check(q, qd) == []
    expected = np.zeros((5, JOINTS))
    expected[:, 0] = (2 + np.cos(q[:, 1])) * qdd[:, 0] - np.sin(q[:, 1]) * qd[:, 0] * qd[:, 1]
    expected[:, 1] = qdd[:, 1] + 0.5 * np.sin(q[:, 1]) * qd[:, 0] ** 2 + 9 * np.sin(q[:, 1])
    expected[:, 2:] = qdd[:, 2:]
    np.testing.assert_allclose(model.torques(q, qd, qdd), expected, atol=1e-12)


@pytest.mark.parametrize(
    "right, wrong",
    [("-sin(q2).*dq1.*dq2", "-sin(q2).*dq1.*dq2.*1.5"), ("sin(q2).*dq1.^2./2.0", "sin(q2).*dq1.^2")],
)
def test_the_check_finds_a_coriolis_term_that_does_not_match_the_mass_matrix(right: str, wrong: str) -> None:
    rng = np.random.default_rng(4)
    q, qd = (rng.uniform(-2, 2, (5, JOINTS)) for _ in range(2))
    problems = _diagonal_model(RIGHT.replace(right, wrong)).check(q, qd)
    assert any("Christoffel" in problem for problem in problems)


def test_the_check_finds_a_gravity_that_is_not_a_gradient() -> None:
    model = _diagonal_model(RIGHT)
    model.gravity = model.gravity.replace("0.0;sin(q2)", "sin(q2);sin(q2)")  # ∂g1/∂q2 ≠ ∂g2/∂q1 = 0
    rng = np.random.default_rng(5)
    q, qd = (rng.uniform(-2, 2, (5, JOINTS)) for _ in range(2))
    assert "g(q) is not a gradient (∂g_i/∂q_j not symmetric)" in model.check(q, qd)
