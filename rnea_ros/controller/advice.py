"""What rnea_node says when a newcomer's usual mistake leaves it without a model or without
joint_states: the remedy in one line (plain Python, no rclpy): a params file keyed for another
node, a file path given as robot_description, a namespace other than the driver's."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

import numpy as np

PARAMS_FILE_REMEDY = (
    "a params file from `rnea_gains model.urdf --with-description > robot.yaml`, "
    "given as --ros-args --params-file robot.yaml"
)


def no_description(topic: str, publishers: int, params_file_given: bool, keys_note: str | None = None) -> str:
    """Why there is no model yet, and the two ways to give one (the topic or a parameter).
    ``keys_note``: what the params files hold for other nodes (``description_keys``)."""
    who = f"{publishers} publisher(s), none has sent a valid one" if publishers else "nothing publishes it"
    text = f"no robot model yet: no valid robot_description on '{topic}' ({who})"
    if keys_note:
        text += f"; {keys_note}"
    elif params_file_given:
        text += "; the params file given sets no robot_description for this node (made without --with-description?)"
    return f"{text}; the other way is the robot_description parameter: {PARAMS_FILE_REMEDY}"


def no_description_said(topic: str, publishers: int, argv: Sequence[str], node_name: str) -> str:
    """``no_description`` for a node started with ``argv`` (its params files read for other nodes' keys)."""
    files = params_files(argv)
    return no_description(topic, publishers, bool(files), description_keys(files, node_name) if files else None)


def params_files(argv: Sequence[str]) -> list[str]:
    """The files given as ``--params-file FILE`` on a command line."""
    return [argv[k + 1] for k, word in enumerate(argv[:-1]) if word == "--params-file"]


def description_keys(files: Sequence[str], node_name: str) -> str | None:
    """When the params ``files`` set robot_description under keys that are not this node's
    (``node_name``: fully qualified, e.g. /rnea_node), the keys found and the ones that would be;
    None when they hold no robot_description at all, or a file cannot be read."""
    import yaml  # a params file is YAML; only read when there is no model

    found: dict[str, bool] = {}  # key -> sets robot_description
    try:
        for path in files:
            with open(path, encoding="utf-8") as file:
                content = yaml.safe_load(file)
            for key, value in (content or {}).items() if isinstance(content, dict) else ():
                parameters = value.get("ros__parameters") if isinstance(value, dict) else None
                found[str(key)] = isinstance(parameters, dict) and "robot_description" in parameters
    except (OSError, yaml.YAMLError):
        return None
    elsewhere = [key for key, has in found.items() if has]
    if not elsewhere:
        return None
    short = node_name.rsplit("/", 1)[-1]
    return (
        f"the params file sets robot_description under {elsewhere}, which is not this node's name: its keys are "
        f"{list(found)}, this node is '{node_name}'; key it '/**' (every node), '{node_name}' or '{short}', "
        "or run the node in the namespace the key names (-r __ns:=...)"
    )


def file_path_given(description: str) -> str | None:
    """When robot_description is a file's path rather than its text: what to give instead; None otherwise."""
    text = description.strip()
    if not text or text.startswith("<") or "\n" in text or len(text) > 4096:
        return None
    looks_like_a_file = text.endswith((".urdf", ".xacro", ".xml")) or "/" in text
    if not looks_like_a_file:
        return None
    exists = "an existing file" if os.path.isfile(os.path.expanduser(text)) else "a file name"
    return (
        f"robot_description is {exists} ('{text[:200]}'), not a URDF's text: the parameter takes the XML itself. "
        f'Give {PARAMS_FILE_REMEDY}, or -p robot_description:="$(cat {text[:200]})" for a small URDF'
    )


def refuse_a_file_path(description: str) -> None:
    """ValueError saying so when robot_description is a file path (``file_path_given``)."""
    if said := file_path_given(description):
        raise ValueError(said)


def first_clips(outputs, warned: set[str]) -> tuple[list[str], str] | None:
    """The command joints of ``outputs`` (torques.Outputs) at their effort limit that ``warned`` lacks,
    and the line that says so (the limit, and the feed-forward asked there); None when there are none."""
    live = outputs.live
    at_limit = np.flatnonzero(np.abs(outputs.commands) >= live.bound.command_limits)
    new = [k for k in at_limit if live.bound.command_names[k] not in warned]
    if not new:
        return None
    said = ", ".join(
        f"'{live.bound.command_names[k]}' at {live.bound.command_limits[k]:g} N·m "
        f"(feed-forward {outputs.tau[live.bound.command_order[k]]:.1f} N·m)"
        for k in new
    )
    return [live.bound.command_names[k] for k in new], (
        f"effort_commands clipped to the URDF's effort limit: {said}; a joint that cannot hold the robot "
        "against gravity sags (rnea_gains warns of it at the pose); /diagnostics counts every clip"
    )


def namespace_hint(topic: str, elsewhere: Sequence[tuple[str, Sequence[str]]]) -> str | None:
    """No publisher on this node's joint_states ``topic``, while ``elsewhere`` (topic, publishing
    nodes) carry sensor_msgs/JointState: the node is likely in another namespace than the driver."""
    if not elsewhere:
        return None
    seen = ", ".join(f"'{name}' (from {list(nodes)[:3]})" for name, nodes in elsewhere[:5])
    first = elsewhere[0][0]
    return (
        f"nothing publishes '{topic}', while joint states are published on {seen}: a namespace (-r __ns:=...) "
        f"or remapping that differs from the driver's? Remap the input: -r joint_states:={first}"
    )


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
