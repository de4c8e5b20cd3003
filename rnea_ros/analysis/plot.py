"""rnea_analyze's figure: measured vs model vs gravity per joint, and the residuals."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rnea_ros.analysis.identify import Identification
from rnea_ros.analysis.pipeline import Analysis
from rnea_ros.dynamics.regressor import JOINT_TERMS, joint_torques


def write_plot(analysis: Analysis, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = analysis.plot.rows()
    n = len(analysis.joint_names)
    t = rows[:, 0] - rows[0, 0] if len(rows) else np.empty(0)
    measured, tau, gravity = rows[:, 1 : 1 + n], rows[:, 1 + n : 1 + 2 * n], rows[:, 1 + 2 * n : 1 + 3 * n]
    fig, axes = plt.subplots(n + 1, 1, figsize=(10, 1.7 * (n + 1) + 1), sharex=True)
    for j, ax in enumerate(axes[:-1]):
        ax.plot(t, measured[:, j], lw=0.8, label="measured")
        ax.plot(t, tau[:, j], lw=0.8, label="model τ")
        ax.plot(t, gravity[:, j], "--", lw=0.8, label="gravity g(q)")
        ax.set_ylabel(analysis.joint_names[j], fontsize=8)
    for j in range(n):
        axes[-1].plot(t, measured[:, j] - tau[:, j], lw=0.6, label=analysis.joint_names[j])
    axes[-1].set_ylabel("residual\nmeasured − model", fontsize=8)
    axes[-1].legend(fontsize=6, ncol=4, loc="upper right")
    axes[0].legend(fontsize=8, loc="upper right")
    axes[0].set_title("measured efforts vs rigid-body model")
    axes[-1].set_xlabel("time [s]")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def write_friction_plot(identification: Identification, path: Path) -> None:
    """Per joint: the residual less everything fitted but friction, averaged per velocity bin,
    and the fitted friction terms (``regressor.JointTerm.friction``) at q̈ = 0."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = identification.results()
    points = identification.friction_points()
    n = len(results)
    columns = min(n, 4)
    rows = (n + columns - 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(3.2 * columns, 2.6 * rows), squeeze=False)
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
    plt.close(fig)
