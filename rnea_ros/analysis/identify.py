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

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from rnea_ros.analysis.coulomb_shapes import SHAPES, choose_shapes, shape_columns
from rnea_ros.analysis.fold_sums import FOLDS, FoldSums
from rnea_ros.analysis.identify_fit import (
    MIN_SAMPLES,
    RESOLUTION,
    ChosenSums,
    Fitted,
    LinkPriors,
    choose_terms,
    fit_sums,
    fold_splits,
    held_out,
    links_with_information,
    stretch_splits,
)
from rnea_ros.analysis.link_inertia import LinkContext, body_problems, margin
from rnea_ros.dynamics import regressor
from rnea_ros.dynamics.corrections import DEFAULT_COULOMB_WIDTH, Corrections, JointCorrection, Payload
from rnea_ros.dynamics.payload import PARAMETER_NAMES, Inertial, consistency_problems
from rnea_ros.dynamics.regressor import JOINT_TERMS

FEATURES = regressor.TERM_NAMES
# least excitation of each term's column for it to be fitted (``regressor.JointTerm``)
EXCITATION = {term.name: term.excitation for term in JOINT_TERMS}
STICTION_SPEED = 0.01  # rad/s (m/s): with links, a joint's samples slower than this are left out of its rows
NOISE_MARGIN = 3.0  # a term of q̈ is fitted only when q̈ varies by more than this × its noise at the window
SILENT = "no joint torque of this recording depends on its parameters beyond the other columns (they add no rank)"
COMBINED = "determined only together with link inertias (a base parameter): the consistent fit's share"
PAYLOAD_PARAMETERS = len(PARAMETER_NAMES)


@dataclass(frozen=True)
class Estimate:
    value: float | None  # None: not identifiable from this recording
    standard_error: float
    why: str = ""  # when not identifiable
    excess: float = 0.0  # not resolved: its standard error over the resolution (the largest is left out first)


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
    links: list[LinkEstimate]  # the links identified (what corrected.urdf gets when they are written)
    base_parameters: int  # the rank of the whole fit (links and joint terms)
    parameters: int  # how many it has
    condition: float  # of the scaled normal matrix over what the recording determines
    iterations: int  # of the consistent estimate
    kept: dict[str, str] = field(default_factory=dict)  # link → why it keeps the URDF's inertial exactly
    # "joint terms" and "joint terms + inertia" → held-out residual RMS per joint (alternate-block folds)
    held_out: dict[str, np.ndarray] = field(default_factory=dict)
    written: bool = True  # the links' inertias are written (else the joint terms alone, the URDF unchanged)
    why: str = ""  # of that choice

    def inertials(self) -> dict[str, Inertial]:
        """What corrected.urdf gets: the identified links when they are written, else none."""
        return {estimate.link: estimate.identified for estimate in self.links} if self.written else {}


@dataclass(frozen=True)
class _Solution:
    joints: list[JointIdentification]
    payload: PayloadIdentification | None
    links: LinksIdentification | None = None
    thetas: list = field(default_factory=list)  # per joint: (columns of x, their fitted values)
    fitted: list = field(default_factory=list)  # per joint: the terms in the fit (JOINT_TERMS indices)
    link_names: list = field(default_factory=list)  # the links in the fit
    kept: dict = field(default_factory=dict)  # link → why it was taken out of the fit


