"""The node's input fusion without ROS: merging joint_states, stamps, timeouts, desired points."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.controller.inputs import BY_TOPIC
from rnea_ros.controller.settings import Settings
from rnea_ros.controller.state import ConfigurationError, DesiredPoints, InvalidMessageError, LiveModel, WrenchReading
from rnea_ros.testing.random_urdf import LINK, joint_xml, robot_xml
from rnea_ros.testing.reference import ARM_URDF

ARM = RobotModel.from_urdf(ARM_URDF)
NAMES = ARM.joint_names  # joint1..joint7, finger_left_joint


def live() -> LiveModel:
    return LiveModel.build(RobotModel.from_urdf(ARM_URDF))


def test_a_full_message_in_any_order_is_taken_whole():
    state = live()
    order = list(reversed(NAMES))
    q = np.arange(8.0)
    assert state.merge_joint_states(order, q, -q, stamp=1.0, state_timeout=0.1)
    np.testing.assert_array_equal(state.q, q[::-1])
    np.testing.assert_array_equal(state.qd, -q[::-1])


def test_partial_messages_merge_until_every_joint_is_fresh():
    state = live()
    assert not state.merge_joint_states(NAMES[:4], np.ones(4), np.zeros(4), stamp=1.0, state_timeout=0.1)
    assert state.stale_joints(0.1) == NAMES[4:]  # never seen
    assert state.merge_joint_states([*NAMES[4:], "unknown"], np.full(5, 2.0), np.zeros(5), 1.05, 0.1)
    np.testing.assert_array_equal(state.q, [1, 1, 1, 1, 2, 2, 2, 2])
    # a later half-message leaves the other half too old
    assert not state.merge_joint_states(NAMES[:4], np.ones(4), np.zeros(4), stamp=1.3, state_timeout=0.1)
    assert state.stale_joints(0.1) == NAMES[4:]


def test_older_stamps_and_duplicate_names_are_rejected():
    state = live()
    state.merge_joint_states(NAMES, np.zeros(8), np.zeros(8), stamp=2.0, state_timeout=0.1)
    with pytest.raises(InvalidMessageError) as rejection:
        state.merge_joint_states(NAMES, np.zeros(8), np.zeros(8), stamp=1.0, state_timeout=0.1)
    assert rejection.value.reason == "out_of_order"
    with pytest.raises(InvalidMessageError) as rejection:
        state.merge_joint_states(["joint1", "joint1"], np.zeros(2), np.zeros(2), stamp=3.0, state_timeout=0.1)
    assert rejection.value.reason == "duplicate_names"


def test_desired_point_maps_names_and_expires():
    state = live()
    state.merge_joint_states(NAMES, np.zeros(8), np.zeros(8), stamp=1.0, state_timeout=0.1)
    state.set_desired(
        DesiredPoints(["joint3", "nope"], np.array([5.0, 7.0]), np.array([0.5, 1.0]), np.array([0.1, 2.0])), now=10.0
    )
    settings = Settings(use_desired_state=True, acceleration_timeout=0.1)
    inputs = state.inputs_now(10.05, settings)
    assert inputs.qdd[2] == 5.0 and np.count_nonzero(inputs.qdd) == 1
    assert inputs.q[2] == 0.5 and inputs.qd[2] == 0.1 and np.count_nonzero(inputs.q) == 1  # others measured
    stale = state.inputs_now(10.2, settings)
    assert not stale.qdd.any() and not stale.q.any()


def test_with_feedback_a_stale_point_is_held_at_rest_and_a_trajectory_end_too():
    """As joint_trajectory_controller holds its last point: positions kept, zero velocity and
    acceleration; a stream of points that stops is flagged, a stamped trajectory's end is not."""
    state = live()
    state.merge_joint_states(NAMES, np.zeros(8), np.zeros(8), stamp=1.0, state_timeout=0.1)
    q = np.linspace(0.1, 0.8, 8)
    state.set_desired(DesiredPoints(NAMES[:7], np.ones(7), q[:7], np.full(7, 2.0)), now=10.0)
    settings = Settings(kp=[5.0], acceleration_timeout=0.1)
    fresh, stale = state.inputs_now(10.05, settings), state.inputs_now(10.2, settings)
    assert not fresh.held and fresh.qdd[:7].tolist() == [1.0] * 7 and fresh.qd_desired[0] == 2.0
    assert stale.held and not stale.qdd.any()
    assert stale.q_desired[:7].tolist() == q[:7].tolist() and math.isnan(stale.q_desired[7])
    assert stale.qd_desired[:7].tolist() == [0.0] * 7 and math.isnan(stale.qd_desired[7])
    assert stale.q[:7].tolist() == q[:7].tolist() and not stale.qd.any()  # the feed-forward's state
    without_feedback = state.inputs_now(10.2, Settings(use_desired_state=True, acceleration_timeout=0.1))
    assert without_feedback.q_desired is None and not without_feedback.held and not without_feedback.q.any()

    times = np.array([1.0, 1.5])
    state.set_desired(DesiredPoints(NAMES, np.ones((2, 8)), np.outer([1.0, 2.0], q), np.ones((2, 8)), times), now=11.0)
    state.merge_joint_states(NAMES, np.zeros(8), np.zeros(8), stamp=3.0, state_timeout=0.1)
    ended = state.inputs_now(11.0, settings)
    assert not ended.held and ended.q_desired.tolist() == (2.0 * q).tolist() and not ended.qd_desired.any()


