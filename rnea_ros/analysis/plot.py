"""rnea_analyze's figure: measured vs model vs gravity per joint, and the residuals.

Each line is drawn through at most ``LINE_POINTS`` points: the recording's decimated rows
(``pipeline.Decimator``, up to 40,000) reduced to each bucket's least and greatest value in time
order (``envelope``), so a spike stays as tall as it was. The figure is drawn by matplotlib's Agg
canvas directly, with fixed margins: pyplot's import and ``tight_layout`` were 0.8 of the 2.2 s the
600,000-sample benchmark bag spent on its plot, drawing 40,000-point lines most of the rest.

torques.png is rendered in two bands of axes, by two processes in ``PlotWorker`` (each band's pixels are
the whole figure's: no artist crosses the gap between the bands), each band's rows deflated by its own
process, and the two streams joined into one PNG (``png_bytes``): the figure's drawing and its PNG's
compression were the command's last ~0.4 s, on one core while the other waited.
"""

from __future__ import annotations

import multiprocessing
import os
import struct
import zlib
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # numpy and the standard library only at import: ``cli`` forks the worker before numba's import
    from rnea_ros.analysis.identify import Identification
    from rnea_ros.analysis.pipeline import Analysis

LINE_POINTS = 1_600  # per line: 2 per bucket (its least and greatest value), ~1 bucket per pixel column at 90 dpi
TORQUES_DPI = 90


