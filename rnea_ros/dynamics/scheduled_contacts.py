"""The contact distribution under a contact schedule: swing feet carry nothing, and a foot's load
ramps down before it lifts off and up after it lands (no ROS).

``ScheduledContacts`` is called with a stance weight per contact link (``contact_schedule.
stance_weights``: 0 in swing, 1 in stance, between 0 and 1 on a ramp) and the state, and returns
(τ − Jᵀf, g − Jᵀf_g, f) as a ``ContactDistribution`` does, f with 6 per contact link (zeros for a
swing foot). With C the links of weight 1 and the links on a ramp grouped by their weight
(G_1 … G_m, weights α_j: feet that switch together form one group), f is the blend

    f = Σ_J  Π_{j∈J} α_j Π_{j∉J} (1 − α_j) · f(C ∪ G_J)          (over J ⊆ {1 … m})

of the distribution ``kind`` (minimum_norm or qp, ``contact_distribution``) onto each stance set
C ∪ G_J, divided by 1 − Π (1 − α_j) when C is empty (the empty set dropped). Every f(S) produces
the base residual (exactly, when the QP's forces can), and the weights sum to 1: so does f, and
τ − Jᵀf stays contact-consistent at every instant; f is continuous in the weights (a group's terms
fade with α_j → 0, the others' with α_j → 1), so a linear ramp of α gives no torque step; a foot of
weight 0 is in no stance set and gets exactly zero. A foot outside a term's stance set while on a
ramp holds ``min_normal_force`` along its contact normal there (qp: TSID's ``removeRigidContact``,
the normal force ramps down to its minimum before lift-off and up from it after touch-down; the
step of that minimum at lift-off and touch-down is what the QP's own bound asks for; minimum_norm: 0).
Distributions are built once per stance set and kept (each with its warm start).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rnea_ros.dynamics.contact_distribution import ContactDistribution, contact_distribution
from rnea_ros.dynamics.contact_forces import DEFAULT_OPTIONS, Contact
from rnea_ros.dynamics.contact_options import ContactQPOptions
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.dynamics.spatial import quaternion_to_rotation

MAX_RAMPING_GROUPS = 6  # 2^6 distributions at one instant at the most


class ScheduledContacts:
    """``kind`` onto ``contacts`` weighted per link (see the module docstring); one per thread."""

    def __init__(
        self, kind: str, model: RobotModel, contacts: Sequence[Contact], options: ContactQPOptions = DEFAULT_OPTIONS
    ) -> None:
        self.kind, self.model, self.contacts, self.options = kind, model, tuple(contacts), options
        self.links = [contact.link for contact in self.contacts]
        contact_distribution(kind, model, list(self.contacts[:1]), options)  # checks the kind and the options
        up = -np.asarray(model.gravity, dtype=float)
        up = up / np.linalg.norm(up) if np.linalg.norm(up) > 0 else np.array([0.0, 0.0, 1.0])
        self._normals = [np.asarray(c.normal, float) / np.linalg.norm(c.normal) if c.normal else up for c in contacts]
        self._held = options.min_normal_force if kind == "qp" else 0.0
        self._by_stance: dict[tuple[int, ...], ContactDistribution] = {}
        self._columns_by_stance: dict[tuple[int, ...], np.ndarray] = {}

    def distribution(self, stance: tuple[int, ...]) -> ContactDistribution:
        """The distribution onto the links ``stance`` (indices into ``contacts``), built once."""
        found = self._by_stance.get(stance)
        if found is None:
            found = contact_distribution(self.kind, self.model, [self.contacts[k] for k in stance], self.options)
            self._by_stance[stance] = found
        return found

    def at(self, weights: np.ndarray) -> AtInstant:
        """A ``ContactDistribution`` with these weights (the schedule's at one instant)."""
        return AtInstant(self, weights)

    def __call__(
        self, weights, q_base, v_base, qdd_base, q, qd, qdd, wrenches=None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        weights = [float(w) for w in weights]  # a few links: plain floats are the fastest here
        if len(weights) != len(self.links) or not all(0.0 <= w <= 1.0 for w in weights):
            raise ValueError(f"stance weights must be {len(self.links)} values in [0, 1], got {weights}")
        state = (q_base, v_base, qdd_base, q, qd, qdd)
        certain: list[int] = []
        groups: dict[float, list[int]] = {}
        for k, w in enumerate(weights):
            if w >= 1.0:
                certain.append(k)
            elif w > 0.0:
                groups.setdefault(w, []).append(k)
        if not groups:
            if not certain:
                raise ValueError("no contact link in stance: nothing can carry the base")
            return self._on(tuple(certain), (), state, wrenches)
        if len(groups) > MAX_RAMPING_GROUPS:
            raise ValueError(f"{len(groups)} groups of contacts on ramps at once, {MAX_RAMPING_GROUPS} at the most")
        alphas, members = list(groups), list(groups.values())
        total = tau = gravity = f = None
        for mask in range(1 << len(alphas)):
            if mask == 0 and not certain:
                continue
            share = 1.0
            inside, outside = list(certain), []
            for j, alpha in enumerate(alphas):
                if mask >> j & 1:
                    share *= alpha
                    inside += members[j]
                else:
                    share *= 1.0 - alpha
                    outside += members[j]
            t, g, w = self._on(tuple(sorted(inside)), tuple(outside), state, wrenches)
            if total is None:
                total, tau, gravity, f = share, share * t, share * g, share * w
            else:
                total, tau, gravity, f = total + share, tau + share * t, gravity + share * g, f + share * w
        return tau / total, gravity / total, f / total

    def _on(self, stance, held, state, wrenches) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(τ, g, f) with the links ``stance`` in contact and those ``held`` at the least normal force."""
        f = np.zeros(6 * len(self.links))
        if held and self._held > 0.0:
            wrenches = dict(wrenches or {})
            for k in held:
                w = np.zeros(6)
                w[:3] = self._held * self._link_rotation(k, state).T @ self._normals[k]
                f[6 * k : 6 * k + 6] = w
                link = self.links[k]
                wrenches[link] = wrenches[link] + w if link in wrenches else w
        distribution = self._by_stance.get(stance) or self.distribution(stance)
        tau, gravity, f[self._columns(stance)] = distribution(*state, wrenches)
        return tau, gravity, f

    def _columns(self, stance: tuple[int, ...]) -> np.ndarray:
        """Where the wrenches of the links ``stance`` go among 6 per contact link."""
        found = self._columns_by_stance.get(stance)
        if found is None:
            found = self._columns_by_stance[stance] = np.concatenate([np.arange(6 * k, 6 * k + 6) for k in stance])
        return found

    def _link_rotation(self, k: int, state) -> np.ndarray:
        """R_world_link of contact k at the state."""
        q_base, _, _, q, qd, _ = state
        x, y, z, w = np.asarray(q_base, float)[3:7] / np.linalg.norm(np.asarray(q_base, float)[3:7])
        R_world_base = np.array(quaternion_to_rotation(x, y, z, w)).reshape(3, 3)
        full_q = np.concatenate([q_base, q])
        full_qd = np.concatenate([np.zeros(6), qd])
        return R_world_base @ self.model.link_rotation_in_base(self.links[k], full_q, full_qd)[0]


class AtInstant:
    """``ScheduledContacts`` with the stance weights of one instant: a ``ContactDistribution`` that
    also says its ``weights``."""

    __slots__ = ("scheduled", "weights")

    def __init__(self, scheduled: ScheduledContacts, weights: np.ndarray) -> None:
        self.scheduled, self.weights = scheduled, weights

    def __call__(self, *state) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.scheduled(self.weights, *state)
