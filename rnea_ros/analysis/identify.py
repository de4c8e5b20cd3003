"""Identification of what the URDF leaves out, per joint, from a recording (no ROS).

The residual r = measured − τ_RNEA of each joint is fitted by least squares as
viscous·q̇ + coulomb·tanh(q̇/width) + armature·q̈ + offset (``dynamics.corrections``). Samples
are added in chunks (running normal equations: memory does not grow with the recording). A
parameter is reported only when the recording determines it: its regressor must be excited
(velocities, both directions of motion, accelerations), and its standard error, times its
regressor's RMS, must be below ``RESOLUTION`` of the joint's measured torque RMS; otherwise it
is "not identifiable" (None), never a number made of noise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rnea_ros.dynamics.corrections import DEFAULT_COULOMB_WIDTH, Corrections, JointCorrection

FEATURES = ("viscous", "coulomb", "armature", "offset")
# least RMS of each regressor for it to count as excited: q̇ [rad/s], tanh(q̇/w) about its mean, q̈ [rad/s²]
EXCITATION = {"viscous": 0.05, "coulomb": 0.3, "armature": 0.2, "offset": 0.0}
RESOLUTION = 0.01  # a parameter's uncertainty, as torque, below 1 % of the joint's torque RMS


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
    condition: float  # of the scaled normal matrix of the parameters fitted
    residual_rms_before: float  # RMS of measured − τ_RNEA
    residual_rms_after: float  # ... minus the fitted corrections


class Identification:
    def __init__(self, joint_names: list[str], coulomb_width: float = DEFAULT_COULOMB_WIDTH) -> None:
        n = len(joint_names)
        self.joint_names, self.coulomb_width = list(joint_names), coulomb_width
        self.count = np.zeros(n, dtype=np.int64)
        self.xx = np.zeros((n, 4, 4))  # Σ x xᵀ
        self.xr = np.zeros((n, 4))  # Σ x r
        self.rr = np.zeros(n)  # Σ r²
        self.mm = np.zeros(n)  # Σ measured²

    def merge(self, other: Identification) -> None:
        """Pools another recording's sums into these (same joints and width): as if its samples
        had been added here."""
        if other.joint_names != self.joint_names or other.coulomb_width != self.coulomb_width:
            raise ValueError("identifications of different joints or Coulomb widths cannot be pooled")
        self.count += other.count
        self.xx += other.xx
        self.xr += other.xr
        self.rr += other.rr
        self.mm += other.mm

    def add(self, measured: np.ndarray, model: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> None:
        """Rows of (N, joints) arrays; a joint's non-finite values are skipped for that joint."""
        ok = np.isfinite(measured) & np.isfinite(model) & np.isfinite(qd) & np.isfinite(qdd)
        r = np.where(ok, measured - model, 0.0)
        v, a = np.where(ok, qd, 0.0), np.where(ok, qdd, 0.0)
        x = np.stack([v, np.tanh(v / self.coulomb_width), a, ok.astype(float)], axis=-1) * ok[..., None]
        self.count += ok.sum(axis=0)
        self.xx += np.einsum("nja,njb->jab", x, x)
        self.xr += np.einsum("nja,nj->ja", x, r)
        self.rr += (r * r).sum(axis=0)
        self.mm += (np.where(ok, measured, 0.0) ** 2).sum(axis=0)

    def joint(self, j: int) -> JointIdentification:
        n = int(self.count[j])
        name = self.joint_names[j]
        if n < 10:
            none = {k: Estimate(None, np.inf, "fewer than 10 samples") for k in FEATURES}
            return JointIdentification(name, n, none, np.inf, np.nan, np.nan)
        xx, xr = self.xx[j], self.xr[j]
        mean = xx[3] / n  # Σx / n (the offset column is 1)
        rms = np.sqrt(np.diag(xx) / n)
        centred_rms = np.sqrt(np.maximum(np.diag(xx) / n - mean**2, 0.0))
        excitation = {"viscous": rms[0], "coulomb": centred_rms[1], "armature": centred_rms[2], "offset": 1.0}
        fitted = [k for k, feature in enumerate(FEATURES) if excitation[feature] > EXCITATION[feature]]
        why = {f: f"not excited (RMS {excitation[f]:.3g} ≤ {EXCITATION[f]})" for f in FEATURES}
        sub = np.ix_(fitted, fitted)
        scale = rms[fitted]
        A = xx[sub] / np.outer(scale, scale)
        beta_scaled = np.linalg.lstsq(A, xr[fitted] / scale, rcond=None)[0]
        beta = beta_scaled / scale
        rss = max(self.rr[j] - 2 * beta @ xr[fitted] + beta @ xx[sub] @ beta, 0.0)
        sigma2 = rss / max(n - len(fitted), 1)
        covariance = sigma2 * np.linalg.pinv(A) / np.outer(scale, scale)
        torque_rms = max(np.sqrt(self.mm[j] / n), 1e-9)
        estimates = {f: Estimate(None, np.inf, why[f]) for f in FEATURES}
        for i, k in enumerate(fitted):
            feature, se = FEATURES[k], float(np.sqrt(max(covariance[i, i], 0.0)))
            if se * rms[k] <= RESOLUTION * torque_rms:
                estimates[feature] = Estimate(float(beta[i]), se)
            else:
                estimates[feature] = Estimate(None, se, f"standard error {se:.3g} too large for this recording")
        return JointIdentification(
            name, n, estimates, float(np.linalg.cond(A)), float(np.sqrt(self.rr[j] / n)), float(np.sqrt(rss / n))
        )

    def results(self) -> list[JointIdentification]:
        return [self.joint(j) for j in range(len(self.joint_names))]

    def corrections(self) -> Corrections:
        """The identified parameters (those not identifiable are left out, i.e. zero)."""
        joints = {}
        for result in self.results():
            values = {k: e.value for k, e in result.estimates.items() if e.value is not None}
            if values:
                joints[result.name] = JointCorrection(**values, coulomb_width=self.coulomb_width)
        return Corrections(joints)


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
    return "\n".join(lines + notes[:20])
