"""The command laws of effort_commands (rnea_ros/controller/, no ROS): computed torque against
Pinocchio's RNEA at the measured state, its gains, integral and refusals; the laws that existed
before it give the same bits as the branches they replaced; the table of laws is the recipe's."""

from __future__ import annotations

import ast
import os
import random
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.controller.computed_torque import PARAMETERS as CT_PARAMETERS
from rnea_ros.controller.computed_torque import ComputedTorque
from rnea_ros.controller.core import build_live_model
from rnea_ros.controller.law import CommandLaw
from rnea_ros.controller.laws import LAWS
from rnea_ros.controller.parameters import COMMAND_SOURCES, NODE_PARAMETERS
from rnea_ros.controller.settings import Settings
from rnea_ros.controller.state import ConfigurationError, DesiredPoints, LiveModel
from rnea_ros.controller.torques import _in_command_order_clipped, compute_outputs, holding_torques, with_corrections
from rnea_ros.dynamics.corrections import Corrections, JointCorrection, Payload
from rnea_ros.dynamics.corrections import with_corrections as corrected_model
from rnea_ros.testing.legged import SOLO_URDF
from rnea_ros.testing.reference import (
    ARM_URDF,
    EXAMPLE_ROBOT_DATA,
    PAYLOAD,
    PinocchioReference,
    assert_close,
    urdf_with_payload,
)

ROOT = Path(__file__).resolve().parents[2]
ARM = RobotModel.from_urdf(ARM_URDF)
PIN = PinocchioReference(ARM_URDF, ARM)
ORDER = ["finger_left_joint", *reversed(ARM.joint_names[:-1])]  # command_joints: not the model's order


def state(model: RobotModel, rng: np.random.Generator):
    """A measured state and a desired one near it, with desired accelerations."""
    q, qd = rng.uniform(-0.5, 0.5, model.nv), rng.uniform(-1.0, 1.0, model.nv)
    return (
        q,
        qd,
        q + rng.uniform(-0.05, 0.05, model.nv),
        qd + rng.uniform(-0.1, 0.1, model.nv),
        rng.uniform(-1, 1, model.nv),
    )


def outputs_at(live: LiveModel, settings: Settings, q, qd, q_d, qd_d, qdd_d, stamp: float = 1.0):
    live.merge_joint_states(live.bound.model.joint_names, q, qd, stamp, settings.state_timeout)
    live.set_desired(DesiredPoints(live.bound.model.joint_names, qdd_d, q_d, qd_d), now=0.0)
    return compute_outputs(live, live.inputs_now(0.0, settings), settings)


def in_order(live: LiveModel, values: np.ndarray) -> np.ndarray:
    return values[live.bound.command_order]


def test_computed_torque_is_pinocchios_rnea_of_the_commanded_acceleration_on_the_arm():
    """effort_commands = rnea(q, q̇, q̈_d + Kp e + Kd ė) at the measured state, Kd = 2√Kp by default."""
    kp = np.array([100.0, 400.0, 90.0, 64.0, 25.0, 49.0, 36.0, 16.0])  # command order, 1/s²
    settings = Settings(command_joints=tuple(ORDER), command_source="computed_torque", ct_kp=tuple(kp))
    live = build_live_model(ARM_URDF, settings)
    q, qd, q_d, qd_d, qdd_d = state(ARM, np.random.default_rng(47))
    out = outputs_at(live, settings, q, qd, q_d, qd_d, qdd_d)
    model_kp = np.empty(ARM.nv)
    model_kp[live.bound.command_order] = kp
    qdd = qdd_d + model_kp * (q_d - q) + 2.0 * np.sqrt(model_kp) * (qd_d - qd)
    assert out.clipped == 0
    assert_close(out.commands, in_order(live, PIN.inverse_dynamics(q, qd, qdd)))
    # feedforward_efforts stay the inverse dynamics at the desired state
    assert_close(out.tau, PIN.inverse_dynamics(q_d, qd_d, qdd_d))


def fixed_base_robots() -> list[Path]:
    """example-robot-data's fixed-base robots with a movable joint and no mimic (Pinocchio builds them)."""
    robots = []
    for path in sorted(EXAMPLE_ROBOT_DATA.rglob("*.urdf")):
        text = path.read_text()
        if "<mimic" in text or 'type="floating"' in text or "<link" not in text:
            continue
        robots.append(path)
    return robots


