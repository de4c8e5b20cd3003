"""A designed excitation: the periodic trajectory that lets a recording determine the most (no ROS).

Per joint, q_j(t) = start_j + Σ_h a_jh (1 − cos(2π h f₀ t)), harmonics h = 1..H of a base
frequency f₀: periodic (period 1/f₀), starting and ending each period at rest at ``start``, the
form ``demo.trajectories.MultiSine`` plays. The amplitudes minimise the condition number of the
identification's regressor over one period (every link's 10 inertial parameters and each joint's
viscous, Coulomb, armature and offset; columns scaled to unit norm; the condition over the base
parameters, i.e. the rank that random states give, so that the combinations no trajectory can
separate do not count), within the URDF's position, velocity and effort limits less the margins.
The search is a (1+1) evolution strategy from a seeded random start: small, dependency-free, and
enough for a few dozen amplitudes.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from lxml import etree

from rnea_ros.analysis.link_inertia import urdf_link_inertials
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.dynamics.regressor import links_regressor, own_regressor
from rnea_ros.motion.multisine import MultiSine, multisine

SAMPLES_PER_PERIOD = 200  # states the condition number is computed over
CHECK_RATE = 50.0  # Hz: states the limits are checked at
SAMPLING_SLACK = 0.995  # amplitudes kept this far inside the room the samples show
RANK_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Limits:
    lower: np.ndarray  # per joint of the model [rad or m]; −inf for a continuous joint
    upper: np.ndarray
    velocity: np.ndarray  # inf when the URDF gives none
    effort: np.ndarray


@dataclass(frozen=True)
class Margins:
    position: float = 0.1  # rad (or m) kept from each position limit
    velocity: float = 0.2  # fraction of the velocity limit kept free
    effort: float = 0.2  # fraction of the effort limit kept free


@dataclass(frozen=True)
class Excitation:
    trajectory: MultiSine
    joints: list[str]
    condition: float  # of the scaled regressor over the base parameters
    evaluations: int
    moving: np.ndarray | None = None  # the joints it was designed to move (with room within the limits)

    def refusal(self, asked: np.ndarray | None = None) -> str | None:
        """Why this trajectory must not be written (None: it may): a joint it should move
        (``asked``, default ``moving``) that stays still, or an infinite condition number (the
        recording could not determine every base parameter)."""
        asked = self.moving if asked is None else asked
        still = [
            n for n, a, row in zip(self.joints, asked, self.trajectory.amplitudes, strict=True) if a and not row.any()
        ]
        if still:
            return (
                f"joints {still} never move in the designed trajectory (no room within their position limits less the "
                "margin, no velocity limit where there is no position limit, or no effort to spare): nothing written"
            )
        if not math.isfinite(self.condition):
            return "the designed trajectory's condition number is infinite (it determines too little): nothing written"
        return None


def urdf_limits(model: RobotModel, urdf: str) -> Limits:
    """The URDF's <limit> of each of the model's joints (continuous joints: no position limit).
    Joints are the children of <robot>, as the URDF parser reads them: a <transmission>'s <joint>
    names a joint, it is none."""
    root = etree.fromstring(urdf.encode())
    found = {}
    for joint in root.iterchildren("joint"):
        limit = joint.find("limit")
        found[joint.get("name")] = (joint.get("type"), {} if limit is None else dict(limit.attrib))
    rows = []
    for name in model.joint_names:
        kind, attributes = found[name]
        bounded = kind != "continuous" and "lower" in attributes and "upper" in attributes
        rows.append(
            (
                _number(attributes.get("lower"), -math.inf) if bounded else -math.inf,
                _number(attributes.get("upper"), math.inf) if bounded else math.inf,
                _positive(attributes.get("velocity")),
                _positive(attributes.get("effort")),
            )
        )
    return Limits(*(np.array(column) for column in zip(*rows, strict=True)))


def _number(text: str | None, default: float) -> float:
    try:
        value = float(text) if text is not None else default
    except ValueError:
        return default
    return value if math.isfinite(value) else default


def _positive(text: str | None) -> float:
    value = _number(text, math.inf)
    return value if value > 0.0 else math.inf


class ConditionNumber:
    """The scaled regressor's condition number over the base parameters, for trajectories of a model."""

    def __init__(self, model: RobotModel, urdf: str, start: np.ndarray, moving: np.ndarray, seed: int = 0) -> None:
        """The base parameters are those random states of the ``moving`` joints determine (the
        others held at ``start``)."""
        self.model = model
        self.links = list(urdf_link_inertials(model, urdf))
        rng = np.random.default_rng(seed)
        n, count = model.nv, 2 * SAMPLES_PER_PERIOD
        q = np.where(moving, rng.uniform(-math.pi, math.pi, size=(count, n)), start)
        qd, qdd = (np.where(moving, rng.normal(size=(count, n)), 0.0) for _ in range(2))
        self.rank = _rank(self._regressor(q, qd, qdd))

    def of(self, trajectory: MultiSine, period: float) -> float:
        times = np.arange(SAMPLES_PER_PERIOD) * period / SAMPLES_PER_PERIOD
        W = self._regressor(*trajectory.at_times(times))
        singular = _scaled_singular_values(W)
        smallest = singular[self.rank - 1] if len(singular) >= self.rank else 0.0
        return float(singular[0] / smallest) if smallest > 0.0 else math.inf

    def _regressor(self, q, qd, qdd) -> np.ndarray:
        """(N·nv, 10·links + T·nv): the links' columns, then each joint's terms (``dynamics.regressor``)."""
        N, n = q.shape
        links = links_regressor(self.model, self.links, q, qd, qdd)
        return np.concatenate([links, own_regressor(qd, qdd)], axis=-1).reshape(N * n, -1)


