"""Recorded joint data → arrays, in chunks: rosbag2 (sqlite3 .db3 or .mcap, via ``rosbags``) or CSV.

Bags are read without ROS. ``sensor_msgs/JointState`` messages from one publisher all
have the same byte layout (same names, same array lengths), so a chunk of messages of
one layout is decoded at once with numpy; only the first message of each layout is
parsed field by field. Messages of other layouts are decoded one by one.

Sample time: the header stamp; when a recording's stamps are all zero, the bag's
receive time.
"""

from __future__ import annotations

import csv
import itertools
import struct
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath

import numpy as np

from rnea_ros.analysis.mcap_scan import Segment, blocks_by_size, message_fields, readable, topic_segments

DEFAULT_CHUNK = 50_000


MAX_VALUE = 1e6  # |position| [rad, m], |velocity|, |effort| in a recording
MAX_CSV_COLUMNS = 9_001  # time and 3 columns per joint, 3,000 joints
MAX_CSV_CELLS = 10_000_000  # per read (80 MB of floats)


class RecordingError(ValueError):
    """A recording that cannot be read (missing, truncated, wrong format, no joint data)."""


@dataclass
class JointChunk:
    """Consecutive samples of the joints ``names``: t (N,), q, qd, effort (N, len(names)); qd None if not recorded."""

    names: list[str]
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray | None
    effort: np.ndarray


@dataclass(frozen=True)
class _Layout:
    """Where the values of one JointState byte layout are: offsets into the serialized message."""

    names: tuple[str, ...]
    size: int
    invariant_end: int  # bytes [12, invariant_end) (frame_id, names, counts) are the same for the layout
    invariant: bytes
    arrays: tuple[tuple[int, int], ...]  # (offset, count) of position, velocity, effort
    byte_order: str  # "<" or ">"


def joint_state_layout(raw: bytes) -> _Layout:
    """Walks one CDR-serialized JointState (XCDR1: 4-byte encapsulation header, alignment from byte 4)."""
    if len(raw) < 16 or raw[0] != 0 or raw[1] not in (0, 1):
        raise RecordingError("not a CDR-serialized message")
    order = "<" if raw[1] == 1 else ">"
    offset = 12  # encapsulation (4), stamp.sec (4), stamp.nanosec (4)

    def u32() -> int:
        nonlocal offset
        offset += -(offset - 4) % 4
        (value,) = struct.unpack_from(order + "I", raw, offset)
        offset += 4
        return value

    def string() -> str:
        nonlocal offset
        length = u32()
        text = raw[offset : offset + length].rstrip(b"\0").decode("utf-8", errors="replace")
        offset += length
        return text

    string()  # header.frame_id
    names = tuple(string() for _ in range(u32()))
    arrays, invariant_end = [], None
    for _ in range(3):  # position, velocity, effort
        count = u32()
        if count:
            offset += -(offset - 4) % 8
        if invariant_end is None:
            invariant_end = offset
        arrays.append((offset, count))
        offset += 8 * count
    if offset > len(raw):
        raise RecordingError("truncated JointState message")
    return _Layout(names, len(raw), invariant_end, raw[12:invariant_end], tuple(arrays), order)


def _decode_same_layout(layout: _Layout, raws: list[bytes]) -> dict[str, np.ndarray]:
    return _decode_block(layout, np.frombuffer(b"".join(raws), dtype=np.uint8).reshape(len(raws), layout.size))


def _decode_block(layout: _Layout, block: np.ndarray) -> dict[str, np.ndarray]:
    """The stamps and arrays of messages of one layout, given as the rows of a uint8 block."""
    raws = block
    out = {
        "sec": block[:, 4:8].copy().view(layout.byte_order + "i4")[:, 0].astype(np.int64),
        "nanosec": block[:, 8:12].copy().view(layout.byte_order + "u4")[:, 0].astype(np.int64),
    }
    for key, (offset, count) in zip(("position", "velocity", "effort"), layout.arrays, strict=True):
        values = block[:, offset : offset + 8 * count].copy().view(layout.byte_order + "f8")
        out[key] = values.astype(np.float64).reshape(len(raws), count)
    return out