def test_computed_torque_is_pinocchios_rnea_on_a_random_example_robot_data_robot():
    seed = int(os.environ.get("RNEA_TEST_SEED", random.SystemRandom().randrange(1_000_000)))
    robots = fixed_base_robots()
    for k in range(len(robots)):  # the first from the seed's on with a movable joint on a fixed base
        path = robots[(seed + k) % len(robots)]
        urdf = path.read_text()
        model = RobotModel.from_urdf(urdf)
        if not model.floating_base and model.joint_names:
            break
    print(f"seed {seed} (RNEA_TEST_SEED={seed} repeats it): {path.relative_to(EXAMPLE_ROBOT_DATA)}")
    reference = PinocchioReference(urdf, model)
    rng = np.random.default_rng(seed)
    gains = rng.uniform(4.0, 400.0, model.nv)
    damping = rng.uniform(1.0, 40.0, model.nv)
    settings = Settings(command_source="computed_torque", ct_kp=tuple(gains), ct_kd=tuple(damping))
    live = build_live_model(urdf, settings)
    q, qd, q_d, qd_d, qdd_d = state(model, rng)
    out = outputs_at(live, settings, q, qd, q_d, qd_d, qdd_d)
    expected = reference.inverse_dynamics(q, qd, qdd_d + gains * (q_d - q) + damping * (qd_d - qd))
    limits = live.bound.command_limits
    assert out.clipped == int(np.count_nonzero(np.abs(expected) > limits))
    assert_close(out.commands, np.clip(expected, -limits, limits))


def test_computed_torque_applies_the_payload_and_the_joint_terms_as_the_other_laws():
    """The corrections' payload in the model (Pinocchio: the payload as a fixed link) and their joint
    terms at the measured velocity and the commanded acceleration; kp/kd add torque-space feedback."""
    terms = {"joint2": JointCorrection(viscous=0.3, armature=0.05, offset=0.2), "joint5": JointCorrection(coulomb=0.4)}
    corrections = Corrections(terms, Payload("tool", PAYLOAD))
    settings = Settings(command_source="computed_torque", ct_kp=(100.0,), ct_kd=(15.0,), kp=(20.0,), kd=(1.0,))
    live = build_live_model(ARM_URDF, settings)
    live = live.rebound(live.bound.with_corrections(corrections))
    q, qd, q_d, qd_d, qdd_d = state(ARM, np.random.default_rng(7))
    out = outputs_at(live, settings, q, qd, q_d, qd_d, qdd_d)
    qdd = qdd_d + 100.0 * (q_d - q) + 15.0 * (qd_d - qd)
    carried = PinocchioReference(urdf_with_payload("tool", PAYLOAD), ARM).inverse_dynamics(q, qd, qdd)
    expected = carried + corrections.torques(ARM.joint_names, qd, qdd) + 20.0 * (q_d - q) + 1.0 * (qd_d - qd)
    assert_close(out.commands, expected)


def test_from_the_second_state_the_velocity_error_is_half_a_period_back_and_the_joint_terms_over_the_period():
    """The joint_states' period h (the interval between two stamps): ė = q̇_d − (h/2) q̈_d − q̇ (the
    measured velocity is the last period's mean) and the joint terms at q̇ + h q̈ (the velocity over
    the period the command is held): Pinocchio's rnea of that q̈ plus the corrections' terms."""
    terms = {"joint1": JointCorrection(viscous=0.5, coulomb=0.1), "joint2": JointCorrection(viscous=0.3, armature=0.05)}
    corrections = Corrections(terms)
    settings = Settings(command_source="computed_torque", ct_kp=(100.0,), ct_kd=(15.0,))
    live = build_live_model(ARM_URDF, settings)
    live = live.rebound(live.bound.with_corrections(corrections))
    rng = np.random.default_rng(47)
    outputs_at(live, settings, *state(ARM, rng), stamp=2.0)
    q, qd, q_d, qd_d, qdd_d = state(ARM, rng)
    out = outputs_at(live, settings, q, qd, q_d, qd_d, qdd_d, stamp=2.002)
    h = 2.002 - 2.0
    qdd = qdd_d + 100.0 * (q_d - q) + 15.0 * (qd_d - 0.5 * h * qdd_d - qd)
    expected = PIN.inverse_dynamics(q, qd, qdd) + corrections.torques(ARM.joint_names, qd + h * qdd, qdd)
    assert out.clipped == 0
    assert_close(out.commands, expected)
    # the same state again (a repeated stamp) keeps the period
    assert_close(outputs_at(live, settings, q, qd, q_d, qd_d, qdd_d, stamp=2.002).commands, expected)


