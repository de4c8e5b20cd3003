"""rnea_sim's ``controller: motor_pd`` (issue 48, the trot in real time): a driver that closes each
joint's PD at every step on a JointState command (reference and feed-forward, by name), as legged
robots' motor drivers do. Commands in any joint order land on the right joints, a reference is moved
on (or back) by its velocity from its stamp (the state it answers, plus the node's reference_lead), and
bad commands are refused with the reason. No ROS; the MuJoCo check holds a pendulum against gravity
with the analytic feed-forward."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rnea_ros.simulation.commands import MAX_EXTRAPOLATION, MotorPdCommands


class Logger:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def error(self, text: str, throttle_duration_sec: float | None = None) -> None:
        self.lines.append(text)

    warning = error


class Robot:
    """What the commands read of a robot: its joints, state and time."""

    def __init__(self, q, qd, time: float = 0.0) -> None:
        self.joint_names = ["mimic", "a", "b", "c"]  # every joint; commands drive a, b, c
        self.command_joints = ["a", "b", "c"]
        self._q, self._qd, self.time = np.r_[9.0, q], np.r_[9.0, qd], time

    def positions(self) -> np.ndarray:
        return self._q.copy()

    def velocities(self) -> np.ndarray:
        return self._qd.copy()


def commands(kp=(100.0, 200.0, 300.0), kd=(1.0, 2.0, 3.0), timeout=0.0, release=1) -> MotorPdCommands:
    return MotorPdCommands(Logger(), timeout, release, np.array(kp), np.array(kd))


def test_a_command_in_another_order_lands_on_its_joints():
    robot = Robot(q=[0.1, 0.2, 0.3], qd=[0.0, 0.0, 0.0], time=1.0)
    pd = commands()
    # names c, a, b: the values follow their names
    pd.on_joint_command(["c", "a", "b"], [0.3, 0.1, 0.2], [0.0, 0.0, 0.0], [3.0, 1.0, 2.0], robot, answered=1.0)
    np.testing.assert_allclose(pd.efforts(robot), [1.0, 2.0, 3.0])  # on the reference: the feed-forward alone
    robot._q[1:] = [0.0, 0.2, 0.4]  # a 0.1 below its reference, c 0.1 above
    np.testing.assert_allclose(pd.efforts(robot), [1.0 + 100.0 * 0.1, 2.0, 3.0 - 300.0 * 0.1])


def test_the_reference_moves_on_by_its_velocity_from_the_state_it_answers():
    robot = Robot(q=[0.0, 0.0, 0.0], qd=[0.5, 0.0, 0.0], time=2.004)
    pd = commands()
    # answering the state of t = 2.000: at 2.004 the reference of a is 0.5 rad/s × 4 ms further on
    pd.on_joint_command(["a", "b", "c"], [0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [0.0, 0.0, 0.0], robot, answered=2.0)
    np.testing.assert_allclose(pd.efforts(robot), [100.0 * 0.002, 0.0, 0.0], atol=1e-12)
    robot.time = 5.0  # a command 3 s old moves its reference on by MAX_EXTRAPOLATION at most
    np.testing.assert_allclose(pd.efforts(robot)[0], 100.0 * 0.5 * MAX_EXTRAPOLATION)
    assert pd.age_counts()["command_age_p50_ms"] == pytest.approx(4.0)


def test_a_command_stamped_ahead_moves_its_reference_back_while_it_is_early():
    """rnea_node's reference_lead stamps a command with the time its reference is for: before that
    time the driver's reference is the one of now, moved back by its velocity."""
    robot = Robot(q=[0.0, 0.0, 0.0], qd=[0.5, 0.0, 0.0], time=2.000)
    pd = commands()
    pd.on_joint_command(["a", "b", "c"], [0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [0.0, 0.0, 0.0], robot, answered=2.003)
    np.testing.assert_allclose(pd.efforts(robot), [-100.0 * 0.5 * 0.003, 0.0, 0.0], atol=1e-12)
    robot.time = 2.003  # its time: the reference as sent
    np.testing.assert_allclose(pd.efforts(robot), [0.0, 0.0, 0.0], atol=1e-12)
    robot.time = -1.0  # 3 s early: moved back by MAX_EXTRAPOLATION at most
    np.testing.assert_allclose(pd.efforts(robot)[0], -100.0 * 0.5 * MAX_EXTRAPOLATION)


def test_without_a_reference_the_effort_alone():
    robot = Robot(q=[1.0, 2.0, 3.0], qd=[1.0, 1.0, 1.0], time=0.5)
    pd = commands()
    pd.on_joint_command(["a", "b", "c"], [], [], [4.0, 5.0, 6.0], robot, answered=0.5)
    np.testing.assert_allclose(pd.efforts(robot), [4.0, 5.0, 6.0])


def test_brakes_then_a_stale_command_gives_zero_effort():
    robot = Robot(q=[0.0, 0.0, 0.0], qd=[0.0, 0.0, 0.0], time=0.0)
    pd = commands(timeout=0.1, release=2)
    args = (["a", "b", "c"], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0])
    pd.on_joint_command(*args, robot, answered=0.0)
    assert pd.efforts(robot) is None  # held until the second command
    pd.on_joint_command(*args, robot, answered=0.0)
    assert pd.efforts(robot)[0] == pytest.approx(1.0 + 100.0)
    robot.time = 0.2  # no command for 0.2 s > command_timeout: zero, no PD
    np.testing.assert_array_equal(pd.efforts(robot), [0.0, 0.0, 0.0])
    assert pd.zero_effort_steps == 1


