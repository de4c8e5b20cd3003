"""One topic's raw messages out of MCAP files, a block at a time, without a Python step per message.

rosbags reads an MCAP message by message in Python (~200 µs each on a busy 2-core machine: most of
``rnea_analyze``'s time on a 600,000-sample bag). Here a chunk's records are walked by a compiled
loop, and the topic's messages come out as a (messages, bytes) uint8 block per message size, with
their log times: ``recording.py`` decodes each block with numpy (or, when one publisher's messages
follow one another, reads their fields in place: ``message_fields``). Chunks are decompressed with what
rosbags itself uses (zstd, lz4). Files whose chunks overlap in time, or that hold messages outside
chunks, are left to rosbags (``readable`` says so first): the caller then reads them as before.
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numba import njit

MAGIC = b"\x89MCAP0\r\n"
SCHEMA, CHANNEL, MESSAGE, CHUNK, DATA_END, FOOTER = 0x03, 0x04, 0x05, 0x06, 0x0F, 0x02
MESSAGE_HEADER = 22  # channel id u16, sequence u32, log time u64, publish time u64


class McapLayoutError(ValueError):
    """A file that is not the MCAP ``readable`` found, or a record that runs past its container."""


@njit(cache=True)
def walk_records(buf, start, end):
    """(opcode, content offset, content length) of every record in buf[start:end]."""
    capacity = max(1, (end - start) // 9)
    ops = np.empty(capacity, np.uint8)
    offsets = np.empty(capacity, np.int64)
    lengths = np.empty(capacity, np.int64)
    n, pos = 0, start
    while pos + 9 <= end:
        length = np.int64(0)
        for b in range(8):
            length |= np.int64(buf[pos + 1 + b]) << (8 * b)
        if length < 0 or pos + 9 + length > end:
            return ops[:n], offsets[:n], lengths[:n], False
        ops[n], offsets[n], lengths[n] = buf[pos], pos + 9, length
        n += 1
        pos += 9 + length
    return ops[:n], offsets[:n], lengths[:n], pos == end


def _string(buf: bytes, offset: int) -> tuple[str, int]:
    (length,) = struct.unpack_from("<I", buf, offset)
    return bytes(buf[offset + 4 : offset + 4 + length]).decode("utf-8", errors="replace"), offset + 4 + length


def _decompress(data: bytes, compression: str, size: int) -> bytes:
    if not compression:
        return data
    from rosbags.rosbag2.storage_mcap import decompress  # zstd and lz4, as rosbags reads them

    return decompress(data, compression, size, 0)


def _open(path: Path) -> tuple[mmap.mmap, np.ndarray]:
    with open(path, "rb") as f:
        raw = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    if raw[:8] != MAGIC:
        raise McapLayoutError(f"{path}: not an MCAP file")
    return raw, np.frombuffer(raw, np.uint8)


def _walk(buf: np.ndarray, start: int, end: int):
    ops, offsets, lengths, whole = walk_records(buf, start, end)
    if not whole:
        raise McapLayoutError("a record runs past its container")
    return ops, offsets, lengths


def readable(paths: list[Path]) -> bool:
    """Whether ``topic_blocks`` reads these files: MCAP, every message in a chunk, the chunks in time
    order (their headers only are read)."""
    last_end = -1
    try:
        for path in paths:
            raw, buf = _open(path)
            ops, offsets, _ = _walk(buf, 8, len(raw) - 8)
            if np.any(ops == MESSAGE):
                return False
            for offset in offsets[ops == CHUNK]:
                start_time, end_time = struct.unpack_from("<QQ", raw, int(offset))
                if start_time < last_end:
                    return False
                last_end = max(last_end, end_time)
    except (OSError, ValueError, struct.error):
        return False
    return True


@dataclass
class Segment:
    """Messages in time order: log times, sizes and where each starts in ``buf``."""

    log_time: np.ndarray
    size: np.ndarray
    start: np.ndarray
    buf: np.ndarray

    def __len__(self) -> int:
        return len(self.log_time)

    def part(self, begin: int, end: int) -> Segment:
        return Segment(self.log_time[begin:end], self.size[begin:end], self.start[begin:end], self.buf)

    def rows(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        """(log times, (n, size) uint8 block) of this segment's messages of that size, in order."""
        mine = np.flatnonzero(self.size == size)
        starts = self.start[mine]
        step = int(starts[1] - starts[0]) if len(starts) > 1 else size
        if len(starts) > 1 and step >= size and np.all(np.diff(starts) == step):  # one after another
            block = np.lib.stride_tricks.as_strided(self.buf[int(starts[0]) :], (len(starts), size), (step, 1)).copy()
        else:
            block = self.buf[starts[:, None] + np.arange(size)]
        return self.log_time[mine], block