class Identification:
    def __init__(
        self,
        joint_names: list[str],
        coulomb_width: float | None = DEFAULT_COULOMB_WIDTH,
        payload_link: str = "",
        links: Mapping[str, Inertial] | None = None,
        *,
        link_contexts: Mapping[str, LinkContext] | None = None,
        qdd_noise: np.ndarray | None = None,
        still_links: Mapping[str, str] | None = None,
    ) -> None:
        """``coulomb_width``: the tanh width [rad/s] (lead 0), or None: width and lead chosen per
        joint among SHAPES by the residual on held-out samples (``fold_sums``).
        ``payload_link``: also identify a payload on this link; ``links``: also identify these
        links' inertial parameters, starting from these (the URDF's; ``link_inertia``), each link's
        joint and reach in ``link_contexts`` (``link_inertia.link_contexts``). ``add`` then needs
        their regressor. ``qdd_noise``: per joint, the std of q̈'s noise at the differentiation
        window (``analysis.window``): an armature whose q̈ is within NOISE_MARGIN of it is not fitted.
        ``still_links``: links left out beforehand (no columns), each with why: they keep the URDF's."""
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
        self.still_links = dict(still_links or {})
        self.link_contexts = {name: (link_contexts or {}).get(name, LinkContext()) for name in self.links}
        self.qdd_noise = np.full(n, np.nan) if qdd_noise is None else np.asarray(qdd_noise, dtype=float)
        self.payload_columns = PAYLOAD_PARAMETERS * len(self.links) or (PAYLOAD_PARAMETERS if payload_link else 0)
        # per joint: [Y_j π columns, its terms' columns (regressor.joint_columns)]; sums per fold (and per
        # contiguous stretch, on which the joint terms are chosen, unless ``plain`` below has them)
        self.sums = FoldSums(n, self.payload_columns + regressor.column_count(len(self.shapes)), not links)
        # with the slow samples left out: every sample's joint terms too, on which the terms are chosen
        # (--inertia never fits fewer joint terms than --identify on the same recording)
        self.plain = FoldSums(n, regressor.column_count(len(self.shapes))) if self.min_speed > 0.0 else None
        self.peak_speed = np.zeros(n)  # per joint, the largest |q̇| recorded (effort measured or not)
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
        if self.plain is not None:
            self.plain.merge(other.plain)
        self.peak_speed = np.maximum(self.peak_speed, other.peak_speed)

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
        speed = np.abs(np.where(np.isfinite(qd), qd, 0.0))
        if len(speed):
            self.peak_speed = np.maximum(self.peak_speed, speed.max(axis=0))
        ok = np.isfinite(measured) & np.isfinite(model) & np.isfinite(qd) & np.isfinite(qdd)
        columns = []
        if self.payload_columns:
            P = self.payload_columns
            if payload_regressor is None or payload_regressor.shape != (*measured.shape, P):
                raise ValueError(f"the payload or links need their regressor, (N, joints, {P})")
            ok &= np.isfinite(payload_regressor).all(axis=-1)
        self._version += 1
        if self.plain is not None:
            self.plain.add(*_term_rows(measured, model, qd, qdd, ok, self.shapes))
            ok &= speed >= self.min_speed
        if self.payload_columns:
            columns.append(np.where(ok[..., None], payload_regressor, 0.0))
        x, r, _, _, v = _term_rows(measured, model, qd, qdd, ok, self.shapes)
        self.sums.add(np.concatenate([*columns, x], axis=-1), r, measured, ok, v)

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
        """Every link's identified inertial (with ``links``), physically consistent, and whether it
        is written (``LinksIdentification.written``)."""
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
        """The terms not identifiable are taken out and the rest fitted again (the result written is
        the one fitted and printed); with links, joint terms alone or with the links' inertias, the
        better on held-out samples."""
        self._choose_shapes()
        fitted, held = self._chosen_terms()  # --identify's: every sample's joint terms alone
        if not self.links:
            return self._converged(fitted, held, [], fitted)
        # beside the links: every term excited, those --identify keeps and those the links' fit resolves
        excited, reasons = initial_terms(self._pooled, self.payload_columns, self.qdd_noise)
        excited = [sorted({*e, *f}) for e, f in zip(excited, fitted, strict=True)]
        reasons = [
            {name: e for name, e in r.items() if FEATURES.index(name) not in x}
            for r, x in zip(reasons, excited, strict=True)
        ]
        moving = [name for name in self.links if _link_moves(self, name)]
        kept = {name: "its joint does not move in the recording" for name in self.links if name not in moving}
        kept.update(self.still_links)
        _, silent = links_with_information(self._pooled, excited, [self._shared([n])[0] for n in moving])
        kept.update({moving[l]: SILENT for l in silent})
        alone = self._converged(fitted, held, [], fitted)
        with_links = self._converged(excited, reasons, [name for name in moving if name not in kept], fitted)
        terms_rms = held_out(self._splits, alone.fitted, np.zeros(0, dtype=int), None)
        links_rms = held_out(self._splits, with_links.fitted, *self._shared(with_links.link_names))
        urdf_rms = choose_terms(self._pooled, self._splits, [[]] * len(fitted), self.payload_columns).urdf
        written, why = inertia_choice(terms_rms, links_rms, self._count >= MIN_SAMPLES, urdf_rms)
        chosen = with_links if written else alone
        links = dataclasses.replace(
            with_links.links,
            kept={**kept, **with_links.kept},
            held_out={"joint terms": terms_rms, "joint terms + inertia": links_rms},
            written=written,
            why=why,
        )
        return dataclasses.replace(chosen, links=links)

    def _chosen_terms(self) -> tuple[list[list[int]], list[dict]]:
        """The joint terms fitted, term by term (``identify_fit.choose_terms``), on every sample's
        joint terms alone (with links: ``plain``, the slow samples in)."""
        sums, splits, P = self._pooled, self._splits, self.payload_columns
        if self.plain is not None:
            chosen, _ = choose_shapes(self.plain, self.shapes, 0)
            columns = [shape_columns(k, 0, len(self.shapes)) for k in chosen]
            sums, splits, P = ChosenSums.of(self.plain, columns, range(FOLDS)), fold_splits(self.plain, columns), 0
            stretches = stretch_splits(self.plain, columns)
        else:
            stretches = stretch_splits(self.sums, [shape_columns(k, P, len(self.shapes)) for k in self._chosen])
        fitted, held = initial_terms(sums, P, self.qdd_noise)
        # a payload's columns beside each joint's terms (with links: every sample's joint terms alone)
        free = P if self.plain is None else 0
        choice = choose_terms(sums, splits, fitted, P, bool(self.links), free, stretches)
        for reasons, why in zip(held, choice.why, strict=True):
            reasons.update({FEATURES[k]: Estimate(None, np.nan, text) for k, text in why.items()})
        return choice.fitted, held

    def _converged(self, fitted: list[list[int]], held: list[dict], links: list[str], chosen: list) -> _Solution:
        """The fit of ``fitted`` terms and ``links``, each term not identifiable and each link not a
        body to write taken out and the rest fitted again, until none is: every term that comes out
        negative but cannot be, and of the terms not ``chosen`` (``identify_fit.choose_terms``) and not
        resolved by this fit's standard errors, the least resolved (one at a time: terms trade)."""
        fitted, held, links, kept = [list(f) for f in fitted], [dict(h) for h in held], list(links), {}
        while True:
            result = fit_sums(self._pooled, fitted, *self._shared(links))
            joints = [joint_result(self, j, result, fitted[j], held[j], chosen[j]) for j in range(len(fitted))]
            links_result = links_estimates({n: self.links[n] for n in links}, result) if self.links else None
            changed = False
            for j, joint in enumerate(joints):
                out = [k for k in fitted[j] if joint.estimates[FEATURES[k]].value is None]
                negative = [k for k in out if joint.estimates[FEATURES[k]].excess == 0.0]
                for k in negative or sorted(out, key=lambda k: -joint.estimates[FEATURES[k]].excess)[:1]:
                    fitted[j].remove(k)
                    held[j][FEATURES[k]], changed = joint.estimates[FEATURES[k]], True
            for estimate in links_result.links if links_result else []:
                problems = body_problems(estimate.identified, estimate.urdf, self.link_contexts[estimate.link])
                if problems:
                    links.remove(estimate.link)
                    kept[estimate.link], changed = (
                        "its identified body was not one to write: " + "; ".join(problems),
                        True,
                    )
            if not changed:
                break
        payload = payload_result(self.payload_link, self._pooled, result) if self.payload_link else None
        chosen = [shape_columns(k, self.payload_columns, len(self.shapes)) for k in self._chosen]
        thetas = [(chosen[j][result.local[j]], result.theta[result.index[j]]) for j in range(len(fitted))]
        return _Solution(joints, payload, links_result, thetas, fitted, links, kept)

    def _shared(self, links: list[str]) -> tuple[np.ndarray, LinkPriors | None]:
        """The shared columns of a fit with these links (a payload's: all of them), and their priors."""
        if not self.links:
            return np.arange(self.payload_columns), None
        position = {name: l for l, name in enumerate(self.links)}
        columns = [10 * position[name] + np.arange(10) for name in links]
        priors = LinkPriors([self.links[n].parameters() for n in links], [margin(self.links[n]) for n in links])
        return (np.concatenate(columns) if columns else np.zeros(0, dtype=int)), priors

    def _choose_shapes(self) -> None:
        """Per joint, the Coulomb shape (``coulomb_shapes``); then the sums, pooled and per fold,
        with that shape's column alone."""
        P, sums = self.payload_columns, self.sums
        self._chosen, self.held_out = choose_shapes(sums, self.shapes, P)
        self.chosen_shapes = [self.shapes[k] for k in self._chosen]
        columns = [shape_columns(k, P, len(self.shapes)) for k in self._chosen]
        self._pooled = ChosenSums.of(sums, columns, range(FOLDS))
        self._splits = fold_splits(sums, columns)
        self._count = self._pooled.count

    def _shape(self, j: int) -> tuple[float, float]:
        """The joint's Coulomb width and lead."""
        width, lead = self.chosen_shapes[j]
        return float(width), float(lead)