@pytest.mark.parametrize(
    ("names", "position", "velocity", "effort", "why"),
    [
        (["a", "b", "x"], [0.0] * 3, [0.0] * 3, [0.0] * 3, "not this simulator's joints"),
        (["a", "b"], [0.0] * 2, [0.0] * 2, [0.0] * 2, "not this simulator's joints"),
        (["a", "b", "c"], [0.0] * 3, [0.0] * 2, [0.0] * 3, "2 velocities"),
        (["a", "b", "c"], [0.0] * 3, [0.0] * 3, [0.0] * 2, "2 efforts"),
        (["a", "b", "c"], [0.0, math.nan, 0.0], [0.0] * 3, [0.0] * 3, "not finite"),
    ],
)
def test_bad_commands_are_refused_with_the_reason(names, position, velocity, effort, why):
    robot = Robot(q=[0.0, 0.0, 0.0], qd=[0.0, 0.0, 0.0])
    pd = commands()
    pd.on_joint_command(names, position, velocity, effort, robot, answered=0.0)
    assert (pd.refused, pd.accepted) == (1, 0)
    assert why in pd.logger.lines[-1]
    assert pd.efforts(robot) is None


PENDULUM = """<robot name='pendulum'>
  <link name='base'/>
  <link name='arm'><inertial><mass value='2'/><origin xyz='0 0 -0.5'/>
    <inertia ixx='1e-3' iyy='1e-3' izz='1e-3' ixy='0' ixz='0' iyz='0'/></inertial></link>
  <joint name='swing' type='revolute'><parent link='base'/><child link='arm'/><axis xyz='0 1 0'/>
    <limit effort='100' velocity='10' lower='-3' upper='3'/></joint>
</robot>"""


def test_mujoco_pendulum_held_by_its_analytic_gravity_and_the_pd():
    """A 2 kg point 0.5 m below the axis: gravity's torque about y at angle q is −m g l sin q, so the
    feed-forward m g l sin(q_d) holds it at q_d; a soft PD alone would sag by m g l sin(q_d) / kp."""
    from rnea_ros.simulation.physics import SimRobot  # MuJoCo only here

    m, g, length, q_d, kp, kd = 2.0, 9.81, 0.5, 0.6, 20.0, 4.0
    sags = {}
    for name, feed_forward in (("with", m * g * length * math.sin(q_d)), ("without", 0.0)):
        robot = SimRobot(PENDULUM)
        robot.set_positions({"swing": q_d})
        pd = MotorPdCommands(Logger(), 0.0, 1, np.array([kp]), np.array([kd]))
        for _ in range(3000):  # 3 s of 1 ms steps
            pd.on_joint_command(["swing"], [q_d], [0.0], [feed_forward], robot, answered=robot.time)
            robot.step(pd.efforts(robot))
        sags[name] = q_d - float(robot.positions()[0])
    assert abs(sags["with"]) < 1e-4
    # the PD alone settles where kp (q_d − q) = m g l sin q: the sag solved by fixed-point iteration
    q = q_d
    for _ in range(100):
        q = q_d - m * g * length * math.sin(q) / kp
    assert sags["without"] == pytest.approx(q_d - q, rel=1e-3)
