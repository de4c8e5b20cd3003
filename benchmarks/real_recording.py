"""A real robot's recording, through the user's path: the Franka Emika Panda recording of Gaz et al.
(C. Gaz, M. Cognetti, A. Oliva, P. Robuffo Giordano, A. De Luca, "Dynamic Identification of the
Franka Emika Panda Robot With Retrieval of Feasible Parameters Using Penalty-Based Optimization",
IEEE RA-L 2019; data from github.com/marcocognetti/FrankaEmikaPandaDynModel, GPL-3.0), 21 s at
~1 kHz, link-side torque sensors, read from ``../shared/real_recordings/panda_gaz2019`` beside the
checkout. The URDF is example-robot-data's ``panda``, with its hand and without (the recording does
not say whether the hand was mounted).

Trained on the first 70 % of the time (``rnea_analyze --end``), held out the rest (``--start``), every
run through ``rnea_analyze``'s ``main`` as a user runs it; the held-out runs and FIGAROH's fit use the
differentiation window the first identification chose (``--window``). Compared with the paper's
published friction model (``matlab/dyn_model_panda/get_FrictionTorque.m``):
τ_f = A/(1+exp(−α(q̇+s))) − A/(1+exp(−α·s)) per joint, on the URDF's rigid bodies.

Across recordings: a second real robot, PAL's TIAGo (torso and arm, ~100 Hz, 80 s; recorded by
FIGAROH's authors, github.com/thanhndv212/figaroh-plus, Apache-2.0, read at run time from a git
directory of it and never copied: ``rnea_ros/testing/tiago_recording.py``): identified on one half
(``--identify``) and run on the other half as a second recording (``--validate``), both ways round
(not ``--inertia``: it now finishes, the hand's links not in the recording left out, but five links
come out at their 1 % mass floor: docs/real-recordings.md); its efforts are motor currents
(``--effort-conversion``), its wrist's are not measured.

    python benchmarks/real_recording.py [--paper-model <checkout of FrankaEmikaPandaDynModel>]
                                           # writes docs/figures/real_recording.md
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from pathlib import Path

import numpy as np

from rnea_ros.analysis.differentiate import local_polynomial_derivatives
from rnea_ros.demo.figures import write_table
from rnea_ros.dynamics.corrections import Corrections, load_corrections, save_corrections
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.testing import tiago_recording
from rnea_ros.testing.panda_paper_model import PaperModel
from rnea_ros.testing.panda_recording import JOINTS, RECORDING, Recording, panda_urdf, read_recording, rnea_analyze

TRAIN_FRACTION = 0.7
# Gaz et al. 2019, get_FrictionTorque.m: A [N·m], s [rad/s], α [s/rad] for joints 1..7
PAPER_A = np.array([0.54615, 0.87224, 0.64068, 1.2794, 0.83904, 0.30301, 0.56489])
PAPER_S = np.array([0.039533, 0.025882, -0.04607, 0.036194, 0.026226, -0.021047, 0.0035526])
PAPER_ALPHA = np.array([5.1181, 9.0657, 10.136, 5.5903, 8.3469, 17.133, 10.336])
FRICTION_GRID = np.array([-1.0, -0.3, -0.05, 0.05, 0.3, 1.0])  # rad/s
COMMAND = "python benchmarks/real_recording.py"


def paper_friction(qd: np.ndarray) -> np.ndarray:
    """The paper's friction torque (N·m) at the velocities ``qd`` (…, 7)."""
    return PAPER_A / (1 + np.exp(-PAPER_ALPHA * (qd + PAPER_S))) - PAPER_A / (1 + np.exp(-PAPER_ALPHA * PAPER_S))


def our_friction(corrections: Corrections, qd: np.ndarray) -> np.ndarray:
    """Our viscous + Coulomb (width, lead) at steady velocities ``qd`` (…, 7): no armature, no offset."""
    return friction_only(corrections).torques(JOINTS, qd, np.zeros_like(qd))


def friction_only(corrections: Corrections) -> Corrections:
    joints = {name: dataclasses.replace(c, armature=0.0, offset=0.0) for name, c in corrections.joints.items()}
    return Corrections(joints)


