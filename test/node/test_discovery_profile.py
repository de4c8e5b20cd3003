"""rnea_node's Fast DDS discovery profile (plumbing/discovery.py): used only where the user chose
nothing, and a profile Fast DDS reads (its XML schema's elements, as ``xmllint`` would not know them:
checked against what the module promises)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from lxml import etree

from rnea_ros.plumbing.discovery import PROFILE, use_fast_discovery
from rnea_ros.testing.domain import reserve_domain_id

NS = {"p": "http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles"}


def test_with_nothing_chosen_the_node_uses_the_packaged_profile():
    environ: dict[str, str] = {}
    assert use_fast_discovery(environ) == PROFILE
    assert environ == {"FASTRTPS_DEFAULT_PROFILES_FILE": str(PROFILE)}
    assert use_fast_discovery({"RMW_IMPLEMENTATION": "rmw_fastrtps_dynamic_cpp"}) == PROFILE


@pytest.mark.parametrize(
    "chosen",
    [
        {"FASTRTPS_DEFAULT_PROFILES_FILE": "/home/me/dds.xml"},
        {"FASTDDS_DEFAULT_PROFILES_FILE": "/home/me/dds.xml"},
        {"RMW_FASTRTPS_USE_QOS_FROM_XML": "1"},
        {"ROS_DISCOVERY_SERVER": "127.0.0.1:11811"},
        {"RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"},
        {"RNEA_DDS_PROFILE": "0"},
    ],
)
def test_a_users_own_choice_is_left_alone(chosen):
    environ = dict(chosen)
    assert use_fast_discovery(environ) is None
    assert environ == chosen


def test_the_profile_is_the_default_participant_profile_it_says():
    root = etree.parse(str(PROFILE)).getroot()
    participant = root.find("p:participant", NS)
    assert participant.get("is_default_profile") == "true"
    discovery = participant.find("p:rtps/p:builtin/p:discovery_config", NS)
    assert discovery.findtext("p:initialAnnouncements/p:count", namespaces=NS) == "20"
    assert discovery.findtext("p:initialAnnouncements/p:period/p:nanosec", namespaces=NS) == "50000000"
    assert discovery.findtext("p:leaseAnnouncement/p:sec", namespaces=NS) == "1"


DOMAIN_ID = str(reserve_domain_id())
PROBE = "import rclpy; rclpy.init(); node = rclpy.create_node('probe'); node.destroy_node(); rclpy.shutdown()"


def fast_dds_errors(profile: Path, tmp_path: Path) -> str:
    env = {**os.environ, "ROS_DOMAIN_ID": DOMAIN_ID, "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    env["FASTRTPS_DEFAULT_PROFILES_FILE"] = str(profile)
    env.pop("FASTDDS_DEFAULT_PROFILES_FILE", None)
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    output = done.stdout + done.stderr  # Fast DDS logs its errors on stdout
    return "\n".join(line for line in output.splitlines() if "XMLPARSER" in line)


@pytest.mark.ros
@pytest.mark.slow  # two processes that start rclpy: ~1 s of CPU each, 75 s of wall-clock time at load 15
def test_fast_dds_reads_the_profile_without_an_error(tmp_path):
    assert fast_dds_errors(PROFILE, tmp_path) == ""
    broken = tmp_path / "broken.xml"  # the same check sees a profile Fast DDS refuses
    broken.write_text(PROFILE.read_text().replace("<count>20</count>", "<counts>20</counts>"))
    assert "Error parsing" in fast_dds_errors(broken, tmp_path)
