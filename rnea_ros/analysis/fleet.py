"""Many recordings, one model: each recording is a task (local worker processes, or an existing
Dask distributed cluster); their identifications are pooled, and a summary per recording and per
joint shows which robot of a fleet drifts from the others. No ROS.

Dask (``dask[distributed]``) is an optional extra, imported only with a scheduler address.
"""

from __future__ import annotations

import multiprocessing
import threading
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rnea_ros.analysis.identify import FEATURES, Identification
from rnea_ros.analysis.pipeline import analyze, chosen_window
from rnea_ros.analysis.recording import DEFAULT_CHUNK, open_recording
from rnea_ros.analysis.replay import Replay, find_replay
from rnea_ros.dynamics.corrections import with_corrections
from rnea_ros.dynamics.model import RobotModel

DRIFT_RATIO = 1.5  # a recording's value this far from the fleet's median (×, or ÷) is flagged


@dataclass(frozen=True)
class RecordingTask:
    """Everything one worker needs (picklable): the recording and how to analyse it."""

    path: str
    description: str
    topic: str = "/joint_states"
    window: float | None = None  # s; None: chosen on the recording's first samples
    order: int = 3
    coulomb_width: float | None = None  # None: chosen per joint on held-out samples
    gravity: tuple[float, float, float] = (0.0, 0.0, -9.81)
    chunk: int = DEFAULT_CHUNK
    payload_link: str = ""  # also identify a payload on this link
    effort_delay: float = 0.0  # see pipeline.analyze
    start: float = 0.0
    end: float = float("inf")
    urdf_dynamics: bool = False  # the URDF's <dynamics damping friction> in the model (rnea_node's default: left out)


@dataclass(frozen=True)
class RecordingResult:
    path: str
    samples: int
    identification: Identification
    replay: Replay | None = None  # the recording replays its own motion (``replay.find_replay``)


def analyze_recording(task: RecordingTask) -> RecordingResult:
    """One recording, start to end, in the worker that runs it (no files written)."""
    model = RobotModel.from_urdf(task.description, gravity=task.gravity)
    identification = Identification(model.joint_names, task.coulomb_width, task.payload_link)
    corrected = with_corrections(model, None, task.urdf_dynamics)
    window = task.window
    if window is None:
        leading = open_recording(Path(task.path), task.topic, task.chunk)
        window = chosen_window(corrected, leading, order=task.order, start=task.start, end=task.end).window
    chunks = open_recording(Path(task.path), task.topic, task.chunk)
    analysis = analyze(
        corrected,
        chunks,
        window=window,
        order=task.order,
        identification=identification,
        effort_delay=task.effort_delay,
        start=task.start,
        end=task.end,
    )
    positions = analysis.positions.rows()
    replay = find_replay(positions[:, 0], positions[:, 1:]) if positions.size else None
    return RecordingResult(task.path, analysis.samples, identification, replay)


def replay_lines(results: list[RecordingResult]) -> list[str]:
    """Each recording that replays its own motion, named, and what that does to the pool's folds."""
    lines = []
    for result in results:
        if result.replay is not None:
            lines.append(f"{result.path}: " + result.replay.describe(validating=True))
            lines.append(
                "  the pooled fit's folds in time hold its replayed part: validate on a recording left out of "
                "the pool (rnea_analyze ONE --identify --validate OTHER)"
            )
    return lines


@dataclass(frozen=True)
class FailedRecording:
    """A recording of the fleet that could not be analysed, and why (the others go on)."""

    path: str
    reason: str


def analyze_or_fail(task: RecordingTask) -> RecordingResult | FailedRecording:
    """``analyze_recording``, or why it failed: one corrupt recording must not stop a fleet."""
    try:
        return analyze_recording(task)
    except Exception as error:  # any failure of one recording's reading or analysis
        return FailedRecording(task.path, f"{type(error).__name__}: {str(error)[:300]}")