@dataclasses.dataclass
class Variant:
    hand: bool
    rows: dict[str, np.ndarray | str]  # model → held-out RMS per joint, or why there is none
    corrections: Corrections  # the joint terms identified on the training part
    window: float  # s, chosen by the first identification
    figaroh_terms: dict[str, float]  # FIGAROH's value of each joint term its fit determines alone
    gravity: dict[str, np.ndarray]  # URDF → RMS of its g(q) − the paper's per joint, held-out samples
    joint_terms_armature: np.ndarray  # FIGAROH's joint terms alone: the armature per joint

    @property
    def label(self) -> str:
        return "with hand" if self.hand else "without hand"


def held_out_rms(run) -> np.ndarray | str:
    if run.code != 0:
        return f"refused: {run.error()}"
    rms = run.rms()
    return np.array([rms[name] for name in JOINTS])


def evaluate(
    folder: Path, csv: Path, recording: Recording, hand: bool, split: float, paper: PaperModel | None
) -> Variant:
    """Every model of the table on one URDF variant (with ``paper``, the paper's model too)."""
    name = "hand" if hand else "arm"
    urdf = folder / f"panda_{name}.urdf"
    urdf.write_text(panda_urdf(hand))
    out = folder / name
    trained = rnea_analyze(csv, "--urdf", urdf, "--identify", "--end", split, "--out", out / "terms", "--no-csv")
    if trained.code != 0:
        raise RuntimeError(trained.output)
    window = trained.window()
    held = ("--start", split, "--window", window)
    joint_terms = out / "terms" / "corrections.yaml"
    corrections = load_corrections(joint_terms)
    save_corrections(friction_only(corrections), out / "friction.yaml")

    def with_corrections(path: Path) -> np.ndarray | str:
        return held_out_rms(rnea_analyze(csv, "--urdf", urdf, "--corrections", path, *held, "--out", out / path.stem))

    rows: dict[str, np.ndarray | str] = {}
    rows["URDF alone"] = held_out_rms(rnea_analyze(csv, "--urdf", urdf, *held, "--out", out / "urdf"))
    rows["URDF + joint terms (--identify)"] = with_corrections(joint_terms)
    alone, alone_armature = figaroh_joint_terms(recording, urdf.read_text(), split, window)
    rows["FIGAROH's joint terms alone (URDF's inertias kept; least squares, any sign)"] = alone
    rows["URDF + joint terms + inertia (--identify --inertia)"] = with_inertia(csv, urdf, out, split, window)
    figaroh_rms, nonnegative_rms, standalone = figaroh(recording, urdf.read_text(), split, window)
    rows["FIGAROH's method (base parameters, same split and q̈)"] = figaroh_rms
    rows["FIGAROH's method, its armatures and friction held ≥ 0"] = nonnegative_rms
    rows["URDF + our friction only (viscous, Coulomb)"] = with_corrections(out / "friction.yaml")
    rows["URDF + the paper's friction"] = paper_friction_rms(out / "urdf" / "samples.csv", recording)
    gravity: dict[str, np.ndarray] = {}
    if paper is not None:
        held_out = slice(int(np.searchsorted(recording.t - recording.t[0], split)), None)
        rows["the paper's identified model (its M, c, g and friction; fitted on its own data)"] = paper_model_rms(
            paper, recording, window, held_out
        )
        fitted = out / "inertia" / "corrected.urdf"
        for label, path in (("URDF", urdf), ("corrected URDF (--identify --inertia)", fitted)):
            if path.is_file():
                gravity[label] = gravity_difference(paper, path.read_text(), recording.q[held_out])
    return Variant(hand, rows, corrections, window, standalone, gravity, alone_armature)


def with_inertia(csv: Path, urdf: Path, out: Path, split: float, window: float) -> np.ndarray | str:
    """--identify --inertia on the training part (choosing its window, as the joint terms' run did: the
    same; and with it q̈'s noise), its corrected.urdf + corrections.yaml held out."""
    fitted = out / "inertia"
    trained = rnea_analyze(csv, "--urdf", urdf, "--identify", "--inertia", "--end", split, "--out", fitted, "--no-csv")
    if trained.code != 0:
        return f"refused: {trained.error()}"
    return held_out_rms(
        rnea_analyze(
            csv, "--urdf", fitted / "corrected.urdf", "--corrections", fitted / "corrections.yaml",
            "--start", split, "--window", window, "--out", out / "ev_inertia", "--no-csv",
        )
    )  # fmt: skip