def inputs(q_desired, qdd=None, n: int = 8):
    zeros = np.zeros(n)
    return SimpleNamespace(
        q=zeros, qdd=zeros if qdd is None else qdd, wrenches=None, q_measured=zeros, qd_measured=zeros,
        q_desired=q_desired, qd_desired=None if q_desired is None else zeros,
    )  # fmt: skip


def test_the_integral_stops_at_its_clamp_and_restarts_without_a_desired_state():
    params = Settings(ct_kp=(0.0,), ct_ki=(10.0,), ct_i_clamp=(0.005,))
    law = ComputedTorque(corrected_model(ARM, None), np.arange(8), params)
    e = np.full(8, 0.1)
    seen = [law.acceleration(inputs(e), 1.0 + 0.001 * k)[0] for k in range(10)]
    # Ki ∫e grows 0.001 a step from the second state (the first has no step before it), then holds at 0.005
    np.testing.assert_allclose(seen, [0.0, 0.001, 0.002, 0.003, 0.004, 0.005, 0.005, 0.005, 0.005, 0.005], atol=1e-12)
    law.acceleration(inputs(-e), 1.2)  # a gap over 0.1 s adds nothing
    assert law.acceleration(inputs(-e), 1.2)[0] == pytest.approx(0.005)
    assert law.acceleration(inputs(-e), 1.201)[0] == pytest.approx(0.004)
    np.testing.assert_array_equal(law.acceleration(inputs(None), 1.202), np.zeros(8))  # no desired state: q̈_d
    assert law.acceleration(inputs(e), 1.203)[0] == 0.0 and law.acceleration(inputs(e), 1.204)[0] == pytest.approx(
        0.001
    )


def test_the_law_is_built_again_only_when_its_own_parameters_change():
    settings = Settings(command_source="computed_torque", ct_kp=(100.0,), ct_ki=(1.0,))
    live = build_live_model(ARM_URDF, settings)
    law = live.settings_cache.command_law(settings)
    assert live.settings_cache.command_law(settings.with_values(kp=(1.0,))) is law  # its integral goes on
    assert live.settings_cache.command_law(settings.with_values(ct_kp=(50.0,))) is not law
    np.testing.assert_array_equal(law.kd, 20.0 * (np.arange(8) < 8))


def test_computed_torque_gains_must_fit_the_command_joints_and_a_floating_base_is_refused():
    with pytest.raises(ConfigurationError, match="ct_kp has 3 values"):
        build_live_model(ARM_URDF, Settings(command_source="computed_torque", ct_kp=(1.0, 2.0, 3.0)))
    with pytest.raises(ConfigurationError, match="ct_i_clamp has 2 values"):
        build_live_model(ARM_URDF, Settings(command_source="computed_torque", ct_i_clamp=(1.0, 2.0)))
    with pytest.raises(ValueError, match="ct_kd must be"):
        Settings(ct_kd=(-1.0,))
    with pytest.raises(ConfigurationError, match="fixed-base robots"):
        build_live_model(SOLO_URDF, Settings(command_source="computed_torque", floating_base=True))


@pytest.mark.parametrize("source", ["inverse_dynamics", "gravity", "none"])
@pytest.mark.parametrize("wrench", [False, True])
def test_the_laws_that_were_branches_give_the_same_bits(source, wrench):
    """The branches on command_source that the laws replaced, written out: the same commands to the bit."""
    settings = Settings(command_joints=tuple(ORDER), command_source=source, kp=(30.0,), kd=(2.0,))
    live = build_live_model(ARM_URDF, settings)
    live = live.rebound(live.bound.with_corrections(Corrections({"joint3": JointCorrection(offset=0.3)})))
    if wrench:
        from rnea_ros.controller.state import WrenchReading

        live.set_wrench(WrenchReading("tool", np.array([1.0, -2.0, 3.0, 0.1, 0.2, -0.3])), now=0.0)
    q, qd, q_d, qd_d, qdd_d = state(ARM, np.random.default_rng(3))
    out = outputs_at(live, settings, q, qd, q_d, qd_d, qdd_d)
    i = live.inputs_now(0.0, settings)
    tau = live.bound.model.inverse_dynamics(i.q, i.qd, i.qdd, i.wrenches)
    held = holding_torques(live, i) if source == "gravity" else live.bound.model.gravity_torques(i.q)
    tau, held = with_corrections(live, i, tau, held)
    u = tau if source == "inverse_dynamics" else held if source == "gravity" else live.zeros
    kp, kd = i.gains
    u = u + np.nan_to_num(kp * (i.q_desired - i.q_measured), nan=0.0)
    u = u + np.nan_to_num(kd * (i.qd_desired - i.qd_measured), nan=0.0)
    np.testing.assert_array_equal(
        out.commands, np.clip(u[live.bound.command_order], -live.bound.command_limits, live.bound.command_limits)
    )


