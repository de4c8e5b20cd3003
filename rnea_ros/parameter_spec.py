"""One specification per node's parameters, from which everything else about them is made.

Plain Python (no rclpy), after ros2_control's generate_parameter_library: each node lists its
parameters once as ``ParameterSpec`` rows (name, type, default, description, range or choices,
the lengths an array may have, one per link of another parameter, unique entries, read-only).
From that list come

- the ROS declarations with their descriptors (``rnea_ros.plumbing.ros_parameters.declare``),
- the typed and validated values a node reads (``typed``, ``checked_sizes``),
- the node's settings class (``settings_class``: one validated field per parameter),
- ``config/<node>.yaml`` (``render_yaml``) and the documentation's parameter tables
  (``render_markdown``); ``python -m rnea_ros.generate_parameters`` rewrites both, and a test
  fails when either differs from what the specification gives.
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
    element_range: tuple[float, float] | None = None  # inclusive bounds of each value of a double array
    sizes: tuple[int, ...] = ()  # the lengths an array may have (empty: any) ...
    per: str = ""  # ... each also times the length of this string array parameter (one per link)
    unique: bool = False  # no entry of a string array twice
    max_size: int | None = None  # most entries of an array

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"parameter '{self.name}': type must be one of {TYPES}, got '{self.type}'")
        typed(self, self.default)  # a default that does not fit its own type is a bug in the table


def typed(spec: ParameterSpec, value: object) -> object:
    """A ROS parameter value in the spec's Python form (ValueError when it does not fit):
    arrays as tuples, string arrays without empty entries (None, an unset array, is empty)."""
    if spec.type.endswith("_array"):
        return _typed_array(spec, value)
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


def _typed_array(spec: ParameterSpec, value: object) -> tuple:
    values = () if value is None else tuple(value)
    if spec.max_size is not None and len(values) > spec.max_size:
        raise ValueError(f"{spec.name} lists {len(values)} values, at most {spec.max_size}")
    if spec.type == "string_array":
        texts = tuple(str(v) for v in values if v)
        twice = sorted({t for t in texts if texts.count(t) > 1}) if spec.unique else []
        if twice:
            raise ValueError(f"{spec.name} lists {twice} more than once")
        return texts
    numbers = tuple(float(v) for v in values)
    low, high = spec.element_range or (-math.inf, math.inf)
    if not all(math.isfinite(x) and low <= x <= high for x in numbers):
        raise ValueError(f"{spec.name} must be finite{_element_bounds(spec)}, got {list(numbers)}")
    if spec.sizes and not spec.per and len(numbers) not in spec.sizes:
        raise ValueError(f"{spec.name} must have {_sizes_text(spec)}, got {list(numbers)}")
    return numbers


def _element_bounds(spec: ParameterSpec) -> str:
    if spec.element_range is None:
        return ""
    low, high = spec.element_range
    return f" and ≥ {low:g}" if high == math.inf else f" and each in [{low:g}, {high:g}]"


def _sizes_text(spec: ParameterSpec) -> str:
    sizes = " or ".join(str(n) for n in spec.sizes)
    values = "value" if spec.sizes == (1,) else "values"
    return f"{sizes} {values} for all, or {sizes} per entry of {spec.per}" if spec.per else f"{sizes} {values}"


def checked_sizes(specs: Sequence[ParameterSpec], values: Mapping[str, object]) -> None:
    """ValueError unless every array whose length goes with another parameter's (``per``) has
    one of its ``sizes`` for all, or that many per entry of the other."""
    for spec in specs:
        if not spec.per:
            continue
        length, entries = len(values[spec.name]), len(values[spec.per])
        if not any(length in (size, size * entries) for size in spec.sizes):
            raise ValueError(
                f"{spec.name} must have {_sizes_text(spec)} ({entries} entries), got {list(values[spec.name])}"
            )


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


def settings_class(
    name: str, specs: Sequence[ParameterSpec], base: type = object, extra: Sequence[tuple[str, type, object]] = ()
) -> type:
    """A frozen dataclass with one field per parameter, defaulting to the spec's default, whose every
    instance is valid: each value typed and checked (``typed``, ``checked_sizes``) as it is made, then
    ``check()`` when ``base`` (methods of the settings) has one, for rules across parameters.
    ``extra``: (name, type, default) of fields that are no single parameter (a per-joint map), checked there."""

    def validated(self) -> None:  # the dataclass's __post_init__
        for spec in specs:
            object.__setattr__(self, spec.name, typed(spec, getattr(self, spec.name)))
        checked_sizes(specs, {spec.name: getattr(self, spec.name) for spec in specs})
        if hasattr(self, "check"):
            self.check()

    fields = [(spec.name, _ANNOTATIONS[spec.type], field(default=spec.default)) for spec in specs]
    fields += [(extra_name, annotation, field(default=default)) for extra_name, annotation, default in extra]
    cls = make_dataclass(name, fields, bases=(base,), frozen=True, namespace={"__post_init__": validated})
    if base is not object:
        cls.__module__, cls.__doc__ = base.__module__, base.__doc__
    return cls


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


def constraint_text(spec: ParameterSpec) -> str:
    """The spec's range, choices, lengths and entry rules in a few words (descriptors, docs)."""
    parts = []
    if spec.range is not None:
        parts.append(f"[{spec.range[0]:g}, {spec.range[1]:g}]")
    if spec.choices:
        parts.append(" | ".join(spec.choices))
    if spec.element_range is not None:
        low, high = spec.element_range
        parts.append(f"each ≥ {low:g}" if high == math.inf else f"each in [{low:g}, {high:g}]")
    if spec.sizes:
        parts.append(_sizes_text(spec))
    if spec.unique:
        parts.append("unique")
    if spec.max_size is not None:
        parts.append(f"at most {spec.max_size}")
    return "; ".join(parts)


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
        "# `python -m rnea_ros.generate_parameters` from the specification in the package: edit that, not this.",
        "# Keyed /** so that the file applies under any namespace and node name.",
        "/**:",
        "  ros__parameters:",
    ]
    for spec in specs:
        text = spec.description + (f" {spec.details}" if spec.details else "")
        notes = [n for n in (constraint_text(spec), "read-only" if spec.read_only else "") if n]
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
        constraint = constraint_text(spec).replace("|", "\\|")
        default = _yaml_value(spec, spec.default)
        read_only = "yes" if spec.read_only else ""
        rows.append(f"| `{spec.name}` | {spec.type} | `{default}` | {constraint} | {read_only} | {text} |")
    return "\n".join(rows) + "\n"