def figaroh(recording: Recording, urdf: str, split: float, window: float):
    """FIGAROH's base parameters fitted on the training part, predicting the held-out part, from the
    recorded q̇ and q̈ of rnea_analyze's differentiation (local cubic over ``window``): (its held-out
    RMS per joint, the same refitted with its standalone armatures and friction ≥ 0, the values its
    own fit gives those standalone joint terms)."""
    from rnea_ros.testing.figaroh_reference import figaroh_held_out, figaroh_nonnegative_held_out

    training, held_out = split_states(recording, split, window)
    rms, _ = figaroh_held_out(urdf, JOINTS, {}, training, held_out, len(JOINTS))
    nonnegative, standalone = figaroh_nonnegative_held_out(urdf, JOINTS, {}, training, held_out, len(JOINTS))
    return rms, nonnegative, standalone


def figaroh_joint_terms(recording: Recording, urdf: str, split: float, window: float):
    """FIGAROH's viscous, Coulomb (sign), armature and offset columns fitted on the URDF's rigid
    bodies' residual, the same split and q̈ as ``figaroh``: (held-out RMS per joint, the armatures)."""
    from rnea_ros.testing.figaroh_reference import joint_terms_held_out

    training, held_out = split_states(recording, split, window)
    rms, coefficients = joint_terms_held_out(urdf, JOINTS, {}, training, held_out, len(JOINTS))
    return rms, coefficients[:, 2]


def split_states(recording: Recording, split: float, window: float):
    """(training, held-out) (q, q̇, q̈, τ), q̈ by rnea_analyze's differentiation over ``window``."""
    _, qdd = local_polynomial_derivatives(recording.t, recording.q, window, 3)
    elapsed = recording.t - recording.t[0]
    train, held = elapsed <= split, elapsed >= split
    states = (recording.q, recording.qd, qdd, recording.tau)
    return [x[train] for x in states], [x[held] for x in states]


def paper_model_rms(paper: PaperModel, recording: Recording, window: float, held_out: slice) -> np.ndarray:
    """Held-out residual of the paper's whole model (M q̈ + c + g + τ_f) at the recorded q, q̇ and the
    q̈ of rnea_analyze's differentiation over ``window``."""
    _, qdd = local_polynomial_derivatives(recording.t, recording.q, window, 3)
    q, qd = recording.q[held_out], recording.qd[held_out]
    predicted = paper.torques(q, qd, qdd[held_out])
    return np.sqrt(np.mean((recording.tau[held_out] - predicted) ** 2, axis=0))


def gravity_difference(paper: PaperModel, urdf: str, q: np.ndarray) -> np.ndarray:
    """RMS over the configurations ``q`` (N, 7) of g(q) by our model of ``urdf`` (its other joints,
    the fingers, at 0) minus the paper's g(q), per joint."""
    model = RobotModel.from_urdf(urdf)
    columns = [model.joint_names.index(name) for name in JOINTS]
    full = np.zeros((len(q), model.nq))
    full[:, columns] = q
    ours = np.array([model.gravity_torques(np.ascontiguousarray(x))[columns] for x in full])
    return np.sqrt(np.mean((ours - paper.g(q)) ** 2, axis=0))


def paper_friction_rms(samples_csv: Path, recording: Recording) -> np.ndarray:
    """Held-out residual of the URDF + the paper's friction at the recorded q̇, from the URDF-alone
    run's samples.csv (measured and model effort per held-out sample)."""
    header = samples_csv.open().readline().strip().split(",")
    samples = np.loadtxt(samples_csv, delimiter=",", skiprows=1, ndmin=2)
    column = {name: k for k, name in enumerate(header)}
    measured = samples[:, [column[f"{name}.effort_measured"] for name in JOINTS]]
    model = samples[:, [column[f"{name}.effort_model"] for name in JOINTS]]
    qd = np.column_stack([np.interp(samples[:, 0], recording.t, recording.qd[:, j]) for j in range(len(JOINTS))])
    return np.sqrt(np.mean((measured - model - paper_friction(qd)) ** 2, axis=0))


def main_rows(variants: list[Variant]) -> list[list[object]]:
    rows = []
    for variant in variants:
        for model, value in variant.rows.items():
            if isinstance(value, str):
                rows.append([variant.label, model, value, *[""] * len(JOINTS)])
            else:
                rows.append([variant.label, model, f"{np.sqrt(np.mean(value**2)):.3f}", *(f"{x:.3f}" for x in value)])
    return rows