def test_a_stamped_trajectory_gives_each_joint_state_the_point_of_its_stamp():
    state = live()
    times = np.array([100.000, 100.001, 100.002])
    qdd = np.outer([1.0, 2.0, 3.0], np.ones(8))  # row k: every joint at k + 1 rad/s²
    state.set_desired(DesiredPoints(NAMES, qdd, qdd / 10, qdd / 100, times), now=5.0)
    settings = Settings(acceleration_timeout=1.0)
    for stamp, expected in ((99.0, 1.0), (100.0, 1.0), (100.0015, 2.0), (100.00199999, 3.0), (100.5, 3.0)):
        state.merge_joint_states(NAMES, np.zeros(8), np.zeros(8), stamp=stamp, state_timeout=0.1)
        inputs = state.inputs_now(5.0, settings)
        assert inputs.qdd[0] == expected, stamp  # before: the first point; after: the last
        assert inputs.q_desired[0] == expected / 10 and inputs.qd_desired[0] == expected / 100


def test_wrenches_expire_and_unknown_frames_are_rejected():
    state = live()
    state.set_wrench(WrenchReading("tcp", np.ones(6)), now=5.0)
    assert set(state.fresh_wrenches(5.05, 0.1)) == {"tcp"}
    assert state.fresh_wrenches(5.2, 0.1) is None
    with pytest.raises(InvalidMessageError) as rejection:
        state.set_wrench(WrenchReading("no_such_link", np.ones(6)), now=5.0)
    assert rejection.value.reason == "unknown_wrench_frame"


def test_configuration_naming_unknown_joints_is_an_error():
    with pytest.raises(ConfigurationError, match="no_such_joint"):
        LiveModel.build(ARM, command_joints=["joint1", "no_such_joint"])


def test_a_model_that_cannot_compute_never_goes_live():
    """40 chained mimics with multiplier 1e9: each number is in range, their product is not."""
    body = "".join(LINK.format(f"l{i}") for i in range(42))
    body += '<joint name="j1" type="prismatic"><parent link="l0"/><child link="l1"/><axis xyz="0 0 1"/></joint>'
    for i in range(2, 42):
        body += (
            f'<joint name="j{i}" type="prismatic"><parent link="l{i - 1}"/><child link="l{i}"/><axis xyz="0 0 1"/>'
            f'<mimic joint="j{i - 1}" multiplier="1e9"/></joint>'
        )
    try:
        model = RobotModel.from_urdf(f'<robot name="r">{body}</robot>')
    except ValueError:
        return  # refused already by the library: fine too
    with pytest.raises(ValueError):
        LiveModel.build(model)


def test_settings_refuse_what_cannot_be_applied():
    with pytest.raises(ValueError, match="gravity"):
        Settings(gravity=(math.nan, 0.0, 0.0))
    with pytest.raises(ValueError, match="wrench_timeout"):
        Settings().with_values(wrench_timeout=-5.0)
    with pytest.raises(ValueError, match="wrench_topics"):
        Settings(wrench_topics=tuple(f"t{i}" for i in range(1000)))
    assert Settings().with_values(gravity=(0.0, 0.0, -1.0)).gravity == (0.0, 0.0, -1.0)


def test_huge_name_lists_are_matched_but_not_kept():
    state = live()
    names = [f"{'x' * 100}{k}" for k in range(2000)]
    for k in range(5):
        assert not state.merge_joint_states(names[k:], np.zeros(2000 - k), np.zeros(2000 - k), 1.0, 0.1)
    assert len(state.bound.matcher._cache) == 0
    state.merge_joint_states(NAMES, np.zeros(8), np.zeros(8), 2.0, 0.1)
    assert len(state.bound.matcher._cache) == 1