def _link_moves(identification: Identification, link: str) -> bool:
    """Whether the joint of the link's body moved in the recording (unknown joint: assumed)."""
    joint, names = identification.link_contexts[link].joint, identification.joint_names
    return joint not in names or identification.peak_speed[names.index(joint)] >= STICTION_SPEED


def joint_result(
    identification: Identification, j: int, result: Fitted, fitted: list[int], held: dict, chosen: list[int]
) -> JointIdentification:
    """Joint j's estimates in ``result``: a term that cannot be negative and is, or (unless ``chosen``)
    whose standard error is above the resolution, is not identified; one determined only with the
    links' inertias is reported as such."""
    n, name, P = int(identification._count[j]), identification.joint_names[j], identification.payload_columns
    width, lead = identification._shape(j)
    if n < MIN_SAMPLES:
        return JointIdentification(name, n, dict(held), np.inf, np.nan, np.nan, width, coulomb_lead=lead)
    own_columns = result.index[j][result.shared :]
    beta, combined = result.theta[own_columns], result.fit.combined[own_columns]
    variances = np.diag(result.fit.covariance)[own_columns]
    own = identification._pooled.xx[j][P:, P:]
    rms = np.sqrt(np.diag(own) / n)
    torque_rms = max(np.sqrt(identification._pooled.mm[j] / n), 1e-9)
    estimates = dict(held)
    for i, k in enumerate(fitted):
        term, se = JOINT_TERMS[k], float(np.sqrt(max(variances[i], 0.0)))
        if term.nonnegative and beta[i] < 0.0:
            shared = " with the links' inertias" if combined[i] else ""
            estimates[term.name] = Estimate(None, se, f"{beta[i]:.3g} < 0{shared}: {term.nonnegative}")
        elif combined[i]:
            estimates[term.name] = Estimate(float(beta[i]), np.nan, COMBINED)
        elif k in chosen or se * rms[k] <= RESOLUTION * torque_rms:
            estimates[term.name] = Estimate(float(beta[i]), se)
        else:
            why = f"standard error {se:.3g} too large for this recording"
            estimates[term.name] = Estimate(None, se, why, se * rms[k] / (RESOLUTION * torque_rms))
    sub = own[np.ix_(fitted, fitted)] / np.outer(rms[fitted], rms[fitted]) / n if fitted else np.eye(1)
    return JointIdentification(
        name,
        n,
        {f: estimates[f] for f in FEATURES},
        float(np.linalg.cond(sub)),
        float(np.sqrt(identification._pooled.rr[j] / n)),
        float(np.sqrt(result.rss[j] / n)),
        width,
        tuple(float(x) for x in identification.held_out[j]) if len(identification.shapes) > 1 else (),
        lead,
    )


