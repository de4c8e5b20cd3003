"""One specification per node's parameters, from which everything else about them is made.

Plain Python (no rclpy), after ros2_control's generate_parameter_library: each node lists its
parameters once as ``ParameterSpec`` rows (name, type, default, description, range or
choices, read-only). From that list come

- the ROS declarations with their descriptors (``rnea_ros.node.ros_parameters.declare``),
- the typed values a node reads (``typed_values``: tuples for arrays, no ``[""]``),
- the node's settings defaults (``defaults``),
- ``config/<node>.yaml`` (``render_yaml``) and the documentation's parameter tables
  (``render_markdown``); ``python -m rnea_ros.parameter_spec`` rewrites both, and a test fails
  when either differs from what the specification gives.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, make_dataclass

TYPES = ("bool", "int", "double", "string", "double_array", "string_array")
_PYTHON = {"bool": bool, "int": int, "double": float, "string": str}


@dataclass(frozen=True)
class ParameterSpec:
    name: str
    type: str  # one of TYPES
    default: object  # in its typed form: tuples for arrays
    description: str
    read_only: bool = False
    range: tuple[float, float] | None = None  # inclusive bounds of a number
    choices: tuple[str, ...] = ()  # the values a string may take
    details: str = ""  # more than one line's worth, for the config file and the docs

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"parameter '{self.name}': type must be one of {TYPES}, got '{self.type}'")
        typed(self, self.default)  # a default that does not fit its own type is a bug in the table


def typed(spec: ParameterSpec, value: object) -> object:
    """A ROS parameter value in the spec's Python form (ValueError when it does not fit):
    arrays as tuples, string arrays without empty entries (None, an unset array, is empty)."""
    if spec.type.endswith("_array"):
        values = () if value is None else tuple(value)
        if spec.type == "string_array":
            return tuple(str(v) for v in values if v)
        return tuple(float(v) for v in values)
    if spec.type == "double":
        number = float(value)
    elif spec.type == "int":
        if isinstance(value, bool) or int(value) != value:
            raise ValueError(f"{spec.name} must be an integer, got {value!r}")
        number = int(value)
    else:
        text = _PYTHON[spec.type](value)
        if spec.choices and text not in spec.choices:
            raise ValueError(f"{spec.name} must be one of {list(spec.choices)}, got {text!r}")
        return text
    if spec.range is not None and not (spec.range[0] <= number <= spec.range[1]):
        raise ValueError(f"{spec.name} must be within [{spec.range[0]:g}, {spec.range[1]:g}], got {number}")
    if not math.isfinite(number):
        raise ValueError(f"{spec.name} must be finite, got {number}")
    return number


def typed_values(specs: Sequence[ParameterSpec], values: Mapping[str, object]) -> dict[str, object]:
    """Each value of ``values`` (a subset of the specs' names) in its typed form."""
    by_name = {spec.name: spec for spec in specs}
    return {name: typed(by_name[name], value) for name, value in values.items()}


def defaults(specs: Iterable[ParameterSpec]) -> dict[str, object]:
    return {spec.name: spec.default for spec in specs}


_ANNOTATIONS = {
    "bool": bool,
    "int": int,
    "double": float,
    "string": str,
    "double_array": tuple[float, ...],
    "string_array": tuple[str, ...],
}


def settings_class(name: str, specs: Sequence[ParameterSpec]) -> type:
    """A frozen dataclass with one typed field per parameter, defaulting to the spec's default."""
    fields = [(spec.name, _ANNOTATIONS[spec.type], field(default=spec.default)) for spec in specs]
    return make_dataclass(name, fields, frozen=True)


def _yaml_value(spec: ParameterSpec, value: object) -> str:
    if spec.type == "bool":
        return "true" if value else "false"
    if spec.type == "string":
        return f'"{value}"'
    if spec.type == "string_array":
        return "[" + ", ".join(f'"{v}"' for v in value) + "]"
    if spec.type == "double_array":
        return "[" + ", ".join(repr(float(v)) for v in value) + "]"
    return repr(value)


def _constraint(spec: ParameterSpec) -> str:
    if spec.range is not None:
        return f"[{spec.range[0]:g}, {spec.range[1]:g}]"
    if spec.choices:
        return " | ".join(spec.choices)
    return ""


def _wrapped(text: str, width: int = 96) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line] if line else lines


def render_yaml(node: str, specs: Sequence[ParameterSpec]) -> str:
    """``config/<node>.yaml``: every parameter with its default and its description as comments.
    Empty arrays are written commented out: an unset array parameter is empty."""
    out = [
        f"# Parameters of {node} (all optional; the values below are the defaults). Made by",
        "# `python -m rnea_ros.parameter_spec` from the specification in the package: edit that, not this.",
        "# Keyed /** so that the file applies under any namespace and node name.",
        "/**:",
        "  ros__parameters:",
    ]
    for spec in specs:
        text = spec.description + (f" {spec.details}" if spec.details else "")
        notes = [n for n in (_constraint(spec), "read-only" if spec.read_only else "") if n]
        if notes:
            text += f" ({'; '.join(notes)})"
        out += [f"    # {line}" for line in _wrapped(text)]
        empty_array = spec.type.endswith("_array") and not spec.default
        out.append(f"    {'# ' if empty_array else ''}{spec.name}: {_yaml_value(spec, spec.default)}")
    return "\n".join(out) + "\n"


def render_markdown(node: str, specs: Sequence[ParameterSpec]) -> str:
    """The documentation's table of one node's parameters."""
    rows = [
        f"## {node}",
        "",
        "| name | type | default | range / choices | read-only | description |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for spec in specs:
        text = (spec.description + (f" {spec.details}" if spec.details else "")).replace("|", "\\|")
        constraint = _constraint(spec).replace("|", "\\|")
        default = _yaml_value(spec, spec.default)
        read_only = "yes" if spec.read_only else ""
        rows.append(f"| `{spec.name}` | {spec.type} | `{default}` | {constraint} | {read_only} | {text} |")
    return "\n".join(rows) + "\n"


def generated_files() -> dict[str, str]:
    """Path (relative to the checkout) → text of every file made from the specifications."""
    from rnea_ros.node.parameters import NODE_PARAMETERS
    from rnea_ros.simulation.parameters import SIM_PARAMETERS

    reference = (
        "# Parameters\n\n"
        "Made by `python -m rnea_ros.parameter_spec` from the specifications in the package "
        "(`rnea_ros/node/parameters.py`, `rnea_ros/simulation/parameters.py`); "
        "the same tables give the nodes' declarations and `config/*.yaml`.\n\n"
        + render_markdown("rnea_node", NODE_PARAMETERS)
        + "\n"
        + render_markdown("rnea_sim", SIM_PARAMETERS)
    )
    return {
        "config/rnea.yaml": render_yaml("rnea_node", NODE_PARAMETERS),
        "config/sim.yaml": render_yaml("rnea_sim", SIM_PARAMETERS),
        "docs/reference/parameters.md": reference,
    }


def main() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    for relative, text in generated_files().items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {relative}")


if __name__ == "__main__":
    main()