def test_outputs_of_one_state_come_all_together_or_not_at_all():
    """A lever (revolute about y, then prismatic along x, 1 kg at the end) at q = [0, 1e308] with a
    wrench on its end: the efforts overflow; nothing is output and the failure has its reason."""
    from rnea_ros.controller.core import RneaCore, build_live_model

    lever = robot_xml(
        LINK.format("base")
        + LINK.format("arm")
        + LINK.format("tip")
        + joint_xml("pivot", "base", "arm", extra='<axis xyz="0 1 0"/>')
        + joint_xml("slide", "arm", "tip", "prismatic", '<axis xyz="1 0 0"/>')
    )
    settings = Settings(future_stamp_tolerance=3600.0)
    core = RneaCore(settings)
    core.load(build_live_model(lever, settings))
    core.receive(BY_TOPIC["wrenches"], WrenchReading("tip", np.array([0.0, 0.0, -10.0, 0.0, 0.0, 0.0])))
    with pytest.raises(InvalidMessageError) as rejection:
        core.joint_states(["pivot", "slide"], np.array([0.0, 1e308]), np.zeros(2), True, 1.0, lambda: 0.0)
    assert rejection.value.reason == "compute_error"
    assert core.published == 0
    out = core.joint_states(["pivot", "slide"], np.array([0.0, 0.5]), np.zeros(2), True, 2.0, lambda: 0.0)
    assert out is not None and np.all(np.isfinite(out.gravity)) and core.published == 1


def test_a_payload_in_the_corrections_is_merged_into_the_model_and_a_bad_one_changes_nothing(tmp_path):
    """gravity_torques with the corrections' payload equal Pinocchio's on the URDF that carries it;
    emptying corrections_file takes it out again; a file naming an unknown link is refused whole."""
    import yaml

    from rnea_ros.controller.core import RneaCore, build_live_model
    from rnea_ros.dynamics.corrections import CorrectionsError
    from rnea_ros.testing.reference import PAYLOAD, PinocchioReference, urdf_with_payload

    inertia = {
        k: float(PAYLOAD.inertia["xyz".index(k[1]), "xyz".index(k[2])])
        for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    }
    payload = {"link": "tool", "mass": PAYLOAD.mass, "com": PAYLOAD.com.tolist(), "inertia": inertia}
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text(yaml.safe_dump({"version": 2, "joints": {"joint2": {"offset": 0.5}}, "payload": payload}))
    bad.write_text(yaml.safe_dump({"version": 2, "joints": {}, "payload": {**payload, "link": "nowhere"}}))
    settings = Settings(future_stamp_tolerance=3600.0)
    core = RneaCore(settings)
    core.load(build_live_model(ARM_URDF, settings))
    q = np.array([0.3, 0.9, -0.2, -1.4, 0.5, 1.2, 0.4, 0.02])
    carried = PinocchioReference(urdf_with_payload("tool", PAYLOAD), ARM).gravity_torques(q)
    plain = PinocchioReference(ARM_URDF, ARM).gravity_torques(q)

    def gravity_at(stamp: float) -> np.ndarray:
        return core.joint_states(NAMES, q, np.zeros(8), True, stamp, lambda: 0.0).gravity

    np.testing.assert_allclose(gravity_at(1.0), plain, atol=1e-9)
    core.set_corrections(str(good))
    assert "payload (1.500 kg on 'tool')" in core.model_status
    np.testing.assert_allclose(gravity_at(2.0), carried, atol=1e-9)
    with pytest.raises(CorrectionsError, match="nowhere"):
        core.set_corrections(str(bad))
    np.testing.assert_allclose(gravity_at(3.0), carried, atol=1e-9)  # the previous corrections stay
    core.load(build_live_model(ARM_URDF, settings))  # a new description keeps the corrections
    np.testing.assert_allclose(gravity_at(4.0), carried, atol=1e-9)
    core.set_corrections("")
    np.testing.assert_allclose(gravity_at(5.0), plain, atol=1e-9)


def test_new_corrections_make_a_new_live_model_and_leave_the_one_in_use_alone(tmp_path):
    """What is bound to a model is never changed in place: a thread still computing with the old
    LiveModel keeps its corrections; the new one keeps the inputs already merged."""
    import dataclasses

    import yaml

    from rnea_ros.controller.core import RneaCore, build_live_model

    friction = tmp_path / "friction.yaml"
    friction.write_text(yaml.safe_dump({"version": 1, "joints": {"joint2": {"viscous": 2.0}}}))
    settings = Settings(future_stamp_tolerance=3600.0)
    core = RneaCore(settings)
    core.load(build_live_model(ARM_URDF, settings))
    before = core.live
    q, qd = np.linspace(-0.5, 0.5, 8), np.full(8, 0.3)
    core.joint_states(NAMES, q, qd, True, 1.0, lambda: 0.0)
    core.set_corrections(str(friction))
    after = core.live
    assert after is not before and after.bound is not before.bound
    assert before.bound.corrected.joint_terms is None and after.bound.corrected.joint_terms is not None
    np.testing.assert_array_equal(after.q, q)  # the merged inputs came along
    with pytest.raises(dataclasses.FrozenInstanceError):
        after.bound.description = "another robot"


