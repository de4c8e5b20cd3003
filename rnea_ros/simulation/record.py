"""rnea_sim's ``record_file`` (no ROS): every published state, written as one .npz when the
simulation ends (atomically: an interrupted write leaves no half a file)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

MAX_RECORDED = 3_600_000  # one hour at 1 kHz; later states are not recorded (with a warning)


class Record:
    """(stamp, q, qd, effort[, contact positions, wrenches, base position, orientation]) per published state."""

    def __init__(self, path: str, floating_base: bool, logger) -> None:
        self.path, self.floating_base, self.logger = path, floating_base, logger
        self.states: list[tuple] = []

    def add(self, stamp: float, position, velocity, effort, robot) -> None:
        if len(self.states) < MAX_RECORDED:
            state = (stamp, position, velocity, effort)
            if self.floating_base:
                state += (robot.contact_positions(), robot.contact_wrenches(), *robot.base_state()[:2])
            self.states.append(state)
        elif len(self.states) == MAX_RECORDED:
            self.logger.warning(f"record_file: only the first {MAX_RECORDED} states are kept", once=True)

    def write(self, robot, log_error: Callable[[str], None]) -> None:
        path = Path(self.path)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            with open(temporary, "wb") as file:
                np.savez(file, **self._arrays(robot))
            os.replace(temporary, path)
        except OSError as error:
            temporary.unlink(missing_ok=True)
            log_error(f"record_file '{path}' not written: {error.strerror or error}")

    def _arrays(self, robot) -> dict[str, np.ndarray]:
        columns = list(zip(*self.states, strict=True)) if self.states else [(), (), (), ()]
        floating = {}
        if self.floating_base:
            # ground truth of the contacts: each link's origin in the world, the ground's wrench on it
            # in its frame about its origin (as estimated_contact_wrenches)
            floating = {
                "contact_links": np.array(robot.options.contact_links),
                "contact_position": np.array(columns[4] if self.states else ()),
                "contact_wrench": np.array(columns[5] if self.states else ()),
                # the base link's origin in the world and its orientation (x, y, z, w)
                "base_position": np.array(columns[6] if self.states else ()),
                "base_orientation": np.array(columns[7] if self.states else ()),
            }
        return {
            "joint_names": np.array(robot.joint_names),
            "stamp": np.array(columns[0]),
            "position": np.array(columns[1]),
            "velocity": np.array(columns[2]),
            "effort": np.array(columns[3]),
            **floating,
        }


def unwritable(record_file: str) -> str | None:
    """Why ``record_file`` cannot be written (a file made and removed beside it), or None."""
    path = Path(record_file)
    if path.is_dir():
        return "it is a directory"
    probe = path.with_name(f".{path.name}.{os.getpid()}.probe")
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        return str(error.strerror or error)
    return None
