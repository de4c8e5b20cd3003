"""Hostile robot descriptions: refused with a clear ModelError, nothing read from disk or network,
memory bounded. (Malformed but honest URDFs are in test_adversarial_urdfs.py.)"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap

import pytest

from rnea_ros import ModelError, RobotModel
from rnea_ros.dynamics.urdf import MAX_DESCRIPTION_BYTES, MAX_LINKS
from rnea_ros.testing.random_urdf import LINK, joint_xml, robot_xml

BILLION_LAUGHS = (
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
    + "".join(f'<!ENTITY lol{k} "{f"&lol{k - 1};" * 10 if k > 1 else "&lol;" * 10}">' for k in range(1, 10))
    + ']><robot name="&lol9;"><link name="a"/></robot>'
)
QUADRATIC_BLOWUP = (
    f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "{"x" * 100_000}">]>'
    f'<robot name="r"><link name="{"&a;" * 10_000}"/></robot>'
)

HOSTILE = {
    "billion laughs": (BILLION_LAUGHS, "DOCTYPE"),
    "quadratic blowup": (QUADRATIC_BLOWUP, "DOCTYPE"),
    "parameter entity": (
        '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]><robot name="r"/>',
        "DOCTYPE",
    ),
    "non-UTF-8 bytes": (
        b'<?xml version="1.0" encoding="utf-8"?><robot name="\xff\xfe"><link name="a"/></robot>',
        "not valid text",  # decoded as the declaration says before parsing
    ),
    "lone surrogate": ('<robot name="\udcff"><link name="a"/></robot>', "not valid text"),
    "empty string": ("", "empty"),
    "only whitespace": (" \n\t", "empty"),
    "NUL bytes": ("\x00" * 100, "not well-formed"),
    "infinite origin": (
        robot_xml(LINK.format("a") + LINK.format("b") + joint_xml("j", "a", "b", extra='<origin xyz="inf 0 0"/>')),
        "non-finite",
    ),
    "huge mass": (robot_xml('<link name="a"><inertial><mass value="1e300"/></inertial></link>'), "out of range"),
    "huge axis": (
        robot_xml(LINK.format("a") + LINK.format("b") + joint_xml("j", "a", "b", extra='<axis xyz="1e300 0 0"/>')),
        "out of range",
    ),
    "oversized": ("<robot>" + " " * (MAX_DESCRIPTION_BYTES + 1) + "</robot>", "MiB limit"),
    "too many links": (robot_xml("".join(LINK.format(f"l{i}") for i in range(MAX_LINKS + 1))), "over the limit"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_description_is_refused(case):
    urdf, expected = HOSTILE[case]
    with pytest.raises(ModelError, match=expected):
        RobotModel.from_urdf(urdf)


def test_billion_laughs_memory_stays_bounded():
    """Parsed in a fresh process whose peak RSS is then read: no expansion means no gigabytes."""
    code = textwrap.dedent(
        f"""
        import resource, sys
        from rnea_ros import ModelError, RobotModel
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            RobotModel.from_urdf({BILLION_LAUGHS!r})
        except ModelError:
            pass
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert int(result.stdout) < 50_000  # KiB


def test_external_dtd_and_entities_are_never_fetched(tmp_path):
    """A listening socket and a readable file are named; neither is touched."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.5)
    port = server.getsockname()[1]
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET")
    attempts = [
        f'<?xml version="1.0"?><!DOCTYPE robot SYSTEM "http://127.0.0.1:{port}/robot.dtd"><robot name="r"/>',
        f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY e SYSTEM "http://127.0.0.1:{port}/e">]><robot name="&e;"/>',
        f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY e SYSTEM "file://{secret}">]><robot name="&e;"/>',
    ]
    for urdf in attempts:
        with pytest.raises(ModelError):
            RobotModel.from_urdf(urdf)
    with pytest.raises(TimeoutError):
        server.accept()
    server.close()


def test_xinclude_is_not_processed(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET")
    urdf = (
        '<robot name="r" xmlns:xi="http://www.w3.org/2001/XInclude">'
        f'<link name="a"/><xi:include href="{secret}" parse="text"/></robot>'
    )
    model = RobotModel.from_urdf(urdf)
    assert model.link_names == ["a"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_ten_thousand_link_tree_is_built_within_memory():
    code = textwrap.dedent(
        """
        import random, resource, sys
        import numpy as np
        from rnea_ros.testing.random_urdf import LINK, joint_xml, robot_xml
        from rnea_ros import RobotModel
        rng = random.Random(1)
        n = 10_000
        body = "".join(LINK.format(f"l{i}") for i in range(n))
        body += "".join(joint_xml(f"j{i}", f"l{rng.randrange(i)}", f"l{i}") for i in range(1, n))
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        model = RobotModel.from_urdf(robot_xml(body))
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        tau = model.inverse_dynamics(np.zeros(model.nq), np.zeros(model.nv), np.ones(model.nv))
        print(grown, model.nv, bool(np.all(np.isfinite(tau))))
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    grown, nv, finite = result.stdout.split()
    assert int(grown) < 500_000  # KiB
    assert int(nv) == 10_000 - 1 and finite == "True"