# --- the table of laws and the recipe ------------------------------------------------------------
def law_classes() -> set[str]:
    """The CommandLaw subclasses defined in rnea_ros/controller/, by class name."""
    found = set()
    for path in (ROOT / "rnea_ros" / "controller").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(getattr(base, "id", "") == "CommandLaw" for base in node.bases):
                found.add(node.name)
    return found


def test_every_law_is_in_the_table_and_command_source_offers_exactly_those():
    assert {law.__name__ for law in LAWS.values()} == law_classes()
    assert COMMAND_SOURCES == tuple(LAWS)
    assert all(name == law.name for name, law in LAWS.items())
    assert len({law.label for law in LAWS.values()}) == len(LAWS)
    assert {law.trajectory_efforts for law in LAWS.values()} <= {"inverse_dynamics", "gravity", "none"}
    spec = {parameter.name for parameter in NODE_PARAMETERS}
    assert set(CT_PARAMETERS) <= spec
    assert issubclass(ComputedTorque, CommandLaw)


def test_the_recipe_names_files_that_exist():
    text = (ROOT / "docs" / "development.md").read_text()
    recipe = text.split("## Adding a command law", 1)[1].split("\n## ", 1)[0]
    paths = re.findall(r"`((?:rnea_ros|test)/[\w/]+\.py)`", recipe)
    assert {"rnea_ros/controller/laws.py", "rnea_ros/controller/parameters.py", "test/controller/test_laws.py"} <= set(
        paths
    )
    assert all((ROOT / path).exists() for path in paths), [path for path in paths if not (ROOT / path).exists()]
    for attribute in ("name", "label", "trajectory_efforts", "holds", "source", "parameters", "check", "closes_loop"):
        declared = attribute in CommandLaw.__annotations__ or hasattr(CommandLaw, attribute)
        assert f"`{attribute}`" in recipe and declared, attribute


def test_rnea_gains_proposes_computed_torque_gains_from_a_bandwidth(capsys):
    import yaml

    from rnea_ros.analysis import gains
    from rnea_ros.testing.reference import EXAMPLE_ARM

    assert gains.main([str(EXAMPLE_ARM), "--computed-torque", "--bandwidth", "10"]) == 0
    values = yaml.safe_load(capsys.readouterr().out)["/**"]["ros__parameters"]
    assert values["command_source"] == "computed_torque" and "kp" not in values
    assert values["ct_kp"] == [100.0] * ARM.nv and values["ct_kd"] == [20.0] * ARM.nv
    own = {name: tuple(v) if isinstance(v, list) else v for name, v in values.items() if name != "joints"}
    build_live_model(ARM_URDF, Settings(**own))


def test_the_commands_kernel_adds_the_feedback_as_the_array_expressions_did_to_the_bit():
    """u + nan_to_num(Kp (q_d − q), nan=0) + nan_to_num(Kd (q̇_d − q̇), nan=0), in command order, clipped:
    the same bits from the kernel, with joints not named (NaN), infinite and overflowing values."""
    rng, finite = np.random.default_rng(47), 0
    for _ in range(300):
        n = int(rng.integers(1, 12))
        u, q, qd, q_d, qd_d = (rng.normal(0.0, 10.0 ** rng.integers(-3, 4), n) for _array in range(5))
        kp, kd = rng.uniform(0.0, 1e4, n), rng.uniform(0.0, 1e2, n)
        for array in (q_d, qd_d, kp):
            array[rng.random(n) < 0.2] = rng.choice([np.nan, np.inf, -np.inf, 1e300, -1e300])
        order = rng.permutation(n)[: int(rng.integers(1, n + 1))]
        limits = rng.uniform(0.1, 100.0, len(order))
        with np.errstate(invalid="ignore", over="ignore"):
            v = u + np.nan_to_num(kp * (q_d - q), nan=0.0)
            v = (v + np.nan_to_num(kd * (qd_d - qd), nan=0.0))[order]
        expected = -1 if not np.isfinite(v).all() else int(np.count_nonzero(np.abs(v) > limits))
        commands = np.empty(len(order))
        assert _in_command_order_clipped(u, True, kp, kd, q_d, q, qd_d, qd, order, limits, commands) == expected
        finite += expected >= 0
        if expected >= 0:
            np.testing.assert_array_equal(commands, np.clip(v, -limits, limits), strict=True)
            assert commands.tobytes() == np.clip(v, -limits, limits).tobytes()
    assert finite > 100  # most trials compare commands, not only the refusal
