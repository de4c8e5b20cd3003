"""Declares a node's parameters from their specification (``rnea_ros.parameter_spec``):
each with its description, range or choices and read-only flag, as ros2_control does."""

from __future__ import annotations

from collections.abc import Sequence

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.exceptions import ParameterException
from rclpy.node import Node
from rclpy.parameter import Parameter

from rnea_ros.parameter_spec import ParameterSpec, constraint_text, typed_values

_ARRAY_TYPES = {"double_array": Parameter.Type.DOUBLE_ARRAY, "string_array": Parameter.Type.STRING_ARRAY}


def descriptor(spec: ParameterSpec) -> ParameterDescriptor:
    described = ParameterDescriptor(description=spec.description, read_only=spec.read_only)
    if spec.range is not None and spec.type == "double":
        described.floating_point_range = [FloatingPointRange(from_value=spec.range[0], to_value=spec.range[1])]
    elif spec.range is not None and spec.type == "int":
        low, high = (int(x) for x in spec.range)
        described.integer_range = [IntegerRange(from_value=low, to_value=high)]
    described.additional_constraints = constraint_text(spec)  # what ``ros2 param describe`` shows
    return described


def declare(node: Node, specs: Sequence[ParameterSpec]) -> dict[str, object]:
    """Declares every parameter of ``specs``; returns their typed values (ValueError when one is invalid).

    An array whose default is empty is declared with its type and no value (rclpy would take an
    empty list for a byte array): unset reads as empty, and a params file or a live set gives it one."""
    for spec in specs:
        try:
            if spec.type in _ARRAY_TYPES and not spec.default:
                node.declare_parameter(spec.name, _ARRAY_TYPES[spec.type], descriptor(spec))
            else:
                default = list(spec.default) if isinstance(spec.default, tuple) else spec.default
                node.declare_parameter(spec.name, default, descriptor(spec))
        except ParameterException as error:  # an override out of its range, or of the wrong type
            raise ValueError(f"{spec.name}: {str(error).split('Reason: ')[-1]}") from error
    raw = {spec.name: node.get_parameter_or(spec.name).value for spec in specs}
    return typed_values(specs, raw)


def changes(parameters: list[Parameter]) -> dict[str, object]:
    return {p.name: p.value for p in parameters}
