"""rnea_analyze's figure: measured vs model vs gravity per joint, and the residuals.

Each line is drawn through at most ``LINE_POINTS`` points: the recording's decimated rows
(``pipeline.Decimator``, up to 40,000) reduced to each bucket's least and greatest value in time
order (``envelope``), so a spike stays as tall as it was. The figure is drawn by matplotlib's Agg
canvas directly, with fixed margins: pyplot's import and ``tight_layout`` were 0.8 of the 2.2 s the
600,000-sample benchmark bag spent on its plot, drawing 40,000-point lines most of the rest.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # numpy and the standard library only at import: ``cli`` forks the worker before numba's import
    from rnea_ros.analysis.identify import Identification
    from rnea_ros.analysis.pipeline import Analysis

LINE_POINTS = 1_600  # per line: 2 per bucket (its least and greatest value), ~1 bucket per pixel column at 90 dpi


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


def _figure(width: float, height: float):
    """A figure on the Agg canvas, without pyplot."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def write_plot(analysis: Analysis, path: Path) -> None:
    _draw_torques(_torques_axes(analysis.joint_names), analysis.plot.rows(), path)


def _torques_axes(names: list[str]):
    """(figure, axes, height) of torques.png before its lines: what needs only the joints' names."""
    n = len(names)
    height = 1.7 * (n + 1) + 1
    fig = _figure(10, height)
    axes = fig.subplots(n + 1, 1, sharex=True)
    for j, ax in enumerate(axes[:-1]):
        ax.set_ylabel(names[j], fontsize=8)
    axes[-1].set_ylabel("residual\nmeasured − model", fontsize=8)
    axes[0].set_title("measured efforts vs rigid-body model")
    axes[-1].set_xlabel("time [s]")
    # fixed margins in inches (tight_layout measured every label: 0.3 s)
    fig.subplots_adjust(left=1.1 / 10, right=1 - 0.2 / 10, top=1 - 0.45 / height, bottom=0.5 / height, hspace=0.12)
    return fig, axes, names


def _draw_torques(prepared, rows: np.ndarray, path: Path) -> None:
    """The lines of the analysis's decimated ``rows`` drawn on ``_torques_axes``' figure, saved."""
    fig, axes, names = prepared
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
    # zlib level 1: the same pixels, 0.56 -> 0.30 s to save for 16 % more bytes than the default 6
    fig.savefig(path, dpi=90, pil_kwargs={"compress_level": 1})


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
    _draw_torques(prepared, rows, path)


def _import_matplotlib() -> None:
    _figure(1, 1)


class PlotWorker:
    """torques.png drawn in a forked process (``concurrent.futures``, one worker): matplotlib imported
    and the figure's axes made there while this process reads and analyses the recording (~1 s of
    CPU on the other core: 0.5-1 s to import, 0.2-0.3 s for the axes); ``write`` sends the decimated
    rows and waits for the file. The same figure as ``write_plot``'s. Drawn here where fork is not
    available or the worker died."""

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
