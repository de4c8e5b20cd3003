"""One joint order (issue 45): a URDF may list its joints in any order (SO-101 tip first, Baxter's arms
before the torso's other children); rnea_node commands them in its model's order (depth first from the
root). rnea_sim's default ``joints`` is that order, it refuses a command whose layout label names other
joints or another order (both lists in the line, no command applied), and rnea_gains writes the
controllers' ``joints`` in the node's order. No ROS. MuJoCo is imported inside the tests (see
rnea_ros/simulation/sim_node.py on load order)."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from lxml import etree

from rnea_ros import RobotModel
from rnea_ros.analysis.gains import main as gains_main
from rnea_ros.testing.reference import EXAMPLE_ROBOT_DATA


def link(name: str) -> str:
    return (
        f"<link name='{name}'><inertial><mass value='1'/><origin xyz='0 0 0.1'/>"
        "<inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    )


def joint(name: str, parent: str, child: str, kind: str = "revolute") -> str:
    return (
        f"<joint name='{name}' type='{kind}'><parent link='{parent}'/><child link='{child}'/>"
        "<origin xyz='0 0 0.2'/><axis xyz='0 1 0'/><limit effort='100' velocity='1' lower='-3' upper='3'/></joint>"
    )


# the tree: base ─ a1 ─ a2 (an arm) and base ─ torso ─ head (torso fixed), listed tip first and mixed
OUT_OF_ORDER = (
    "<robot name='shuffled'>"
    + "".join(link(name) for name in ("base", "l1", "l2", "torso", "head"))
    + joint("a2", "l1", "l2")
    + joint("neck", "torso", "head")
    + joint("a1", "base", "l1")
    + joint("torso_fixed", "base", "torso", "fixed")
    + "</robot>"
)
URDFS = {
    "synthetic, tip first": lambda: OUT_OF_ORDER,
    "SO-101": lambda: (EXAMPLE_ROBOT_DATA / "so_arm_description/urdf/so101.urdf").read_text(),
    "Baxter": lambda: (EXAMPLE_ROBOT_DATA / "baxter_description/urdf/baxter.urdf").read_text(),
}


class Logger:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str, float | None]] = []

    def error(self, text: str, throttle_duration_sec: float | None = None) -> None:
        self.lines.append(("error", text, throttle_duration_sec))

    warning = error


@pytest.mark.parametrize("robot", URDFS)
def test_the_simulators_default_joints_are_the_nodes_command_order(robot):
    from rnea_ros.simulation.physics import SimRobot, urdf_joints

    urdf = URDFS[robot]()
    model = RobotModel.from_urdf(urdf)
    file_order = [j.get("name") for j in etree.fromstring(urdf.encode()).iter("joint")]
    sim = SimRobot(urdf)
    assert sim.command_joints == list(model.joint_names)
    assert [j.name for j in urdf_joints(urdf) if j.mimics is None] == list(model.joint_names)
    movable_in_file = [name for name in file_order if name in model.joint_names]
    assert movable_in_file != list(model.joint_names)  # the URDF really is out of tree order


def test_a_command_labelled_with_another_order_is_refused_with_both_lists():
    from rnea_ros.simulation.commands import EffortCommands
    from rnea_ros.simulation.physics import SimRobot

    sim = SimRobot(OUT_OF_ORDER)
    assert sim.command_joints == ["a1", "a2", "neck"]
    logger = Logger()
    commands = EffortCommands(logger, command_timeout=0.1, release_after_commands=1)
    commands.on_message([1.0, 2.0, 3.0], sim, "a2,neck,a1")  # the URDF's file order
    assert commands.latest is None and commands.refused == commands.refused_joint_order == 1
    (level, text, throttle) = logger.lines[-1]
    assert level == "error" and throttle == 1.0
    assert "['a2', 'neck', 'a1']" in text and "['a1', 'a2', 'neck']" in text and "another order" in text
    assert commands.efforts(sim) is None  # nothing applied: the brakes still hold
    commands.on_message([1.0, 2.0, 3.0], sim, "a2,neck,a1")
    assert commands.refused_joint_order == 2 and logger.lines[-1][2] == 1.0  # each line rate-limited
    commands.on_message([1.0, 2.0, 3.0], sim, "b1,b2,b3")
    assert "other joints" in commands.joint_order_problem
    commands.on_message([1.0, 2.0, 3.0], sim, "a1,a2,neck")  # the simulator's order
    np.testing.assert_array_equal(commands.efforts(sim), [1.0, 2.0, 3.0])
    commands.on_message([4.0, 5.0, 6.0], sim, "")  # no label (a controller of one's own): data alone
    commands.on_message([4.0, 5.0, 6.0], sim, "efforts")  # a label that names no joints
    assert commands.accepted == 3 and commands.refused == 3


@pytest.mark.ros  # sim_report builds diagnostic_msgs
def test_the_simulators_report_says_the_refusals():
    from rnea_ros.simulation.sim_report import diagnostics, summary

    values = {
        "simulated_time": 1.0, "steps": 1000, "commands_taken": 0, "commands_refused": 5,
        "commands_refused_joint_order": 5, "zero_effort_steps": 0, "lockstep_timeouts": 0,
        "states_sent_again": 0, "efforts_clipped": 0,
    }  # fmt: skip
    assert "5 refused (5 for their joint order)" in summary(values)
    status = diagnostics(values, "/rnea_sim", "its values are for joints ['a2', 'a1']").status[0]
    assert status.level == status.WARN and "['a2', 'a1']" in status.message


def test_a_divergence_keeps_the_time_it_happened():
    from rnea_ros.simulation.physics import SimRobot, SimulationDivergedError

    sim = SimRobot(OUT_OF_ORDER)
    for _ in range(100):
        sim.step(np.zeros(3))
    with pytest.raises(SimulationDivergedError, match=r"t = 0\.100"):
        sim.step(np.full(3, np.nan))  # non-finite accelerations: MuJoCo resets the state and its clock
    assert sim.time == pytest.approx(0.1)  # the summary's simulated time: not the reset clock's 0


@pytest.mark.parametrize("robot", ["synthetic, tip first", "SO-101", "Baxter"])
def test_rnea_gains_writes_the_controllers_joints_in_the_nodes_order(robot, tmp_path, capsys):
    path = tmp_path / "robot.urdf"
    path.write_text(URDFS[robot]())
    assert gains_main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "&id" not in out  # no YAML alias: rcl's parser refuses them ("Will not support aliasing")
    parameters = yaml.safe_load(out)["/**"]["ros__parameters"]
    model = RobotModel.from_urdf(path.read_text())
    assert parameters["joints"] == parameters["command_joints"] == list(model.joint_names)


def test_rnea_gains_warns_when_gravity_exceeds_an_effort_limit(tmp_path, capsys):
    path = tmp_path / "baxter.urdf"
    path.write_text(URDFS["Baxter"]())
    assert gains_main([str(path)]) == 0
    err = capsys.readouterr().err
    assert "joint 'left_s1' needs 56.4 N·m against gravity" in err and "limit 50 N·m" in err
    assert "right_s1" in err and "left_e0" not in err
    path.write_text(OUT_OF_ORDER)
    assert gains_main([str(path)]) == 0
    assert capsys.readouterr().err == ""
