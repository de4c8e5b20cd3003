"""Descriptions as they are in the wild: only what the dynamics read can make one fail.

Every URDF of example-robot-data loads (and agrees with Pinocchio wherever Pinocchio loads
it); tiny URDFs cover each quirk class and each refusal message."""

from __future__ import annotations

import re

import numpy as np
import pytest

from rnea_ros import ModelError, RobotModel
from rnea_ros.testing.random_urdf import LINK, joint_xml, robot_xml
from rnea_ros.testing.reference import EXAMPLE_ROBOT_DATA, PinocchioReference, assert_close, random_state

ALL_URDFS = sorted(EXAMPLE_ROBOT_DATA.rglob("*.urdf"))
EMPTY_ROBOTS = {"ur_description/urdf/ur3.urdf"}  # <robot> with no link at all: nothing to model
TWO_LINKS = LINK.format("a") + LINK.format("b")


def test_example_robot_data_has_the_robots_we_think():
    assert len(ALL_URDFS) == 69


@pytest.mark.parametrize("path", ALL_URDFS, ids=lambda p: str(p.relative_to(EXAMPLE_ROBOT_DATA)))
def test_every_real_urdf_loads_and_agrees_with_pinocchio(path):
    name = str(path.relative_to(EXAMPLE_ROBOT_DATA))
    urdf = path.read_text()
    if name in EMPTY_ROBOTS:
        with pytest.raises(ModelError, match="no <link>"):
            RobotModel.from_urdf(urdf)
        return
    model = RobotModel.from_urdf(urdf)
    assert model.nv == len(model.joint_names)
    if any("mimic" in warning for warning in model.warnings):  # a mimic of a missing joint: no coupling
        urdf = re.sub(r"<mimic[^>]*/>", "", urdf)
    try:
        reference = PinocchioReference(urdf, model)
    except ValueError:  # Pinocchio cannot build some mimic trees (Romeo, Talos full): compare without them
        urdf = re.sub(r"<mimic[^>]*/>", "", urdf)
        model = RobotModel.from_urdf(urdf)
        reference = PinocchioReference(urdf, model)
    rng = np.random.default_rng(len(name))
    q, qd, qdd = random_state(model, rng)
    assert_close(model.inverse_dynamics(q, qd, qdd), reference.inverse_dynamics(q, qd, qdd))


QUIRKS = {
    "transmission": '<transmission name="t"><type>x</type><joint name="j"><hardwareInterface>E</hardwareInterface>'
    "</joint><actuator name='m'><mechanicalReduction>fifty</mechanicalReduction></actuator></transmission>",
    "texture without a file": '<material name="m"><texture/></material>',
    "material inside geometry": "",  # in the link, below
    "gazebo and ros2_control": '<gazebo reference="a"><mu1>0.2</mu1></gazebo><ros2_control name="x" type="system"/>',
    "unknown element": "<sensor_thing><whatever/></sensor_thing>",
}


@pytest.mark.parametrize("quirk", sorted(QUIRKS))
def test_elements_the_dynamics_do_not_read_never_fail(quirk):
    link_a = (
        '<link name="a"><visual><geometry><mesh filename="x.stl" scale="1 1 1 1"/>'
        '<material name="m"/></geometry><material name="n"><texture/></material></visual>'
        '<collision><geometry><box size="bad"/></geometry></collision></link>'
    )
    urdf = robot_xml(QUIRKS[quirk] + link_a + LINK.format("b") + joint_xml("j", "a", "b"))
    model = RobotModel.from_urdf(urdf)
    assert model.joint_names == ["j"]


@pytest.mark.parametrize(
    "surface",
    [
        '\n\n  <?xml version="1.0"?>\n<robot name="r">{}</robot>',
        '<?xml version="1.1" encoding="UTF-8"?><robot name="r">{}</robot>',
        '<?xml version="1.0"?><robot name="r">{}</robot>\n\x00\x00',
        "<robot>{}</robot>",  # no name
    ],
)
def test_xml_surface_details_are_accepted(surface):
    model = RobotModel.from_urdf(surface.format(TWO_LINKS + joint_xml("j", "a", "b")))
    assert model.joint_names == ["j"]


