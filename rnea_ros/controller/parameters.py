"""rnea_node's parameters, specified once (plain Python, no rclpy).

The declarations with their descriptors (``plumbing.ros_parameters.declare``), ``Settings``,
``config/rnea.yaml`` and the documentation's parameter table are all made from ``NODE_PARAMETERS``
(see ``rnea_ros.parameter_spec``). The contact QP's defaults and bounds are the library's
(``ContactQPOptions``), the contact distributions its ``KINDS``.
"""

from __future__ import annotations

import math

from rnea_ros.controller.laws import LAWS
from rnea_ros.dynamics.contact_distribution import KINDS as CONTACT_DISTRIBUTIONS
from rnea_ros.dynamics.contact_options import CONTACT_QP_BOUNDS as QP_BOUNDS
from rnea_ros.dynamics.contact_options import CONTACT_RADIUS_BOUNDS, ContactQPOptions
from rnea_ros.parameter_spec import ParameterSpec

TIMEOUT_RANGE = (1e-4, 3600.0)
# What feeds effort_commands besides the torque-space feedback: full inverse dynamics, gravity
# compensation only (hand-guiding), nothing (feedback only, for comparisons), computed torque; one
# class each in rnea_ros/controller/ (docs/development.md, "Adding a command law").
COMMAND_SOURCES = tuple(LAWS)
MAX_WRENCH_TOPICS = 32  # each is a subscription; a thousand would be a mistake, not a robot
NON_NEGATIVE = (0.0, math.inf)
QP = ContactQPOptions()  # the contact QP's defaults and bounds are the library's

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
        sizes=(3,),
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
        "reference_lead",
        "double",
        0.0,
        "The references of a state's answer (the desired_accelerations point, the contact schedule's stance "
        "weights) are those of its joint_states stamp plus this: the delay from a state to its command being "
        "applied [s]; joint_commands are stamped with that time.",
        range=(0.0, 1.0),
        details="As joint_trajectory_controller samples its trajectory at t + dt: a reference sampled at the "
        "state's stamp is as old as the command when the driver applies it. rnea_sim's motor_pd reports the "
        "commands' age at arrival (its summary and /diagnostics): its p50 at 0 is the lead; with a lead the age "
        "is counted from the lead's time. 0 in lockstep.",
    ),
    ParameterSpec(
        "wrench_topics",
        "string_array",
        ("external_wrenches",),
        "geometry_msgs/WrenchStamped topics of wrenches applied on the robot; header.frame_id must be a URDF link.",
        read_only=True,
        max_size=MAX_WRENCH_TOPICS,
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
        unique=True,
        details="Naming a joint the model lacks, or one twice, stops the node at start-up (exit code 1).",
    ),
    ParameterSpec(
        "kp",
        "double_array",
        (),
        "Position gains of effort_commands [N·m/rad or N/m], one per command joint or one for all; empty: no feedback.",
        element_range=NON_NEGATIVE,
        details="effort_commands = source + kp (q_d − q) + kd (q̇_d − q̇), clipped to each joint's URDF <limit "
        "effort> (clipping is counted in /diagnostics). The feedback acts once a desired_accelerations point "
        "has positions and velocities (on the joints it names); with non-zero gains the feed-forward is "
        "computed at that desired state. When the point goes stale (acceleration_timeout) or a stamped "
        "trajectory ends, its positions are held at rest, as joint_trajectory_controller holds its last point "
        "(a stale stream is a warning and counted in /diagnostics). Per joint by name instead, as "
        "joint_trajectory_controller: gains.<joint>.p and gains.<joint>.d (command joints only; not with kp/kd).",
    ),
    ParameterSpec(
        "kd",
        "double_array",
        (),
        "Velocity gains of effort_commands [N·m·s/rad or N·s/m], as kp.",
        element_range=NON_NEGATIVE,
    ),
    ParameterSpec(
        "command_source",
        "string",
        "inverse_dynamics",
        "What effort_commands adds to the feedback: inverse_dynamics, gravity (compensation at the measured "
        "state: hand-guiding, holding), none (feedback only, for comparisons) or computed_torque (ct_kp, ct_kd); "
        "likewise the efforts of feedforward_trajectory (gravity: at each point's positions; computed_torque: "
        "the inverse dynamics).",
        choices=COMMAND_SOURCES,
    ),
    ParameterSpec(
        "ct_kp",
        "double_array",
        (),
        "computed_torque: position gains [1/s²] (ωn²), one per command joint or one for all; empty: none.",
        element_range=NON_NEGATIVE,
        details="effort_commands = ID(q, q̇, q̈_d + ct_kp (q_d − q) + ct_kd (q̇_d − q̇) + ct_ki ∫(q_d − q)) at the "
        "measured state, with the measured wrenches, the corrections' payload and joint terms, clipped to the "
        "URDF's <limit effort> and counted; kp and kd, when given, add torque-space feedback to it. With an exact "
        "model each joint's error obeys ë + ct_kd ė + ct_kp e = 0 in every pose and for any payload. Fixed base "
        "only. rnea_gains --computed-torque proposes them from a bandwidth.",
    ),
    ParameterSpec(
        "ct_kd",
        "double_array",
        (),
        "computed_torque: velocity gains [1/s] (2 ζ ωn), as ct_kp; empty: 2 √ct_kp (critically damped).",
        element_range=NON_NEGATIVE,
    ),
    ParameterSpec(
        "ct_ki",
        "double_array",
        (),
        "computed_torque: integral gains [1/s³], as ct_kp; empty: no integral.",
        element_range=NON_NEGATIVE,
        details="The integral of the position error over the joint_states stamps (a gap over 0.1 s adds nothing), "
        "restarted when there is no desired state.",
    ),
    ParameterSpec(
        "ct_i_clamp",
        "double_array",
        (2.0,),
        "computed_torque: the integral term's bound [rad/s²], as ct_kp (anti-windup: the integral stops there).",
        element_range=NON_NEGATIVE,
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
        False,
        "Add each joint's URDF <dynamics damping friction> to the torques (viscous damping·q̇ and Coulomb "
        "friction·tanh(q̇/0.01)), as rnea_sim (MuJoCo) and Gazebo apply them: true beside a simulator.",
        read_only=True,
        details="Off by default, as Pinocchio, KDL and ros2_control's controllers: real URDFs carry simulator "
        "tuning there (a torso damping of 1000). A corrections file's joint terms replace the URDF's for "
        "the joints they name.",
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
        unique=True,
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
        QP.friction_coefficient,
        "qp: friction coefficient μ of every contact.",
        range=QP_BOUNDS["friction_coefficient"],
    ),
    ParameterSpec(
        "min_normal_force",
        "double",
        QP.min_normal_force,
        "qp: least normal force of every contact [N].",
        range=QP_BOUNDS["min_normal_force"],
    ),
    ParameterSpec(
        "friction_margin",
        "double",
        QP.friction_margin,
        "qp: the fraction of friction_coefficient the forces may use (a force on the cone's edge slides at the "
        "first disturbance).",
        range=QP_BOUNDS["friction_margin"],
    ),
    ParameterSpec(
        "sole_margin",
        "double",
        QP.sole_margin,
        "qp: the fraction of each sole's half length and half width the centre of pressure may use (0.8: its "
        "central 80 %).",
        range=QP_BOUNDS["sole_margin"],
    ),
    ParameterSpec(
        "tangential_weight",
        "double",
        QP.tangential_weight,
        "qp: how much a tangential newton weighs against a normal one in the objective, among the forces that "
        "produce the motion (larger: forces nearer the contact normal).",
        range=QP_BOUNDS["tangential_weight"],
    ),
    ParameterSpec(
        "moment_length",
        "double",
        QP.moment_length,
        "qp: a sole's moment weighs as a force at this length in the objective (smaller: centres of pressure "
        "drawn harder toward the soles' centres) [m].",
        range=QP_BOUNDS["moment_length"],
    ),
    ParameterSpec(
        "sole_size",
        "double_array",
        (0.0, 0.0),
        "qp: sole [length, width] of every contact link, or one pair per link in contact_links order; a sole is "
        "centred on the link's origin in its x-y plane [m]; zeros: a point contact (forces only).",
        element_range=NON_NEGATIVE,
        sizes=(2,),
        per="contact_links",
    ),
    ParameterSpec(
        "contact_radius",
        "double_array",
        (0.0,),
        "qp: the radius of a spherical foot centred on each point contact link's origin, one for all or one per "
        "link in contact_links order [m]: the ground pushes at the sphere's lowest point along the contact's "
        "normal; zero: at the link's origin.",
        details="Not with a sole (a sole's contact is its face).",
        element_range=CONTACT_RADIUS_BOUNDS,
        sizes=(1,),
        per="contact_links",
    ),
    ParameterSpec(
        "contact_normals",
        "double_array",
        (0.0, 0.0, 0.0),
        "qp: the ground's normal [x, y, z] in the world frame at every contact link, or one triple per link "
        "in contact_links order (a slope, a wall); zeros: against gravity.",
        details="Any length is normalised; a triple whose largest component is below 1e-9 (but not all zero) "
        "is refused.",
        sizes=(3,),
        per="contact_links",
    ),
    ParameterSpec(
        "gait_period",
        "double",
        0.0,
        "Floating base: the period of a periodic gait over contact_links [s]; 0: no gait, every contact link "
        "always in stance.",
        range=(0.0, 3600.0),
        details="Link k is in stance while frac(t/gait_period - gait_phases[k]) < gait_duty[k], t the joint_states "
        "stamp (the cycle starts at t = 0); swing feet carry no force. Refused with the reason (the last valid gait "
        "kept) when no foot would stay down across a lift-off.",
    ),
    ParameterSpec(
        "gait_duty",
        "double_array",
        (0.6,),
        "The fraction of gait_period each contact link is in stance, one for all or one per link in "
        "contact_links order (1: always).",
        element_range=(1e-3, 1.0),
        sizes=(1,),
        per="contact_links",
    ),
    ParameterSpec(
        "gait_phases",
        "double_array",
        (),
        "When each contact link touches down in the gait's cycle, a fraction of gait_period in [0, 1), one per "
        "link in contact_links order (a trot: [0, 0.5, 0.5, 0] for FL, FR, HL, HR).",
        element_range=(0.0, 1.0),
    ),
    ParameterSpec(
        "lift_off_transition",
        "double",
        0.05,
        "A foot's load ramps down over this time before it lifts off (qp: to min_normal_force), as TSID's "
        "removeRigidContact does; 0: it steps [s].",
        range=(0.0, 10.0),
    ),
    ParameterSpec(
        "touch_down_transition",
        "double",
        0.05,
        "A foot's load ramps up over this time after it touches down (qp: from min_normal_force); 0: it steps [s].",
        range=(0.0, 10.0),
    ),
)
# the FollowJointTrajectory relay (rnea_ros/node/action_relay.py)
NODE_PARAMETERS += (
    ParameterSpec(
        "follow_joint_trajectory_action",
        "string",
        "follow_joint_trajectory",
        "control_msgs/action/FollowJointTrajectory served here: each goal's points get their efforts as on "
        "joint_trajectory and the goal goes on to controller_action (MoveIt's action_ns points here); empty: none.",
        read_only=True,
    ),
    ParameterSpec(
        "controller_action",
        "string",
        "/joint_trajectory_controller/follow_joint_trajectory",
        "The joint_trajectory_controller's FollowJointTrajectory action the goals go on to.",
        read_only=True,
    ),
    ParameterSpec(
        "controller_action_timeout",
        "double",
        2.0,
        "controller_action absent, not answering a goal, silent during one (neither feedback nor result) or gone "
        "for this long: the goal is aborted with the reason and the controller's goal cancelled [s].",
        read_only=True,
        range=(0.01, 3600.0),
    ),
    ParameterSpec(
        "cancel_hold",
        "bool",
        True,
        "After a cancel forwarded to controller_action, send it a one-point goal at the measured position whose "
        "efforts hold the arm there (gravity, payload, corrections); the client still gets CANCELED.",
        read_only=True,
        details="Without it a joint_trajectory_controller on an effort interface holds a cancelled goal's "
        "position with effort 0 plus its PID: an arm on soft gains sags under its weight.",
    ),
)
# what drivers send that URDFs do not say: their QoS and their joint names
JOINT_STATES_QOS = ("reliable", "sensor_data")
NODE_PARAMETERS += (
    ParameterSpec(
        "joint_states_qos",
        "string",
        "reliable",
        "QoS of the joint_states subscription: reliable, or sensor_data (best effort, as many drivers publish; "
        "a reliable reader gets nothing from a best-effort publisher).",
        read_only=True,
        choices=JOINT_STATES_QOS,
        details="A reliable subscription with only best-effort publishers is a WARN on the console.",
    ),
    ParameterSpec(
        "joint_states_depth",
        "int",
        50,
        "joint_states messages that may wait for the node (its subscription's history depth); 1: the newest "
        "alone, so that a node that falls behind answers the present state instead of a backlog.",
        read_only=True,
        range=(1, 10000),
        details="50 (the default) keeps every message of a 2 kHz driver through a 25 ms hiccup: each is merged and "
        "answered late. A controller whose commands are useless late (a walking robot's feed-forward, with the PD "
        "in its motor drivers) wants 1; with several joint_states publishers, each holding part of the joints, "
        "a message replaced before it is read is then lost.",
    ),
    ParameterSpec(
        "joint_names",
        "string_array",
        (),
        "The driver's joint names where they are not the URDF's: entries 'driver_name:=urdf_name' (or "
        "'driver_name=urdf_name', which -p takes unquoted); empty: the URDF's names.",
        read_only=True,
        unique=True,
        details="Every input (joint_states, desired_accelerations, joint_trajectory, command_joints, gains.<joint>) "
        "may use either name; every output (feedforward_efforts, gravity_torques, effort_commands' labels, "
        "feedforward_trajectory) names a mapped joint by the driver's name. A URDF name the model lacks "
        "refuses the description.",
    ),
)
# a loaded machine: the node's threads ahead of ordinary processes
NODE_PARAMETERS += (
    ParameterSpec(
        "thread_priority",
        "int",
        0,
        "0: the default scheduler; 1-99: every thread of the node on SCHED_FIFO at this priority (as "
        "ros2_control's controller_manager runs its loop, at 50 there: take less, e.g. 40).",
        read_only=True,
        range=(0, 99),
        details="Beside busy processes the default scheduler makes an answer wait for the CPU in slices of "
        "milliseconds (docs/benchmarks.md). Needs the rtprio limit (ulimit -r, /etc/security/limits.conf) or "
        "root; when refused, a WARN says how and the node runs on the default scheduler.",
    ),
)
