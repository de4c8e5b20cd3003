"""Recorded efforts in the model's units: effort = scale · recorded + offset, per joint.

Real drivers report what their motors see: a current [A], or a torque on the motor side of the
gearbox, sometimes with the opposite sign. A conversion file says, per joint, how to get the
link-side torque [N·m] (force [N] for a prismatic joint) the model computes::

    # effort = scale × recorded + offset  (joints not named: as recorded)
    joint_a1: {scale: -1.2}            # gear ratio 100 × torque constant 0.012 N·m/A, sign −1
    joint_a2: {scale: 1.2, offset: 0.3}
    joint_a3: 0.85                     # a number alone is the scale

A joint whose effort is not measured is left out of the conversion and recorded as an empty field
or ``nan`` (CSV) or a shorter effort array (bags).
"""

from __future__ import annotations

import difflib
import math
from pathlib import Path

import numpy as np

from rnea_ros.analysis.recording import RecordingError
from rnea_ros.dynamics.corrections import MAX_FILE_BYTES, CorrectionsError, read_small_file, strict_yaml

MAX_SCALE = 1e6


class EffortConversion:
    """Per joint (scale, offset); ``apply`` converts an (N, nv) effort array in model order."""

    def __init__(self, terms: dict[str, tuple[float, float]], not_measured: tuple[str, ...] = ()) -> None:
        self.terms = dict(terms)
        self.not_measured = tuple(not_measured)  # joints whose recorded effort is no measurement: NaN

    def without(self, joints: list[str]) -> EffortConversion:
        """This conversion, the efforts of ``joints`` taken as not measured (NaN): a driver that
        reports 0 for a joint it has no torque of (TIAGo's wrist)."""
        return EffortConversion(self.terms, self.not_measured + tuple(joints))

    def arrays(self, joint_names: list[str]) -> tuple[np.ndarray, np.ndarray]:
        unknown = [name for name in self.terms if name not in joint_names]
        if unknown:
            hints = [difflib.get_close_matches(name, joint_names, n=1) for name in unknown]
            said = ", ".join(
                f"'{n}'" + (f" (did you mean '{h[0]}'?)" if h else "") for n, h in zip(unknown, hints, strict=True)
            )
            raise RecordingError(f"--effort-conversion names joints the model does not have: {said}")
        scale = np.array([self.terms.get(name, (1.0, 0.0))[0] for name in joint_names])
        offset = np.array([self.terms.get(name, (1.0, 0.0))[1] for name in joint_names])
        scale[[name in self.not_measured for name in joint_names]] = np.nan
        return scale, offset


def load_effort_conversion(path: Path) -> EffortConversion:
    """The conversion file (see the module's docstring); RecordingError with the reason if it is not one.
    Read as a corrections file is (``dynamics.corrections.read_small_file``, ``strict_yaml``): a regular
    file of at most 1 MiB (a FIFO or a device is refused at once, never waited on or read without end),
    YAML without anchors, aliases or a key given twice."""
    try:
        content = strict_yaml(
            read_small_file(path, MAX_FILE_BYTES, "--effort-conversion file"), f"--effort-conversion {path}"
        )
    except CorrectionsError as error:
        raise RecordingError(str(error)) from error
    if not isinstance(content, dict) or not content:
        raise RecordingError(f"--effort-conversion {path}: expected a mapping joint -> {{scale, offset}}")
    return EffortConversion({str(name): _term(path, str(name), value) for name, value in content.items()})


def _term(path: Path, name: str, value) -> tuple[float, float]:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = {"scale": value}
    if not isinstance(value, dict) or not set(value) <= {"scale", "offset"} or not value:
        raise RecordingError(f"--effort-conversion {path}: '{name}' must be a number or {{scale: s, offset: o}}")
    scale, offset = value.get("scale", 1.0), value.get("offset", 0.0)
    for what, number in (("scale", scale), ("offset", offset)):
        if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number):
            raise RecordingError(f"--effort-conversion {path}: '{name}' {what} must be a finite number, got {number!r}")
    if not 0 < abs(scale) <= MAX_SCALE:
        raise RecordingError(f"--effort-conversion {path}: '{name}' scale must be non-zero and within ±{MAX_SCALE:g}")
    if not abs(offset) <= MAX_SCALE:
        raise RecordingError(f"--effort-conversion {path}: '{name}' offset must be within ±{MAX_SCALE:g}")
    return float(scale), float(offset)