class _JointStateDecoder:
    """Turns raw JointState messages into one column block per byte layout."""

    def __init__(self) -> None:
        self._by_size: dict[int, _Layout] = {}

    def _layout_for(self, raw: bytes) -> _Layout:
        layout = self._by_size.get(len(raw))
        if layout is None or raw[12 : layout.invariant_end] != layout.invariant:
            layout = self._by_size[len(raw)] = joint_state_layout(raw)
        return layout

    def decode(self, raws: list[bytes], receive_ns: np.ndarray) -> list[tuple[_Layout, dict, np.ndarray]]:
        sizes = np.fromiter((len(r) for r in raws), dtype=np.int64, count=len(raws))
        groups = []
        for size in np.unique(sizes):
            rows = np.flatnonzero(sizes == size)
            while len(rows):  # usually once; more when messages of one size name different joints
                layout = self._layout_for(raws[rows[0]])
                same = np.fromiter((raws[k][12 : layout.invariant_end] == layout.invariant for k in rows), bool)
                block = _decode_same_layout(layout, [raws[k] for k in rows[same]])
                groups.append((layout, block, receive_ns[rows[same]]))
                rows = rows[~same]
        return groups

    def decode_segments(self, segments: list[Segment]) -> list[tuple[_Layout, dict, np.ndarray]]:
        """``decode_blocks(*blocks_by_size(segments))``; when every message has one little-endian layout (one
        publisher's) and they follow one another in their chunks, their fields read straight out of the
        chunks (``mcap_scan.message_fields``): the same numbers, without the copies of whole messages."""
        sizes = np.unique(np.concatenate([s.size for s in segments]))
        if len(sizes) == 1 and sizes[0] >= 16:
            first, size = segments[0], int(sizes[0])
            layout = self._layout_for(first.buf[first.start[0] : first.start[0] + size].tobytes())
            words, rest = divmod(len(layout.invariant), 8)  # compared 8 bytes at a time
            fields = {"sec": ("<i4", 4), "nanosec": ("<u4", 8), "words": (("<u8", (words,)), 12)}
            fields["rest"] = (("u1", (rest,)), 12 + 8 * words)
            for key, (offset, count) in zip(("position", "velocity", "effort"), layout.arrays, strict=True):
                fields[key] = (("<f8", (count,)), offset)
            values = message_fields(segments, size, fields) if layout.byte_order == "<" else None
            if values is not None:
                invariant = np.frombuffer(layout.invariant, np.uint8)
                same = (values.pop("words") == invariant[: 8 * words].view("<u8")).all(axis=1)
                same &= (values.pop("rest") == invariant[8 * words :]).all(axis=1)
                if same.all():
                    for key in ("sec", "nanosec"):
                        values[key] = values[key].astype(np.int64)
                    return [(layout, values, np.concatenate([s.log_time for s in segments]))]
        return self.decode_blocks(*blocks_by_size(segments))

    def decode_blocks(
        self, blocks: list[np.ndarray], receive_ns: list[np.ndarray]
    ) -> list[tuple[_Layout, dict, np.ndarray]]:
        """``decode`` of messages given as uint8 blocks, one per message size (``mcap_scan``)."""
        groups = []
        for block, received in zip(blocks, receive_ns, strict=True):
            rows = np.arange(len(block))
            while len(rows):  # usually once; more when messages of one size name different joints
                layout = self._layout_for(block[rows[0]].tobytes())
                invariant = np.frombuffer(layout.invariant, np.uint8)
                same = (block[rows, 12 : layout.invariant_end] == invariant).all(axis=1)
                groups.append((layout, _decode_block(layout, block[rows[same]]), received[rows[same]]))
                rows = rows[~same]
        return groups


def _bag_typestore():
    from rosbags.typesys import Stores, get_typestore

    return get_typestore(Stores.ROS2_JAZZY)


