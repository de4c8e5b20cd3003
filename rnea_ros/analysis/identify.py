"""Identification of what the URDF leaves out, from a recording (no ROS).

The residual r = measured − τ_RNEA of each joint is fitted by least squares as
viscous·q̇ + coulomb·tanh(q̇/width) + armature·q̈ + offset (``dynamics.corrections``) and,
optionally, Y(q, q̇, q̈) π: a payload on a named link, π its 10 inertial parameters
(``dynamics.payload``), shared by every joint. Samples are added in chunks (running normal
equations per joint: memory does not grow with the recording). With a payload the joints are
solved together, each weighted by its residual variance (two passes over the sums).

A parameter is reported only when the recording determines it: its regressor must be excited
(velocities, both directions of motion, accelerations), and its standard error, as torque
(times its regressor's RMS), must be below ``RESOLUTION`` of the torque RMS of the joint it
acts on (for the payload: of the joint it moves most); otherwise it is "not identifiable"
(None), never a number made of noise. An identified payload must be a rigid body a link can
carry (``consistency_problems``): its inertia is kept only then, and only when all six of its
entries are identified; otherwise the payload is written as a point mass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rnea_ros.dynamics.corrections import DEFAULT_COULOMB_WIDTH, Corrections, JointCorrection, Payload
from rnea_ros.dynamics.payload import PARAMETER_NAMES, Inertial, consistency_problems

FEATURES = ("viscous", "coulomb", "armature", "offset")
# least RMS of each regressor for it to count as excited: q̇ [rad/s], tanh(q̇/w) about its mean, q̈ [rad/s²]
EXCITATION = {"viscous": 0.05, "coulomb": 0.3, "armature": 0.2, "offset": 0.0}
RESOLUTION = 0.01  # a parameter's uncertainty, as torque, below 1 % of the joint's torque RMS
PAYLOAD_PARAMETERS = len(PARAMETER_NAMES)


@dataclass(frozen=True)
class Estimate:
    value: float | None  # None: not identifiable from this recording
    standard_error: float
    why: str = ""  # when not identifiable


@dataclass(frozen=True)
class JointIdentification:
    name: str
    samples: int
    estimates: dict[str, Estimate]
    condition: float  # of the scaled normal matrix of the joint's own parameters
    residual_rms_before: float  # RMS of measured − τ_RNEA
    residual_rms_after: float  # ... minus the fitted corrections (and payload)


@dataclass(frozen=True)
class PayloadIdentification:
    link: str
    estimates: dict[str, Estimate]  # PARAMETER_NAMES → π (link frame, about its origin)
    condition: float  # of the scaled normal matrix of the whole fit
    inertial: Inertial | None  # what corrections.yaml gets; None: no payload identified
    note: str  # why it is None or a point mass


@dataclass(frozen=True)
class _Solution:
    joints: list[JointIdentification]
    payload: PayloadIdentification | None


class Identification:
    def __init__(
        self, joint_names: list[str], coulomb_width: float = DEFAULT_COULOMB_WIDTH, payload_link: str = ""
    ) -> None:
        """``payload_link``: also identify a payload on this link (``add`` then needs its regressor)."""
        n = len(joint_names)
        self.joint_names, self.coulomb_width, self.payload_link = list(joint_names), coulomb_width, payload_link
        self.payload_columns = PAYLOAD_PARAMETERS if payload_link else 0
        width = self.payload_columns + len(FEATURES)  # per joint: [Y_j π columns, q̇, tanh, q̈, 1]
        self.count = np.zeros(n, dtype=np.int64)
        self.xx = np.zeros((n, width, width))  # Σ x xᵀ
        self.xr = np.zeros((n, width))  # Σ x r
        self.rr = np.zeros(n)  # Σ r²
        self.mm = np.zeros(n)  # Σ measured²

    def merge(self, other: Identification) -> None:
        """Pools another recording's sums into these (same joints, width and payload link): as if
        its samples had been added here."""
        if (other.joint_names, other.coulomb_width, other.payload_link) != (
            self.joint_names,
            self.coulomb_width,
            self.payload_link,
        ):
            raise ValueError("identifications of different joints, Coulomb widths or payloads cannot be pooled")
        self.count += other.count
        self.xx += other.xx
        self.xr += other.xr
        self.rr += other.rr
        self.mm += other.mm

    def add(
        self,
        measured: np.ndarray,
        model: np.ndarray,
        qd: np.ndarray,
        qdd: np.ndarray,
        payload_regressor: np.ndarray | None = None,
    ) -> None:
        """Rows of (N, joints) arrays (and the payload regressor, (N, joints, 10), with a payload
        link); a joint's non-finite values are skipped for that joint."""
        ok = np.isfinite(measured) & np.isfinite(model) & np.isfinite(qd) & np.isfinite(qdd)
        columns = []
        if self.payload_columns:
            if payload_regressor is None or payload_regressor.shape != (*measured.shape, PAYLOAD_PARAMETERS):
                raise ValueError(f"a payload on '{self.payload_link}' needs its regressor, (N, joints, 10)")
            ok &= np.isfinite(payload_regressor).all(axis=-1)
            columns.append(np.where(ok[..., None], payload_regressor, 0.0))
        r = np.where(ok, measured - model, 0.0)
        v, a = np.where(ok, qd, 0.0), np.where(ok, qdd, 0.0)
        columns.append(np.stack([v, np.tanh(v / self.coulomb_width), a, np.ones_like(v)], axis=-1) * ok[..., None])
        x = np.concatenate(columns, axis=-1)
        self.count += ok.sum(axis=0)
        self.xx += np.einsum("nja,njb->jab", x, x)
        self.xr += np.einsum("nja,nj->ja", x, r)
        self.rr += (r * r).sum(axis=0)
        self.mm += (np.where(ok, measured, 0.0) ** 2).sum(axis=0)

    def results(self) -> list[JointIdentification]:
        return self._solve().joints

    def payload(self) -> PayloadIdentification | None:
        return self._solve().payload

    def corrections(self) -> Corrections:
        """The identified parameters (those not identifiable are left out, i.e. zero), and the
        payload when one was identified."""
        solution = self._solve()
        joints = {}
        for result in solution.joints:
            values = {k: e.value for k, e in result.estimates.items() if e.value is not None}
            if values:
                joints[result.name] = JointCorrection(**values, coulomb_width=self.coulomb_width)
        payload = solution.payload
        inertial = payload.inertial if payload is not None else None
        return Corrections(joints, Payload(self.payload_link, inertial) if inertial is not None else None)

    # --- the fit ---------------------------------------------------------------------------------
    def _solve(self) -> _Solution:
        P, n_joints = self.payload_columns, len(self.joint_names)
        usable = self.count >= 10
        excitation = [self._excitation(j) if usable[j] else np.zeros(len(FEATURES)) for j in range(n_joints)]
        fitted = [[k for k, f in enumerate(FEATURES) if e[k] > EXCITATION[f]] for e in excitation]
        # global parameter index of each of a joint's local columns (payload first, shared)
        index, size = [], P
        for j in range(n_joints):
            index.append(np.r_[np.arange(P), size + np.arange(len(fitted[j]))].astype(int))
            size += len(fitted[j])
        local = [np.r_[np.arange(P), P + np.array(fitted[j], dtype=int)].astype(int) for j in range(n_joints)]
        counts = np.maximum(self.count, 1)
        torque_rms = np.maximum(np.sqrt(self.mm / counts), 1e-9)
        weights = np.where(usable, 1.0 / torque_rms**2, 0.0)  # first pass; then 1 / residual variance
        for _ in range(2):
            theta, covariance, condition = self._weighted_fit(weights, index, local, size)
            rss = np.array([self._rss(j, theta[index[j]], local[j]) for j in range(n_joints)])
            dof = np.maximum(self.count - np.array([len(f) for f in fitted]) - P, 1)
            weights = np.where(usable, 1.0 / np.maximum(rss / dof, 1e-30), 0.0)
        joints = [
            self._joint_result(
                j, theta[index[j][P:]], np.diag(covariance)[index[j][P:]], fitted[j], excitation[j], rss[j]
            )
            for j in range(n_joints)
        ]
        payload = self._payload_result(theta[:P], np.diag(covariance)[:P], torque_rms, condition) if P else None
        return _Solution(joints, payload)

    def _excitation(self, j: int) -> np.ndarray:
        """How much the recording excites each of the joint's own features (compared with EXCITATION)."""
        P, n = self.payload_columns, self.count[j]
        xx = self.xx[j][P:, P:]
        mean, rms = xx[3] / n, np.sqrt(np.diag(xx) / n)
        centred = np.sqrt(np.maximum(np.diag(xx) / n - mean**2, 0.0))
        return np.array([rms[0], centred[1], centred[2], 1.0])

    def _weighted_fit(self, weights, index, local, size) -> tuple[np.ndarray, np.ndarray, float]:
        """θ minimising Σ_j w_j |r_j − X_j θ|², its covariance (with w_j = 1/σ_j²) and the
        condition number of the Jacobi-scaled normal matrix."""
        A, b = np.zeros((size, size)), np.zeros(size)
        for j, w in enumerate(weights):
            if w > 0.0:
                g, loc = index[j], local[j]
                A[np.ix_(g, g)] += w * self.xx[j][np.ix_(loc, loc)]
                b[g] += w * self.xr[j][loc]
        if size == 0:
            return np.zeros(0), np.zeros((0, 0)), 1.0
        diagonal = np.sqrt(np.diag(A))
        scale = np.where(diagonal > 0.0, diagonal, 1.0)
        scaled = A / np.outer(scale, scale)
        inverse = np.linalg.pinv(scaled)
        theta = inverse @ (b / scale) / scale
        covariance = inverse / np.outer(scale, scale)
        return theta, covariance, float(np.linalg.cond(scaled))

    def _rss(self, j: int, theta: np.ndarray, local: np.ndarray) -> float:
        xx, xr = self.xx[j][np.ix_(local, local)], self.xr[j][local]
        return max(self.rr[j] - 2 * theta @ xr + theta @ xx @ theta, 0.0)

    def _joint_result(self, j: int, beta, variances, fitted: list[int], excitation, rss: float) -> JointIdentification:
        n, name, P = int(self.count[j]), self.joint_names[j], self.payload_columns
        if n < 10:
            none = {k: Estimate(None, np.inf, "fewer than 10 samples") for k in FEATURES}
            return JointIdentification(name, n, none, np.inf, np.nan, np.nan)
        own = self.xx[j][P:, P:]
        rms = np.sqrt(np.diag(own) / n)
        torque_rms = max(np.sqrt(self.mm[j] / n), 1e-9)
        estimates = {
            f: Estimate(None, np.inf, f"not excited (RMS {excitation[k]:.3g} ≤ {EXCITATION[f]})")
            for k, f in enumerate(FEATURES)
        }
        for i, k in enumerate(fitted):
            feature, se = FEATURES[k], float(np.sqrt(max(variances[i], 0.0)))
            if feature == "armature" and beta[i] < 0.0:
                estimates[feature] = Estimate(None, se, f"{beta[i]:.3g} < 0: no rotor has a negative inertia")
            elif se * rms[k] <= RESOLUTION * torque_rms:
                estimates[feature] = Estimate(float(beta[i]), se)
            else:
                estimates[feature] = Estimate(None, se, f"standard error {se:.3g} too large for this recording")
        sub = own[np.ix_(fitted, fitted)] / np.outer(rms[fitted], rms[fitted]) / n if fitted else np.eye(1)
        return JointIdentification(
            name, n, estimates, float(np.linalg.cond(sub)), float(np.sqrt(self.rr[j] / n)), float(np.sqrt(rss / n))
        )

    def _payload_result(self, pi, variances, torque_rms, condition: float) -> PayloadIdentification:
        counts = np.maximum(self.count, 1)[:, None]
        column_rms = np.sqrt(np.einsum("jkk->jk", self.xx[:, :10, :10]) / counts)  # (joints, 10)
        leverage = (column_rms / torque_rms[:, None]).max(axis=0)  # torque per unit parameter, relative
        estimates = {}
        for k, name in enumerate(PARAMETER_NAMES):
            se = float(np.sqrt(max(variances[k], 0.0)))
            if leverage[k] > 0.0 and se * leverage[k] <= RESOLUTION:
                estimates[name] = Estimate(float(pi[k]), se)
            else:
                estimates[name] = Estimate(None, se, "does not move any joint measurably in this recording")
        inertial, note = _payload_inertial(pi, estimates)
        return PayloadIdentification(self.payload_link, estimates, condition, inertial, note)


