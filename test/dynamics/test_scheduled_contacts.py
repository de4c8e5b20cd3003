"""Contacts that change while walking: Solo12 trotting (diagonal pairs, 0.5 s, duty 0.6), its
contact-consistent torques against Pinocchio's floating-base inverse dynamics with the scheduled
contacts' forces, swing feet unloaded, and the ramps without torque steps; both distributions."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.dynamics.contact_forces import Contact
from rnea_ros.dynamics.contact_options import ContactQPOptions
from rnea_ros.dynamics.contact_schedule import PeriodicGait, stance_weights
from rnea_ros.dynamics.scheduled_contacts import ScheduledContacts
from rnea_ros.testing.legged import SOLO_FEET, SOLO_FOOT_RADIUS, SOLO_URDF, solo_standing_pose
from rnea_ros.testing.reference import PinocchioReference

PERIOD, DUTY, RAMP = 0.5, 0.6, 0.05
TROT = PeriodicGait(SOLO_FEET, PERIOD, [DUTY], (0.0, 0.5, 0.5, 0.0))  # FL+HR, then FR+HL
# the switches of one cycle: FL+HR down at 0, up at 0.3; FR+HL down at 0.25, up at 0.55 (0.05)
SWITCHES = (0.0, 0.05, 0.25, 0.3)
CASES = {
    "minimum_norm": ("minimum_norm", ContactQPOptions(), 0.0),
    "qp": ("qp", ContactQPOptions(friction_coefficient=0.8), SOLO_FOOT_RADIUS),
    "qp, min_normal_force 2 N": ("qp", ContactQPOptions(friction_coefficient=0.8, min_normal_force=2.0), 0.0),
}


@pytest.fixture(scope="module")
def solo():
    model = RobotModel.from_urdf(SOLO_URDF, floating_base=True)
    return model, PinocchioReference(SOLO_URDF, model)


def scheduled(model: RobotModel, case: str) -> ScheduledContacts:
    kind, options, radius = CASES[case]
    return ScheduledContacts(kind, model, [Contact(link, radius=radius) for link in SOLO_FEET], options)


def trotting_state(model: RobotModel, rng: np.random.Generator):
    """Solo12 near its standing pose, 0.3 m up, tilted a little, moving and accelerating."""
    axis = rng.normal(size=3)
    half = 0.1 * rng.uniform() / 2
    q_base = np.r_[0.0, 0.0, 0.3, np.sin(half) * axis / np.linalg.norm(axis), np.cos(half)]
    q = solo_standing_pose(model.joint_names) + rng.normal(scale=0.2, size=12)
    v_base, a_base = rng.normal(scale=0.3, size=6), rng.normal(scale=0.5, size=6)
    return q_base, v_base, a_base, q, rng.normal(scale=2.0, size=12), rng.normal(scale=10.0, size=12)


def instants(rng: np.random.Generator, count: int) -> np.ndarray:
    """Half anywhere in 5 s, half within a ramp's length of a switch (the transitions)."""
    anywhere = rng.uniform(0.0, 5.0, count // 2)
    cycles = rng.integers(0, 10, count - count // 2) * PERIOD
    near = cycles + rng.choice(SWITCHES, count - count // 2) + rng.uniform(-RAMP, RAMP, count - count // 2)
    return np.r_[anywhere, near]


@pytest.mark.slow  # 200 instants of a trot, three distributions: over 10 s of CPU on 2 loaded cores
@pytest.mark.parametrize("case", CASES)
def test_the_torques_are_pinocchios_with_the_scheduled_contacts_forces_at_200_instants_of_a_trot(solo, case):
    model, reference = solo
    distribute = scheduled(model, case)
    rng = np.random.default_rng(48)
    ramping = swinging = 0
    worst = worst_swing = worst_base = 0.0
    for t in instants(rng, 200):
        weights = stance_weights(TROT, t, RAMP, RAMP)
        ramping += bool(np.any((weights > 0.0) & (weights < 1.0)))
        state = trotting_state(model, rng)
        tau, _, f = distribute(weights, *state)
        wrenches = {link: f[6 * k : 6 * k + 6] for k, link in enumerate(SOLO_FEET) if weights[k] > 0.0}
        q_base, v_base, a_base, q, qd, qdd = state
        expected = reference.inverse_dynamics(np.r_[q_base, q], np.r_[v_base, qd], np.r_[a_base, qdd], wrenches)
        worst = max(worst, np.abs(tau - expected).max() / max(1.0, np.abs(expected).max()))
        for k in np.flatnonzero(weights == 0.0):
            swinging += 1
            worst_swing = max(worst_swing, np.abs(f[6 * k : 6 * k + 6]).max())
        if case == "minimum_norm":
            worst_base = max(worst_base, np.abs(tau[:6]).max())
    assert ramping >= 60 and swinging >= 150, (ramping, swinging)
    assert worst <= 1e-9, f"torques differ from Pinocchio's by {worst:.2e} (relative)"
    assert worst_swing <= 1e-9, f"a swing foot got {worst_swing:.2e} N"
    assert worst_base <= 1e-9, f"base residual {worst_base:.2e} left by the minimum-norm blend"


@pytest.mark.slow  # 200 instants of a trot, three distributions: over 10 s of CPU on 2 loaded cores
@pytest.mark.parametrize("case", CASES)
def test_the_ramps_leave_no_torque_step_across_lift_off_and_touch_down(solo, case):
    """One state held while the schedule's time sweeps a whole cycle every 0.1 ms: each step of τ is
    at most what the ramps' slopes allow, where the same schedule without ramps steps by the whole
    change between stance sets. While one pair ramps down as the other ramps up, τ goes from one
    pair's torques to the other's (up to two steps of the stance sets apart) through the blend's
    normalisation (1 − α_A α_B ≥ 3/4): 4 · step · dt/ramp bounds it. With a least normal force, that
    force steps off each foot at lift-off and on at touch-down (TSID's too): |J_cᵀ f_min| per foot."""
    model, _ = solo
    distribute = scheduled(model, case)
    rng = np.random.default_rng(7)
    state = trotting_state(model, rng)
    state = (state[0], state[1] * 0.0, state[2] * 0.0, solo_standing_pose(model.joint_names), *(np.zeros(12),) * 2)
    dt = 1e-4
    times = np.arange(0.0, PERIOD, dt)
    ramped = np.array([distribute(stance_weights(TROT, t, RAMP, RAMP), *state)[0] for t in times])
    stepped = np.array([distribute(stance_weights(TROT, t, 0.0, 0.0), *state)[0] for t in times])
    change = np.abs(np.diff(stepped, axis=0)).max()  # the largest step of a switch without ramps
    largest = np.abs(np.diff(ramped, axis=0)).max()
    kind, options, _ = CASES[case]
    JT = model.wrench_jacobian_transpose(np.r_[state[0], state[3]], SOLO_FEET)
    held = 2 * max(np.linalg.norm(JT[:, 6 * k : 6 * k + 3], 2) for k in range(4)) * options.min_normal_force
    held = held if kind == "qp" else 0.0
    assert largest <= 4.0 * change * dt / RAMP + held + 1e-9, (largest, change, held)
    if held == 0.0:
        assert change > 100 * largest, (largest, change)
    assert np.abs(np.diff(ramped[:, 6:], axis=0)).max() > 0.0  # the ramps move the torques