def _term_rows(measured, model, qd, qdd, ok, shapes) -> tuple:
    """The joint terms' rows of ``FoldSums.add``: (x, r, measured, ok, q̇), zero where not ``ok``."""
    r = np.where(ok, measured - model, 0.0)
    v, a = np.where(ok, qd, 0.0), np.where(ok, qdd, 0.0)
    return regressor.joint_columns(v, a, shapes) * ok[..., None], r, measured, ok, v


def initial_terms(
    pooled: ChosenSums, shared: int, qdd_noise: np.ndarray
) -> tuple[list[list[int]], list[dict[str, Estimate]]]:
    """Per joint, the terms the recording excites (above EXCITATION, and a q̈ column above
    NOISE_MARGIN × q̈'s noise) and, for the others, why not (``shared``: the columns before the terms')."""
    fitted, held = [], []
    for j, count in enumerate(pooled.count):
        own = pooled.xx[j][shared:, shared:]
        excitation = regressor.excitation(own, count) if count else np.zeros(len(FEATURES))
        terms, reasons = [], {}
        for k, term in enumerate(JOINT_TERMS):
            noise = NOISE_MARGIN * qdd_noise[j] if term.derivative == "qdd" else np.nan
            if count < MIN_SAMPLES:
                reasons[term.name] = Estimate(None, np.inf, f"fewer than {MIN_SAMPLES} samples")
            elif not excitation[k] > EXCITATION[term.name]:
                why = f"not excited (RMS {excitation[k]:.3g} ≤ {EXCITATION[term.name]})"
                reasons[term.name] = Estimate(None, np.inf, why)
            elif excitation[k] <= noise:
                why = f"q̈ varies by {excitation[k]:.3g}, within {NOISE_MARGIN:g}× its noise at this window"
                reasons[term.name] = Estimate(None, np.inf, f"{why} ({noise / NOISE_MARGIN:.3g})")
            else:
                terms.append(k)
        fitted.append(terms)
        held.append(reasons)
    return fitted, held