def _open_bag(path: Path):
    """The bag open in rosbags' AnyReader. Jazzy's typestore (~0.1 s of CPU: rosbags builds every
    distribution's types up to it) is made only for a bag without its own type definitions, the one
    kind AnyReader reads it for: MCAP (rosbag2's and rosbags' writers) carries them."""
    from rosbags.highlevel import AnyReader

    try:
        try:
            reader = AnyReader([path])
            reader.open()
        except Exception:  # maybe no type definitions: again with the typestore, its error the one told
            reader = AnyReader([path], default_typestore=_bag_typestore())
            reader.open()
    except Exception as error:  # rosbags raises its own types for missing, truncated or foreign files
        raise RecordingError(f"cannot read the bag {path}: {error}") from error
    return reader


@dataclass(frozen=True)
class BagSummary:
    """What a bag's index says: (topic, message type, message count) per connection, and its files when
    every one is MCAP (read by ``mcap_scan``, not rosbags)."""

    connections: tuple[tuple[str, str, int], ...]
    mcap_files: tuple[Path, ...] | None

    def topics(self) -> dict[str, str]:
        return {topic: msgtype for topic, msgtype, _ in self.connections}

    def count(self, topic: str) -> int:
        return sum(count for name, _, count in self.connections if name == topic)


_SUMMARIES_KEPT = 8
_summaries: dict[tuple, BagSummary] = {}


def bag_summary(path: Path) -> BagSummary:
    """The bag's summary, read once per process for as long as its files are unchanged: rnea_analyze asks
    for it four times (size, leading samples, samples, topics), and each open of an MCAP bag by rosbags
    costs 15-30 ms."""
    key = _file_identity(Path(path))
    summary = _summaries.get(key) if key is not None else None
    if summary is None:
        summary = _read_summary(Path(path))
        if key is not None:
            if len(_summaries) >= _SUMMARIES_KEPT:
                _summaries.pop(next(iter(_summaries)))
            _summaries[key] = summary
    return summary


def _read_summary(path: Path) -> BagSummary:
    summary = _mcap_directory_summary(path)
    if summary is not None:
        return summary
    reader = _open_bag(path)
    try:
        connections = tuple((c.topic, c.msgtype, c.msgcount) for c in reader.connections)
        files = _mcap_files(reader)
        return BagSummary(connections, tuple(files) if files else None)
    finally:
        reader.close()


def _mcap_directory_summary(path: Path) -> BagSummary | None:
    """The summary of a rosbag2 directory of MCAP files (not compressed whole) from its metadata.yaml, where
    rosbags' reader takes the connections from too, without rosbags: its import and open were ~0.06 s of
    CPU of rnea_analyze's start. None for any other bag (rosbags opens it, and says what is wrong with it)."""
    import yaml

    try:
        metadata = path / "metadata.yaml"
        if not metadata.is_file():
            return None
        info = yaml.load(metadata.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        info = info["rosbag2_bagfile_information"]
        compressed = (info.get("compression_mode") or "").lower() not in ("", "none")
        if info["version"] > 9 or info["storage_identifier"] != "mcap" or compressed:
            return None
        topics = [(t["topic_metadata"], int(t["message_count"])) for t in info["topics_with_message_count"]]
        if any(meta["serialization_format"] != "cdr" for meta, _ in topics):
            return None
        files = tuple(path / PurePath(name).name for name in info["relative_file_paths"])  # as rosbags finds them
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError, AttributeError):
        return None
    if not files or not all(file.is_file() for file in files):
        return None
    return BagSummary(tuple((meta["name"], meta["type"], count) for meta, count in topics), files)


def _file_identity(path: Path) -> tuple | None:
    """(path, and name, size and modification time of each of its files), or None when it cannot be read."""
    try:
        files = sorted(path.iterdir()) if path.is_dir() else [path]
        return (str(path.resolve()), *((f.name, *_size_and_time(f)) for f in files))
    except OSError:
        return None


def _size_and_time(file: Path) -> tuple[int, int]:
    status = file.stat()
    return status.st_size, status.st_mtime_ns


def bag_topics(path: Path) -> dict[str, str]:
    return bag_summary(path).topics()


