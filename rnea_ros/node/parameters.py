"""rnea_node's parameters, specified once (plain Python, no rclpy).

The declarations with their descriptors (``ros_parameters.declare``), the defaults of
``Settings``, ``config/rnea.yaml`` and the documentation's parameter table are all made from
``NODE_PARAMETERS`` (see ``rnea_ros.parameter_spec``).
"""

from __future__ import annotations

from rnea_ros.parameter_spec import ParameterSpec

TIMEOUT_RANGE = (1e-4, 3600.0)
# What feeds effort_commands besides the feedback: full inverse dynamics, gravity compensation
# only (hand-guiding), or nothing (feedback only, for comparisons).
COMMAND_SOURCES = ("inverse_dynamics", "gravity", "none")
CONTACT_DISTRIBUTIONS = ("minimum_norm", "qp")

NODE_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec(
        "robot_description",
        "string",
        "",
        "URDF text (not xacro). Empty: the robot_description topic (std_msgs/String, reliable, transient local, "
        "as robot_state_publisher publishes it). A live change is a hot reload.",
        details="A URDF over ~128 KB cannot pass as -p robot_description:=...; put it in a params file.",
    ),
    ParameterSpec(
        "strict_inertia",
        "bool",
        False,
        "Refuse descriptions with non-physical inertias (default: load them with a warning).",
        read_only=True,
        details="Non-physical: not positive semi-definite, or principal moments breaking the triangle inequality. "
        "Loaded as written by default, as robot_state_publisher and Pinocchio do, with a warning in the log "
        "and in /diagnostics.",
    ),
    ParameterSpec(
        "gravity",
        "double_array",
        (0.0, 0.0, -9.81),
        "Gravity in the world (root link) frame [m/s²]; a live change rebuilds the model.",
    ),
    ParameterSpec(
        "state_timeout",
        "double",
        0.1,
        "Largest spread of joint_states stamps between joints that are merged [s].",
        range=TIMEOUT_RANGE,
        details="Torques are computed once every model joint has a value no older than this relative to the "
        "newest joint_states stamp.",
    ),
    ParameterSpec(
        "acceleration_timeout",
        "double",
        0.1,
        "desired_accelerations (and base acceleration) older than this (receive time) are zero [s].",
        range=TIMEOUT_RANGE,
    ),
    ParameterSpec(
        "wrench_timeout",
        "double",
        0.1,
        "Each link's latest wrench is used for this long [s] after it arrived, and while its stamp is within "
        "this of the newest joint_states stamp.",
        range=TIMEOUT_RANGE,
    ),
    ParameterSpec(
        "future_stamp_tolerance",
        "double",
        1.0,
        "joint_states stamped more than this ahead of the node's clock are rejected [s].",
        range=(0.0, 3600.0),
        details="One far-future stamp would otherwise make every later message look out of order.",
    ),
    ParameterSpec(
        "use_desired_state",
        "bool",
        False,
        "Compute at the desired positions and velocities when the desired point has them.",
    ),
    ParameterSpec(
        "wrench_topics",
        "string_array",
        ("external_wrenches",),
        "geometry_msgs/WrenchStamped topics of wrenches applied on the robot; header.frame_id must be a URDF link.",
        read_only=True,
    ),
    ParameterSpec(
        "flip_wrench_topics",
        "string_array",
        (),
        "Those of wrench_topics that report what the robot applies (negated).",
        read_only=True,
    ),
    ParameterSpec(
        "command_joints",
        "string_array",
        (),
        "Joint order of effort_commands (std_msgs/Float64MultiArray); empty: the model's order.",
        read_only=True,
        details="Naming a joint the model lacks, or one twice, stops the node at start-up (exit code 1).",
    ),
    ParameterSpec(
        "kp",
        "double_array",
        (),
        "Position gains of effort_commands [N·m/rad or N/m], one per command joint or one for all; empty: no feedback.",
        details="effort_commands = source + kp (q_d − q) + kd (q̇_d − q̇), clipped to each joint's URDF <limit "
        "effort> (clipping is counted in /diagnostics). The feedback acts once a desired_accelerations point "
        "has positions and velocities (on the joints it names); with non-zero gains the feed-forward is "
        "computed at that desired state. When the point goes stale (acceleration_timeout) or a stamped "
        "trajectory ends, its positions are held at rest, as joint_trajectory_controller holds its last point "
        "(a stale stream is a warning and counted in /diagnostics).",
    ),
    ParameterSpec("kd", "double_array", (), "Velocity gains of effort_commands [N·m·s/rad or N·s/m], as kp."),
    ParameterSpec(
        "command_source",
        "string",
        "inverse_dynamics",
        "What effort_commands adds to the feedback: inverse_dynamics, gravity (compensation at the measured "
        "state: hand-guiding, holding) or none (feedback only, for comparisons); likewise the efforts of "
        "feedforward_trajectory (gravity: at each point's positions).",
        choices=COMMAND_SOURCES,
    ),
    ParameterSpec(
        "trajectory_resampling",
        "double",
        0.01,
        "joint_trajectory → feedforward_trajectory: points put on the JTC's own spline this far apart [s] before "
        "the efforts are computed (the JTC interpolates efforts linearly between points); 0: the points as sent.",
        range=(0.0, 1.0),
    ),
    ParameterSpec(
        "urdf_joint_dynamics",
        "bool",
        True,
        "Add each joint's URDF <dynamics damping friction> to the torques (viscous damping·q̇ and Coulomb "
        "friction·tanh(q̇/0.01)), as rnea_sim (MuJoCo) and Gazebo apply them.",
        read_only=True,
        details="A corrections file's terms come on top. False: the rigid bodies and the corrections alone.",
    ),
    ParameterSpec(
        "corrections_file",
        "string",
        "",
        "corrections.yaml (rnea_analyze --identify): friction, armature and offset per joint and a payload, "
        "added to feedforward_efforts and effort_commands. Empty: none.",
        details="gravity_torques is g(q) with the payload; the gravity command source adds the offsets. A live "
        "change reloads it; a file that cannot be used whole is refused and the previous corrections stay.",
    ),
    ParameterSpec(
        "floating_base",
        "bool",
        False,
        "Free-flyer base on the root link (always on when the URDF's root joint is floating).",
        read_only=True,
        details="The base state comes from base_odometry (nav_msgs/Odometry: pose of the root link in the world, "
        "twist in child_frame_id = the root link) or, without fresh odometry, from imu (sensor_msgs/Imu on "
        "any link of the robot: orientation and rate only).",
    ),
    ParameterSpec(
        "base_timeout",
        "double",
        0.1,
        "base_odometry and imu are used for this long after they arrived, and while their stamp is within this "
        "of the newest joint_states stamp; no base state, no torques [s].",
        range=TIMEOUT_RANGE,
    ),
    ParameterSpec(
        "contact_links",
        "string_array",
        (),
        "Floating base: links in contact whose wrench is not measured; the base wrench residual is "
        "distributed onto them (contact_distribution).",
        read_only=True,
    ),
    ParameterSpec(
        "contact_distribution",
        "string",
        "minimum_norm",
        "How the base residual is spread onto contact_links: minimum_norm (any wrench) or qp (forces the "
        "ground can provide: friction pyramid, min_normal_force, centre of pressure inside the sole).",
        choices=CONTACT_DISTRIBUTIONS,
        details="What the qp's forces cannot provide is left on base_wrench_residual with a WARN.",
    ),
    ParameterSpec(
        "friction_coefficient",
        "double",
        0.7,
        "qp: friction coefficient μ of every contact.",
        range=(0.01, 10.0),
    ),
    ParameterSpec("min_normal_force", "double", 0.0, "qp: least normal force of every contact [N].", range=(0.0, 1e5)),
    ParameterSpec(
        "friction_margin",
        "double",
        0.9,
        "qp: the fraction of friction_coefficient the forces may use (a force on the cone's edge slides at the "
        "first disturbance).",
        range=(0.05, 1.0),
    ),
    ParameterSpec(
        "sole_margin",
        "double",
        0.8,
        "qp: the fraction of each sole's half length and half width the centre of pressure may use (0.8: its "
        "central 80 %).",
        range=(0.05, 1.0),
    ),
    ParameterSpec(
        "tangential_weight",
        "double",
        10.0,
        "qp: how much a tangential newton weighs against a normal one in the objective, among the forces that "
        "produce the motion (larger: forces nearer the contact normal).",
        range=(1e-3, 1e3),
    ),
    ParameterSpec(
        "moment_length",
        "double",
        0.05,
        "qp: a sole's moment weighs as a force at this length in the objective (smaller: centres of pressure "
        "drawn harder toward the soles' centres) [m].",
        range=(1e-3, 10.0),
    ),
    ParameterSpec(
        "sole_size",
        "double_array",
        (0.0, 0.0),
        "qp: sole [length, width] of every contact link, or one pair per link in contact_links order; a sole is "
        "centred on the link's origin in its x-y plane [m]; zeros: a point contact (forces only).",
    ),
    ParameterSpec(
        "contact_radius",
        "double_array",
        (0.0,),
        "qp: the radius of a spherical foot centred on each point contact link's origin, one for all or one per "
        "link in contact_links order [m]: the ground pushes at the sphere's lowest point along the contact's "
        "normal; zero: at the link's origin.",
        details="Each in [0, 1] m; not with a sole (a sole's contact is its face).",
    ),
    ParameterSpec(
        "contact_normals",
        "double_array",
        (0.0, 0.0, 0.0),
        "qp: the ground's normal [x, y, z] in the world frame at every contact link, or one triple per link "
        "in contact_links order (a slope, a wall); zeros: against gravity.",
        details="Any length is normalised; a triple whose largest component is below 1e-9 (but not all zero) "
        "is refused.",
    ),
)
