"""``ModelData``: what the algorithms write for one model, one per thread (Pinocchio's ``Data``).

A ``RobotModel`` is never written after it is built and is shared freely between threads; every
buffer an algorithm writes is its data's. ``model.create_data()`` makes one; two threads must never
use the same one at once (the kernels release the GIL: they would run at the same time).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rnea_ros.dynamics import rnea as kernel


@dataclass(eq=False)
class ModelData:
    """The work arrays of one model for one thread."""

    # The model's layout (bodies, gravity): a data fits every model with the same, checked at each call.
    layout: tuple[int, tuple[float, float, float]]
    # (bodies + 1, WORK_COLUMNS): ^iX_λ(i), S, v, a, f per body, and the world row a_0 = −g (rnea.py)
    work: np.ndarray
    # link → its 6 unit f_ext; (links, components) → those stacked (pure values of the model)
    unit_wrenches: dict = field(default_factory=dict)


def data_layout(bodies: int, gravity: np.ndarray) -> tuple[int, tuple[float, float, float]]:
    """What a data's arrays depend on: the number of bodies and the gravity (the world row)."""
    return bodies, (float(gravity[0]), float(gravity[1]), float(gravity[2]))


def create_data(layout: tuple[int, tuple[float, float, float]]) -> ModelData:
    """A new data for the models of ``layout`` (``data_layout``)."""
    bodies, gravity = layout
    work = np.zeros((bodies + 1, kernel.WORK_COLUMNS))
    work[kernel.WORLD, kernel.A + 3 : kernel.A + 6] = np.negative(gravity)  # a_0 = −g
    return ModelData(layout, work)