def envelope(y: np.ndarray, points: int = LINE_POINTS) -> np.ndarray:
    """Indices into ``y`` (1-D), increasing, at most ``points``: each of ``points // 2`` buckets of
    consecutive samples gives its least and greatest finite value (a bucket of NaN only gives one
    NaN: a gap in the line). Every index when ``y`` has no more than ``points`` samples."""
    n = len(y)
    if n <= points:
        return np.arange(n)
    buckets = max(points // 2, 1)
    size = -(-n // buckets)  # ceil
    buckets = -(-n // size)
    padded = np.concatenate([y, np.full(buckets * size - n, np.nan)]).reshape(buckets, size)
    finite = np.isfinite(padded)
    low = np.argmin(np.where(finite, padded, np.inf), axis=1)
    high = np.argmax(np.where(finite, padded, -np.inf), axis=1)
    start = np.arange(buckets) * size
    pairs = np.sort(np.stack([start + low, start + high], axis=1), axis=1).ravel()
    pairs = np.minimum(pairs, n - 1)  # a last bucket of padding only: its last sample
    return np.unique(pairs)


def _line(ax, t: np.ndarray, y: np.ndarray, *args, **kwargs) -> None:
    rows = envelope(y, LINE_POINTS)
    ax.plot(t[rows], y[rows], *args, **kwargs)


def _figure(width: float, height: float, dpi: float = 100):
    """A figure on the Agg canvas, without pyplot."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=dpi)
    FigureCanvasAgg(fig)
    return fig


def write_plot(analysis: Analysis, path: Path) -> None:
    """torques.png drawn in this process, as ``PlotWorker`` draws it (the same bytes)."""
    _draw_torques(_torques_axes(analysis.joint_names), analysis.plot.rows(), path)


def _torques_axes(names: list[str]):
    """(figure, axes, height) of torques.png before its lines: what needs only the joints' names."""
    n = len(names)
    height = 1.7 * (n + 1) + 1
    fig = _figure(10, height, TORQUES_DPI)
    axes = fig.subplots(n + 1, 1, sharex=True)
    for j, ax in enumerate(axes[:-1]):
        ax.set_ylabel(names[j], fontsize=8)
    axes[-1].set_ylabel("residual\nmeasured − model", fontsize=8)
    axes[0].set_title("measured efforts vs rigid-body model")
    axes[-1].set_xlabel("time [s]")
    # fixed margins in inches (tight_layout measured every label: 0.3 s)
    fig.subplots_adjust(left=1.1 / 10, right=1 - 0.2 / 10, top=1 - 0.45 / height, bottom=0.5 / height, hspace=0.12)
    return fig, axes, names


def _draw_torques(prepared, rows: np.ndarray, path: Path, fork: bool = False) -> None:
    """The lines of the analysis's decimated ``rows`` drawn on ``_torques_axes``' figure, saved; with
    ``fork``, its two bands rendered by two processes."""
    fig, axes, names = prepared
    _add_lines(axes, names, rows)
    if fork and len(axes) > 1 and hasattr(os, "fork"):
        data = _forked_bands(fig)
    else:
        data = png_bytes(_rendered(fig), _split_row(fig), TORQUES_DPI)
    Path(path).write_bytes(data)


def _add_lines(axes, names: list[str], rows: np.ndarray) -> None:
    n = len(names)
    t = rows[:, 0] - rows[0, 0] if len(rows) else np.empty(0)
    measured, tau, gravity = rows[:, 1 : 1 + n], rows[:, 1 + n : 1 + 2 * n], rows[:, 1 + 2 * n : 1 + 3 * n]
    for j, ax in enumerate(axes[:-1]):
        _line(ax, t, measured[:, j], lw=0.8, label="measured")
        _line(ax, t, tau[:, j], lw=0.8, label="model τ")
        _line(ax, t, gravity[:, j], "--", lw=0.8, label="gravity g(q)")
    for j in range(n):
        _line(axes[-1], t, measured[:, j] - tau[:, j], lw=0.6, label=names[j])
    axes[-1].legend(fontsize=6, ncol=4, loc="upper right")
    axes[0].legend(fontsize=8, loc="upper right")


def _rendered(fig, band: slice | None = None) -> np.ndarray:
    """The figure's RGBA pixels (rows from the top) as Agg draws it (``savefig``'s), only the axes of
    ``band`` drawn when given (the others' pixels are then the background)."""
    for k, ax in enumerate(fig.axes):
        ax.set_visible(band is None or k in range(len(fig.axes))[band])
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())


def _split_row(fig) -> int:
    """The pixel row in the middle of the gap above the lower band's first axes: where the bands meet."""
    upper, lower = fig.axes[_split_axes(fig) - 1].get_position(), fig.axes[_split_axes(fig)].get_position()
    return round((1 - (upper.y0 + lower.y1) / 2) * fig.bbox.height)


def _split_axes(fig) -> int:
    """The lower band's first axes; the upper band has one more when the count is odd (the lower one has the
    residual's axes, with a line and a legend entry per joint, and the time axis's labels)."""
    return (len(fig.axes) + 1) // 2


def _scanlines(rgba: np.ndarray) -> memoryview:
    """PNG scanlines of ``rgba``'s rows (height, width, 4): the first row unfiltered, each other one as its
    difference from the row above (filter 2, "up": a plot's rows repeat most of the row above)."""
    pixels = rgba.reshape(len(rgba), -1)
    lines = np.empty((len(rgba), 1 + pixels.shape[1]), np.uint8)
    lines[:1, 0], lines[1:, 0] = 0, 2
    lines[:1, 1:] = pixels[:1]
    np.subtract(pixels[1:], pixels[:-1], out=lines[1:, 1:])
    return memoryview(lines).cast("B")


def _deflated(lines: memoryview, last: bool) -> bytes:
    """A raw deflate stream of ``lines``: finished when ``last``, else flushed to a byte boundary for the
    next part's stream to follow. Level 1 and run-length matches only: 2.5x faster than PIL's PNG at level 1
    (which tries 5 filters on every row), 4 % fewer bytes."""
    compressor = zlib.compressobj(1, zlib.DEFLATED, -15, 9, zlib.Z_RLE)
    return compressor.compress(lines) + compressor.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)


def png_bytes(rgba: np.ndarray, split: int, dpi: float) -> bytes:
    """An RGBA PNG of ``rgba`` (height, width, 4) whose image data is two deflate streams, rows before
    ``split`` and from it: the bytes ``PlotWorker``'s two processes make."""
    upper, lower = _scanlines(rgba[:split]), _scanlines(rgba[split:])
    deflated = _deflated(upper, last=False) + _deflated(lower, last=True)
    return _png_file(rgba.shape[1], len(rgba), dpi, deflated, zlib.adler32(lower, zlib.adler32(upper)))


def _png_file(width: int, height: int, dpi: float, deflated: bytes, adler: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    per_metre = round(dpi / 0.0254)
    return b"".join(
        (
            b"\x89PNG\r\n\x1a\n",
            chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)),  # 8-bit RGBA
            chunk(b"pHYs", struct.pack(">IIB", per_metre, per_metre, 1)),
            chunk(b"IDAT", b"\x78\x01" + deflated + struct.pack(">I", adler)),  # zlib's header, fastest level
            chunk(b"IEND", b""),
        )
    )


def _forked_bands(fig) -> bytes:
    """``png_bytes`` of the figure, its upper band rendered and deflated by a forked process while this one
    does the lower band; the upper band done here too if that process fails."""
    split, first_lower = _split_row(fig), _split_axes(fig)
    reader, writer = os.pipe()
    try:
        pid = os.fork()
    except OSError:  # no process to spare: the whole figure here
        os.close(reader)
        os.close(writer)
        return png_bytes(_rendered(fig), split, TORQUES_DPI)
    if pid == 0:  # pragma: no cover - the forked process, left by os._exit
        code = 1
        try:
            upper = _scanlines(_rendered(fig, slice(0, first_lower))[:split])
            with os.fdopen(writer, "wb") as pipe:
                pipe.write(struct.pack(">I", zlib.adler32(upper)) + _deflated(upper, last=False))
            code = 0
        finally:
            os._exit(code)
    os.close(writer)
    with os.fdopen(reader, "rb") as pipe:
        try:
            rendered = _rendered(fig, slice(first_lower, None))
            lower = _scanlines(rendered[split:])
            deflated_lower = _deflated(lower, last=True)
            received = pipe.read()
        finally:
            pipe.close()  # a process still writing gets an error, not a wait for a reader
            _, status = os.waitpid(pid, 0)
    width, height = rendered.shape[1], len(rendered)
    if status == 0 and len(received) >= 4:
        (upper_adler,), deflated_upper = struct.unpack(">I", received[:4]), received[4:]
    else:
        upper = _scanlines(_rendered(fig, slice(0, first_lower))[:split])
        upper_adler, deflated_upper = zlib.adler32(upper), _deflated(upper, last=False)
    adler = zlib.adler32(lower, upper_adler)
    return _png_file(width, height, TORQUES_DPI, deflated_upper + deflated_lower, adler)