def read_bag_joint_states(path: Path, topic: str, chunk: int = DEFAULT_CHUNK) -> Iterator[JointChunk]:
    """The joint_states of a bag in time order, in chunks; several publishers' names are merged."""
    summary = bag_summary(path)
    types = {msgtype for name, msgtype, _ in summary.connections if name == topic}
    if not types:
        raise RecordingError(f"no topic '{topic}' in {path} (topics: {sorted(summary.topics())})")
    if types != {"sensor_msgs/msg/JointState"}:
        raise RecordingError(f"'{topic}' is not sensor_msgs/msg/JointState")
    decoder, merger = _JointStateDecoder(), _Merger()
    files = list(summary.mcap_files or ())
    if files and readable(files):
        try:
            yield from _read_mcap_joint_states(files, topic, chunk, decoder, merger)
        except RecordingError:
            raise
        except Exception as error:
            raise RecordingError(f"the bag {path} is damaged or truncated: {error}") from error
        return
    yield from _read_rosbags_joint_states(path, topic, chunk, decoder, merger)


def _read_rosbags_joint_states(path: Path, topic: str, chunk: int, decoder, merger) -> Iterator[JointChunk]:
    """``read_bag_joint_states`` through rosbags' reader (sqlite3, or MCAP that ``mcap_scan`` cannot read)."""
    reader = _open_bag(path)
    try:
        connections = [c for c in reader.connections if c.topic == topic]
        raws, stamps = [], []
        try:
            for _, receive_ns, raw in reader.messages(connections=connections):
                raws.append(raw)
                stamps.append(receive_ns)
                if len(raws) == chunk:
                    yield from merger.add(decoder.decode(raws, np.array(stamps, dtype=np.int64)))
                    raws, stamps = [], []
        except RecordingError:
            raise
        except Exception as error:
            raise RecordingError(f"the bag {path} is damaged or truncated: {error}") from error
        if raws:
            yield from merger.add(decoder.decode(raws, np.array(stamps, dtype=np.int64)))
    finally:
        reader.close()


def _mcap_files(reader) -> list[Path] | None:
    """The bag's files when every one is MCAP (read by ``mcap_scan``), else None (rosbags reads them)."""
    try:
        storages = [storage for bag in reader.readers for storage in bag.storage.storages]
        if storages and all(type(storage).__name__ == "McapReader" for storage in storages):
            return [Path(storage.path) for storage in storages]
    except AttributeError:  # another rosbags: its own reader
        pass
    return None


def _read_mcap_joint_states(files, topic, chunk, decoder, merger) -> Iterator[JointChunk]:
    """``read_bag_joint_states`` through ``mcap_scan``: the same blocks of ``chunk`` messages in time order."""
    pending: list[Segment] = []
    count = 0
    for segment in topic_segments(files, topic):
        while len(segment):
            take = min(chunk - count, len(segment))
            pending.append(segment.part(0, take))
            segment, count = segment.part(take, len(segment)), count + take
            if count == chunk:
                yield from merger.add(decoder.decode_segments(pending))
                pending, count = [], 0
    if count:
        yield from merger.add(decoder.decode_segments(pending))