def links_estimates(links: Mapping[str, Inertial], result: Fitted) -> LinksIdentification:
    """Each link's identified body (its URDF's π + δπ) and standard errors (NaN: only in combination)."""
    estimates = []
    variances = np.diag(result.fit.covariance)
    for l, (link, urdf) in enumerate(links.items()):
        columns = slice(10 * l, 10 * l + 10)
        identified = Inertial.from_parameters(urdf.parameters() + result.theta[columns])
        errors = np.where(result.fit.combined[columns], np.nan, np.sqrt(np.maximum(variances[columns], 0.0)))
        estimates.append(LinkEstimate(link, urdf, identified, errors))
    fit = result.fit
    return LinksIdentification(estimates, fit.rank, len(fit.theta), fit.condition, result.iterations)


def payload_result(link: str, pooled: ChosenSums, result: Fitted) -> PayloadIdentification:
    """The payload's 10 parameters: each reported when it moves some joint measurably."""
    counts = np.maximum(pooled.count, 1)
    torque_rms = np.maximum(np.sqrt(pooled.mm / counts), 1e-9)
    column_rms = np.sqrt(np.einsum("jkk->jk", pooled.xx[:, :10, :10]) / counts[:, None])  # (joints, 10)
    leverage = (column_rms / torque_rms[:, None]).max(axis=0)  # torque per unit parameter, relative
    variances, pi = np.diag(result.fit.covariance)[:10], result.theta[:10]
    estimates = {}
    for k, name in enumerate(PARAMETER_NAMES):
        se = float(np.sqrt(max(variances[k], 0.0)))
        if leverage[k] > 0.0 and se * leverage[k] <= RESOLUTION:
            estimates[name] = Estimate(float(pi[k]), se)
        else:
            estimates[name] = Estimate(None, se, "does not move any joint measurably in this recording")
    inertial, note = _payload_inertial(pi, estimates)
    return PayloadIdentification(link, estimates, result.fit.condition, inertial, note)