def _payload_inertial(pi: np.ndarray, estimates: dict[str, Estimate]) -> tuple[Inertial | None, str]:
    """The rigid body to write down, from π, and a note on what was left out and why."""
    first = PARAMETER_NAMES[:4]
    missing = [name for name in first if estimates[name].value is None]
    if missing:
        return None, f"no payload written: {', '.join(missing)} not identifiable"
    if pi[0] <= 0.0:
        return None, f"no payload written: identified mass {pi[0]:.4g} kg ≤ 0"
    full = Inertial.from_parameters(pi)
    point_mass = Inertial(full.mass, full.com, np.zeros((3, 3)))
    unidentified = [name for name in PARAMETER_NAMES[4:] if estimates[name].value is None]
    if unidentified:
        return point_mass, f"inertia not identifiable ({', '.join(unidentified)}): written as a point mass"
    problems = consistency_problems(full)
    if problems:
        return point_mass, f"identified inertia is not a rigid body's ({'; '.join(problems)}): written as a point mass"
    return full, "mass, centre of mass and inertia identified"


def identification_table(identification: Identification) -> str:
    """Per joint: each parameter with its standard error, or "n/i" (not identifiable), and the
    residual RMS before and after."""
    lines = [
        f"{'joint':<20}{'viscous':>16}{'Coulomb':>16}{'armature':>16}{'offset':>16}{'residual RMS':>20}",
    ]
    notes = []
    for result in identification.results():
        cells = []
        for name in FEATURES:
            estimate = result.estimates[name]
            if estimate.value is None:
                cells.append(f"{'n/i':>16}")
                notes.append(f"{result.name} {name}: not identifiable ({estimate.why})")
            else:
                cells.append(f"{estimate.value:>9.4f} ±{estimate.standard_error:<6.1g}")
        residual = f"{result.residual_rms_before:.3f} → {result.residual_rms_after:.3f}"
        lines.append(f"{result.name:<20}" + "".join(cells) + f"{residual:>20}")
    lines.append(
        "viscous [N·m·s/rad], Coulomb [N·m], armature [kg·m²], offset [N·m] (N, m for prismatic joints); "
        "n/i: the recording does not determine it"
    )
    payload = identification.payload()
    if payload is not None:
        lines += _payload_lines(payload)
    return "\n".join(lines + notes[:20])


def _payload_lines(payload: PayloadIdentification) -> list[str]:
    cells = []
    for name, estimate in payload.estimates.items():
        value = "n/i" if estimate.value is None else f"{estimate.value:.4g} ±{estimate.standard_error:.1g}"
        cells.append(f"{name} {value}")
    lines = [f"payload on '{payload.link}' (link frame, about its origin; kg, kg·m, kg·m²): " + ", ".join(cells)]
    if payload.inertial is not None:
        lines.append(
            f"  mass {payload.inertial.mass:.4f} kg, centre of mass {np.round(payload.inertial.com, 4).tolist()} m"
        )
    lines.append(f"  {payload.note} (condition number {payload.condition:.3g})")
    return lines