def friction_rows(variants: list[Variant]) -> list[list[object]]:
    paper = paper_friction(FRICTION_GRID[:, None] * np.ones(len(JOINTS)))
    rows = []
    for variant in variants:
        ours = our_friction(variant.corrections, FRICTION_GRID[:, None] * np.ones(len(JOINTS)))
        for j, name in enumerate(JOINTS):
            cells = [f"{a:+.2f} / {b:+.2f}" for a, b in zip(ours[:, j], paper[:, j], strict=True)]
            rows.append([name, variant.label, *cells])
    return rows


FIGAROH_TERMS = {"ia": "armature [kg·m²]", "fv": "viscous [N·m·s/rad]", "fs": "Coulomb [N·m]", "off": "offset [N·m]"}


def figaroh_term_rows(variants: list[Variant]) -> list[list[object]]:
    rows = []
    for variant in variants:
        for block, label in FIGAROH_TERMS.items():
            values = [variant.figaroh_terms.get(f"{block}{j + 1}") for j in range(len(JOINTS))]
            rows.append([variant.label, label, *("combined" if v is None else f"{v:+.4f}" for v in values)])
        label = "armature [kg·m²] of its joint terms alone (URDF's inertias kept)"
        rows.append([variant.label, label, *(f"{v:+.4f}" for v in variant.joint_terms_armature)])
    return rows


def read_paper_model(checkout: Path, recording: Recording) -> PaperModel:
    """The paper's model from its repository's MATLAB files, its translation checked on the recording."""
    paper = PaperModel.read(checkout)
    problems = paper.check(recording.q[::2000], recording.qd[::2000])
    if problems:
        sys.exit(f"the paper's model as translated from {checkout} is wrong: {'; '.join(problems)}")
    return paper


def gravity_rows(variants: list[Variant]) -> list[list[object]]:
    rows = []
    for variant in variants:
        for label, rms in variant.gravity.items():
            overall = np.sqrt(np.mean(rms**2))
            rows.append([variant.label, label, f"{overall:.3f}", *(f"{x:.3f}" for x in rms)])
    return rows


TIAGO_SPLIT = 40.0  # s: the first and the second half of TIAGo's recording


def tiago_rows(folder: Path) -> tuple[list[list[object]], list[str], str]:
    """TIAGo identified on one half, every model run on the other (``--validate``), both ways round:
    (rows, the joints measured, what the runs said of the wrist)."""
    from rnea_ros.testing import tiago_recording as tiago

    recording = tiago.read_recording()
    urdf_text = tiago.TIAGO_URDF.read_text()
    urdf = folder / "tiago.urdf"
    urdf.write_text(urdf_text)
    conversion = tiago.write_conversion(folder / "tiago_conversion.yaml", urdf_text)
    halves = {
        "first half": recording.part(0.0, TIAGO_SPLIT).write_csv(folder / "tiago_first.csv"),
        "second half": recording.part(TIAGO_SPLIT, np.inf).write_csv(folder / "tiago_second.csv"),
    }
    rows, joints, wrist = [], [], ""
    for (train, csv), (other, validate) in ((a, b) for a in halves.items() for b in halves.items() if a != b):
        run = rnea_analyze(
            csv, "--urdf", urdf, "--effort-conversion", conversion, "--identify", "--validate", validate,
            "--out", folder / f"tiago_{train.split()[0]}", "--no-csv",
        )  # fmt: skip
        if run.code != 0:
            raise RuntimeError(run.output)
        table = tiago_validation(run.output)
        joints = list(table["URDF"])[:-1]
        wrist = next((line for line in run.output.splitlines() if "taken as not measured" in line), wrist)
        direction = f"trained on the {train}, run on the {other}"
        for label, model in (("URDF alone", "URDF"), ("URDF + joint terms (--identify)", "files written")):
            rows.append([direction, label, *(f"{v:.3f}" for v in np.roll(list(table[model].values()), 1))])
    return rows, joints, wrist


