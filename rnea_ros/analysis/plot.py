"""rnea_analyze's figure: measured vs model vs gravity per joint, and the residuals."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rnea_ros.analysis.pipeline import Analysis


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
