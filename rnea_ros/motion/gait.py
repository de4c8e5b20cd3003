"""A legged robot's gait as joint trajectories (no ROS): feet that step on a periodic schedule,
swing feet lifted by a smooth curve, turned into joint positions, velocities and accelerations by
numerical inverse kinematics on a forward kinematics the caller gives.

The schedule is rnea_node's periodic gait (``dynamics/contact_schedule.py``'s ``PeriodicGait``):
foot k is in stance while frac(t/P − φ_k) < d, t the time since a gait cycle began (the node's
cycle starts at stamp 0: a trajectory whose time 0 is a multiple of P agrees with it).

The base's reference moves along its x axis by X(t): still until ``walk_from``, then its speed
ramps up to ``speed`` over ``ramp`` s (a quintic smoothstep) and stays there. In the world, a foot
in stance stays where it landed: under its standing spot as the base is at the middle of that
stance; a swing foot goes from the spot it left to the next one along a quintic smoothstep
(at rest in the world at both ends) and rises by ``lift`` · 64 s³(1 − s)³, s the swing's
fraction (velocity and acceleration zero at lift-off and touch-down). In the base frame (the
base level at its height, moving by X), the feet are those spots minus X(t).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

IK_TOLERANCE = 1e-12  # m: the largest foot position error the inverse kinematics leaves
IK_ITERATIONS = 30
JACOBIAN_STEP = 1e-6  # rad: central differences of the forward kinematics


def smoothstep(s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The quintic 10s³ − 15s⁴ + 6s⁵ on [0, 1] (clipped outside) and its first two derivatives."""
    s = np.clip(s, 0.0, 1.0)
    return s**3 * (10 - 15 * s + 6 * s * s), 30 * s * s * (1 - s) ** 2, 60 * s * (1 - s) * (1 - 2 * s)


def smoothstep_integral(s: np.ndarray) -> np.ndarray:
    """∫₀ˢ smoothstep for s in [0, 1], and 1/2 + (s − 1) beyond."""
    inside = np.clip(s, 0.0, 1.0)
    return inside**4 * (2.5 - 3 * inside + inside * inside) + np.maximum(s - 1.0, 0.0)


