"""Messages of a fixed layout as CDR bytes (no ROS import): written from a template whose numbers
are rewritten in place for each publish (``Publisher.publish`` takes the bytes as they are), and
an Odometry read at its offsets.

rclpy converts a Python message to its C structure at every publish: a JointState's names one string
at a time, an Odometry's nested messages and two 36-value covariances. At 1 kHz that was most of a
state's cost in rnea_sim (joint_states and base_odometry: 79 and 88 µs of CPU each, 2026-11-29,
load ~6) and in rnea_node (its outputs). A message whose strings and lengths do not change (a
robot's joint names, a frame) has its numbers at fixed offsets: they are written with numpy and the
bytes sent, what rclpy's serializer writes for the same message (XCDR1, little endian; layout in
``trajectory_cdr``). Reading is the same on the other side: rclpy's Odometry object (nested messages,
two 36-value covariances) cost rnea_node ~100 µs a message at 1 kHz, its 13 numbers read here ~10.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

HEADER = 4  # the encapsulation header; alignment counts from its end
LITTLE_ENDIAN = (b"\x00\x01", b"\x00\x03")  # plain CDR and PL_CDR
COVARIANCE = 36


class OdometryValues(NamedTuple):
    stamp: tuple[int, int]  # header.stamp (sec, nanosec)
    child_frame_id: str
    pose: tuple[float, ...]  # x, y, z, qx, qy, qz, qw
    twist: tuple[float, ...]  # linear x, y, z, angular x, y, z


def read_odometry(data: bytes) -> OdometryValues | None:
    """A nav_msgs/Odometry's stamp, child frame, pose and twist from its CDR bytes; None when they are
    not little-endian CDR or end early (the caller reads them with rclpy then, or refuses them)."""
    if len(data) < HEADER + 16 or bytes(data[:2]) not in LITTLE_ENDIAN:
        return None
    try:
        stamp = struct.unpack_from("<iI", data, HEADER)
        at = _after_string(data, HEADER + 8)  # header.frame_id
        at += -(at - HEADER) % 4
        (length,) = struct.unpack_from("<I", data, at)
        child = bytes(data[at + 4 : at + 3 + length]).decode("utf-8", errors="replace") if length else ""
        at = _after_string(data, at)
        at += -(at - HEADER) % 8
        pose = struct.unpack_from("<7d", data, at)
        twist = struct.unpack_from("<6d", data, at + 8 * (7 + COVARIANCE))
        struct.unpack_from("<36d", data, at + 8 * (7 + COVARIANCE + 6))  # the message is whole
    except struct.error:
        return None
    return OdometryValues(stamp, child, pose, twist)


def _after_string(data: bytes, at: int) -> int:
    (length,) = struct.unpack_from("<I", data, at)
    if at + 4 + length > len(data):
        raise struct.error("a string beyond the message's end")
    return at + 4 + length


class CdrTemplate:
    """A message's CDR bytes built field by field in order, with named places for its numbers:
    ``stamp`` (a builtin_interfaces/Time), ``doubles`` (a float64 sequence or fixed array). Once
    built, ``set_stamp`` and ``set`` write them and ``message`` is the bytes to publish."""

    def __init__(self) -> None:
        self._data = bytearray(b"\x00\x01\x00\x00")
        self._places: dict[str, tuple[int, int]] = {}  # name: (first float64 index after HEADER, count)
        self._stamp_at = -1
        self._end = 0
        self._words: np.ndarray | None = None
        self._doubles: np.ndarray | None = None

    def _align(self, size: int) -> None:
        self._data.extend(b"\x00" * (-(len(self._data) - HEADER) % size))

    def stamp(self) -> CdrTemplate:
        self._align(4)
        self._stamp_at = len(self._data)
        self._data.extend(bytes(8))
        return self

    def string(self, text: str) -> CdrTemplate:
        data = text.encode("utf-8") + b"\x00"
        self._align(4)
        self._data.extend(struct.pack("<I", len(data)) + data)
        return self

    def strings(self, texts: Sequence[str]) -> CdrTemplate:
        self._align(4)
        self._data.extend(struct.pack("<I", len(texts)))
        for text in texts:
            self.string(text)
        return self

    def doubles(self, name: str, count: int, sequence: bool = True) -> CdrTemplate:
        """``count`` float64 values (zero), named; ``sequence``: with their count first (a ``float64[]``),
        else a fixed array (``float64[36]``) or consecutive fields (a Vector3's x, y, z)."""
        if sequence:
            self._align(4)
            self._data.extend(struct.pack("<I", count))
        if count:  # an empty sequence has no padding after its count
            self._align(8)
        self._places[name] = ((len(self._data) - HEADER) // 8, count)
        self._data.extend(bytes(8 * count))
        return self

    def done(self) -> CdrTemplate:
        """The layout is complete: the numbers can be written from now on."""
        self._end = len(self._data)
        self._align(8)  # whole float64 words from the header on, for the view (the padding is not sent)
        buffer = np.frombuffer(self._data, dtype=np.uint8)
        self._doubles, self._words = buffer[HEADER:].view("<f8"), buffer.view("<u4")
        return self

    def set(self, name: str, values) -> None:
        first, count = self._places[name]
        self._doubles[first : first + count] = values

    def set_stamp(self, sec: int, nanosec: int) -> None:
        self._words[self._stamp_at // 4] = sec & 0xFFFFFFFF
        self._words[self._stamp_at // 4 + 1] = nanosec

    def message(self) -> bytes:
        return bytes(self._data[: self._end])
