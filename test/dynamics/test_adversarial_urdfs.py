"""The core against Pinocchio on URDFs written to be awkward, and bad URDFs refused clearly."""

from __future__ import annotations

import re

import numpy as np
import pytest

from rnea_ros import ModelError, RobotModel
from rnea_ros.testing.random_urdf import LINK, joint_xml, random_urdf, robot_xml
from rnea_ros.testing.reference import PinocchioReference, assert_close, random_state


@pytest.mark.parametrize("seed", range(40))
def test_random_trees_match_pinocchio(seed):
    rng = np.random.default_rng(seed)
    urdf = random_urdf(rng, n_links=int(rng.integers(2, 25)))
    floating = bool(rng.random() < 0.3)
    model = RobotModel.from_urdf(urdf, floating_base=floating)
    reference = PinocchioReference(urdf, model)
    for _ in range(5):
        q, qd, qdd = random_state(model, rng)
        links = [name for name in model.link_names if name in reference.frames]
        wrenches = {str(link): rng.normal(size=6) for link in rng.choice(links, size=2)}
        assert_close(
            model.inverse_dynamics(q, qd, qdd, wrenches),
            reference.inverse_dynamics(q, qd, qdd, wrenches),
        )
        assert_close(model.gravity_torques(q), reference.gravity_torques(q))


BAD_URDFS = {
    "empty": ("", "empty"),
    "not xml": ("<robot", "well-formed"),
    "wrong root": ("<model/>", "<robot>"),
    "cycle": (
        robot_xml(LINK.format("a") + LINK.format("b") + joint_xml("j1", "a", "b") + joint_xml("j2", "b", "a")),
        "cycle",
    ),
    "two roots": (robot_xml(LINK.format("a") + LINK.format("b")), "several root links"),
    "two parents": (
        robot_xml(
            LINK.format("a")
            + LINK.format("b")
            + LINK.format("c")
            + joint_xml("j1", "a", "c")
            + joint_xml("j2", "b", "c")
        ),
        "two parent joints",
    ),
    "unknown parent": (robot_xml(LINK.format("a") + joint_xml("j1", "x", "a")), "unknown parent link 'x'"),
    "duplicate link": (robot_xml(LINK.format("a") + LINK.format("a")), "duplicate link name 'a'"),
    "nan mass": (
        robot_xml('<link name="a"><inertial><mass value="nan"/></inertial></link>'),
        "link 'a' mass",
    ),
    "negative mass": (
        robot_xml('<link name="a"><inertial><mass value="-1"/></inertial></link>'),
        "negative mass",
    ),
    "zero axis": (
        robot_xml(LINK.format("a") + LINK.format("b") + joint_xml("j1", "a", "b", extra='<axis xyz="0 0 0"/>')),
        "joint 'j1': zero-length axis",
    ),
    "mimic loop": (
        robot_xml(
            LINK.format("a")
            + LINK.format("b")
            + LINK.format("c")
            + joint_xml("j1", "a", "b", extra='<mimic joint="j2"/>')
            + joint_xml("j2", "b", "c", extra='<mimic joint="j1"/>')
        ),
        "mimic loop",
    ),
    "planar": (robot_xml(LINK.format("a") + LINK.format("b") + joint_xml("j1", "a", "b", "planar")), "planar"),
    "inner floating": (
        robot_xml(
            LINK.format("a")
            + LINK.format("b")
            + LINK.format("c")
            + joint_xml("j1", "a", "b")
            + joint_xml("j2", "b", "c", "floating")
        ),
        "joint 'j2': a floating joint is only supported as the root joint",
    ),
    "entities": (
        '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>'
        '<robot name="x"><link name="&b;"/></robot>',
        "DOCTYPE",
    ),
    "external entity": (
        '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
        '<robot name="x"><link name="&e;"/></robot>',
        "DOCTYPE",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_URDFS))
def test_bad_urdf_raises_model_error_naming_the_problem(case):
    urdf, expected = BAD_URDFS[case]
    with pytest.raises(ModelError, match=re.escape(expected)):
        RobotModel.from_urdf(urdf)


def test_model_error_is_a_value_error():
    assert issubclass(ModelError, ValueError)


def test_deep_chain_does_not_recurse():
    n = 5000
    body = "".join(LINK.format(f"l{i}") for i in range(n))
    body += "".join(joint_xml(f"j{i}", f"l{i - 1}", f"l{i}", extra='<axis xyz="0 1 0"/>') for i in range(1, n))
    model = RobotModel.from_urdf(robot_xml(body))
    assert model.nv == n - 1
    assert np.all(np.isfinite(model.gravity_torques(np.zeros(model.nq))))
