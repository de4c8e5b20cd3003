"""Pinocchio as the independent oracle: the same URDF, mapped to our conventions by joint name."""

from __future__ import annotations

import re
from importlib.metadata import distribution
from pathlib import Path

import numpy as np
import pinocchio as pin

from rnea_ros import RobotModel
from rnea_ros.dynamics.payload import Inertial

# where the package is installed, not where this interpreter installs (another venv may share its site-packages)
EXAMPLE_ROBOT_DATA = Path(
    distribution("example-robot-data").locate_file("cmeel.prefix/share/example-robot-data/robots")
)
EXAMPLE_ARM = Path(__file__).resolve().parents[1] / "demo/robots/example_arm.urdf"
ARM_URDF = EXAMPLE_ARM.read_text()
HEAVY_ARM_URDF = ARM_URDF.replace('<mass value="3.5"/>', '<mass value="7.0"/>', 1)  # link2 twice as heavy

# 1.5 kg, off-centre, rotated principal axes: every one of the 10 parameters non-zero
ROTATION = np.array([[0.36, 0.48, -0.8], [-0.8, 0.6, 0.0], [0.48, 0.64, 0.6]])
PAYLOAD = Inertial(1.5, np.array([0.02, -0.03, 0.08]), ROTATION @ np.diag([0.004, 0.006, 0.008]) @ ROTATION.T)


def urdf_with_payload(link: str, inertial: Inertial, urdf: str = ARM_URDF) -> str:
    """The URDF (the arm's by default) with the payload as a fixed child link of ``link`` (its frame = the link's)."""
    I = inertial.inertia
    x, y, z = inertial.com
    text = (
        f'<joint name="payload_joint" type="fixed"><parent link="{link}"/><child link="payload"/></joint>'
        f'<link name="payload"><inertial><origin xyz="{x} {y} {z}"/><mass value="{inertial.mass}"/>'
        f'<inertia ixx="{I[0, 0]}" ixy="{I[0, 1]}" ixz="{I[0, 2]}" iyy="{I[1, 1]}" iyz="{I[1, 2]}" izz="{I[2, 2]}"/>'
        "</inertial></link></robot>"
    )
    return urdf.replace("</robot>", text)


def robot_urdf(relative_path: str, strip_mimic: bool = False) -> str:
    xml = (EXAMPLE_ROBOT_DATA / relative_path).read_text()
    return re.sub(r"<mimic[^>]*/>", "", xml) if strip_mimic else xml


class PinocchioReference:
    """Pinocchio's RNEA on the same URDF, fed and read in rnea_ros's coordinates."""

    def __init__(self, urdf_xml: str, ours: RobotModel) -> None:
        mimic = "<mimic" in urdf_xml
        if ours.floating_base:
            self.model = pin.buildModelFromXML(urdf_xml, pin.JointModelFreeFlyer(), mimic=mimic)
        else:
            self.model = pin.buildModelFromXML(urdf_xml, mimic=mimic)
        self.data = self.model.createData()
        self.ours = ours
        self.base = 7 if ours.floating_base else 0
        self.joints = [self.model.joints[self.model.getJointId(name)] for name in ours.joint_names]
        self.frames = {f.name: f for f in self.model.frames if f.type == pin.FrameType.BODY}

    def q(self, q: np.ndarray) -> np.ndarray:
        """Our angles → Pinocchio's q (continuous joints as cos, sin)."""
        out = pin.neutral(self.model)
        out[: self.base] = q[: self.base]
        for k, joint in enumerate(self.joints):
            angle = q[self.base + k]
            if joint.nq == 2:
                out[joint.idx_q : joint.idx_q + 2] = np.cos(angle), np.sin(angle)
            else:
                out[joint.idx_q] = angle
        return out

    def v(self, v: np.ndarray) -> np.ndarray:
        out = np.zeros(self.model.nv)
        nb = self.base and 6
        out[:nb] = v[:nb]
        for k, joint in enumerate(self.joints):
            out[joint.idx_v] = v[nb + k]
        return out

    def tau_to_ours(self, tau: np.ndarray) -> np.ndarray:
        nb = self.base and 6
        return np.concatenate([tau[:nb], [tau[joint.idx_v] for joint in self.joints]])

    def fext(self, wrenches: dict[str, np.ndarray]) -> list:
        """A wrench [f, τ] on a link, in its frame → Pinocchio's per-joint force in the joint frame."""
        fext = [pin.Force.Zero() for _ in range(self.model.njoints)]
        for link, w in wrenches.items():
            frame = self.frames[link]
            fext[frame.parentJoint] += frame.placement.act(pin.Force(np.asarray(w[:3]), np.asarray(w[3:])))
        return fext

    def inverse_dynamics(self, q, qd, qdd, wrenches=None) -> np.ndarray:
        args = (self.model, self.data, self.q(q), self.v(qd), self.v(qdd))
        tau = pin.rnea(*args, self.fext(wrenches)) if wrenches else pin.rnea(*args)
        return self.tau_to_ours(tau)

    def gravity_torques(self, q) -> np.ndarray:
        return self.tau_to_ours(pin.computeGeneralizedGravity(self.model, self.data, self.q(q)))

    def joint_dynamics(self, qd) -> np.ndarray:
        """The URDF's <dynamics damping friction> as Pinocchio reads them (``model.damping``,
        ``model.friction``): damping·q̇ + friction·tanh(q̇/0.01) per joint, rnea_node's form."""
        v = self.v(np.asarray(qd, dtype=float))
        return self.tau_to_ours(self.model.damping * v + self.model.friction * np.tanh(v / 0.01))

    def node_torques(self, q, qd, qdd, wrenches=None, urdf_joint_dynamics: bool = False) -> np.ndarray:
        """What rnea_node publishes without corrections: the rigid bodies, and the URDF's joint dynamics
        with its parameter ``urdf_joint_dynamics`` true."""
        tau = self.inverse_dynamics(q, qd, qdd, wrenches)
        return tau + self.joint_dynamics(qd) if urdf_joint_dynamics else tau

    def nonlinear_effects(self, q, qd) -> np.ndarray:
        return self.tau_to_ours(pin.nonLinearEffects(self.model, self.data, self.q(q), self.v(qd)))


def random_state(model: RobotModel, rng: np.random.Generator, scale: float = 1.0):
    q = rng.uniform(-np.pi, np.pi, model.nq) * scale
    if model.floating_base:
        quaternion = rng.normal(size=4)
        q[3:7] = quaternion / np.linalg.norm(quaternion)
    return q, rng.normal(size=model.nv) * scale, rng.normal(size=model.nv) * scale


def assert_close(ours: np.ndarray, reference: np.ndarray, rtol: float = 1e-9) -> None:
    """Relative to the torque scale of the case: |Δ| ≤ rtol · max(1, ‖τ_ref‖∞)."""
    scale = max(1.0, float(np.max(np.abs(reference), initial=0.0)))
    error = float(np.max(np.abs(ours - reference), initial=0.0))
    assert error <= rtol * scale, f"max error {error:.3e} > {rtol:.0e} × {scale:.3e}"
