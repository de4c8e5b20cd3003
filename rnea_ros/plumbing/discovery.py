"""Faster DDS discovery for rnea_node's own participant, where the user has chosen nothing.

With Fast DDS's defaults a participant announces itself 5 times 100 ms apart, then every 3 s: when
a driver started before the node misses those first announcements, the node's first answer waits
for the next one (a first answer after 1.5 s or after 3.5 s, as the announcements fell). The
packaged profile (``fast_dds_discovery.xml``) announces 20 times 50 ms apart, then every second.
It is used only with Fast DDS, and never over a profile, a QoS file or a discovery server the user
set; ``RNEA_DDS_PROFILE=0`` keeps Fast DDS's defaults."""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from pathlib import Path

PROFILE = Path(__file__).with_name("fast_dds_discovery.xml")
OPT_OUT = "RNEA_DDS_PROFILE"
FAST_DDS = ("rmw_fastrtps_cpp", "rmw_fastrtps_dynamic_cpp")  # Jazzy's default is the first
USER_CHOICES = (
    "FASTRTPS_DEFAULT_PROFILES_FILE",
    "FASTDDS_DEFAULT_PROFILES_FILE",
    "RMW_FASTRTPS_USE_QOS_FROM_XML",
    "ROS_DISCOVERY_SERVER",
)


def use_fast_discovery(environ: MutableMapping[str, str] = os.environ) -> Path | None:
    """Points Fast DDS at the packaged profile unless the user chose otherwise (see the module);
    before ``rclpy.init``. Returns the profile used, or None."""
    if environ.get(OPT_OUT, "1") == "0" or environ.get("RMW_IMPLEMENTATION", FAST_DDS[0]) not in FAST_DDS:
        return None
    if any(environ.get(name) for name in USER_CHOICES) or not PROFILE.is_file():
        return None
    environ["FASTRTPS_DEFAULT_PROFILES_FILE"] = str(PROFILE)
    return PROFILE
