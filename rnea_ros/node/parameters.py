"""rnea_node's ROS parameters: each declared with a description, a range where one means
something, and ``read_only`` where a live change cannot be honoured; and ``Settings`` read
from them. See config/rnea.yaml for every parameter with its default."""

from __future__ import annotations

from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor
from rclpy.node import Node
from rclpy.parameter import Parameter

from rnea_ros.node.settings import Settings, names

TIMEOUT_RANGE = FloatingPointRange(from_value=1e-4, to_value=3600.0)

# name -> (default, description, read_only, floating-point range or None)
PARAMETERS: dict[str, tuple[object, str, bool, FloatingPointRange | None]] = {
    "robot_description": (
        "",
        "URDF text (not xacro). Empty: the robot_description topic (transient local) is used. "
        "A live change is a hot reload.",
        False,
        None,
    ),
    "strict_inertia": (
        False,
        "Refuse descriptions with non-physical inertias (default: load them with a warning).",
        True,
        None,
    ),
    "gravity": (
        [0.0, 0.0, -9.81],
        "Gravity in the world (root link) frame [m/s²]; a live change rebuilds the model.",
        False,
        None,
    ),
    "state_timeout": (
        0.1,
        "Largest spread of joint_states stamps between joints that are merged [s].",
        False,
        TIMEOUT_RANGE,
    ),
    "acceleration_timeout": (
        0.1,
        "desired_accelerations (and base acceleration) older than this are zero [s].",
        False,
        TIMEOUT_RANGE,
    ),
    "wrench_timeout": (0.1, "Each link's latest wrench is used for this long [s].", False, TIMEOUT_RANGE),
    "future_stamp_tolerance": (
        1.0,
        "joint_states stamped more than this ahead of the node's clock are rejected [s].",
        False,
        FloatingPointRange(from_value=0.0, to_value=3600.0),
    ),
    "use_desired_state": (
        False,
        "Compute at the desired positions and velocities when the point has them.",
        False,
        None,
    ),
    "wrench_topics": (
        ["external_wrenches"],
        "geometry_msgs/WrenchStamped topics of wrenches applied on the robot.",
        True,
        None,
    ),
    "flip_wrench_topics": ([""], "Those of wrench_topics that report what the robot applies (negated).", True, None),
    "command_joints": ([""], "Joint order of effort_commands; empty: the model's order.", True, None),
    "floating_base": (False, "Free-flyer base on the root link (automatic with a floating root joint).", True, None),
    "base_timeout": (0.1, "Odometry or IMU older than this is not used [s].", False, TIMEOUT_RANGE),
    "contact_links": ([""], "Links in contact whose wrench is not measured (floating base).", True, None),
    "contact_distribution": (
        "minimum_norm",
        "How the base residual is spread onto contact_links: minimum_norm (any wrench) or qp (forces the "
        "ground can provide: friction pyramid, min_normal_force, centre of pressure inside the sole).",
        False,
        None,
    ),
    "friction_coefficient": (
        0.7,
        "qp: friction coefficient μ of every contact.",
        False,
        FloatingPointRange(from_value=0.01, to_value=10.0),
    ),
    "min_normal_force": (
        0.0,
        "qp: least normal force of every contact [N].",
        False,
        FloatingPointRange(from_value=0.0, to_value=1e5),
    ),
    "sole_size": (
        [0.0, 0.0],
        "qp: sole [length, width] of every contact link, or one pair per link in contact_links order; a sole is "
        "centred on the link's origin in its x-y plane [m]; zeros: a point contact (forces only).",
        False,
        None,
    ),
    "contact_normals": (
        [0.0, 0.0, 0.0],
        "qp: the ground's normal [x, y, z] in the world frame at every contact link, or one triple per link "
        "in contact_links order (a slope, a wall); zeros: against gravity.",
        False,
        None,
    ),
    "kp": (
        [0.0],
        "Position gains of effort_commands [N·m/rad or N/m], one per command joint or one for all; "
        "act while a fresh desired point has positions and velocities.",
        False,
        None,
    ),
    "kd": ([0.0], "Velocity gains of effort_commands [N·m·s/rad or N·s/m], as kp.", False, None),
    "corrections_file": (
        "",
        "corrections.yaml (rnea_analyze --identify): friction, armature and offset per joint, added to "
        "feedforward_efforts and effort_commands. Empty: none. A live change reloads it; a bad file is refused.",
        False,
        None,
    ),
    "command_source": (
        "inverse_dynamics",
        "What effort_commands adds to the feedback: inverse_dynamics, gravity (compensation only) or none.",
        False,
        None,
    ),
}


def declare(node: Node) -> Settings:
    """Declares every parameter and returns the settings they give (ValueError when one is invalid)."""
    for name, (default, description, read_only, float_range) in PARAMETERS.items():
        descriptor = ParameterDescriptor(description=description, read_only=read_only)
        if float_range is not None:
            descriptor.floating_point_range = [float_range]
        node.declare_parameter(name, default, descriptor)
    return settings_from({name: node.get_parameter(name).value for name in PARAMETERS})


def settings_from(values: dict[str, object], base: Settings | None = None) -> Settings:
    """Settings from parameter values (all, or only those that change, applied to ``base``)."""
    converted = {}
    for name, value in values.items():
        if name in ("wrench_topics", "flip_wrench_topics", "command_joints", "contact_links"):
            converted[name] = names(value)
        elif name == "gravity":
            converted[name] = tuple(float(g) for g in value)
        elif name in ("use_desired_state", "floating_base", "strict_inertia"):
            converted[name] = bool(value)
        elif name in ("robot_description", "command_source", "corrections_file", "contact_distribution"):
            converted[name] = str(value)
        elif name in ("kp", "kd", "sole_size", "contact_normals"):
            converted[name] = tuple(float(k) for k in value)
        else:
            converted[name] = float(value)
    return (base or Settings()).with_values(**converted)


def changes(parameters: list[Parameter]) -> dict[str, object]:
    return {p.name: p.value for p in parameters}