INERTIA_TOLERANCE = 0.05  # relative, per joint: see inertia_choice


def inertia_choice(
    terms: np.ndarray, links: np.ndarray, usable: np.ndarray, urdf: np.ndarray | None = None
) -> tuple[bool, str]:
    """Whether the links' inertias are written: only when their held-out residual is lower over the
    joints and within INERTIA_TOLERANCE of the joint terms' alone on every joint (the folds' own
    spread: a joint 2 % off is no evidence against 1.7–5× better elsewhere), and never above the
    URDF's alone (``urdf``) on any joint; and why."""
    if not usable.any():
        return False, "no joint has samples to compare them on"
    if urdf is not None:
        worse = [j for j in np.flatnonzero(usable) if not links[j] <= urdf[j]]
        if worse:
            return False, f"the links' inertias predict held-out samples worse than the URDF on {len(worse)} joint(s)"
    worse = [j for j in np.flatnonzero(usable) if not links[j] <= terms[j] * (1.0 + INERTIA_TOLERANCE)]
    if worse:
        return False, (
            f"the links' inertias predict held-out samples more than {INERTIA_TOLERANCE:.0%} worse on "
            f"{len(worse)} joint(s)"
        )
    if not np.sum(links[usable] ** 2) < np.sum(terms[usable] ** 2):
        return False, "the links' inertias predict held-out samples no better"
    return True, (
        f"the links' inertias predict held-out samples better over the joints, within {INERTIA_TOLERANCE:.0%} on each"
    )


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
    """Per joint with samples: each parameter with its standard error, or "n/i" (not identifiable),
    and the residual RMS before and after (of the model written); then the joints without samples
    named in one line, and why each n/i is one."""
    labels = "".join(f"{term.label:>16}" for term in JOINT_TERMS)
    lines = [f"{'joint':<20}{labels}{'residual RMS':>20}  Coulomb's tanh width [rad/s], lead [s]"]
    notes, silent = [], []
    for result in identification.results():
        if result.samples < MIN_SAMPLES:
            silent.append(result.name)
            continue
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
    if silent:
        lines.append(
            f"not identified, fewer than {MIN_SAMPLES} samples with an effort (not in the recording, or its "
            f"effort not measured): {', '.join(silent)}"
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
    chosen = (result.coulomb_width, result.coulomb_lead)  # not always the least: a near tie goes to the earlier
    at_chosen = result.held_out[SHAPES.index(chosen)] if chosen in SHAPES else min(np.asarray(result.held_out)[tried])
    return f"{shape} (held-out {at_chosen:.3f}; {default} at width {DEFAULT_COULOMB_WIDTH:g}, no lead)"


def links_table(result: LinksIdentification) -> str:
    """Per link: mass and centre of mass, URDF → identified, with their standard errors, whether the
    identified body is a rigid body's (it always is: the check is the reader's); the links kept at
    the URDF's and why; the held-out residual of joint terms alone and with the links' inertias, and
    which is written."""
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
    lines += [f"{link}: the URDF's inertial kept exactly ({why})" for link, why in result.kept.items()]
    for label, rms in result.held_out.items():
        cells = " ".join(f"{x:.3f}" for x in rms)
        lines.append(f"held-out residual RMS per joint [N·m], {label}: {cells}")
    if result.held_out:
        written = (
            "joint terms + inertia (corrected.urdf)" if result.written else "joint terms alone (the URDF unchanged)"
        )
        lines.append(f"written: {written}, because {result.why}")
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
