"""trajectory_msgs/JointTrajectory read straight from its serialized bytes (no ROS).

rclpy turns a received trajectory into one Python object per point and one ``array.array`` per
field: for a thousand points that is milliseconds of allocations, and the garbage collector's
pauses that follow. A subscription made with ``raw=True`` hands over the CDR bytes instead, and
points that all have the same lengths sit at a fixed stride in them: numpy reads every point's
values with one gather. Messages whose points differ (only hostile or careless senders write
those) are read point by point.

Layout (XCDR1, little endian, as Fast DDS and Cyclone DDS write it): a 4-byte encapsulation
header, then each primitive aligned to its size counted from the end of that header; a string is
a uint32 length (with its terminating NUL) and its bytes; a sequence is a uint32 count then its
elements. An empty float64 sequence has no alignment padding after its count.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from rnea_ros.motion.trajectory import FIELDS, TrajectoryError, uniform_block

CDR_LITTLE_ENDIAN = (b"\x00\x01", b"\x00\x03")  # plain CDR and PL_CDR, little endian
HEADER = 4
MIN_POINT_SIZE = 4 * 4 + 8  # four empty sequences and a Duration


@dataclass(frozen=True)
class TrajectoryMessage:
    """A JointTrajectory's content: per field, an (N, L) array when every point has L values, else
    one array per point (a message whose points differ)."""

    stamp: tuple[int, int]  # header.stamp (sec, nanosec)
    frame_id: str
    joint_names: list[str]
    time_from_start: np.ndarray  # (N,) [s]
    fields: dict[str, np.ndarray | list[np.ndarray]]

    def lengths(self, field: str) -> np.ndarray:
        """How many values each point has in ``field``."""
        values = self.fields[field]
        if isinstance(values, np.ndarray):
            return np.full(len(values), values.shape[1])
        return np.array([len(v) for v in values], dtype=int)


def read_joint_trajectory(data: bytes, max_points: int) -> TrajectoryMessage:
    """The message in ``data`` (a raw subscription's bytes); TrajectoryError("malformed", …) when
    they are not a JointTrajectory, ("too_many_points", …) beyond ``max_points``."""
    if len(data) < HEADER or bytes(data[:2]) not in CDR_LITTLE_ENDIAN:
        raise TrajectoryError("malformed", "joint trajectory: not little-endian CDR")
    reader = _Reader(data)
    sec, nanosec = reader.int32(), reader.uint32()
    frame_id = reader.string()
    joint_names = [reader.string() for _ in range(reader.count(5))]
    n_points = reader.count(MIN_POINT_SIZE)
    if n_points > max_points:
        raise TrajectoryError("too_many_points", f"{n_points} points, at most {max_points}")
    if n_points == 0:
        fields = {field: np.zeros((0, 0)) for field in FIELDS}
        return TrajectoryMessage((sec, nanosec), frame_id, joint_names, np.zeros(0), fields)
    points = _strided_points(data, reader.pos, n_points)
    if points is None:
        points = _points_one_by_one(reader, n_points)
    times, fields = points
    return TrajectoryMessage((sec, nanosec), frame_id, joint_names, times, fields)


class _Reader:
    """A cursor over CDR bytes; every read is checked against their end."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, HEADER

    def _take(self, size: int, align: int) -> int:
        self.pos += -(self.pos - HEADER) % align
        start, self.pos = self.pos, self.pos + size
        if self.pos > len(self.data):
            raise TrajectoryError("malformed", "joint trajectory: the message ends early")
        return start

    def uint32(self) -> int:
        return struct.unpack_from("<I", self.data, self._take(4, 4))[0]

    def int32(self) -> int:
        return struct.unpack_from("<i", self.data, self._take(4, 4))[0]

    def count(self, min_element_size: int) -> int:
        """A sequence's length, bounded by the bytes left (a hostile count allocates nothing)."""
        n = self.uint32()
        if n * min_element_size > len(self.data) - self.pos:
            raise TrajectoryError("malformed", f"joint trajectory: {n} elements cannot fit in the message")
        return n

    def string(self) -> str:
        size = self.count(1)
        start = self._take(size, 1)
        raw = bytes(self.data[start : start + size])
        if size == 0 or raw[-1] != 0:
            raise TrajectoryError("malformed", "joint trajectory: a string without its terminating NUL")
        try:
            return raw[:-1].decode("utf-8")
        except UnicodeDecodeError as error:
            raise TrajectoryError("malformed", "joint trajectory: a string that is not UTF-8") from error

    def doubles(self) -> np.ndarray:
        n = self.count(8)
        if n == 0:
            return np.zeros(0)
        return np.frombuffer(self.data, "<f8", n, self._take(8 * n, 8)).copy()


def _points_one_by_one(reader: _Reader, n_points: int) -> tuple[np.ndarray, dict[str, list[np.ndarray]]]:
    fields: dict[str, list[np.ndarray]] = {field: [] for field in FIELDS}
    times = np.empty(n_points)
    for k in range(n_points):
        for field in FIELDS:
            fields[field].append(reader.doubles())
        times[k] = reader.int32() + reader.uint32() * 1e-9
    return times, {f: _stacked_if_uniform(v) for f, v in fields.items()}


def _stacked_if_uniform(values: list[np.ndarray]) -> np.ndarray | list[np.ndarray]:
    block = uniform_block(values)
    return values if block is None else block


def _point_layout(start: int, lengths: list[int]) -> tuple[list[int], list[int], int, int]:
    """For a point at byte ``start`` whose fields have ``lengths`` values: where each field's count
    and first value are, where its Duration is, and where it ends."""
    pos, counts, values = start, [], []
    for n in lengths:
        pos += -(pos - HEADER) % 4
        counts.append(pos)
        pos += 4
        if n:
            pos += -(pos - HEADER) % 8
        values.append(pos)
        pos += 8 * n
    pos += -(pos - HEADER) % 4
    return counts, values, pos, pos + 8


def _strided_points(data: bytes, start: int, n_points: int) -> tuple[np.ndarray, dict[str, np.ndarray]] | None:
    """Every point read at once, assuming each has the first point's lengths (checked: every count
    read back); None when they differ."""
    words = np.frombuffer(data, "<u4", (len(data) - HEADER) // 4, HEADER)  # 4-aligned from the header
    lengths = []
    pos = start
    for _ in FIELDS:  # the first point's lengths, walking its counts
        pos += -(pos - HEADER) % 4
        if pos + 4 > len(data):
            return None
        n = int(words[(pos - HEADER) // 4])
        lengths.append(n)
        pos += 4 + (-(pos + 4 - HEADER) % 8 if n else 0) + 8 * n
    count_at, value_at, duration_at, end = _point_offsets(start, n_points, lengths)
    if end > len(data):
        return None
    if not np.array_equal(words[(count_at - HEADER) // 4], np.broadcast_to(lengths, count_at.shape)):
        return None
    doubles = np.frombuffer(data, "<f8", (len(data) - HEADER) // 8, HEADER)  # 8-aligned from the header
    fields = {}
    for k, (field, n) in enumerate(zip(FIELDS, lengths, strict=True)):
        first = (value_at[:, k] - HEADER) // 8
        fields[field] = doubles[first[:, None] + np.arange(n)] if n else np.zeros((n_points, 0))
    sec = words[(duration_at - HEADER) // 4].view("<i4")
    nanosec = words[(duration_at - HEADER) // 4 + 1]
    return sec + nanosec * 1e-9, fields


def _point_offsets(start: int, n_points: int, lengths: list[int]) -> tuple[np.ndarray, ...]:
    """For ``n_points`` points from byte ``start``, each with ``lengths`` values in its fields:
    where each field's count (N, 4) and first value (N, 4) are, where each Duration is (N,), and
    where the last point ends. A point's layout depends only on whether it starts 8-aligned, so
    the starts repeat with a period of one or two points."""
    layouts = {phase: _point_layout(HEADER + phase, lengths) for phase in (0, 4)}
    size = {phase: layout[3] - HEADER - phase for phase, layout in layouts.items()}
    k = np.arange(n_points, dtype=np.int64)
    first_phase = (start - HEADER) % 8
    first, second = size[first_phase], size[first_phase ^ 4]
    if first % 8 == 0:
        starts = start + k * first
    elif second % 8 == 0:  # the first point moves the phase, which then stays
        starts = np.where(k == 0, start, start + first + (k - 1) * second)
    else:
        starts = start + (k // 2) * (first + second) + (k % 2) * first
    phase = (starts - HEADER) % 8
    relative = {p: np.array([*lay[0], *lay[1], lay[2]]) - HEADER - p for p, lay in layouts.items()}
    offsets = starts[:, None] + np.where(phase[:, None] == 0, relative[0], relative[4])
    end = int(starts[-1]) + size[int(phase[-1])]
    return offsets[:, :4], offsets[:, 4:8], offsets[:, 8], end


def write_joint_trajectory(
    stamp: tuple[int, int],
    frame_id: str,
    joint_names: list[str],
    time_from_start: np.ndarray,
    fields: dict[str, np.ndarray],
) -> bytes:
    """A JointTrajectory's CDR bytes (for ``Publisher.publish``), every point with the (N, L_f)
    values of each field in ``fields`` (missing: none); the inverse of ``read_joint_trajectory``."""
    head = bytearray(b"\x00\x01\x00\x00")

    def string(text: str) -> None:
        data = text.encode("utf-8") + b"\x00"
        head.extend(b"\x00" * (-(len(head) - HEADER) % 4) + struct.pack("<I", len(data)) + data)

    head.extend(struct.pack("<iI", *stamp))
    string(frame_id)
    head.extend(b"\x00" * (-(len(head) - HEADER) % 4) + struct.pack("<I", len(joint_names)))
    for name in joint_names:
        string(name)
    n_points = len(time_from_start)
    head.extend(b"\x00" * (-(len(head) - HEADER) % 4) + struct.pack("<I", n_points))
    if n_points == 0:
        return bytes(head)
    values = [np.asarray(fields.get(field, np.zeros((n_points, 0))), dtype=float) for field in FIELDS]
    lengths = [v.shape[1] for v in values]
    count_at, value_at, duration_at, end = _point_offsets(len(head), n_points, lengths)
    out = np.zeros(end + (-(end - HEADER) % 8), dtype=np.uint8)  # whole doubles from the header on
    out[: len(head)] = np.frombuffer(head, dtype=np.uint8)
    words, doubles = out[HEADER:].view("<u4"), out[HEADER:].view("<f8")
    words[(count_at - HEADER) // 4] = lengths
    for k, block in enumerate(values):
        doubles[((value_at[:, k] - HEADER) // 8)[:, None] + np.arange(lengths[k])] = block
    nanoseconds = np.round(np.asarray(time_from_start) * 1e9).astype(np.int64)
    seconds, rest = np.divmod(nanoseconds, 1_000_000_000)
    words[(duration_at - HEADER) // 4] = seconds.astype("<i4").view("<u4")
    words[(duration_at - HEADER) // 4 + 1] = rest
    return out[:end].tobytes()
