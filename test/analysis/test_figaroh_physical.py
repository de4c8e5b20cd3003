"""FIGAROH's joint terms read as physical parameters (rnea_ros/testing/figaroh_reference.py): which of
them its fit determines alone, and its fit again with those held at zero or above. On data made here
by our model of the example arm plus joint terms chosen here, one of them a negative armature."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.dynamics.model import RobotModel
from rnea_ros.testing.reference import ARM_URDF

pytest.importorskip("figaroh")
pytest.importorskip("pinocchio")
pytestmark = pytest.mark.slow  # FIGAROH's and Pinocchio's imports and regressors: ~20 s of CPU

ARMATURE = np.array([0.02, 0.03, 0.01, -0.05, 0.004, 0.003, 0.002])  # joint 4's is not physical
VISCOUS = np.array([0.5, 0.4, 0.3, 0.3, 0.1, 0.1, 0.05])
FOLLOWERS = {"finger_right_joint": "finger_left_joint"}  # Pinocchio's model has both fingers


def recording(samples: int, seed: int):
    model = RobotModel.from_urdf(ARM_URDF)
    rng = np.random.default_rng(seed)
    q, qd, qdd = (np.zeros((samples, model.nv)) for _ in range(3))
    for x in (q, qd, qdd):
        x[:, :7] = rng.uniform(-1.5, 1.5, (samples, 7))  # the gripper's finger stays at rest, at 0
    tau = np.array([model.inverse_dynamics(*state) for state in zip(q, qd, qdd, strict=True)])[:, :7]
    return model.joint_names, (q, qd, qdd, tau + ARMATURE * qdd[:, :7] + VISCOUS * qd[:, :7])


def test_a_negative_armature_is_found_alone_and_held_at_zero_by_the_bounded_refit() -> None:
    from rnea_ros.testing.figaroh_reference import (
        _states,
        figaroh_fit,
        refit_nonnegative,
        standalone_joint_terms,
    )

    names, data = recording(200, 1)
    model_and_data, training, _ = _states(ARM_URDF, names, FOLLOWERS, data, data)
    fit = figaroh_fit(model_and_data, *training, data[3], 7)
    standalone = standalone_joint_terms(model_and_data, fit, *training, every=1)
    assert {"ia4", "ia5", "ia6", "ia7", "fv1", "fv4"} <= set(standalone)
    assert fit.phi[standalone["ia4"]] == pytest.approx(-0.05, abs=1e-6)
    assert fit.phi[standalone["fv4"]] == pytest.approx(0.3, abs=1e-6)

    refit = refit_nonnegative(fit, standalone)
    assert refit.phi[standalone["ia4"]] == pytest.approx(0.0, abs=1e-9)
    assert refit.phi[standalone["fv4"]] == pytest.approx(0.3, abs=0.05)  # still free to fit
    assert all(refit.phi[k] >= -1e-12 for name, k in standalone.items() if name[:2] in ("ia", "fv", "fs"))


def test_the_bounded_refit_predicts_held_out_data_worse_where_the_truth_is_not_physical() -> None:
    from rnea_ros.testing.figaroh_reference import figaroh_held_out, figaroh_nonnegative_held_out

    names, training = recording(200, 2)
    _, held_out = recording(100, 3)
    free, _ = figaroh_held_out(ARM_URDF, names, FOLLOWERS, training, held_out, 7)
    bounded, values = figaroh_nonnegative_held_out(ARM_URDF, names, FOLLOWERS, training, held_out, 7)
    assert values["ia4"] == pytest.approx(-0.05, abs=1e-6)
    assert free[3] < 1e-9 < bounded[3]


def test_joint_terms_alone_on_the_urdfs_rigid_bodies_recover_every_term_whatever_its_sign() -> None:
    from rnea_ros.testing.figaroh_reference import joint_terms_held_out

    names, training = recording(200, 6)
    _, held_out = recording(100, 7)
    rms, coefficients = joint_terms_held_out(ARM_URDF, names, FOLLOWERS, training, held_out, 7)
    np.testing.assert_allclose(coefficients[:, 0], VISCOUS, atol=1e-6)
    np.testing.assert_allclose(coefficients[:, 2], ARMATURE, atol=1e-6)
    np.testing.assert_allclose(coefficients[:, [1, 3]], 0.0, atol=1e-6)  # no Coulomb, no offset made
    assert np.all(rms < 1e-6)
