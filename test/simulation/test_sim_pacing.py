"""rnea_sim's real-time pacing (``simulation/pacing.py``, issue 48: the trot on the wall clock) on a
fake clock: a stall beyond ``realtime_catch_up`` is slipped, not made up by stepping faster than real
time; the default makes everything up (as before); the counts say so. And the recorded contact
wrenches, now read from MuJoCo's contact arrays, against the per-contact loop they replace."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rnea_ros.simulation import pacing


class FakeClock:
    """time.monotonic and time.sleep of the pacing module, on a clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def clock(monkeypatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(pacing.time, "monotonic", fake.monotonic)
    monkeypatch.setattr(pacing.time, "sleep", fake.sleep)
    return fake


def run(clock: FakeClock, catch_up: float, stall_at: int = 200, stall: float = 0.05, steps: int = 400):
    """``steps`` 1 ms steps of 0.3 ms of work each, the brakes released at step 10, one stall of
    ``stall`` s of wall time at step ``stall_at``; the steps that did not sleep after the stall."""
    p = pacing.WallClockPacing(1e-3, catch_up)
    unslept = 0
    for k in range(1, steps + 1):
        if k == 10:
            p.release(k)
        clock.now += 3e-4 + (stall if k == stall_at else 0.0)
        before = len(clock.slept)
        p.after_step(k)
        if k > stall_at and len(clock.slept) == before:
            unslept += 1
    return p, unslept


def test_a_stall_beyond_the_catch_up_is_slipped_not_made_up_faster_than_real_time(clock):
    p, unslept = run(clock, catch_up=0.002)
    # 50 ms behind: 2 ms made up (the steps that follow take 0.3 ms: ~3 of them without sleeping)
    assert unslept <= 3
    # step 200 due 1 ms after step 199 ended on time, done 50.3 ms later: 49.3 ms behind, 47.3 slipped
    assert p.slipped == pytest.approx(0.0473, abs=1e-6)
    assert p.slips == 1
    counts = p.counts(400)
    assert counts["wall_clock_slipped_s"] == pytest.approx(0.0473, abs=1e-4)
    # 390 steps of simulated time over 390 ms plus the 47.3 ms slipped (the last step's 0.3 ms of work aside)
    assert counts["real_time_factor"] == pytest.approx(0.390 / (0.390 + 0.0473), rel=0.01)
    assert counts["largest_backlog_ms"] == pytest.approx(49.3, abs=1e-3)


def test_by_default_a_backlog_is_made_up_stepping_flat_out(clock):
    p, unslept = run(clock, catch_up=math.inf)
    # 50 ms behind, 0.7 ms gained per 0.3 ms step: ~71 steps flat out, faster than real time
    assert unslept == pytest.approx(0.05 / 0.7e-3, abs=2)
    assert p.slipped == 0.0
    assert p.counts(400)["real_time_factor"] == pytest.approx(1.0, abs=0.01)


def test_steps_on_time_sleep_until_due_and_count_nothing_before_the_release(clock):
    p = pacing.WallClockPacing(1e-3, 0.002)
    assert p.counts(0) == {}
    start = clock.now
    for k in range(1, 6):
        clock.now += 2e-4
        p.after_step(k)
        assert clock.now == pytest.approx(start + k * 1e-3)
    assert p.slipped == 0.0 and p.largest_backlog == 0.0


def test_contact_wrenches_equal_the_per_contact_loop():
    """Solo12 held near standing by a PD with noise (0-4 contacts, rolling feet): the wrenches read
    from the contact arrays equal, bit for bit, the loop over MuJoCo's contacts one at a time."""
    mujoco = pytest.importorskip("mujoco")
    from rnea_ros.simulation.parameters import SimSettings
    from rnea_ros.simulation.robot_setup import build_robot
    from rnea_ros.testing import legged

    p = SimSettings(
        robot_description=legged.SOLO_URDF, floating_base=True, contact_links=legged.SOLO_FEET,
        contact_radius=legged.SOLO_FOOT_RADIUS,
    )  # fmt: skip
    robot = build_robot(p.robot_description, p)
    stand = legged.solo_standing_pose(robot.command_joints)
    robot.set_positions(dict(zip(robot.command_joints, stand, strict=True)))
    rows = [robot.joint_names.index(j) for j in robot.command_joints]
    geoms = {robot.model.geom(f"rnea_sim_contact_{link}").id: k for k, link in enumerate(legged.SOLO_FEET)}
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(300):
        q, qd = robot.positions()[rows], robot.velocities()[rows]
        robot.step(20.0 * (stand - q) - 0.5 * qd + rng.normal(0.0, 0.3, len(rows)))
        expected = np.zeros((4, 6))
        local = np.zeros(6)
        for i in range(robot.data.ncon):
            contact = robot.data.contact[i]
            k = geoms.get(int(contact.geom2), geoms.get(int(contact.geom1)))
            if k is None:
                continue
            mujoco.mj_contactForce(robot.model, robot.data, i, local)
            force = contact.frame.reshape(3, 3).T @ local[:3]
            force = -force if int(contact.geom1) in geoms else force
            body = robot._contact_bodies[k]
            R, origin = robot.data.xmat[body].reshape(3, 3), robot.data.xpos[body]
            expected[k, :3] += R.T @ force
            expected[k, 3:] += R.T @ np.cross(contact.pos - origin, force)
        seen.add(robot.data.ncon)
        np.testing.assert_allclose(robot.contact_wrenches(), expected, rtol=1e-12, atol=1e-12)
    assert max(seen) >= 4  # the feet were down
