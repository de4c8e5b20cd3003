"""Identification of what the URDF leaves out, from a recording (no ROS).

The residual r = measured − τ_RNEA of each joint is fitted by least squares as
viscous·q̇ + coulomb·tanh((q̇ + lead·q̈)/width) + armature·q̈ + offset (``dynamics.regressor``) and,
optionally, Y(q, q̇, q̈) π: a payload on a named link, π its 10 inertial parameters
(``dynamics.payload``), shared by every joint, or every moving link's 10 (``link_inertia``: the
base parameters the recording determines, then every link kept a rigid body). Samples are added
in chunks (running normal equations per joint and per fold: memory does not grow with the
recording). With shared columns the joints are solved together, each weighted by its residual
variance (two passes over the sums).

The joint terms and their columns are ``dynamics.regressor``'s; the running sums ``fold_sums``'.
The tanh width is fixed (lead 0), or the Coulomb term's shape (width and lead) is chosen per joint
by the residual on held-out samples (``coulomb_shapes``).

A parameter is reported only when the recording determines it: its regressor must be excited
(velocities, both directions of motion, accelerations), and its standard error, as torque
(times its regressor's RMS), must be below ``RESOLUTION`` of the torque RMS of the joint it
acts on (for the payload: of the joint it moves most); otherwise it is "not identifiable"
(None), never a number made of noise. An identified payload must be a rigid body a link can
carry (``consistency_problems``): its inertia is kept only then, and only when all six of its
entries are identified; otherwise the payload is written as a point mass.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from rnea_ros.analysis import link_inertia
from rnea_ros.analysis.coulomb_shapes import SHAPES, choose_shapes, shape_columns
from rnea_ros.analysis.fold_sums import BASE_TOLERANCE, FoldSums
from rnea_ros.dynamics import regressor
from rnea_ros.dynamics.corrections import DEFAULT_COULOMB_WIDTH, Corrections, JointCorrection, Payload
from rnea_ros.dynamics.payload import PARAMETER_NAMES, Inertial, consistency_problems
from rnea_ros.dynamics.regressor import JOINT_TERMS

FEATURES = regressor.TERM_NAMES
# least excitation of each term's column for it to be fitted (``regressor.JointTerm``)
EXCITATION = {term.name: term.excitation for term in JOINT_TERMS}
STICTION_SPEED = 0.01  # rad/s (m/s): with links, a joint's samples slower than this are left out of its rows
RESOLUTION = 0.01  # a parameter's uncertainty, as torque, below 1 % of the joint's torque RMS
COMBINED = "determined only together with link inertias (a base parameter): the consistent fit's share"
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
    coulomb_width: float = DEFAULT_COULOMB_WIDTH  # the tanh width the Coulomb term was fitted with
    held_out: tuple[float, ...] = ()  # with shapes chosen: held-out residual RMS per shape (SHAPES; inf: not tried)
    coulomb_lead: float = 0.0  # [s] the lead it was fitted with


@dataclass(frozen=True)
class PayloadIdentification:
    link: str
    estimates: dict[str, Estimate]  # PARAMETER_NAMES → π (link frame, about its origin)
    condition: float  # of the scaled normal matrix of the whole fit
    inertial: Inertial | None  # what corrections.yaml gets; None: no payload identified
    note: str  # why it is None or a point mass


@dataclass(frozen=True)
class LinkEstimate:
    link: str
    urdf: Inertial  # what the URDF says
    identified: Inertial  # a rigid body's (positive definite pseudo-inertia)
    standard_errors: np.ndarray  # (10,) of π (PARAMETER_NAMES); NaN: determined only in combination


@dataclass(frozen=True)
class LinksIdentification:
    links: list[LinkEstimate]
    base_parameters: int  # the rank of the whole fit (links and joint terms)
    parameters: int  # how many it has
    condition: float  # of the scaled normal matrix over what the recording determines
    iterations: int  # of the consistent estimate

    def inertials(self) -> dict[str, Inertial]:
        return {estimate.link: estimate.identified for estimate in self.links}


@dataclass(frozen=True)
class _Solution:
    joints: list[JointIdentification]
    payload: PayloadIdentification | None
    links: LinksIdentification | None = None
    thetas: list = field(default_factory=list)  # per joint: (columns of x, their fitted values)


@dataclass(frozen=True)
class _Fit:
    theta: np.ndarray
    covariance: np.ndarray
    condition: float
    A: np.ndarray  # the weighted normal equations A θ = b
    b: np.ndarray
    combined: np.ndarray  # per parameter: determined only together with others
    rank: int


class Identification:
    def __init__(
        self,
        joint_names: list[str],
        coulomb_width: float | None = DEFAULT_COULOMB_WIDTH,
        payload_link: str = "",
        links: Mapping[str, Inertial] | None = None,
    ) -> None:
        """``coulomb_width``: the tanh width [rad/s] (lead 0), or None: width and lead chosen per
        joint among SHAPES by the residual on held-out samples (alternate blocks of FOLD_SAMPLES).
        ``payload_link``: also identify a payload on this link; ``links``: also identify these
        links' inertial parameters, starting from these (the URDF's; ``link_inertia``). ``add``
        then needs their regressor."""
        if payload_link and links:
            raise ValueError("a payload is part of its link's inertia: identify either a payload or the links")
        # beside every link's inertia, a joint's samples where it (nearly) stands still are left out of
        # its rows: its friction there is whatever holds it, which no curve of q̇ models, and it leaked
        # into the armatures (16–20 % off; 0.3–5 % without them, on the simulated arm)
        self.min_speed = STICTION_SPEED if links else 0.0
        n = len(joint_names)
        self.joint_names, self.coulomb_width, self.payload_link = list(joint_names), coulomb_width, payload_link
        self.shapes = SHAPES if coulomb_width is None else ((float(coulomb_width), 0.0),)
        self.links = dict(links or {})
        self.payload_columns = PAYLOAD_PARAMETERS * len(self.links) or (PAYLOAD_PARAMETERS if payload_link else 0)
        # per joint: [Y_j π columns, its terms' columns (regressor.joint_columns)]; sums per fold
        self.sums = FoldSums(n, self.payload_columns + regressor.column_count(len(self.shapes)))
        self._version, self._solution = 0, None  # the sums' version, and the fit of a version

    def merge(self, other: Identification) -> None:
        """Pools another recording's sums into these (same joints, Coulomb shapes and payload link or
        links): as if its samples had been added here."""
        if (other.joint_names, other.shapes, other.payload_link, list(other.links)) != (
            self.joint_names,
            self.shapes,
            self.payload_link,
            list(self.links),
        ):
            raise ValueError("identifications of different joints, Coulomb shapes or payloads cannot be pooled")
        self._version += 1
        self.sums.merge(other.sums)

    def add(
        self,
        measured: np.ndarray,
        model: np.ndarray,
        qd: np.ndarray,
        qdd: np.ndarray,
        payload_regressor: np.ndarray | None = None,
    ) -> None:
        """Rows of (N, joints) arrays (and the payload regressor, (N, joints, 10), with a payload
        link, or the links' regressor, (N, joints, 10·links)); a joint's non-finite values are
        skipped for that joint."""
        ok = np.isfinite(measured) & np.isfinite(model) & np.isfinite(qd) & np.isfinite(qdd)
        if self.min_speed > 0.0:
            ok &= np.abs(np.where(np.isfinite(qd), qd, 0.0)) >= self.min_speed
        columns = []
        if self.payload_columns:
            P = self.payload_columns
            if payload_regressor is None or payload_regressor.shape != (*measured.shape, P):
                raise ValueError(f"the payload or links need their regressor, (N, joints, {P})")
            ok &= np.isfinite(payload_regressor).all(axis=-1)
            columns.append(np.where(ok[..., None], payload_regressor, 0.0))
        r = np.where(ok, measured - model, 0.0)
        v, a = np.where(ok, qd, 0.0), np.where(ok, qdd, 0.0)
        columns.append(regressor.joint_columns(v, a, self.shapes) * ok[..., None])
        x = np.concatenate(columns, axis=-1)
        self._version += 1
        self.sums.add(x, r, measured, ok, v)

    def results(self) -> list[JointIdentification]:
        return self._solve().joints

    def payload(self) -> PayloadIdentification | None:
        return self._solve().payload

    def friction_points(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per joint: the mean velocity of each velocity bin and the mean residual there less
        everything fitted but friction (the data the friction curve is fitted to)."""
        solution, P, K = self._solve(), self.payload_columns, len(self.shapes)
        friction_columns = {P + c for c in regressor.friction_columns(K)}
        velocity = P + regressor.term_columns(K)[regressor.VELOCITY_TERM][0]
        out = []
        for j, (columns, theta) in enumerate(solution.thetas):
            binned_x, binned_count = self.sums.binned_x[j], self.sums.binned_count[j]
            count = np.maximum(binned_count, 1)
            other = [i for i, c in enumerate(columns) if c not in friction_columns]
            residual = self.sums.binned_r[j] - binned_x[:, columns[other]] @ theta[other]
            used = binned_count > 0
            out.append((binned_x[used, velocity] / count[used], residual[used] / count[used]))
        return out

    def links_result(self) -> LinksIdentification | None:
        """Every link's identified inertial (with ``links``), physically consistent."""
        return self._solve().links

    def corrections(self) -> Corrections:
        """The identified parameters (those not identifiable are left out, i.e. zero), and the
        payload when one was identified."""
        solution = self._solve()
        joints = {}
        for result in solution.joints:
            values = {k: e.value for k, e in result.estimates.items() if e.value is not None}
            if values:
                joints[result.name] = JointCorrection(
                    **values, coulomb_width=result.coulomb_width, coulomb_lead=result.coulomb_lead
                )
        payload = solution.payload
        inertial = payload.inertial if payload is not None else None
        return Corrections(joints, Payload(self.payload_link, inertial) if inertial is not None else None)

    # --- the fit ---------------------------------------------------------------------------------
    def _solve(self) -> _Solution:
        """The fit of the sums so far (kept until samples are added or merged)."""
        if self._solution is None or self._solution[0] != self._version:
            self._solution = (self._version, self._fit_all())
        return self._solution[1]

    def _fit_all(self) -> _Solution:
        P, n_joints = self.payload_columns, len(self.joint_names)
        self._choose_shapes()
        usable = self._count >= 10
        excitation = [self._excitation(j) if usable[j] else np.zeros(len(FEATURES)) for j in range(n_joints)]
        fitted = [[k for k, f in enumerate(FEATURES) if e[k] > EXCITATION[f]] for e in excitation]
        # global parameter index of each of a joint's local columns (payload first, shared)
        index, size = [], P
        for j in range(n_joints):
            index.append(np.r_[np.arange(P), size + np.arange(len(fitted[j]))].astype(int))
            size += len(fitted[j])
        local = [np.r_[np.arange(P), P + np.array(fitted[j], dtype=int)].astype(int) for j in range(n_joints)]
        counts = np.maximum(self._count, 1)
        torque_rms = np.maximum(np.sqrt(self._mm / counts), 1e-9)
        weights = np.where(usable, 1.0 / torque_rms**2, 0.0)  # first pass; then 1 / residual variance
        for _ in range(2):
            fit = weighted_fit(self._xx, self._xr, weights, index, local, size, bool(self.links))
            rss = np.array([self._rss(j, fit.theta[index[j]], local[j]) for j in range(n_joints)])
            dof = np.maximum(self._count - np.array([len(f) for f in fitted]) - P, 1)
            weights = np.where(usable, 1.0 / np.maximum(rss / dof, 1e-30), 0.0)
        theta, links = fit.theta, None
        if self.links:
            priors = [inertial.parameters() for inertial in self.links.values()]
            theta, iterations = link_inertia.consistent_estimate(fit.A, fit.b, priors)
            rss = np.array([self._rss(j, theta[index[j]], local[j]) for j in range(n_joints)])
            links = _links_result(self.links, theta[:P], fit, iterations)
        variances = np.diag(fit.covariance)
        joints = []
        for j in range(n_joints):
            own = index[j][P:]
            joints.append(
                self._joint_result(j, theta[own], variances[own], fitted[j], excitation[j], rss[j], fit.combined[own])
            )
        payload = (
            self._payload_result(theta[:P], variances[:P], torque_rms, fit.condition) if self.payload_link else None
        )
        chosen = [shape_columns(k, P, len(self.shapes)) for k in self._chosen]
        fitted_columns = [chosen[j][local[j]] for j in range(n_joints)]
        return _Solution(joints, payload, links, [(c, theta[index[j]]) for j, c in enumerate(fitted_columns)])

    def _choose_shapes(self) -> None:
        """Per joint, the Coulomb shape (``coulomb_shapes``); then the sums of both folds with that
        shape's column alone."""
        P, sums = self.payload_columns, self.sums
        self._chosen, self.held_out = choose_shapes(sums, self.shapes, P)
        self.chosen_shapes = [self.shapes[k] for k in self._chosen]
        self._count, self._rr, self._mm = sums.count.sum(axis=0), sums.rr.sum(axis=0), sums.mm.sum(axis=0)
        columns = [shape_columns(k, P, len(self.shapes)) for k in self._chosen]
        xx, xr = sums.xx.sum(axis=0), sums.xr.sum(axis=0)
        self._xx = np.stack([xx[j][np.ix_(c, c)] for j, c in enumerate(columns)]) if len(columns) else xx[:, :P, :P]
        self._xr = np.stack([xr[j][c] for j, c in enumerate(columns)]) if len(columns) else xr[:, :P]

    def _excitation(self, j: int) -> np.ndarray:
        """How much the recording excites each of the joint's own features (compared with EXCITATION)."""
        P = self.payload_columns
        return regressor.excitation(self._xx[j][P:, P:], self._count[j])

    def _rss(self, j: int, theta: np.ndarray, local: np.ndarray) -> float:
        xx, xr = self._xx[j][np.ix_(local, local)], self._xr[j][local]
        return max(self._rr[j] - 2 * theta @ xr + theta @ xx @ theta, 0.0)

    def _joint_result(
        self, j: int, beta, variances, fitted: list[int], excitation, rss: float, combined
    ) -> JointIdentification:
        n, name, P = int(self._count[j]), self.joint_names[j], self.payload_columns
        if n < 10:
            none = {k: Estimate(None, np.inf, "fewer than 10 samples") for k in FEATURES}
            width, lead = self._shape(j)
            return JointIdentification(name, n, none, np.inf, np.nan, np.nan, width, coulomb_lead=lead)
        own = self._xx[j][P:, P:]
        rms = np.sqrt(np.diag(own) / n)
        torque_rms = max(np.sqrt(self._mm[j] / n), 1e-9)
        estimates = {
            f: Estimate(None, np.inf, f"not excited (RMS {excitation[k]:.3g} ≤ {EXCITATION[f]})")
            for k, f in enumerate(FEATURES)
        }
        for i, k in enumerate(fitted):
            term, se = JOINT_TERMS[k], float(np.sqrt(max(variances[i], 0.0)))
            feature = term.name
            if combined[i]:
                estimates[feature] = Estimate(float(beta[i]), np.nan, COMBINED)
            elif term.nonnegative and beta[i] < 0.0:
                estimates[feature] = Estimate(None, se, f"{beta[i]:.3g} < 0: {term.nonnegative}")
            elif se * rms[k] <= RESOLUTION * torque_rms:
                estimates[feature] = Estimate(float(beta[i]), se)
            else:
                estimates[feature] = Estimate(None, se, f"standard error {se:.3g} too large for this recording")
        sub = own[np.ix_(fitted, fitted)] / np.outer(rms[fitted], rms[fitted]) / n if fitted else np.eye(1)
        return JointIdentification(
            name,
            n,
            estimates,
            float(np.linalg.cond(sub)),
            float(np.sqrt(self._rr[j] / n)),
            float(np.sqrt(rss / n)),
            self._shape(j)[0],
            tuple(float(x) for x in self.held_out[j]) if len(self.shapes) > 1 else (),
            self._shape(j)[1],
        )

    def _shape(self, j: int) -> tuple[float, float]:
        """The joint's Coulomb width and lead."""
        width, lead = self.chosen_shapes[j]
        return float(width), float(lead)

    def _payload_result(self, pi, variances, torque_rms, condition: float) -> PayloadIdentification:
        counts = np.maximum(self._count, 1)[:, None]
        column_rms = np.sqrt(np.einsum("jkk->jk", self._xx[:, :10, :10]) / counts)  # (joints, 10)
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


def weighted_fit(xx, xr, weights, index, local, size, links: bool) -> _Fit:
    """θ minimising Σ_j w_j |r_j − X_j θ|², its covariance (with w_j = 1/σ_j²), the condition
    number of the Jacobi-scaled normal matrix and, with links, which parameters the recording
    determines only in combination with others (the scaled matrix's null space holds them:
    the least-squares solution there is the minimum-norm one, not information)."""
    A, b = np.zeros((size, size)), np.zeros(size)
    for j, w in enumerate(weights):
        if w > 0.0:
            g, loc = index[j], local[j]
            A[np.ix_(g, g)] += w * xx[j][np.ix_(loc, loc)]
            b[g] += w * xr[j][loc]
    if size == 0:
        return _Fit(np.zeros(0), np.zeros((0, 0)), 1.0, A, b, np.zeros(0, dtype=bool), 0)
    diagonal = np.sqrt(np.diag(A))
    scale = np.where(diagonal > 0.0, diagonal, 1.0)
    scaled = A / np.outer(scale, scale)
    combined, rank = np.zeros(size, dtype=bool), size
    if links:
        eigenvalues, vectors = np.linalg.eigh(scaled)
        kept = eigenvalues > BASE_TOLERANCE * eigenvalues[-1]
        rank = int(kept.sum())
        combined = np.linalg.norm(vectors[:, ~kept], axis=1) > 0.05
        inverse = (vectors[:, kept] / eigenvalues[kept]) @ vectors[:, kept].T
        condition = float(eigenvalues[-1] / eigenvalues[kept][0])
    else:
        inverse = np.linalg.pinv(scaled)
        condition = float(np.linalg.cond(scaled))
    theta = inverse @ (b / scale) / scale
    covariance = inverse / np.outer(scale, scale)
    return _Fit(theta, covariance, condition, A, b, combined, rank)


def _links_result(links: Mapping[str, Inertial], delta, fit: _Fit, iterations: int) -> LinksIdentification:
    """Each link's identified body (its URDF's π + δπ) and standard errors (NaN: only in combination)."""
    estimates = []
    variances = np.diag(fit.covariance)
    for l, (link, urdf) in enumerate(links.items()):
        columns = slice(10 * l, 10 * l + 10)
        identified = Inertial.from_parameters(urdf.parameters() + delta[columns])
        errors = np.where(fit.combined[columns], np.nan, np.sqrt(np.maximum(variances[columns], 0.0)))
        estimates.append(LinkEstimate(link, urdf, identified, errors))
    return LinksIdentification(estimates, fit.rank, len(fit.theta), fit.condition, iterations)


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
    labels = "".join(f"{term.label:>16}" for term in JOINT_TERMS)
    lines = [f"{'joint':<20}{labels}{'residual RMS':>20}  Coulomb's tanh width [rad/s], lead [s]"]
    notes = []
    for result in identification.results():
        cells = []
        for name in FEATURES:
            estimate = result.estimates[name]
            if estimate.value is None:
                cells.append(f"{'n/i':>16}")
                notes.append(f"{result.name} {name}: not identifiable ({estimate.why})")
            elif estimate.why:  # only in combination with the links' inertias
                cells.append(f"{estimate.value:>9.4f} ±c     ")
            else:
                cells.append(f"{estimate.value:>9.4f} ±{estimate.standard_error:<6.1g}")
        residual = f"{result.residual_rms_before:.3f} → {result.residual_rms_after:.3f}"
        lines.append(f"{result.name:<20}" + "".join(cells) + f"{residual:>20}  {_width_cell(result)}")
    units = ", ".join(f"{term.label} [{term.unit}]" for term in JOINT_TERMS)
    lines.append(
        f"{units} (N, m for prismatic joints); "
        "n/i: the recording does not determine it; ±c: determined only with the links' inertias"
    )
    payload = identification.payload()
    if payload is not None:
        lines += _payload_lines(payload)
    return "\n".join(lines + notes[:20])


def _width_cell(result: JointIdentification) -> str:
    """The Coulomb shape, and with shapes chosen why: held-out RMS at it against the default's
    (width 0.01 rad/s, no lead)."""
    shape = f"width {result.coulomb_width:g}" + (f", lead {result.coulomb_lead:g} s" if result.coulomb_lead else "")
    tried = np.isfinite(result.held_out)
    if not tried.any():
        return shape
    at_default = result.held_out[SHAPES.index((DEFAULT_COULOMB_WIDTH, 0.0))]
    default = f"{at_default:.3f}" if np.isfinite(at_default) else "not short-listed"
    best = min(np.asarray(result.held_out)[tried])
    return f"{shape} (held-out {best:.3f}; {default} at width {DEFAULT_COULOMB_WIDTH:g}, no lead)"


def links_table(result: LinksIdentification) -> str:
    """Per link: mass and centre of mass, URDF → identified, with their standard errors, and
    whether the identified body is a rigid body's (it always is: the check is the reader's)."""
    lines = [
        f"every link's inertia: {result.base_parameters} of {result.parameters} parameters determined by the "
        f"recording (condition number {result.condition:.3g}); the others stay at the URDF's",
        f"{'link':<20}{'mass URDF → identified [kg]':>34}{'centre of mass identified [m]':>40}{'rigid body':>12}",
    ]
    for estimate in result.links:
        se = estimate.standard_errors[0]
        error = "±c" if np.isnan(se) else f"±{se:.1g}"
        mass = f"{estimate.urdf.mass:.4f} → {estimate.identified.mass:.4f} {error}"
        com = np.array2string(np.asarray(estimate.identified.com), precision=4, suppress_small=True)
        rigid = "yes" if not consistency_problems(estimate.identified) else "NO"
        lines.append(f"{estimate.link:<20}{mass:>34}{com:>40}{rigid:>12}")
    lines.append("±c: determined only in combination with other parameters (a base parameter)")
    return "\n".join(lines)


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