def _connected(client_class, scheduler: str, timeout: float):
    """A Dask client of ``scheduler``, or OSError within ``timeout`` seconds: ``Client(timeout=)``
    waits forever on a port that accepts and never answers, so the connection is made on a daemon
    thread that is left behind when it does not return in time."""
    outcome: dict = {}

    def connect() -> None:
        try:
            outcome["client"] = client_class(scheduler, timeout=timeout)
        except Exception as error:  # whatever the connection raises, said below
            outcome["error"] = error

    thread = threading.Thread(target=connect, name="dask connect", daemon=True)
    thread.start()
    thread.join(timeout + 1.0)
    if "client" in outcome:
        return outcome["client"]
    why = outcome.get("error", "no answer")
    raise OSError(f"no Dask scheduler answers at {scheduler} within {timeout:g} s: {why}")


def run_tasks(
    tasks: list[RecordingTask], workers: int = 2, scheduler: str | None = None, scheduler_timeout: float = 10.0
) -> list[RecordingResult | FailedRecording]:
    """Results in the order of ``tasks``, a ``FailedRecording`` for each that failed: on ``workers``
    local processes, or on the Dask cluster at ``scheduler`` (``tcp://host:port``; OSError when it
    does not answer within ``scheduler_timeout`` seconds)."""
    if scheduler:
        try:
            from distributed import Client
        except ImportError as error:
            raise ImportError("--scheduler needs Dask: pip install 'dask[distributed]'") from error
        with _connected(Client, scheduler, scheduler_timeout) as client:
            return client.gather(client.map(analyze_or_fail, tasks, pure=False))
    if workers <= 1:
        return [analyze_or_fail(task) for task in tasks]
    # spawned, not forked: a fork of a process whose numba kernels have started OpenMP threads
    # dies in the child (GNU OpenMP is not fork-safe)
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        return list(pool.map(analyze_or_fail, tasks))


def pooled(results: list[RecordingResult]) -> Identification:
    first = results[0].identification
    total = Identification(first.joint_names, first.coulomb_width, first.payload_link)
    for result in results:
        total.merge(result.identification)
    return total


def drift(results: list[RecordingResult]) -> list[tuple[str, str, str, float, float]]:
    """(recording, joint, parameter, its value, the fleet's median) wherever a recording's
    identified value is DRIFT_RATIO times above or below the fleet's median. Parameters whose
    median is within 5 standard errors of zero (a joint without such friction) are not compared:
    their ratios would be noise."""
    flagged = []
    per_recording = [{r.name: r for r in result.identification.results()} for result in results]
    for name in results[0].identification.joint_names:
        for parameter in FEATURES[:3]:  # friction and armature: the offset is no property of a fleet
            estimates = [table[name].estimates[parameter] for table in per_recording]
            values = [e.value for e in estimates]
            known = [v for v in values if v is not None]
            if len(known) < 3:
                continue
            median = float(np.median(known))
            if abs(median) <= 5 * float(np.median([e.standard_error for e in estimates if e.value is not None])):
                continue
            for result, value in zip(results, values, strict=True):
                if value is None:
                    continue
                if not 1 / DRIFT_RATIO <= value / median <= DRIFT_RATIO:
                    flagged.append((result.path, name, parameter, float(value), median))
    return flagged


def fleet_table(results: list[RecordingResult]) -> str:
    """Per recording and joint: viscous / Coulomb / armature ("n/i" where not identifiable)."""
    names = results[0].identification.joint_names
    lines = [f"{'recording':<28}{'samples':>10}  " + "".join(f"{name[:16]:>18}" for name in names)]
    for result in results:
        cells = []
        for r in result.identification.results():
            values = [r.estimates[p].value for p in FEATURES[:3]]
            cells.append("/".join("n/i" if v is None else f"{v:.2g}" for v in values))
        lines.append(f"{Path(result.path).name[:28]:<28}{result.samples:>10,}  " + "".join(f"{c:>18}" for c in cells))
    lines.append("per joint: viscous/Coulomb/armature")
    flagged = drift(results)
    for path, name, parameter, value, median in flagged:
        lines.append(
            f"DRIFT {Path(path).name}: {name} {parameter} {value:.3g} vs the fleet's median {median:.3g} "
            f"({value / median:.2f}×)"
        )
    if not flagged:
        lines.append(f"no recording drifts from the fleet's median by more than {DRIFT_RATIO}×")
    return "\n".join(lines)