def message_fields(segments: list[Segment], size: int, fields: dict[str, tuple]) -> dict[str, np.ndarray] | None:
    """Each field ``name: (dtype, offset)`` of the segments' messages (all ``size`` bytes long), in order,
    read through a structured view of each segment's chunk and concatenated: one copy of the fields,
    none of whole messages (0.2 s of CPU for the 600,000-message benchmark bag against 0.4 s through
    ``blocks_by_size``). None when a segment's messages are not evenly spaced (other topics' between)."""
    dtype = np.dtype(
        {
            "names": list(fields),
            "formats": [f[0] for f in fields.values()],
            "offsets": [f[1] for f in fields.values()],
            "itemsize": size,
        }
    )
    views = []
    for segment in segments:
        starts = segment.start
        step = int(starts[1] - starts[0]) if len(starts) > 1 else size
        if len(starts) and (np.any(segment.size != size) or step < size or np.any(np.diff(starts) != step)):
            return None
        if len(starts):
            views.append(np.ndarray((len(starts),), dtype, segment.buf, int(starts[0]), (step,)))
    return {name: np.concatenate([v[name] for v in views]) for name in fields} if views else None


def blocks_by_size(segments: list[Segment]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The segments' messages as one uint8 block per size (ascending), each with its log times, in order."""
    sizes = np.unique(np.concatenate([s.size for s in segments]))
    times, blocks = [], []
    for size in sizes:
        parts = [s.rows(int(size)) for s in segments]
        times.append(np.concatenate([p[0] for p in parts]))
        blocks.append(np.concatenate([p[1] for p in parts]))
    return blocks, times


class _TopicScan:
    """The messages of one topic across MCAP files, in time order, as (log times, uint8 rows) per size."""

    def __init__(self, topic: str) -> None:
        self.topic = topic
        self.channels: set[int] = set()

    def _channels(self, raw, ops, offsets) -> None:
        for offset in offsets[ops == CHANNEL]:
            (channel_id,) = struct.unpack_from("<H", raw, int(offset))
            topic, _ = _string(raw, int(offset) + 4)  # after the channel and schema ids (u16 each)
            if topic == self.topic:
                self.channels.add(channel_id)

    def file(self, path: Path) -> Iterator[Segment]:
        raw, buf = _open(path)
        ops, offsets, _ = _walk(buf, 8, len(raw) - 8)
        self._channels(raw, ops, offsets)
        for offset in offsets[ops == CHUNK]:
            yield from self._chunk(raw, int(offset))

    def _chunk(self, raw, offset: int) -> Iterator[Segment]:
        size = struct.unpack_from("<Q", raw, offset + 16)[0]
        compression, offset = _string(raw, offset + 28)
        (stored,) = struct.unpack_from("<Q", raw, offset)
        if compression:
            data = _decompress(raw[offset + 8 : offset + 8 + stored], compression, size)
            buf = np.frombuffer(data, np.uint8)
        else:  # read in place, not copied out of the file's map
            buf = data = np.frombuffer(raw, np.uint8, stored, offset + 8)
        ops, offsets, lengths = _walk(buf, 0, len(buf))
        self._channels(data, ops, offsets)
        if not self.channels:
            return
        channels = np.fromiter(self.channels, np.int64)
        log_time, start, size, ordered = _topic_messages(buf, ops, offsets, lengths, channels)
        if not ordered:  # as rosbags: time order, ties in file order
            order = np.argsort(log_time, kind="stable")
            log_time, start, size = log_time[order], start[order], size[order]
        yield Segment(log_time, size, start, buf)


@njit(cache=True, nogil=True)
def _topic_messages(buf, ops, offsets, lengths, channels):  # pragma: no cover - compiled
    """(log times, starts, sizes) of the message records (ops, offsets, lengths: ``walk_records``') on one
    of ``channels``, in file order, and whether their log times never go back."""
    count = 0
    log_time = np.empty(len(ops), np.int64)
    start = np.empty(len(ops), np.int64)
    size = np.empty(len(ops), np.int64)
    ordered = True
    for r in range(len(ops)):
        if ops[r] != MESSAGE:
            continue
        offset = offsets[r]
        channel = np.int64(buf[offset]) | (np.int64(buf[offset + 1]) << 8)
        if not np.any(channels == channel):
            continue
        stamp = np.int64(0)
        for b in range(8):
            stamp |= np.int64(buf[offset + 6 + b]) << (8 * b)
        if count and stamp < log_time[count - 1]:
            ordered = False
        log_time[count], start[count], size[count] = stamp, offset + MESSAGE_HEADER, lengths[r] - MESSAGE_HEADER
        count += 1
    return log_time[:count], start[:count], size[:count], ordered


def topic_segments(paths: list[Path], topic: str) -> Iterator[Segment]:
    """The messages of ``topic`` in the files (``readable`` ones) in time order, a ``Segment`` per MCAP chunk."""
    scan = _TopicScan(topic)
    for path in paths:
        yield from scan.file(path)
