"""A robot description from a file, for the launch files and the command-line tools (no ROS).

``read_description("robot.urdf.xacro", "prefix:=left_ use_sim:=true")`` runs xacro with those
arguments; a plain URDF is read as it is. Every failure is a ``DescriptionError`` that says what
to fix (never a bare "not enough values to unpack").
"""

from __future__ import annotations

from pathlib import Path


class DescriptionError(ValueError):
    """A description file that cannot be read, or xacro arguments that cannot be used."""


def xacro_mappings(arguments: str) -> dict[str, str]:
    """``"name:=value name2:=value2"`` as a mapping (an empty string: none)."""
    mappings = {}
    for argument in arguments.split():
        name, separator, value = argument.partition(":=")
        if not separator or not name:
            raise DescriptionError(
                f'xacro_args must be space-separated name:=value pairs (e.g. "prefix:=left_ use_sim:=true"), '
                f"got '{argument}' in \"{arguments}\""
            )
        mappings[name] = value
    return mappings


def read_description(path: str | Path, xacro_arguments: str = "") -> str:
    """The URDF text of ``path``: run through xacro (with ``xacro_arguments``) when it ends in .xacro."""
    path = Path(path)
    if not path.is_file():
        raise DescriptionError(f"no robot description file '{path}'")
    mappings = xacro_mappings(xacro_arguments)
    if path.suffix != ".xacro":
        if mappings:
            raise DescriptionError(f"xacro_args given, but '{path.name}' is not a .xacro file")
        return path.read_text(encoding="utf-8")
    import xacro

    try:
        return xacro.process_file(str(path), mappings=mappings).toxml()
    except Exception as error:  # xacro raises many types, each with a readable message
        raise DescriptionError(f"xacro could not process '{path}': {error}") from error
