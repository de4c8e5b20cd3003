"""rnea_analyze's MCAP reader (``mcap_scan``: a chunk's records walked by a compiled loop, the
messages decoded a block at a time) gives exactly what rosbags' message-by-message reading gives."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.analysis import recording
from rnea_ros.analysis.mcap_scan import readable

NAMES = [f"joint{k}" for k in range(1, 8)]


def write_mcap(
    path, samples: int, compression: bool, split: int | None, note: bool = True, renamed: bool = False
) -> None:
    """joint_states at 1 kHz (two publishers when ``split``: the first ``split`` joints, the rest,
    the second every other sample), plus a std_msgs/String topic between them when ``note``; when
    ``renamed``, every third message names other joints (another publisher, the same byte size)."""
    from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    JointState, Header, Time = (
        store.types[k] for k in ("sensor_msgs/msg/JointState", "std_msgs/msg/Header", "builtin_interfaces/msg/Time")
    )
    String = store.types["std_msgs/msg/String"]
    rng = np.random.default_rng(45)
    groups = [slice(None)] if split is None else [slice(0, split), slice(split, None)]
    writer = Writer(path, version=9, storage_plugin=StoragePlugin.MCAP)
    if compression:
        writer.set_compression(CompressionMode.STORAGE, CompressionFormat.ZSTD)
    with writer:
        states = writer.add_connection("/joint_states", JointState.__msgtype__, typestore=store)
        other = writer.add_connection("/note", String.__msgtype__, typestore=store)
        for k in range(samples):
            ns = 1_700_000_000_000_000_000 + k * 1_000_000
            stamp = Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)
            for g, group in enumerate(groups):
                if g == 1 and k % 2:
                    continue
                values = rng.normal(size=(3, 7))
                names = [f"other{k}" for k in range(1, 8)] if renamed and k % 3 == 0 else NAMES
                msg = JointState(
                    header=Header(stamp=stamp, frame_id=""),
                    name=names[group],
                    position=values[0, group].copy(),
                    velocity=values[1, group].copy(),
                    effort=values[2, group].copy(),
                )
                writer.write(states, ns, store.serialize_cdr(msg, JointState.__msgtype__))
            if note and k % 97 == 0:
                writer.write(other, ns, store.serialize_cdr(String(data="x" * (k % 13)), String.__msgtype__))


def read(path, chunk: int, through_rosbags: bool, monkeypatch) -> list:
    with monkeypatch.context() as patch:
        if through_rosbags:
            patch.setattr(recording, "readable", lambda files: False)
        return list(recording.read_bag_joint_states(path, "/joint_states", chunk))


@pytest.mark.parametrize(("compression", "split", "chunk"), [(False, None, 1000), (True, None, 777), (False, 3, 500)])
def test_the_same_chunks_as_rosbags(tmp_path, monkeypatch, compression, split, chunk):
    bag = tmp_path / "bag"
    write_mcap(bag, 3000, compression, split)
    assert readable(sorted(bag.glob("*.mcap")))
    fast, slow = read(bag, chunk, False, monkeypatch), read(bag, chunk, True, monkeypatch)
    assert len(fast) == len(slow) > 1
    for a, b in zip(fast, slow, strict=True):
        assert a.names == b.names
        for x, y in ((a.t, b.t), (a.q, b.q), (a.qd, b.qd), (a.effort, b.effort)):
            assert np.array_equal(x, y, equal_nan=True)
    if split is None:
        assert [len(c.t) for c in fast] == [chunk] * (3000 // chunk) + [3000 % chunk] * bool(3000 % chunk)


def test_a_file_it_cannot_walk_is_left_to_rosbags(tmp_path):
    bag = tmp_path / "bag"
    write_mcap(bag, 500, False, None)
    (file,) = bag.glob("*.mcap")
    data = bytearray(file.read_bytes())
    chunk_at = data.index(b"\x06", 8 + 9 + 20)  # past the header record: the first chunk's opcode
    data[chunk_at + 1 : chunk_at + 9] = (2**40).to_bytes(8, "little")  # its length beyond the file
    file.write_bytes(bytes(data))
    assert not readable([file])  # left to rosbags, which finds the chunk by the summary's index
    assert sum(len(c.t) for c in recording.read_bag_joint_states(bag, "/joint_states")) == 500


@pytest.mark.parametrize("renamed", [False, True])
def test_fields_read_in_place_are_rosbags_numbers(tmp_path, monkeypatch, renamed):
    """One publisher, nothing between its messages: the fields are read through a structured view of
    each chunk (``mcap_scan.message_fields``), rosbags' numbers; messages of the same size that name
    other joints fall back to the block decoder and are merged as before."""
    from rnea_ros.analysis import mcap_scan

    bag = tmp_path / "bag"
    write_mcap(bag, 3000, False, None, note=False, renamed=renamed)
    viewed = []
    real = mcap_scan.message_fields

    def spy(*args):
        viewed.append(real(*args))
        return viewed[-1]

    monkeypatch.setattr(recording, "message_fields", spy)
    fast, slow = read(bag, 700, False, monkeypatch), read(bag, 700, True, monkeypatch)
    assert viewed and all(v is not None for v in viewed)  # the in-place path was taken
    assert len(fast) == len(slow) > 1
    for a, b in zip(fast, slow, strict=True):
        assert a.names == b.names
        for x, y in ((a.t, b.t), (a.q, b.q), (a.qd, b.qd), (a.effort, b.effort)):
            assert np.array_equal(x, y, equal_nan=True)
    assert sum(len(c.t) for c in fast) == (2000 if renamed else 3000)  # renamed: on the main publisher's times


def test_an_unchanged_bag_is_opened_once_and_a_rewritten_one_again(tmp_path, monkeypatch):
    """rnea_analyze asks for a bag's index four times (size, leading samples, samples, topics); rosbags opens
    an MCAP bag in 15-30 ms, so it is opened once while its files are unchanged, and again when they change."""
    opened = []
    read_summary = recording._read_summary
    monkeypatch.setattr(recording, "_read_summary", lambda path: opened.append(path) or read_summary(path))
    bag = tmp_path / "bag"
    write_mcap(bag, 400, False, None)
    assert recording.bag_summary(bag).count("/joint_states") == 400
    for _ in range(2):
        assert sum(len(c.t) for c in recording.read_bag_joint_states(bag, "/joint_states")) == 400
    assert set(recording.bag_topics(bag)) == {"/joint_states", "/note"}
    assert len(opened) == 1
    for file in bag.iterdir():
        file.unlink()
    bag.rmdir()
    write_mcap(bag, 250, False, None)
    assert recording.bag_summary(bag).count("/joint_states") == 250
    assert sum(len(c.t) for c in recording.read_bag_joint_states(bag, "/joint_states")) == 250
    assert len(opened) == 2


@pytest.mark.parametrize(("compression", "split"), [(False, None), (True, None), (False, 3)])
def test_an_mcap_bags_summary_from_its_metadata_is_rosbags(tmp_path, compression, split):
    """A rosbag2 directory of MCAP files is summarised from its metadata.yaml without rosbags: the
    connections, their message counts and the files rosbags' reader gives (two topics; chunks compressed
    by the storage; two publishers on one topic). Another bag (sqlite3) is left to rosbags."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    bag = tmp_path / "bag"
    write_mcap(bag, 600, compression, split)
    reader = recording._open_bag(bag)
    try:
        expected = [(c.topic, c.msgtype, c.msgcount) for c in reader.connections], recording._mcap_files(reader)
    finally:
        reader.close()
    summary = recording._mcap_directory_summary(bag)
    assert summary is not None and (list(summary.connections), list(summary.mcap_files)) == expected
    assert summary.count("/joint_states") == (900 if split else 600)

    store = get_typestore(Stores.ROS2_JAZZY)
    with Writer(tmp_path / "db3", version=9, storage_plugin=StoragePlugin.SQLITE3) as writer:
        writer.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=store)
    assert recording._mcap_directory_summary(tmp_path / "db3") is None


def test_the_command_reads_an_mcap_bag_without_rosbags(tmp_path):
    """rnea_analyze on a rosbag2 MCAP bag (uncompressed chunks) never imports rosbags: the summary from
    metadata.yaml, the messages by ``mcap_scan`` (fails before: rosbags opened the bag for its summary)."""
    import subprocess
    import sys

    from rnea_ros.demo.example_robot import example_arm_urdf

    write_mcap(tmp_path / "bag", 600, False, None)
    (tmp_path / "arm.urdf").write_text(example_arm_urdf())
    arguments = [str(tmp_path / "bag"), "--urdf", str(tmp_path / "arm.urdf"), "--window", "0.02"]
    probe = (
        "import sys; from rnea_ros.analysis.cli import main; "
        f"code = main({[*arguments, '--out', str(tmp_path / 'out')]!r}); "
        "print(code, sorted({m.split('.')[0] for m in sys.modules} & {'rosbags'}))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().split("\n")[-1] == "0 []"
    assert (tmp_path / "out" / "samples.csv").stat().st_size > 0