_prepared: dict[tuple[str, ...], object] = {}  # in the worker: the figure made for these joints, waiting for its lines


def _prepare_in_worker(names: list[str]) -> None:
    prepared = _torques_axes(names)
    _ticks_ahead(prepared[1])
    _prepared[tuple(names)] = prepared


TICKS_AHEAD = (10, 8)  # per axes, x and y: the benchmark bag's figure draws 9 and 5-7


def _ticks_ahead(axes) -> None:
    """Each axis's tick objects made now, before the lines: matplotlib makes them at the first draw that
    shows them (each a copy of the first tick's properties: ~0.15 s of the 0.6 s the benchmark bag's
    drawing took), and draws only as many as its locator asks for. The same pixels (test_fast_paths)."""
    for ax in axes:
        ax.xaxis.get_major_ticks(TICKS_AHEAD[0])
        ax.yaxis.get_major_ticks(TICKS_AHEAD[1])


def _draw_in_worker(names: list[str], rows: np.ndarray, path: Path) -> None:
    prepared = _prepared.pop(tuple(names), None) or _torques_axes(names)
    _draw_torques(prepared, rows, path, fork=True)


def _import_matplotlib() -> None:
    _figure(1, 1)


class PlotWorker:
    """torques.png drawn in a forked process (``concurrent.futures``, one worker): matplotlib imported
    and the figure's axes made there while this process reads and analyses the recording (~1 s of
    CPU on the other core: 0.5-1 s to import, 0.2-0.3 s for the axes); ``write`` sends the decimated
    rows and waits for the file, whose two bands the worker renders beside a process it forks then
    (``_forked_bands``). The same bytes as ``write_plot``'s. Drawn here where fork is not available or
    the worker died."""

    def __init__(self) -> None:
        self._pool = None
        self._names: list[str] = []

    def __enter__(self) -> PlotWorker:
        if "fork" in multiprocessing.get_all_start_methods():
            self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
            self._pool.submit(_import_matplotlib)
        return self

    def prepare(self, names: list[str]) -> None:
        """The figure's axes made ahead for these joints."""
        self._names = list(names)
        if self._pool is not None:
            self._pool.submit(_prepare_in_worker, self._names)

    def write(self, analysis: Analysis, path: Path) -> None:
        if self._pool is not None and analysis.joint_names == self._names:
            try:
                self._pool.submit(_draw_in_worker, self._names, analysis.plot.rows(), path).result()
                return
            except BrokenProcessPool:
                pass
        write_plot(analysis, path)

    def __exit__(self, *exc) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)


def write_friction_plot(identification: Identification, path: Path) -> None:
    """Per joint: the residual less everything fitted but friction, averaged per velocity bin,
    and the fitted friction terms (``regressor.JointTerm.friction``) at q̈ = 0."""
    from rnea_ros.dynamics.regressor import JOINT_TERMS, joint_torques

    results = identification.results()
    points = identification.friction_points()
    n = len(results)
    columns = min(n, 4)
    rows = (n + columns - 1) // columns
    fig = _figure(3.2 * columns, 2.6 * rows)
    axes = fig.subplots(rows, columns, squeeze=False)
    for ax, result, (velocity, friction) in zip(axes.ravel(), results, points, strict=False):
        ax.plot(velocity, friction, "o", ms=3, label="recording (bin means)")
        fitted = [(result.estimates[t.name].value or 0.0) if t.friction else 0.0 for t in JOINT_TERMS]
        if len(velocity):
            grid = np.linspace(velocity.min(), velocity.max(), 400)
            curve = joint_torques(fitted, grid, np.zeros_like(grid), result.coulomb_width, result.coulomb_lead)
            ax.plot(grid, curve, lw=1, label="fitted")
        lead = f", lead {result.coulomb_lead:g} s; curve at q̈ = 0" if result.coulomb_lead else ""
        ax.set_title(f"{result.name} (width {result.coulomb_width:g} rad/s{lead})", fontsize=8)
        ax.set_xlabel("q̇ [rad/s]", fontsize=7)
        ax.tick_params(labelsize=7)
    for ax in axes.ravel()[n:]:
        ax.axis("off")
    axes[0, 0].set_ylabel("friction [N·m]", fontsize=7)
    axes[0, 0].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
