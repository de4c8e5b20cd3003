"""What rnea_node says when a newcomer's usual mistake leaves it without a model or without
joint_states: the remedy in one line (plain Python, no rclpy)."""

from __future__ import annotations

import re
from collections.abc import Sequence

PARAMS_FILE_REMEDY = (
    "a params file from `rnea_gains model.urdf --with-description > robot.yaml`, "
    "given as --ros-args --params-file robot.yaml"
)


def no_description(topic: str, publishers: int, params_file_given: bool) -> str:
    """Why there is no model yet, and the two ways to give one (the topic or a parameter)."""
    who = f"{publishers} publisher(s), none has sent a valid one" if publishers else "nothing publishes it"
    text = f"no robot model yet: no valid robot_description on '{topic}' ({who})"
    if params_file_given:
        text += "; the params file given sets no robot_description for this node (made without --with-description?)"
    return f"{text}; the other way is the robot_description parameter: {PARAMS_FILE_REMEDY}"


def command_line_error(error: str) -> str | None:
    """rcl's "Couldn't parse parameter override rule" (a URDF in -p: its quotes and newlines) in one
    line with the remedy; None for any other error."""
    if "Couldn't parse parameter override rule" not in error:
        return None
    found = re.search(r"-p ([^:=\s]+):=", error)
    name = found.group(1) if found else "a parameter"
    return (
        f"rnea_node: the command line cannot carry {name} (rcl could not parse '-p {name}:=...'; a URDF's "
        f"quotes and newlines break it): give it in a params file instead: {PARAMS_FILE_REMEDY}"
    )


def best_effort_only(publishers: Sequence[tuple[str, bool]], reliable_reader: bool) -> str | None:
    """``publishers``: (node name, best effort?) of joint_states; a reliable reader gets nothing from
    best-effort publishers, and nothing at all when they are the only ones."""
    best_effort = [name for name, is_best_effort in publishers if is_best_effort]
    if not reliable_reader or not best_effort:
        return None
    only = "only best-effort publishers" if len(best_effort) == len(publishers) else "best-effort publishers"
    return (
        f"joint_states has {only} {best_effort} (sensor-data QoS): this node's reliable subscription gets "
        "nothing from them; set joint_states_qos: sensor_data"
    )