@pytest.mark.parametrize(
    ("names", "hint"),
    [
        ([f"left_{n}" for n in NAMES], "they carry the prefix 'left_' that the model's joint names lack"),
        ([n[:-1] + "_" + n[-1] for n in NAMES], None),  # no common affix: the per-name hints
        (["wheel_a", "wheel_b"], None),
    ],
)
def test_joint_states_that_name_no_model_joint_say_so(names, hint, recwarn):
    """Not one name matches: the console line names the problem (it used to be silent, with a
    numpy RuntimeWarning from stamps that had never been set)."""
    from rnea_ros.controller.core import RneaCore, build_live_model

    settings = Settings(future_stamp_tolerance=3600.0)
    core = RneaCore(settings)
    core.load(build_live_model(ARM_URDF, settings))
    for stamp in (1.0, 2.0):
        assert core.joint_states(names, np.zeros(len(names)), np.zeros(len(names)), True, stamp, lambda: 0.0) is None
    problem = core.reporter.coverage_problem()
    assert problem is not None and "name none of the model's 8 joints" in problem
    assert str(names[0]) in problem
    if hint:
        assert hint in problem
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
    report = core.reporter.report()
    assert report.level >= 1 and "name none of the model's" in report.message  # WARN in /diagnostics


def test_stamped_wrenches_age_with_the_joint_states_stamps_unstamped_ones_with_the_clock():
    """A machine that stalls (or a lockstep simulation that waits) ages neither the state nor its
    sensor: a stamped wrench is fresh while it is within wrench_timeout of the newest joint_states."""
    state = live()
    state.merge_joint_states(NAMES, np.zeros(8), np.zeros(8), stamp=100.0, state_timeout=0.1)
    wrench = np.array([0.0, 0.0, -20.0, 0.0, 0.0, 0.0])
    state.set_wrench(WrenchReading("tcp", wrench, 99.999), now=5.0)
    assert "tcp" in state.fresh_wrenches(now=60.0, timeout=0.1)  # a minute of wall time later: fresh
    state.merge_joint_states(NAMES, np.zeros(8), np.zeros(8), stamp=100.2, state_timeout=0.1)
    assert state.fresh_wrenches(now=60.0, timeout=0.1) is None  # 0.2 s of the data's time: expired
    state.set_wrench(WrenchReading("tcp", wrench), now=5.0)  # unstamped: by the receive time
    assert "tcp" in state.fresh_wrenches(now=5.05, timeout=0.1)
    assert state.fresh_wrenches(now=5.2, timeout=0.1) is None
    state.set_wrench(WrenchReading("tcp", wrench, 12.0), now=5.0)  # stamped on another clock: by its arrival
    assert "tcp" in state.fresh_wrenches(now=5.05, timeout=0.1)
    assert state.fresh_wrenches(now=5.2, timeout=0.1) is None


LOADED_KERNELS = """
from rnea_ros.controller.core import build_live_model
from rnea_ros.controller.settings import Settings
from rnea_ros.dynamics import contact_distribution, contact_forces
from rnea_ros.testing.reference import robot_urdf
from rnea_ros.testing.start_up import FEET

def loaded():
    kernels = (contact_distribution._minimum_norm_torques, contact_forces._contact_consistent_torques)
    return [len(kernel.overloads) > 0 for kernel in kernels]

settings = Settings(floating_base=True, contact_links=tuple(FEET), contact_distribution="{kind}")
live = build_live_model(robot_urdf("go2_description/urdf/go2.urdf"), settings)
print(loaded())
live.bound.run_distributions()
print(loaded())
"""


@pytest.mark.parametrize(("kind", "after_build"), [("minimum_norm", "[True, False]"), ("qp", "[False, True]")])
def test_the_build_loads_the_kernel_of_the_distribution_in_use_and_the_others_later(kind, after_build):
    """A fresh process (numba keeps what it loaded): the first answer waits for one contact kernel's
    load, not both (~0.1 s each from the cache, Go2); run_distributions (the node's, 1 s after the model
    went live) loads the others."""
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-c", LOADED_KERNELS.format(kind=kind)], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split("\n")[:2] == [after_build, "[True, True]"], run.stdout