def tiago_validation(output: str) -> dict[str, dict[str, float]]:
    """rnea_analyze's --validate table: model ("URDF", "files written") → joint → RMS, "over joints" last."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("validation on "))
    names = [*lines[start + 1].split()[1:-2], "over joints"]
    return {
        line[:16].strip(): dict(zip(names, map(float, line[16:].split()), strict=True))
        for line in lines[start + 2 : start + 4]
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recording", type=Path, default=RECORDING, help="folder of the Panda's text files")
    parser.add_argument(
        "--paper-model",
        type=Path,
        help="a checkout of github.com/marcocognetti/FrankaEmikaPandaDynModel: adds the paper's identified "
        "model and its gravity against ours (its MATLAB files are read, not copied)",
    )
    args = parser.parse_args()
    if not args.recording.is_dir():
        sys.exit(f"no recording at {args.recording}: ../shared/real_recordings/ must be beside the checkout")
    recording = read_recording(args.recording)
    duration = recording.t[-1] - recording.t[0]
    split = round(TRAIN_FRACTION * duration, 3)
    paper = read_paper_model(args.paper_model, recording) if args.paper_model else None
    with tempfile.TemporaryDirectory(prefix="rnea_real_recording_") as temporary:
        folder = Path(temporary)
        csv = recording.write_csv(folder / "panda.csv")
        variants = [evaluate(folder, csv, recording, hand, split, paper) for hand in (True, False)]
        tiago = None
        if tiago_recording.available() is None:
            tiago = tiago_rows(folder)
        else:
            print(f"no cross-recording table: {tiago_recording.available()}", file=sys.stderr)
    command = COMMAND + (" --paper-model <checkout>" if paper else "")
    more = []
    if tiago is not None:
        rows, joints, wrist = tiago
        more.append(
            (
                "Across recordings: PAL's TIAGo (FIGAROH's recording, torso lift and arm, ~100 Hz, "
                f"{TIAGO_SPLIT:.0f} s + 40.2 s), identified on one half and every model run on the other "
                "(rnea_analyze --identify --validate OTHER, both halves as separate CSV files; "
                "URDF: example-robot-data's tiago; efforts converted from motor currents by "
                "rnea_ros/testing/tiago_recording.py's --effort-conversion file). Residual RMS on the other "
                "half per joint [N·m; N for the torso lift]. The wrist is not measured: "
                f'rnea_analyze said: "{wrist}".',
                ["trained / run on", "model", "RMS over joints", *joints],
                rows,
            )
        )
    if paper:
        more.append(
            (
                "Gravity g(q) of our model of each URDF against the paper's identified g(q) (get_GravityVector.m, "
                "g0 = 9.80665; ours 9.81), RMS over the held-out samples' configurations [N·m]. The paper's "
                "M, c and g pass the checks of rnea_ros/testing/panda_paper_model.py on the recording (M "
                "symmetric positive definite, c from M's Christoffel symbols, g a gradient).",
                ["URDF", "model", "RMS over joints [N·m]", *(f"joint {j + 1}" for j in range(len(JOINTS)))],
                gravity_rows(variants),
            )
        )
    windows = ", ".join(f"{v.label} {v.window * 1e3:.0f} ms" for v in variants)
    path = write_table(
        "real_recording",
        "benchmarks/real_recording.py",
        ["URDF", "model", "held-out RMS over joints [N·m]", *(f"joint {j + 1}" for j in range(len(JOINTS)))],
        main_rows(variants),
        f"Command: `{command}`. The Panda recording of Gaz et al. 2019 ({len(recording.t):,} samples, "
        f"{duration:.1f} s): trained on 0–{split:.2f} s, held out {split:.2f}–{duration:.2f} s; "
        f"differentiation window chosen by the first identification ({windows}). Held-out residual RMS "
        "(measured − model) per joint [N·m], as rnea_analyze prints it (FIGAROH's and the paper's "
        "friction: computed here on the same held-out samples).",
        more=[
            (
                "Friction torque [N·m] at steady velocities: ours (corrections.yaml's viscous, Coulomb, width; "
                "no armature, no offset) / the paper's sigmoid (get_FrictionTorque.m).",
                ["joint", "URDF", *(f"q̇ = {v:+g} rad/s" for v in FRICTION_GRID)],
                friction_rows(variants),
            ),
            (
                "FIGAROH's own fit (the row above the bounded one), its joint terms: the value of each that "
                "the fit determines alone (its regressor column more than 5 % outside the span of every other "
                'column); "combined": determined only together with link parameters. A negative armature, '
                "viscous or Coulomb term is not a physical model: no file rnea_node, rnea_sim or MuJoCo accepts "
                "can hold it. Last row per URDF: the armatures of FIGAROH's joint terms fitted alone on the URDF's "
                "rigid bodies.",
                ["URDF", "term", *(f"joint {j + 1}" for j in range(len(JOINTS)))],
                figaroh_term_rows(variants),
            ),
            *more,
        ],
    )
    print(path.read_text())


if __name__ == "__main__":
    main()
