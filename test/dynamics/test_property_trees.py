"""Property-based: on random valid trees drawn by hypothesis, the core agrees with Pinocchio.

Seeded (``@seed``), so a failure replays; hypothesis shrinks it to a small tree.
500 trees × 3 random states each, fixed and floating bases mixed.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from rnea_ros import RobotModel
from rnea_ros.testing.random_urdf import urdf_trees
from rnea_ros.testing.reference import PinocchioReference, assert_close, random_state


@seed(20261122)
@settings(max_examples=500, deadline=None)
@given(tree=urdf_trees(max_links=10), state_seed=st.integers(0, 2**32 - 1))
@pytest.mark.slow
def test_random_trees_agree_with_pinocchio(tree, state_seed):
    urdf, floating = tree
    model = RobotModel.from_urdf(urdf, floating_base=floating)
    reference = PinocchioReference(urdf, model)
    rng = np.random.default_rng(state_seed)
    links = [name for name in model.link_names if name in reference.frames]
    for _ in range(3):
        q, qd, qdd = random_state(model, rng)
        wrenches = {str(link): rng.normal(size=6) for link in rng.choice(links, size=2)}
        assert_close(model.inverse_dynamics(q, qd, qdd, wrenches), reference.inverse_dynamics(q, qd, qdd, wrenches))
        assert_close(model.gravity_torques(q), reference.gravity_torques(q))
        assert_close(model.nonlinear_effects(q, qd), reference.nonlinear_effects(q, qd))
