"""fast_csv.RowWriter: samples.csv's rows formatted and written on a thread beside the analysis."""

from __future__ import annotations

import io

import numpy as np
import pytest

from rnea_ros.analysis.fast_csv import RowWriter, format_rows, write_rows


def _rows(seed: int, count: int = 3_000) -> np.ndarray:
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(count, 9)) * 10.0 ** rng.integers(-8, 9, size=(count, 9))
    values[0, :5] = [np.nan, np.inf, -np.inf, -0.0, -4e-7]
    values[:, 0] = 1.7e9 + np.arange(count) * 1e-3  # stamps as rnea_analyze writes them
    return values


def test_the_thread_writes_the_same_bytes_in_the_same_order():
    """The header and every block, in the order handed over, byte for byte what ``format_rows`` makes
    (6 decimals, samples.csv's, and 3), however many wait at once."""
    blocks = [_rows(seed) for seed in range(7)]
    expected = b"time,a\n" + b"".join(format_rows(b) for b in blocks) + format_rows(blocks[0], 3)
    target = io.BytesIO()
    with RowWriter(target, depth=2) as writer:
        writer.write(b"time,a\n")
        for block in blocks:
            write_rows(writer, block)
        write_rows(writer, blocks[0], 3)
    assert target.getvalue() == expected


def test_a_value_it_cannot_write_is_raised_to_the_caller():
    target = io.BytesIO()
    with pytest.raises(ValueError, match="cannot be written"):
        with RowWriter(target) as writer:
            writer.write_rows(np.array([[1.0, 2.0]]))
            writer.write_rows(np.array([[1e30, 2.0]]))
    assert target.getvalue() == b"1.000000,2.000000\n"  # what came before it is written


class _FullDisk(io.RawIOBase):
    def write(self, data) -> int:
        raise OSError(28, "No space left on device")


def test_a_failing_file_is_raised_by_close_and_the_caller_never_hangs():
    writer = RowWriter(_FullDisk(), depth=1)
    for _ in range(5):  # more blocks than wait at once: the thread drains them after its error
        try:
            writer.write_rows(_rows(0, 10))
        except OSError:
            break
    with pytest.raises(OSError, match="No space"):
        writer.close()


def test_an_error_of_the_caller_stops_the_thread():
    target = io.BytesIO()
    with pytest.raises(KeyError):
        with RowWriter(target) as writer:
            writer.write_rows(_rows(1, 10))
            raise KeyError("the analysis failed")
    assert not writer._thread.is_alive()
