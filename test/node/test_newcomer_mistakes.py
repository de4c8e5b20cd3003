"""A newcomer's usual mistakes, each answered with what is wrong and what to do (issue 36), without
ROS: a model without a movable joint, use_sim_time without /clock, a driver's own joint names
(the joint_names map), a URDF on the command line, best-effort joint_states publishers."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.controller import advice
from rnea_ros.controller.core import RneaCore, build_live_model
from rnea_ros.controller.inputs import BY_TOPIC
from rnea_ros.controller.settings import Settings
from rnea_ros.controller.state import ConfigurationError, DesiredPoints, InvalidMessageError
from rnea_ros.motion.trajectory import Trajectory
from rnea_ros.testing.reference import ARM_URDF, PinocchioReference

ARM = RobotModel.from_urdf(ARM_URDF)
BOLTED = (
    "<robot name='bolted'><link name='base'/><link name='tool'><inertial><mass value='1'/>"
    "<inertia ixx='0.1' iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    "<joint name='bolt' type='fixed'><parent link='base'/><child link='tool'/></joint></robot>"
)
# a driver that numbers the arm's joints its own way, as KUKA's joint_a1..a7 against lbr_iiwa_joint_1..7
DRIVER = {name: f"axis_{k}" for k, name in enumerate(ARM.joint_names)}
MAP = [f"{driver}:={urdf}" for urdf, driver in DRIVER.items()]


def test_a_model_without_a_movable_joint_is_refused_with_that_reason():
    with pytest.raises(ValueError, match="no movable joint"):
        build_live_model(BOLTED, Settings())


def core_with(settings: Settings) -> RneaCore:
    core = RneaCore(settings)
    core.load(build_live_model(ARM_URDF, settings))
    return core


def future_stamp_said(clock_now: float, stamp: float) -> str:
    core = core_with(Settings())
    zeros = np.zeros(ARM.nv)
    with pytest.raises(InvalidMessageError) as rejection:
        core.joint_states(ARM.joint_names, zeros, zeros, True, stamp, lambda: clock_now)
    assert rejection.value.reason == "future_stamp"
    return str(rejection.value)


def test_stamps_ahead_of_a_stopped_or_simulated_clock_name_use_sim_time_and_clock():
    wall_stamp = 1.75e9
    said = future_stamp_said(0.0, wall_stamp)  # use_sim_time true, nothing publishes /clock
    assert "use_sim_time" in said and "/clock" in said
    said = future_stamp_said(120.0, wall_stamp)  # a simulation's clock, the driver stamps wall-clock time
    assert "use_sim_time" in said and "wall-clock" in said
    said = future_stamp_said(wall_stamp, wall_stamp + 30.0)  # two machines' clocks apart
    assert "use_sim_time" not in said and "clocks not synchronised" in said


def test_the_joint_name_map_is_validated():
    assert Settings(joint_names=("a1:=joint1", "a2=joint2")).joint_name_map() == {"a1": "joint1", "a2": "joint2"}
    for entries, why in (
        (("a1",), "is not 'driver_name:=urdf_name'"),
        (("a1:=",), "is not"),
        (("a1:=joint1", "a1:=joint2"), "maps 'a1' twice"),
        (("a1:=joint1", "a2:=joint1"), "two driver names onto 'joint1'"),
    ):
        with pytest.raises(ValueError, match=why):
            Settings(joint_names=entries)
    with pytest.raises(ConfigurationError, match="did you mean 'joint1'"):
        build_live_model(ARM_URDF, Settings(joint_names=("a1:=joint_1",)))
    with pytest.raises(ValueError, match="joint_states_qos"):
        Settings(joint_states_qos="best_effort")


def test_a_drivers_own_joint_names_are_read_and_written_through_the_map():
    """joint_states, desired_accelerations, command_joints and joint_trajectory in the driver's names;
    the outputs named as the driver names them; the efforts Pinocchio's."""
    command_order = [DRIVER[name] for name in reversed(ARM.joint_names)]
    settings = Settings(joint_names=tuple(MAP), command_joints=tuple(command_order))
    core = core_with(settings)
    live = core.live
    assert list(live.bound.names) == [DRIVER[name] for name in ARM.joint_names]
    if importlib.util.find_spec("sensor_msgs") is not None:  # the messages need ROS's; the names above do not
        from rnea_ros.node.outputs import OutputMessages

        messages = OutputMessages(live)
        assert list(messages.efforts.name) == list(live.bound.names)
        assert messages.commands.layout.dim[0].label.split(",") == command_order

    rng = np.random.default_rng(36)
    q, qd, qdd = rng.uniform(-1, 1, (3, ARM.nv))
    order = rng.permutation(ARM.nv)
    driver_names = [DRIVER[ARM.joint_names[j]] for j in order]
    core.receive(BY_TOPIC["desired_accelerations"], DesiredPoints(driver_names, qdd[order]))
    outputs = core.joint_states(driver_names, q[order], qd[order], True, 1.0, lambda: 1.0)
    expected = PinocchioReference(ARM_URDF, ARM).node_torques(q, qd, qdd)
    np.testing.assert_allclose(outputs.tau, expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(outputs.commands, expected[::-1], rtol=1e-9, atol=1e-9)

    times = np.array([0.0, 1.0])
    positions = np.vstack([q[order], q[order]])
    answer = core.trajectory(Trajectory(driver_names, times, positions, np.zeros_like(positions)))
    assert answer.joint_names == driver_names  # answered in the names it came in
    gravity = PinocchioReference(ARM_URDF, ARM).node_torques(q, np.zeros(ARM.nv), np.zeros(ARM.nv))
    np.testing.assert_allclose(answer.efforts[-1], gravity[order], rtol=1e-9, atol=1e-9)


def test_names_that_share_nothing_with_the_urdf_suggest_the_map():
    core = core_with(Settings())
    names = [f"joint_a{k + 1}" for k in range(ARM.nv)]
    zeros = np.zeros(ARM.nv)
    assert core.joint_states(names, zeros, zeros, True, 1.0, lambda: 1.0) is None
    said = core.reporter.coverage_problem()
    assert "joint_names" in said and f"'joint_a1:={ARM.joint_names[0]}'" in said, said


def test_a_urdf_on_the_command_line_is_answered_in_one_line():
    error = (
        "failed to initialize rcl: Couldn't parse parameter override rule: '-p robot_description:=<?xml "
        "version=\"1.0\"?>\n<robot name='arm'>...'. Error: Error at line 2, at /project/src/rcl/arguments.c:352"
    )
    said = advice.command_line_error(error)
    assert "\n" not in said and "robot_description" in said and "--with-description" in said
    assert advice.command_line_error("failed to initialize rcl: something else") is None


def test_a_missing_description_names_the_parameter_way():
    said = advice.no_description("/robot_description", 0, params_file_given=False)
    assert "nothing publishes it" in said and "rnea_gains model.urdf --with-description" in said
    said = advice.no_description("/robot_description", 0, params_file_given=True)
    assert "params file given sets no robot_description" in said


def test_best_effort_publishers_against_a_reliable_subscription_are_named():
    said = advice.best_effort_only([("driver", True)], reliable_reader=True)
    assert "only best-effort" in said and "joint_states_qos: sensor_data" in said
    assert advice.best_effort_only([("driver", True)], reliable_reader=False) is None
    assert advice.best_effort_only([("driver", False)], reliable_reader=True) is None