def _scaled_singular_values(W: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(W, axis=0)
    kept = norms > 0.0
    return np.linalg.svd(W[:, kept] / norms[kept], compute_uv=False)


def _rank(W: np.ndarray) -> int:
    singular = _scaled_singular_values(W)
    return int((singular > RANK_TOLERANCE * singular[0]).sum())


def design(
    model: RobotModel,
    urdf: str,
    start: np.ndarray,
    base_frequency: float = 0.1,
    harmonics: int = 5,
    margins: Margins = Margins(),
    moving: np.ndarray | None = None,
    iterations: int = 300,
    seed: int = 0,
) -> Excitation:
    """The excitation about ``start`` (within the limits less the margins) for the joints where
    ``moving`` is true (default: every joint whose limits leave room to move)."""
    limits = urdf_limits(model, urdf)
    start = np.asarray(start, dtype=float)
    if not np.all((start >= limits.lower) & (start <= limits.upper)):
        raise ValueError("the start is outside the URDF's position limits")
    room = np.minimum(start - limits.lower, limits.upper - start) - margins.position
    moving = (room > 0.0) if moving is None else np.asarray(moving, dtype=bool) & (room > 0.0)
    frequencies = base_frequency * np.arange(1, harmonics + 1)
    measure = ConditionNumber(model, urdf, start, moving, seed)
    rng = np.random.default_rng(seed)
    shape = rng.normal(size=(model.nv, harmonics)) / np.arange(1, harmonics + 1)
    best = _feasible(model, limits, margins, start, moving, shape, frequencies)
    best_condition, step, evaluations = measure.of(best, 1.0 / base_frequency), 0.3, 1
    for _ in range(iterations):
        trial_shape = shape + step * rng.normal(size=shape.shape) * np.abs(shape).mean()
        trial = _feasible(model, limits, margins, start, moving, trial_shape, frequencies)
        condition = measure.of(trial, 1.0 / base_frequency)
        evaluations += 1
        if condition < best_condition:
            shape, best, best_condition, step = trial_shape, trial, condition, step * 1.5
        else:
            step *= 0.9  # the 1/5th rule, roughly
        step = min(max(step, 0.01), 1.0)
    return Excitation(best, list(model.joint_names), best_condition, evaluations, moving)


def _feasible(model, limits: Limits, margins: Margins, start, moving, shape, frequencies) -> MultiSine:
    """The trajectory of this amplitude shape, scaled per joint to its position and velocity room
    and then as a whole until every effort is within its limit less the margin."""
    times = np.arange(int(CHECK_RATE / frequencies[0])) / CHECK_RATE
    w = 2.0 * np.pi * frequencies
    phase = np.outer(times, w)
    excursion = (1.0 - np.cos(phase)) @ shape.T  # (T, n) per unit shape
    speed = np.abs((w * np.sin(phase)) @ shape.T).max(axis=0)
    low, high = excursion.min(axis=0), excursion.max(axis=0)
    room_low = start - limits.lower - margins.position
    room_high = limits.upper - start - margins.position
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.minimum(np.where(high > 0.0, room_high / high, np.inf), np.where(low < 0.0, room_low / -low, np.inf))
        scale = np.minimum(scale, np.where(speed > 0.0, (1.0 - margins.velocity) * limits.velocity / speed, np.inf))
    # the extremes fall between the samples by up to (π f_H / CHECK_RATE)² / 2 of the amplitude: 0.05 % here
    scale = np.where(moving & np.isfinite(scale), np.maximum(SAMPLING_SLACK * scale, 0.0), 0.0)
    amplitudes = shape * scale[:, None]
    factor = 1.0
    for _ in range(12):  # bisection on the effort limits (gravity does not scale with the amplitudes)
        trajectory = MultiSine(start, amplitudes * factor, frequencies)
        tau = model.inverse_dynamics(*trajectory.at_times(times))
        if np.all(np.abs(tau) <= (1.0 - margins.effort) * limits.effort):
            return trajectory
        factor *= 0.7
    return MultiSine(start, np.zeros_like(amplitudes), frequencies)


# --- the file, and the command -------------------------------------------------------------------
def save(excitation: Excitation, path: Path, baseline: float | None = None) -> None:
    """A YAML file rnea_play --excitation plays (written atomically)."""
    import yaml

    trajectory = excitation.trajectory
    content = {
        "joints": excitation.joints,
        "start": trajectory.start.tolist(),
        "frequencies": trajectory.frequencies.tolist(),
        "amplitudes": trajectory.amplitudes.tolist(),
        "period": float(1.0 / trajectory.frequencies[0]),
        "condition_number": float(excitation.condition),
    }
    if baseline is not None:
        content["condition_number_of_rnea_play_default"] = float(baseline)
    header = "# rnea_excite: q_j(t) = start_j + Σ_k amplitudes[j][k] (1 − cos 2π frequencies[k] t)\n"
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(header + yaml.safe_dump(content, sort_keys=False, width=200))
    temporary.replace(path)


def load(path: Path) -> tuple[list[str], MultiSine]:
    """(joints, trajectory) of a file ``save`` wrote; ValueError with the reason otherwise."""
    from rnea_ros.dynamics.corrections import CorrectionsError, read_small_file, strict_yaml

    try:
        content = strict_yaml(read_small_file(path, 1 << 20, "excitation file"), f"excitation file '{path}'")
    except CorrectionsError as error:
        raise ValueError(str(error)) from error
    try:
        joints = [str(name) for name in content["joints"]]
        start = np.array(content["start"], dtype=float)
        frequencies = np.array(content["frequencies"], dtype=float)
        amplitudes = np.array(content["amplitudes"], dtype=float).reshape(len(joints), len(frequencies))
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"excitation file '{path}': {error!r}") from error
    finite = np.all(np.isfinite(start)) and np.all(np.isfinite(amplitudes)) and np.all(np.isfinite(frequencies))
    if start.shape != (len(joints),) or not finite or not np.all((frequencies > 0.0) & (frequencies <= 100.0)):
        raise ValueError(f"excitation file '{path}': start, frequencies or amplitudes malformed")
    return joints, MultiSine(start, amplitudes, frequencies)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="rnea_excite",
        description="Writes a periodic excitation trajectory (Fourier series per joint) within the URDF's "
        "limits that minimises the identification regressor's condition number; rnea_play --excitation "
        "plays it, rnea_analyze --identify [--inertia] identifies from its recording.",
    )
    parser.add_argument("urdf", type=Path)
    parser.add_argument("--start", type=float, nargs="+", help="the pose it starts from (default: mid-limits)")
    parser.add_argument("--joints", nargs="+", help="the joints to move (default: all that can)")
    parser.add_argument("--base-frequency", type=float, default=0.1, help="Hz; the period is its inverse")
    parser.add_argument("--harmonics", type=int, default=5)
    parser.add_argument("--margin-position", type=float, default=0.1, help="rad or m from each limit")
    parser.add_argument("--margin-velocity", type=float, default=0.2, help="fraction of the limit kept free")
    parser.add_argument("--margin-effort", type=float, default=0.2, help="fraction of the limit kept free")
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("excitation.yaml"))
    args = parser.parse_args(argv)
    if not (0.001 <= args.base_frequency <= 10.0 and 1 <= args.harmonics <= 20 and 1 <= args.iterations <= 100_000):
        parser.error("--base-frequency in [0.001, 10] Hz, --harmonics in [1, 20], --iterations in [1, 100000]")
    if not all(0.0 <= m < 1.0 for m in (args.margin_velocity, args.margin_effort)) or args.margin_position < 0.0:
        parser.error("margins: position ≥ 0, velocity and effort fractions in [0, 1)")
    try:
        urdf = args.urdf.read_text()
        model = RobotModel.from_urdf(urdf)
        if model.floating_base:
            raise ValueError("a floating-base robot cannot be excited from a fixed start: fixed base only")
        limits = urdf_limits(model, urdf)
        start = _start(args.start, limits, model)
        unknown = sorted(set(args.joints or []) - set(model.joint_names))
        if unknown:
            raise ValueError(f"--joints: {unknown} are not joints of the model ({model.joint_names})")
        moving = np.array([args.joints is None or name in args.joints for name in model.joint_names])
        margins = Margins(args.margin_position, args.margin_velocity, args.margin_effort)
        excitation = design(
            model, urdf, start, args.base_frequency, args.harmonics, margins, moving, args.iterations, args.seed
        )
        refusal = excitation.refusal(moving if args.joints else None)
        if refusal is not None:
            raise ValueError(refusal)
        baseline = _rnea_play_default(model, urdf, start, moving)
        save(excitation, args.out, baseline)
    except (OSError, ValueError) as error:
        print(f"rnea_excite: {error}", file=sys.stderr)
        return 2
    print(
        f"condition number {excitation.condition:.4g} (rnea_play's default multi-sine from the same start: "
        f"{baseline:.4g}) after {excitation.evaluations} evaluations; wrote {args.out}"
    )
    return 0


def _start(values: list[float] | None, limits: Limits, model: RobotModel) -> np.ndarray:
    if values is None:
        bounded = np.isfinite(limits.lower) & np.isfinite(limits.upper)
        return np.where(bounded, (np.where(bounded, limits.lower, 0.0) + np.where(bounded, limits.upper, 0.0)) / 2, 0.0)
    if len(values) != model.nv:
        raise ValueError(f"--start needs {model.nv} values ({model.joint_names})")
    return np.array(values, dtype=float)


def _rnea_play_default(model: RobotModel, urdf: str, start: np.ndarray, moving: np.ndarray) -> float:
    """The condition number of what rnea_play plays by default (0.1 rad, 0.2 and 0.5 Hz) from ``start``."""
    default = multisine(start, 0.1, [0.2, 0.5])
    default = MultiSine(start, default.amplitudes * moving[:, None], default.frequencies)
    return ConditionNumber(model, urdf, start, moving).of(default, 10.0)


def entry_point() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry_point()