class _Merger:
    """Joins blocks of different layouts (several publishers) on the timeline of the largest one,
    holding each joint's last value; blocks of one layout pass straight through."""

    def __init__(self) -> None:
        self.names: list[str] | None = None
        self.last: dict[str, tuple[float, float | None, float]] = {}
        self.use_receive_time: bool | None = None

    def _times(self, block: dict, receive_ns: np.ndarray) -> np.ndarray:
        stamps = block["sec"] * 1_000_000_000 + block["nanosec"]
        if self.use_receive_time is None:
            self.use_receive_time = not np.any(stamps)
        return (receive_ns if self.use_receive_time else stamps) * 1e-9

    def add(self, groups) -> Iterator[JointChunk]:
        if not groups:
            return
        chunks = []  # (t, names, block), each sorted by time once
        for layout, block, receive_ns in groups:
            t = self._times(block, receive_ns)
            if np.all(t[1:] >= t[:-1]):  # in time order already (one publisher): not copied
                chunks.append((t, list(layout.names), block))
                continue
            order = np.argsort(t, kind="stable")
            chunks.append((t[order], list(layout.names), {key: values[order] for key, values in block.items()}))
        main_t, main_names, main_block = max(chunks, key=lambda c: (len(c[1]) > 0, len(c[0]) * len(c[1])))
        if self.names is None:
            self.names = list(main_names)
        if len(chunks) == 1 and main_names == self.names:
            yield self._chunk(main_t, main_block)
            return
        yield self._held(main_t, chunks)

    def _chunk(self, t: np.ndarray, block: dict) -> JointChunk:
        n = len(self.names)
        velocity = block["velocity"] if block["velocity"].shape[1] == n else None
        effort = block["effort"] if block["effort"].shape[1] == n else np.full((len(t), n), np.nan)
        return JointChunk(list(self.names), t, block["position"], velocity, effort)

    def _held(self, t: np.ndarray, chunks) -> JointChunk:
        for _, names, _ in chunks:
            for name in names:
                if name not in self.names:
                    self.names.append(name)
        n = len(self.names)
        q, qd, effort = (np.full((len(t), n), np.nan) for _ in range(3))
        for j, name in enumerate(self.names):
            if name in self.last:
                q[:, j], qd[:, j], effort[:, j] = self.last[name]
        for t_block, names, block in chunks:
            rows = np.searchsorted(t_block, t, side="right") - 1  # last sample at or before each time
            valid = rows >= 0
            for k, name in enumerate(names):
                j = self.names.index(name)
                for target, key in ((q, "position"), (qd, "velocity"), (effort, "effort")):
                    if block[key].shape[1] == len(names):
                        target[valid, j] = block[key][rows[valid], k]
                if len(t_block):
                    self.last[name] = tuple(
                        block[key][-1, k] if block[key].shape[1] == len(names) else np.nan
                        for key in ("position", "velocity", "effort")
                    )
        return JointChunk(list(self.names), t, q, None if np.isnan(qd).all() else qd, effort)


def read_bag_description(path: Path, topic: str = "/robot_description") -> str | None:
    """The last robot_description (std_msgs/String) in the bag, if any: on ``topic``, or else on the one
    topic of the bag that ends in ``/robot_description`` (a robot in a namespace)."""
    reader = _open_bag(path)
    try:
        strings = [c for c in reader.connections if c.msgtype == "std_msgs/msg/String"]
        connections = [c for c in strings if c.topic == topic]
        if not connections:
            namespaced = {c.topic for c in strings if c.topic.endswith("/robot_description")}
            connections = [c for c in strings if c.topic in namespaced] if len(namespaced) == 1 else []
        if not connections:  # rosbags reads every connection when given none
            return None
        text = None
        for connection, _, raw in reader.messages(connections=connections):
            text = reader.deserialize(raw, connection.msgtype).data
        return text
    finally:
        reader.close()


