"""rnea_gains: PD gains for your own robot, from its model (no ROS).

    rnea_gains robot.urdf[.xacro] [--bandwidth 20] [--pose 0.0 1.0 ...] [--joints j1 j2 ...]
               [--computed-torque] [--with-description] [--xacro-args "a:=1"]

Per joint, critically damped at the bandwidth ω [rad/s] on the joint's own inertia M_ii(q) at
the pose (the mass matrix's diagonal, the URDF's rotor inertia not included): kp = ω² M_ii,
kd = 2 ω M_ii. Printed as an rnea_node parameters file (``command_joints``, ``kp``, ``kd``) with
``joints``, the same list for the effort controller (a JointGroupEffortController's ``joints``, and
rnea_sim's): the values of rnea_node's ``effort_commands`` are in that order. With
``--with-description`` the robot_description too, so that one file serves rnea_node and rnea_sim
(each node reads only its own parameters). With ``--computed-torque``, the gains of rnea_node's
computed torque instead (``command_source: computed_torque``): ``ct_kp`` = ω² [1/s²], ``ct_kd`` = 2 ω
[1/s] on every joint, in acceleration units, so that no pose or inertia enters. A joint whose
gravity torque at the pose exceeds its URDF effort limit is warned about on stderr: the node's
commands for it are clipped there. Start
low (10–20 rad/s) on a real robot: the feed-forward carries the motion, the feedback only corrects
it, and a controller's period and delays bound how high the bandwidth can go (about a tenth of the
loop rate).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import numpy as np
import yaml

from rnea_ros.description import DescriptionError, read_description
from rnea_ros.dynamics.model import RobotModel
from rnea_ros.dynamics.urdf import ModelError

DEFAULT_BANDWIDTH = 20.0  # rad/s


def mass_matrix(model: RobotModel, q: np.ndarray) -> np.ndarray:
    """M(q) (fixed base), one column per unit acceleration: M e_i = ID(q, 0, e_i) − ID(q, 0, 0), in one batch call."""
    n = model.nv
    Q = np.tile(np.asarray(q, dtype=float), (n + 1, 1))
    QDD = np.vstack([np.eye(n), np.zeros(n)])
    tau = model.inverse_dynamics(Q, np.zeros((n + 1, n)), QDD)
    return (tau[:n] - tau[n]).T


def critically_damped_gains(
    model: RobotModel, q: np.ndarray, bandwidth: float, joints: Sequence[str] | None = None
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(joints, kp, kd): kp = ω² M_ii(q), kd = 2 ω M_ii(q) for each of ``joints`` (default: all)."""
    if not (np.isfinite(bandwidth) and bandwidth > 0.0):
        raise ValueError(f"the bandwidth must be a positive number of rad/s, got {bandwidth}")
    if model.floating_base:
        raise ValueError("rnea_gains is for fixed-base robots: a floating base's joint inertias depend on the contacts")
    if not model.joint_names:
        raise ValueError("the robot has no movable joint (every joint is fixed): there are no gains to give")
    names = list(joints) if joints else list(model.joint_names)
    unknown = [name for name in names if name not in model.joint_names]
    if unknown:
        raise ValueError(f"joints the model does not have: {unknown} (its joints: {list(model.joint_names)})")
    inertia = np.diag(mass_matrix(model, q))[[model.joint_names.index(name) for name in names]]
    return names, bandwidth**2 * inertia, 2.0 * bandwidth * inertia


def computed_torque_gains(bandwidth: float, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(ct_kp, ct_kd): ω² and 2 ω on each of ``count`` joints, critically damped at ω [rad/s]."""
    if not (np.isfinite(bandwidth) and bandwidth > 0.0):
        raise ValueError(f"the bandwidth must be a positive number of rad/s, got {bandwidth}")
    return np.full(count, bandwidth**2), np.full(count, 2.0 * bandwidth)


def parameters_file(
    names: list[str],
    kp: np.ndarray,
    kd: np.ndarray,
    bandwidth: float,
    description: str | None = None,
    computed_torque: bool = False,
) -> str:
    # joints: what the effort controller's YAML needs, in the order of the node's effort_commands
    gains = {"kp": _rounded(kp), "kd": _rounded(kd)}
    if computed_torque:
        gains = {"command_source": "computed_torque", "ct_kp": _rounded(kp), "ct_kd": _rounded(kd)}
    parameters: dict = {"command_joints": names, "joints": list(names), **gains}
    if description is not None:
        parameters = {"robot_description": description, **parameters}
    how = "in acceleration units (computed torque)" if computed_torque else "on each joint's own inertia at the pose"
    header = (
        f"# rnea_gains: critically damped at {bandwidth:g} rad/s {how};\n"
        "# for rnea_node (and, with robot_description, rnea_sim): --ros-args --params-file THIS_FILE;\n"
        "# joints: the effort controller's joints (JointGroupEffortController, rnea_sim) in the node's order\n"
    )
    return header + yaml.safe_dump({"/**": {"ros__parameters": parameters}}, sort_keys=False, width=1000)


def gravity_over_limits(model: RobotModel, q: np.ndarray) -> list[str]:
    """One line per joint whose gravity torque |g(q)| exceeds its URDF effort limit: a robot the
    node cannot hold there (its commands are clipped), or a limit that leaves out a spring."""
    gravity = model.gravity_torques(q)
    return [
        f"joint '{name}' needs {abs(g):.1f} N·m against gravity at the pose, over its URDF effort limit "
        f"{limit:g} N·m: rnea_node's commands for it will be clipped there (a spring or counterweight the URDF "
        "lacks? raise the limit only if the actuator can)"
        for name, g, limit in zip(model.joint_names, gravity, model.effort_limits, strict=True)
        if abs(g) > limit
    ]


def _rounded(values: np.ndarray) -> list[float]:
    return [float(f"{x:.4g}") for x in values]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="rnea_gains", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("urdf", help="URDF or xacro file")
    parser.add_argument("--bandwidth", type=float, default=DEFAULT_BANDWIDTH, help="ω [rad/s] (default 20)")
    parser.add_argument("--pose", type=float, nargs="+", help="joint positions in model order (default: zeros)")
    parser.add_argument("--joints", nargs="+", help="the joints to command, in the controller's order")
    parser.add_argument(
        "--computed-torque", action="store_true", help="ct_kp, ct_kd for command_source computed_torque instead"
    )
    parser.add_argument("--with-description", action="store_true", help="put robot_description in the file too")
    parser.add_argument("--xacro-args", default="", help='xacro arguments: "name:=value ..."')
    args = parser.parse_args(argv)
    try:
        description = read_description(args.urdf, args.xacro_args)
        model = RobotModel.from_urdf(description)
        q = model.neutral_configuration() if args.pose is None else np.asarray(args.pose, dtype=float)
        if q.shape != (model.nq,):
            raise ValueError(f"--pose has {q.size} values; the model has {model.nq}: {list(model.joint_names)}")
        names, kp, kd = critically_damped_gains(model, q, args.bandwidth, args.joints)
        if args.computed_torque:
            kp, kd = computed_torque_gains(args.bandwidth, len(names))
        for warning in gravity_over_limits(model, q):
            print(f"rnea_gains: warning: {warning}", file=sys.stderr)
    except (DescriptionError, ModelError, ValueError) as error:
        print(f"rnea_gains: {error}", file=sys.stderr)
        return 2
    description = description if args.with_description else None
    sys.stdout.write(parameters_file(names, kp, kd, args.bandwidth, description, args.computed_torque))
    return 0


def entry_point() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry_point()
