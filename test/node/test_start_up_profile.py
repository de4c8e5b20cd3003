"""rnea_node's Fast DDS profile (issue 45): used only when the user sets none, and what it sets.

Why it exists (rnea_ros/node/fastdds_start.xml says it at length): Fast DDS 2.14 sends a new
participant's first announcement before it reads its sockets, so the answers of the processes already
running can be dropped, and the node then learns of them only at their next periodic announcement
(up to 3 s). test_start_up.py shows the effect on the node's start; this file, without ROS, shows
when the profile applies and that it is the setting that moves the built-in writers to Fast DDS's
sending thread (a throughput controller, PDP::create_builtin_writer_attributes in Fast DDS 2.14)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from rnea_ros.node.__main__ import FASTDDS_PROFILE, start_profile

NAMESPACE = "{http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles}"


def test_the_profile_is_used_when_the_user_sets_none(tmp_path):
    assert start_profile({}, tmp_path) == FASTDDS_PROFILE
    assert start_profile({"RMW_IMPLEMENTATION": "rmw_fastrtps_cpp"}, tmp_path) == FASTDDS_PROFILE
    assert start_profile({"FASTRTPS_DEFAULT_PROFILES_FILE": ""}, tmp_path) == FASTDDS_PROFILE


@pytest.mark.parametrize(
    "environ",
    [
        {"FASTRTPS_DEFAULT_PROFILES_FILE": "/home/me/my_profile.xml"},
        {"FASTDDS_DEFAULT_PROFILES_FILE": "/home/me/my_profile.xml"},
        {"RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"},
        {"RMW_IMPLEMENTATION": "rmw_zenoh_cpp"},
    ],
)
def test_a_profile_or_middleware_of_the_users_own_is_left_alone(tmp_path, environ):
    assert start_profile(environ, tmp_path) is None


@pytest.mark.parametrize("name", ["DEFAULT_FASTRTPS_PROFILES.xml", "DEFAULT_FASTDDS_PROFILES.xml"])
def test_a_default_profile_in_the_working_directory_is_left_alone(tmp_path, name):
    (tmp_path / name).write_text("<profiles/>")
    assert start_profile({}, tmp_path) is None


def test_the_profile_sets_a_throughput_controller_and_nothing_else():
    root = ET.parse(FASTDDS_PROFILE).getroot()
    participants = root.findall(f"{NAMESPACE}participant")
    assert len(participants) == 1 and participants[0].get("is_default_profile") == "true"
    rtps = participants[0].find(f"{NAMESPACE}rtps")
    assert [child.tag for child in rtps] == [f"{NAMESPACE}throughputController"]
    controller = rtps.find(f"{NAMESPACE}throughputController")
    per_second = int(controller.findtext(f"{NAMESPACE}bytesPerPeriod")) / (
        int(controller.findtext(f"{NAMESPACE}periodMillisecs")) / 1000
    )
    assert per_second > 1e9  # never a limit: discovery traffic is a few kB
    assert len(root) == 1  # no transport, QoS or other profile