def read_bag_wrenches(path: Path, topics: list[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """link → (t (N,), wrench (N, 6)), sorted by time, from geometry_msgs/WrenchStamped topics (frame_id = link)."""
    reader = _open_bag(path)
    series: dict[str, tuple[list[float], list[list[float]]]] = {}
    try:
        connections = [c for c in reader.connections if c.topic in topics]
        missing = set(topics) - {c.topic for c in connections}
        if missing:
            raise RecordingError(f"wrench topics not in the bag: {sorted(missing)}")
        for connection, receive_ns, raw in reader.messages(connections=connections):
            msg = reader.deserialize(raw, connection.msgtype)
            stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9 or receive_ns * 1e-9
            f, tau = msg.wrench.force, msg.wrench.torque
            times, values = series.setdefault(msg.header.frame_id, ([], []))
            times.append(stamp)
            values.append([f.x, f.y, f.z, tau.x, tau.y, tau.z])
    finally:
        reader.close()
    out = {}
    for link, (times, values) in series.items():
        order = np.argsort(times, kind="stable")
        out[link] = (np.array(times)[order], np.array(values)[order])
    return out


def _empty_fields_as_nan(line: str) -> str:
    """A CSV line with its empty fields (a value not measured) spelled ``nan``."""
    if ",," not in line and not line.rstrip("\r\n").endswith(",") and not line.startswith(","):
        return line
    return ",".join(field if field.strip() else "nan" for field in line.rstrip("\r\n").split(",")) + "\n"


def read_csv(path: Path, chunk: int = DEFAULT_CHUNK) -> Iterator[JointChunk]:
    """CSV with a header ``time,<joint>.position,<joint>.velocity,<joint>.effort,...`` (velocity optional).
    A value not measured is an empty field or ``nan`` (an effort: the joint's rows are left out of the fits)."""
    try:
        with open(path, newline="") as f:
            header = next(csv.reader(f))
    except (OSError, StopIteration, UnicodeDecodeError) as error:
        raise RecordingError(f"cannot read the CSV {path}: {error}") from error
    if not header or header[0].strip() != "time":
        raise RecordingError(f"{path}: the first column must be 'time' (header: {header[:5]})")
    if len(header) > MAX_CSV_COLUMNS:
        raise RecordingError(f"{path}: {len(header)} columns, at most {MAX_CSV_COLUMNS} (a robot of 3,000 joints)")
    columns = {name.strip(): k for k, name in enumerate(header)}
    names = [c[: -len(".position")] for c in columns if c.endswith(".position")]
    missing = [f"{n}.effort" for n in names if f"{n}.effort" not in columns]
    if not names or missing:
        raise RecordingError(f"{path}: need <joint>.position and <joint>.effort columns (missing: {missing})")
    has_velocity = all(f"{n}.velocity" in columns for n in names)
    q_cols = [columns[f"{n}.position"] for n in names]
    qd_cols = [columns[f"{n}.velocity"] for n in names] if has_velocity else []
    e_cols = [columns[f"{n}.effort"] for n in names]
    rows = max(1, min(chunk, MAX_CSV_CELLS // len(header)))  # memory per read bounded, however wide
    with open(path) as f:
        f.readline()
        while True:
            lines = [_empty_fields_as_nan(line) for line in itertools.islice(f, rows)]
            try:
                with warnings.catch_warnings():  # the read after the last full chunk finds no data
                    warnings.filterwarnings("ignore", "loadtxt: input contained no data")
                    data = np.loadtxt(lines, delimiter=",", ndmin=2)
            except ValueError as error:
                raise RecordingError(f"{path}: bad CSV row: {error}") from error
            if data.size == 0:
                return
            if np.isnan(data[:, 0]).any():
                raise RecordingError(f"{path}: a row without a time")
            data = data[np.argsort(data[:, 0], kind="stable")]
            yield JointChunk(
                names, data[:, 0], data[:, q_cols], data[:, qd_cols] if has_velocity else None, data[:, e_cols]
            )
            if len(data) < rows:
                return


def open_recording(path: Path, topic: str, chunk: int = DEFAULT_CHUNK) -> Iterator[JointChunk]:
    path = Path(path)
    if not path.exists():
        raise RecordingError(f"no such file or directory: {path}")
    if path.suffix.lower() == ".csv":
        return plausible(read_csv(path, chunk), path)
    return plausible(read_bag_joint_states(path, topic, chunk), path)


def plausible(chunks: Iterator[JointChunk], path: Path) -> Iterator[JointChunk]:
    """The chunks, or RecordingError at the first value beyond ±MAX_VALUE: no joint has a position
    of 1e300 rad, a recorder that wrote one is broken (NaN is left to the analysis, which skips it)."""
    for chunk in chunks:
        for what, values in (("position", chunk.q), ("velocity", chunk.qd), ("effort", chunk.effort)):
            if values is None:
                continue
            beyond = np.abs(values) > MAX_VALUE  # NaN is not beyond
            if beyond.any():
                row, column = np.argwhere(beyond)[0]
                raise RecordingError(
                    f"{path}: {chunk.names[column]} {what} {values[row, column]:.3g} at t = {chunk.t[row]:.6f} s "
                    f"is beyond ±{MAX_VALUE:g}: a broken recording"
                )
        yield chunk