def test_a_str_is_parsed_as_text_whatever_its_declaration_says():
    body = TWO_LINKS + joint_xml("gelenk_ä", "a", "b")
    text = f'<?xml version="1.0" encoding="ISO-8859-1"?><robot name="r">{body}</robot>'
    assert RobotModel.from_urdf(text).joint_names == ["gelenk_ä"]
    assert RobotModel.from_urdf(text.encode("iso-8859-1")).joint_names == ["gelenk_ä"]  # bytes: as declared
    assert RobotModel.from_urdf(bytearray(text.encode("iso-8859-1"))).joint_names == ["gelenk_ä"]


NON_PHYSICAL = {
    "not positive semi-definite": '<inertia ixx="1" ixy="0" ixz="0" iyy="-1" iyz="0" izz="1"/>',
    "triangle inequality": '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="1"/>',
}


@pytest.mark.parametrize("problem", sorted(NON_PHYSICAL))
def test_non_physical_inertias_warn_or_are_refused_when_strict(problem):
    link = f'<link name="b"><inertial><mass value="1"/>{NON_PHYSICAL[problem]}</inertial></link>'
    urdf = robot_xml(LINK.format("a") + link + joint_xml("j", "a", "b"))
    model = RobotModel.from_urdf(urdf)
    assert len(model.warnings) == 1
    assert "link 'b'" in model.warnings[0] and problem in model.warnings[0] and "kg·m²" in model.warnings[0]
    with pytest.raises(ModelError, match=f"link 'b'.*{problem}.*strict"):
        RobotModel.from_urdf(urdf, strict=True)


def test_a_mimic_of_a_missing_joint_leaves_the_joint_independent_with_a_warning():
    urdf = robot_xml(TWO_LINKS + joint_xml("j", "a", "b", extra='<mimic joint="nope"/>'))
    model = RobotModel.from_urdf(urdf)
    assert model.joint_names == ["j"]
    assert "mimics 'nope'" in model.warnings[0]


@pytest.mark.parametrize(
    "xacro",
    [
        '<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:include filename="arm.xacro"/>'
        '<link name="a"/></robot>',
        '<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:arm prefix="left_"/>'
        '<link name="a"/></robot>',
        '<robot name="r"><xacro:arm prefix="left_"/><link name="a"/></robot>',  # undeclared prefix
        '<robot name="r"><link name="${prefix}a"/></robot>',
        '<robot name="r"><link name="a"><inertial><mass value="$(arg m)"/></inertial></link></robot>',
    ],
)
def test_unexpanded_xacro_is_refused_with_what_to_do(xacro):
    with pytest.raises(ModelError, match="run it through xacro first"):
        RobotModel.from_urdf(xacro)


@pytest.mark.parametrize("bad", [None, 42, ["<robot/>"]])
def test_descriptions_that_are_not_text_are_refused(bad):
    with pytest.raises(ModelError, match="must be text"):
        RobotModel.from_urdf(bad)


def test_mimic_chains_resolve_in_linear_time_and_overflowing_ones_are_refused():
    n = 4000
    body = "".join(LINK.format(f"l{i}") for i in range(n + 1))
    body += joint_xml("j0", "l0", "l1")
    body += "".join(joint_xml(f"j{i}", f"l{i}", f"l{i + 1}", extra=f'<mimic joint="j{i - 1}"/>') for i in range(1, n))
    model = RobotModel.from_urdf(robot_xml(body))
    assert model.joint_names == ["j0"]
    tau = model.gravity_torques(np.array([0.3]))
    assert np.all(np.isfinite(tau))
    chain = "".join(
        joint_xml(f"j{i}", f"l{i}", f"l{i + 1}", "prismatic", f'<mimic joint="j{i - 1}" multiplier="1e9"/>')
        for i in range(1, 40)
    )
    with pytest.raises(ModelError, match="mimic chain"):
        RobotModel.from_urdf(
            robot_xml("".join(LINK.format(f"l{i}") for i in range(41)) + joint_xml("j0", "l0", "l1") + chain)
        )