def lift_curve(s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """64 s³(1 − s)³ (1 at s = 1/2, 0 with zero slope and curvature at 0 and 1) and its derivatives."""
    s = np.clip(s, 0.0, 1.0)
    u = s * (1 - s)
    du, ddu = 1 - 2 * s, -2.0
    return 64 * u**3, 192 * u * u * du, 64 * (6 * u * du * du + 3 * u * u * ddu)


@dataclass(frozen=True)
class Gait:
    """A periodic gait over feet: ``period`` [s], one ``duty`` for every foot, ``phases`` (one per
    foot, fractions of the period), swing feet lifted ``lift`` [m]; the base walks forward at
    ``speed`` [m/s] from ``walk_from`` [s] on, reached over ``ramp`` s."""

    period: float
    duty: float
    phases: tuple[float, ...]
    lift: float
    speed: float = 0.0
    walk_from: float = 0.0
    ramp: float = 1.0

    def base_x(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """X(t) [m] of the base's reference along its x axis, its velocity and acceleration."""
        s = (np.asarray(t, dtype=float) - self.walk_from) / self.ramp
        v, dv, _ = smoothstep(s)
        return self.speed * self.ramp * smoothstep_integral(s), self.speed * v, self.speed * dv / self.ramp

    def in_stance(self, t: np.ndarray) -> np.ndarray:
        """(N, feet): whether each foot is in stance at each time (the node's rule)."""
        cycle = np.asarray(t, dtype=float)[:, None] / self.period - np.asarray(self.phases)
        return np.mod(cycle, 1.0) < self.duty

    def feet_offsets(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(N, feet, 3) each, the feet's displacement from their standing spots in the base frame
        (position, velocity, acceleration): along x, the spots the feet stand on minus X(t); along
        z, the swing's lift."""
        t = np.asarray(t, dtype=float)
        P, d = self.period, self.duty
        cycle = t[:, None] / P - np.asarray(self.phases)  # (N, feet)
        start = np.floor(cycle)  # the cycle's touch-down, in periods (relative to each phase)
        u = cycle - start
        touch_down = (start + np.asarray(self.phases)) * P  # [s] this cycle's touch-down
        swing = u >= d
        # the spot of the stance that began at touch_down, and the next one's
        here = self.base_x(touch_down + d * P / 2)[0]
        after = self.base_x(touch_down + P + d * P / 2)[0]
        s = np.where(swing, (u - d) / (1 - d), 0.0)
        sigma, dsigma, ddsigma = smoothstep(s)
        rate = 1.0 / ((1 - d) * P)
        x_world = here + np.where(swing, (after - here) * sigma, 0.0)
        xd_world = np.where(swing, (after - here) * dsigma * rate, 0.0)
        xdd_world = np.where(swing, (after - here) * ddsigma * rate * rate, 0.0)
        X, Xd, Xdd = (a[:, None] for a in self.base_x(t))
        lift, dlift, ddlift = lift_curve(s)
        z = np.where(swing, self.lift * lift, 0.0)
        zd = np.where(swing, self.lift * dlift * rate, 0.0)
        zdd = np.where(swing, self.lift * ddlift * rate * rate, 0.0)
        zeros = np.zeros_like(z)
        p = np.stack([x_world - X, zeros, z], axis=2)
        v = np.stack([xd_world - Xd, zeros, zd], axis=2)
        a = np.stack([xdd_world - Xdd, zeros, zdd], axis=2)
        return p, v, a


Kinematics = Callable[[np.ndarray], np.ndarray]  # joint positions (N, joints) -> feet (N, feet, 3)


class GaitTrajectory:
    """The joints' trajectory that puts the feet (``kinematics``: their positions in the base frame)
    where ``gait`` wants them about their standing spots (``kinematics(standing)``); held at
    ``standing`` before time 0. ``legs[k]``: the indices of the three joints that move foot k (the
    legs share no joint; the other joints stay at ``standing``). ``at``/``at_times`` as
    ``MultiSine``'s, for the closed-loop runner."""

    def __init__(
        self, gait: Gait, kinematics: Kinematics, standing: Sequence[float], legs: Sequence[Sequence[int]]
    ) -> None:
        self.gait, self.kinematics = gait, kinematics
        self.standing = np.asarray(standing, dtype=float)
        self.legs = np.asarray(legs, dtype=int)  # (feet, 3)
        if self.legs.shape != (len(gait.phases), 3) or len(set(self.legs.ravel())) != self.legs.size:
            raise ValueError(f"one leg of three joints per foot, no joint shared: got {legs}")
        self.spots = kinematics(self.standing[None])[0]  # (feet, 3)

    def feet(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(N, feet, 3): the feet's wanted positions, velocities and accelerations in the base frame."""
        t = np.maximum(np.asarray(t, dtype=float), 0.0)
        p, v, a = self.gait.feet_offsets(t)
        return self.spots + p, v, a

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        """(N, feet, 3, 3): d(foot k)/d(its leg's joints), by central differences (the j-th joint of
        every leg moved at once: each foot sees its own)."""
        J = np.empty((len(q), len(self.legs), 3, 3))
        for j in range(3):
            step = np.zeros(q.shape[1])
            step[self.legs[:, j]] = JACOBIAN_STEP
            J[..., j] = (self.kinematics(q + step) - self.kinematics(q - step)) / (2 * JACOBIAN_STEP)
        return J

    def _legs_solve(self, J: np.ndarray, x: np.ndarray) -> np.ndarray:
        """(N, joints): each leg's joints from its foot's 3-vector of ``x`` (N, feet, 3)."""
        out = np.zeros((len(x), len(self.standing)))
        out[:, self.legs] = np.linalg.solve(J, x[..., None])[..., 0]
        return out

    def solve(self, targets: np.ndarray) -> np.ndarray:
        """(N, joints): joint positions whose feet are at ``targets`` (N, feet, 3), Newton's
        method from the standing pose; ValueError when it does not converge."""
        q = np.repeat(self.standing[None], len(targets), axis=0)
        for _ in range(IK_ITERATIONS):
            error = targets - self.kinematics(q)
            if np.abs(error).max() <= IK_TOLERANCE:
                return q
            q = q + self._legs_solve(self.jacobian(q), error)
        raise ValueError(f"leg inverse kinematics: no convergence (foot error {np.abs(error).max():.3g} m)")

    def at_times(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, q̇, q̈), one row per time: q by inverse kinematics, q̇ = J⁻¹ ṗ, q̈ = J⁻¹ (p̈ − J̇ q̇)."""
        p, v, a = self.feet(t)
        q = self.solve(p)
        J = self.jacobian(q)
        qd = self._legs_solve(J, v)
        h = 1e-4  # J̇ q̇ = d²/dε² feet(q + ε q̇): central second difference
        curvature = (self.kinematics(q + h * qd) - 2 * self.kinematics(q) + self.kinematics(q - h * qd)) / (h * h)
        return q, qd, self._legs_solve(J, a - curvature)

    def at(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        q, qd, qdd = self.at_times(np.array([t]))
        return q[0], qd[0], qdd[0]

    def tabulated(self, seconds: float, step: float = 1e-3) -> TabulatedTrajectory:
        """This trajectory sampled every ``step`` s over [0, ``seconds``], played back exactly enough
        (quintic Hermite between samples: errors ~1e-10 rad) and thousands of times faster."""
        t = np.arange(round(seconds / step) + 1) * step
        return TabulatedTrajectory(t, *self.at_times(t))


# Quintic Hermite basis on s in [0, 1]: rows q0, q̇0·h, q̈0·h², q1, q̇1·h, q̈1·h²; columns s⁰ … s⁵
_HERMITE = np.array(
    [
        [1, 0, 0, -10, 15, -6],
        [0, 1, 0, -6, 8, -3],
        [0, 0, 0.5, -1.5, 1.5, -0.5],
        [0, 0, 0, 10, -15, 6],
        [0, 0, 0, -4, 7, -3],
        [0, 0, 0, 0.5, -1, 0.5],
    ]
)


class TabulatedTrajectory:
    """(q, q̇, q̈) sampled at the uniform times ``t`` (from 0), between samples the quintic that
    matches all three at both ends; held at rest at the first sample before it and at the last
    after it. ``at``/``at_times`` as ``MultiSine``'s."""

    def __init__(self, t: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> None:
        self.t, self.q, self.qd, self.qdd = t, q, qd, qdd
        self.step = float(t[1] - t[0])

    def at_times(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        t = np.asarray(t, dtype=float)
        x = np.clip((t - self.t[0]) / self.step, 0.0, len(self.t) - 1.0)
        k = np.minimum(np.floor(x).astype(int), len(self.t) - 2)
        s, h = (x - k)[:, None], self.step
        ends = np.stack(
            [self.q[k], h * self.qd[k], h * h * self.qdd[k], self.q[k + 1], h * self.qd[k + 1], h * h * self.qdd[k + 1]]
        )  # (6, N, joints)
        powers = np.arange(6)
        basis = _HERMITE @ (s[None] ** powers[:, None, None])[..., 0]  # (6, N)
        d1 = _HERMITE[:, 1:] @ (powers[1:, None] * s.T ** powers[:-1, None])
        d2 = _HERMITE[:, 2:] @ ((powers[2:, None] * powers[1:-1, None]) * s.T ** powers[:-2, None])
        moving = ((t >= self.t[0]) & (t <= self.t[-1]))[:, None]
        q = np.einsum("bn,bnj->nj", basis, ends)
        qd = np.where(moving, np.einsum("bn,bnj->nj", d1, ends) / h, 0.0)
        qdd = np.where(moving, np.einsum("bn,bnj->nj", d2, ends) / (h * h), 0.0)
        return q, qd, qdd

    def at(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        q, qd, qdd = self.at_times(np.array([t]))
        return q[0], qd[0], qdd[0]
